package outbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/towerd/towerd/clock"
)

func open(t testing.TB, dir string, opt Options) *Store {
	t.Helper()
	s, err := Open(dir, opt)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func result(payload string) func(uint64) ([]byte, error) {
	return func(seq uint64) ([]byte, error) {
		return fmt.Appendf(nil, `{"seq":%d,"p":%q}`, seq, payload), nil
	}
}

func errorMsg(payload string) func(uint64) ([]byte, error) {
	return func(uint64) ([]byte, error) { return []byte(payload), nil }
}

func mustFinish(t testing.TB, s *Store, key string, kind Kind, build func(uint64) ([]byte, error)) *Entry {
	t.Helper()
	e, err := s.Finish(key, kind, build)
	if err != nil {
		t.Fatalf("Finish(%q): %v", key, err)
	}
	return e
}

func TestRoundTripSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	k1, t1, err := s.Accept("id:r1", []byte(`{"id":"r1"}`))
	if err != nil || k1 != "id:r1" {
		t.Fatalf("Accept: %q %v", k1, err)
	}
	if err := s.Sync(t1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Accept("id:r1", nil); !errors.Is(err, ErrKnown) {
		t.Fatalf("second Accept of r1: %v, want ErrKnown", err)
	}
	k2, _, _ := s.Accept("", []byte(`{"system":"dice"}`))
	if k2 == "" || k2[0] != '#' {
		t.Fatalf("assigned key %q, want #n", k2)
	}
	s.Accept("id:r3", []byte(`{"id":"r3"}`))
	e1 := mustFinish(t, s, "id:r1", Result, result("one"))
	e2 := mustFinish(t, s, "", Result, result("button"))
	e3 := mustFinish(t, s, "id:r3", Error, errorMsg(`{"code":"misread"}`))
	if e1.Seq != 1 || e2.Seq != 2 || e3.Seq != 0 {
		t.Fatalf("seqs %d %d %d, want 1 2 0", e1.Seq, e2.Seq, e3.Seq)
	}
	if got := s.Ack(e1.N); got != e1 {
		t.Fatalf("Ack returned %v", got)
	}
	if s.Ack(e1.N) != nil {
		t.Fatal("second Ack of the same entry returned it again")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, dir, Options{})
	defer s.Close()
	if s.Seq() != 2 {
		t.Errorf("Seq after reopen = %d, want 2", s.Seq())
	}
	st, e := s.Lookup("id:r1")
	if st != Done || e.Seq != 1 || !bytes.Contains(e.Payload, []byte(`"one"`)) {
		t.Errorf("Lookup(r1) = %v %+v", st, e)
	}
	if st, e := s.Lookup("id:r3"); st != Done || e.Kind != Error {
		t.Errorf("Lookup(r3) = %v %+v", st, e)
	}
	pend := s.Pending()
	if len(pend) != 1 || pend[0].Key != k2 || string(pend[0].Payload) != `{"system":"dice"}` {
		t.Errorf("Pending = %+v, want only %s", pend, k2)
	}
	un := s.Unacked()
	if len(un) != 2 || un[0].Seq != 2 || un[1].Kind != Error {
		t.Errorf("Unacked = %+v, want the button result then the error", un)
	}
	if l := s.Last(); l == nil || l.Seq != 2 {
		t.Errorf("Last = %+v", l)
	}
	if st, _ := s.Lookup("id:nope"); st != Unknown {
		t.Errorf("Lookup(unknown) = %v", st)
	}
	// The sequence continues where it was.
	if e := mustFinish(t, s, k2, Result, result("x")); e.Seq != 3 {
		t.Errorf("next seq = %d, want 3", e.Seq)
	}
}

func TestFinishTwiceKeepsFirstAnswer(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	defer s.Close()
	s.Accept("id:a", nil)
	e1 := mustFinish(t, s, "id:a", Result, result("first"))
	e2, err := s.Finish("id:a", Result, result("second"))
	if !errors.Is(err, ErrDone) || e2 != e1 {
		t.Fatalf("second Finish = %+v, %v; want the first entry and ErrDone", e2, err)
	}
	if s.Seq() != 1 {
		t.Fatalf("seq moved to %d on a refused Finish", s.Seq())
	}
}

func TestLookupHidesAnswersNotYetDurable(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	defer s.Close()
	s.Accept("id:a", nil)
	e, tk, err := s.finish("id:a", Result, result("x"))
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Lookup("id:a"); st != Accepted {
		t.Fatalf("before sync Lookup = %v, want Accepted", st)
	}
	if s.Durable(e) {
		t.Fatal("Durable before sync")
	}
	if err := s.Sync(tk); err != nil {
		t.Fatal(err)
	}
	if st, got := s.Lookup("id:a"); st != Done || got != e {
		t.Fatalf("after sync Lookup = %v %v", st, got)
	}
}

func TestCompactionKeepsLiveStateAcrossManySegments(t *testing.T) {
	dir := t.TempDir()
	opt := Options{SegmentSize: 64 << 10, KeepDone: 50}
	s := open(t, dir, opt)
	payload := bytes.Repeat([]byte("x"), 900)
	var unacked []uint64
	for i := range 150 {
		key := "id:" + strconv.Itoa(i)
		if _, _, err := s.Accept(key, payload); err != nil {
			t.Fatal(err)
		}
		e := mustFinish(t, s, key, Result, result(string(payload)))
		if i%7 == 0 {
			unacked = append(unacked, e.N)
		} else {
			s.Ack(e.N)
		}
	}
	s.Accept("id:pending", []byte("p"))
	s.Close()
	if fi, err := os.Stat(filepath.Join(dir, logName)); err != nil || fi.Size() > 512<<10 {
		t.Fatalf("log not compacted: %v %v", fi.Size(), err)
	}

	s = open(t, dir, opt)
	defer s.Close()
	if s.Seq() != 150 {
		t.Errorf("Seq = %d, want 150", s.Seq())
	}
	un := s.Unacked()
	if len(un) != len(unacked) {
		t.Fatalf("%d unacked after compactions, want %d", len(un), len(unacked))
	}
	for i, e := range un {
		if e.N != unacked[i] {
			t.Fatalf("unacked[%d] = %d, want %d", i, e.N, unacked[i])
		}
	}
	if st, _ := s.Lookup("id:149"); st != Done {
		t.Errorf("newest answer forgotten: %v", st)
	}
	if st, _ := s.Lookup("id:0"); st != Unknown {
		t.Errorf("answer beyond KeepDone still remembered: %v", st)
	}
	if p := s.Pending(); len(p) != 1 || p[0].Key != "id:pending" {
		t.Errorf("Pending = %+v", p)
	}
}

func TestForgetsAnswersOlderThanKeepFor(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	s := open(t, t.TempDir(), Options{KeepFor: time.Hour, Clock: clk})
	defer s.Close()
	s.Accept("id:old", nil)
	mustFinish(t, s, "id:old", Result, result("o"))
	clk.Advance(2 * time.Hour)
	s.Accept("id:new", nil)
	mustFinish(t, s, "id:new", Result, result("n"))
	if st, _ := s.Lookup("id:old"); st != Unknown {
		t.Errorf("old answer still remembered: %v", st)
	}
	if st, _ := s.Lookup("id:new"); st != Done {
		t.Errorf("new answer: %v", st)
	}
}

func TestTornTailIsDiscarded(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	s.Accept("id:a", nil)
	mustFinish(t, s, "id:a", Result, result("a"))
	off := s.off
	s.Close()

	// A crash in the middle of a write: a header promising more than landed.
	f, err := os.OpenFile(filepath.Join(dir, logName), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{200, 0, 0, 0, 1, 2, 3, 4, 3, 9}, off)
	f.Close()

	s = open(t, dir, Options{})
	defer s.Close()
	if st, _ := s.Lookup("id:a"); st != Done || s.Seq() != 1 {
		t.Fatalf("state before the torn write lost: %v seq %d", st, s.Seq())
	}
	if e := mustFinish(t, s, "", Result, result("b")); e.Seq != 2 {
		t.Fatalf("seq after recovery = %d", e.Seq)
	}
}

func TestDamagedMiddleRecordCostsOnlyItself(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	s.Accept("id:a", nil)
	mustFinish(t, s, "id:a", Result, result("a"))
	mid := s.off
	s.Accept("id:b", []byte("bbbbbbbb"))
	s.Accept("id:c", nil)
	mustFinish(t, s, "id:c", Result, result("c"))
	s.Close()

	// Flip every bit of one byte inside b's accept record. Writing a fixed
	// 0xff was no damage when the byte (part of the wall-clock time) already
	// held 0xff, which made the test fail about once in 128 runs.
	f, err := os.OpenFile(filepath.Join(dir, logName), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	at := mid + frameHeader + 3
	var b [1]byte
	if _, err := f.ReadAt(b[:], at); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{^b[0]}, at); err != nil {
		t.Fatal(err)
	}
	f.Close()

	s = open(t, dir, Options{})
	defer s.Close()
	if st, _ := s.Lookup("id:a"); st != Done {
		t.Errorf("a: %v", st)
	}
	if st, _ := s.Lookup("id:b"); st != Unknown {
		t.Errorf("damaged b: %v, want Unknown", st)
	}
	if st, e := s.Lookup("id:c"); st != Done || e.Seq != 2 {
		t.Errorf("c after the damage: %v %+v", st, e)
	}
}

func TestSecondOpenOfADirFails(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	defer s.Close()
	if s2, err := Open(dir, Options{}); err == nil {
		s2.Close()
		t.Fatal("second Open of a locked dir succeeded")
	}
}

func TestAbandonKeepsWhatWasSynced(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	s.Accept("id:a", nil)
	e := mustFinish(t, s, "id:a", Result, result("a"))
	s.Abandon()
	if _, err := s.Finish("", Result, result("late")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Finish after Abandon: %v", err)
	}
	s = open(t, dir, Options{})
	defer s.Close()
	if un := s.Unacked(); len(un) != 1 || un[0].N != e.N {
		t.Fatalf("Unacked after a crash = %+v", un)
	}
}

// Concurrent finishers share fdatasyncs and still get distinct, gapless
// sequence numbers.
func TestGroupCommitKeepsSeqGapless(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	const n = 64
	var wg sync.WaitGroup
	seqs := make([]uint64, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			e, err := s.Finish("id:"+strconv.Itoa(i), Result, result("g"))
			if err == nil {
				seqs[i] = e.Seq
			}
			errs[i] = err
		})
	}
	wg.Wait()
	seen := map[uint64]bool{}
	for i, q := range seqs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if q < 1 || q > n || seen[q] {
			t.Fatalf("seq %d duplicated or out of 1..%d", q, n)
		}
		seen[q] = true
	}
	s.Close()
	s = open(t, dir, Options{})
	defer s.Close()
	if s.Seq() != n || len(s.Unacked()) != n {
		t.Fatalf("after reopen seq %d unacked %d", s.Seq(), len(s.Unacked()))
	}
}

func TestFrameRoundTrip(t *testing.T) {
	recs := []record{
		{typ: recMeta, n: 7, seq: 9},
		{typ: recAccept, n: 1, at: -5, key: "id:x", payload: []byte("{}")},
		{typ: recOut, n: 1 << 40, seq: 3, at: 1e18, kind: Error, key: "", payload: nil},
		{typ: recAck, n: 12},
	}
	var b []byte
	for i := range recs {
		b = appendFrame(b, &recs[i])
	}
	b = append(b, make([]byte, 16)...)
	for i, want := range recs {
		got, n, err := readFrame(b)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if got.typ != want.typ || got.n != want.n || got.seq != want.seq || got.at != want.at ||
			got.kind != want.kind || got.key != want.key || !bytes.Equal(got.payload, want.payload) {
			t.Fatalf("record %d: got %+v want %+v", i, got, want)
		}
		b = b[n:]
	}
	if _, _, err := readFrame(b); err != errEnd {
		t.Fatalf("after the records: %v, want errEnd", err)
	}
}

// FuzzOpen: any bytes as a log open without a panic, and the store works
// afterwards.
func FuzzOpen(f *testing.F) {
	var good []byte
	good = appendFrame(good, &record{typ: recMeta, n: 3, seq: 2})
	good = appendFrame(good, &record{typ: recAccept, n: 4, key: "id:a", payload: []byte("{}")})
	good = appendFrame(good, &record{typ: recOut, n: 5, seq: 3, kind: Result, key: "id:a", payload: []byte("r")})
	good = appendFrame(good, &record{typ: recAck, n: 5})
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, logName), data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(dir, Options{SegmentSize: 64 << 10})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer s.Close()
		before := s.Seq()
		e, err := s.Finish("", Result, result("after"))
		if err != nil || e.Seq != before+1 {
			t.Fatalf("Finish after Open: %+v %v", e, err)
		}
	})
}

// BenchmarkFinish measures one durable result: sequential (one roller, one
// fdatasync per result) and parallel (group commit).
func BenchmarkFinish(b *testing.B) {
	dir := os.Getenv("TOWERD_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else {
		var err error
		if dir, err = os.MkdirTemp(dir, "outbox"); err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(dir)
	}
	payload := bytes.Repeat([]byte("r"), 1000)
	build := func(uint64) ([]byte, error) { return payload, nil }
	b.Run("sequential", func(b *testing.B) {
		s := open(b, filepath.Join(dir, "seq"), Options{})
		defer s.Close()
		b.ReportAllocs()
		for b.Loop() {
			e, err := s.Finish("", Result, build)
			if err != nil {
				b.Fatal(err)
			}
			s.Ack(e.N)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		s := open(b, filepath.Join(dir, "par"), Options{})
		defer s.Close()
		b.ReportAllocs()
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				e, err := s.Finish("", Result, build)
				if err != nil {
					b.Error(err)
					return
				}
				s.Ack(e.N)
			}
		})
	})
}
