package history

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/towerd/towerd/clock"
	"github.com/towerd/towerd/rules"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// noSync skips fsync: the shared CI disk makes each one cost up to a
// quarter second, and durability itself cannot be observed by a test.
// TestAppendWithRealSync and BenchmarkAppend keep the real fsync.
func noSync(*os.File) error { return nil }

func openTest(t testing.TB, dir string, opts Options) *Log {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	if opts.sync == nil {
		opts.sync = noSync
	}
	return openWith(t, dir, opts)
}

// openWith opens with opts as given (real fsync unless opts.sync is set).
func openWith(t testing.TB, dir string, opts Options) *Log {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// seqRec is a result whose SettleMS carries a sequence number, so tests can
// check order across files.
func seqRec(i int) Record {
	r := resultRec(t0.Add(time.Duration(i)*time.Minute), Face{rules.D6, i%6 + 1})
	r.SettleMS = int64(i + 1)
	return r
}

func scanAll(t *testing.T, dir string) ([]Record, ScanInfo) {
	t.Helper()
	var recs []Record
	info, err := Scan(dir, func(r Record) error { recs = append(recs, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return recs, info
}

// The real fsync path, once (it is slow on a busy CI disk; BenchmarkAppend
// measures it).
func TestAppendWithRealSync(t *testing.T) {
	dir := t.TempDir()
	l := openWith(t, dir, Options{})
	if err := l.Append(seqRec(0)); err != nil {
		t.Fatal(err)
	}
	if recs, _ := scanAll(t, dir); len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
}

func TestAppendScanReopen(t *testing.T) {
	dir := t.TempDir()
	l := openTest(t, dir, Options{})
	for i := range 3 {
		if err := l.Append(seqRec(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(seqRec(9)); err == nil {
		t.Error("Append after Close succeeded")
	}
	// A restart: reopen and keep appending.
	l2 := openTest(t, dir, Options{})
	if err := l2.Append(seqRec(3)); err != nil {
		t.Fatal(err)
	}
	recs, info := scanAll(t, dir)
	if len(recs) != 4 || info.Records != 4 || info.Torn+info.Garbled != 0 {
		t.Fatalf("scan: %d records, info %+v", len(recs), info)
	}
	for i, r := range recs {
		if r.SettleMS != int64(i+1) {
			t.Errorf("record %d has seq %d", i, r.SettleMS-1)
		}
	}
}

func TestAppendStampsTimeFromClock(t *testing.T) {
	dir := t.TempDir()
	fake := clock.NewFake(time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC))
	l := openTest(t, dir, Options{Clock: fake})
	r := seqRec(0)
	r.Time = time.Time{}
	if err := l.Append(r); err != nil {
		t.Fatal(err)
	}
	recs, _ := scanAll(t, dir)
	if len(recs) != 1 || !recs[0].Time.Equal(fake.Now()) {
		t.Fatalf("records %+v, want time %v", recs, fake.Now())
	}
}

func TestAppendRejectsInvalidRecord(t *testing.T) {
	dir := t.TempDir()
	l := openTest(t, dir, Options{})
	err := l.Append(Record{Time: t0, Kind: "roll"})
	if err == nil || !strings.Contains(err.Error(), "field kind") {
		t.Fatalf("Append(bad kind) = %v", err)
	}
	if recs, _ := scanAll(t, dir); len(recs) != 0 {
		t.Errorf("bad record written: %+v", recs)
	}
}

func TestTornLastLineSkippedAndRepaired(t *testing.T) {
	dir := t.TempDir()
	var content []byte
	for i := range 2 {
		line, err := EncodeLine(seqRec(i))
		if err != nil {
			t.Fatal(err)
		}
		content = append(content, line...)
	}
	torn, _ := EncodeLine(seqRec(2))
	content = append(content, torn[:len(torn)/2]...) // power lost mid-write
	live := filepath.Join(dir, liveName)
	if err := os.WriteFile(live, content, 0o640); err != nil {
		t.Fatal(err)
	}

	// A reader (towerd stats) skips it without touching the file.
	recs, info := scanAll(t, dir)
	if len(recs) != 2 || info.Torn != 1 || info.Garbled != 0 {
		t.Fatalf("scan of torn file: %d records, %+v", len(recs), info)
	}
	if e := info.Skipped[0]; !e.Torn || e.Line != 3 || e.File != liveName {
		t.Errorf("skipped %+v, want torn line 3 of %s", e, liveName)
	}

	// The daemon restarts: the torn tail is cut and the next record starts
	// on its own line.
	l := openTest(t, dir, Options{})
	if err := l.Append(seqRec(3)); err != nil {
		t.Fatal(err)
	}
	recs, info = scanAll(t, dir)
	if len(recs) != 3 || info.Torn+info.Garbled != 0 {
		t.Fatalf("after repair: %d records, %+v", len(recs), info)
	}
	if recs[2].SettleMS != 4 {
		t.Errorf("last record seq %d, want 3", recs[2].SettleMS-1)
	}
}

// A failed fsync leaves the record out of the history (the caller reports
// the error) and the next append starts clean.
func TestFailedSyncLeavesNoRecord(t *testing.T) {
	dir := t.TempDir()
	failing := false
	l := openTest(t, dir, Options{sync: func(*os.File) error {
		if failing {
			return errors.New("disk on fire")
		}
		return nil
	}})
	if err := l.Append(seqRec(0)); err != nil {
		t.Fatal(err)
	}
	failing = true
	if err := l.Append(seqRec(1)); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("Append with failing sync = %v", err)
	}
	failing = false
	if err := l.Append(seqRec(2)); err != nil {
		t.Fatal(err)
	}
	recs, info := scanAll(t, dir)
	if len(recs) != 2 || info.Torn+info.Garbled != 0 || recs[0].SettleMS != 1 || recs[1].SettleMS != 3 {
		t.Fatalf("records %+v, info %+v", recs, info)
	}
}

func TestTornOnlyLineRepaired(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, liveName), []byte(`{"v":1,"ti`), 0o640); err != nil {
		t.Fatal(err)
	}
	l := openTest(t, dir, Options{})
	if err := l.Append(seqRec(0)); err != nil {
		t.Fatal(err)
	}
	recs, info := scanAll(t, dir)
	if len(recs) != 1 || info.Torn+info.Garbled != 0 {
		t.Fatalf("%d records, %+v", len(recs), info)
	}
}

func TestGarbledLinesSkippedWithLocation(t *testing.T) {
	dir := t.TempDir()
	a, _ := EncodeLine(seqRec(0))
	b, _ := EncodeLine(seqRec(1))
	long := strings.Repeat("x", MaxLine+10) + "\n"
	content := string(a) + "not json\n\n" + `{"v":1,"kind":"result"}` + "\n" + long + string(b)
	if err := os.WriteFile(filepath.Join(dir, liveName), []byte(content), 0o640); err != nil {
		t.Fatal(err)
	}
	recs, info := scanAll(t, dir)
	if len(recs) != 2 || info.Garbled != 3 || info.Torn != 0 {
		t.Fatalf("%d records, info %+v", len(recs), info)
	}
	wantLines := []int{2, 4, 5}
	for i, e := range info.Skipped {
		if e.Line != wantLines[i] || e.File != liveName {
			t.Errorf("skipped[%d] = %v, want line %d", i, e, wantLines[i])
		}
	}
	if !strings.Contains(info.Skipped[1].Error(), "field time") {
		t.Errorf("skipped[1] = %v, want it to name field time", info.Skipped[1])
	}
}

func TestRotationKeepsNAndScansInOrder(t *testing.T) {
	dir := t.TempDir()
	line, _ := EncodeLine(seqRec(0))
	// Room for 3 lines per file (lines differ by a few bytes at most).
	maxBytes := int64(3*len(line) + len(line)/2)
	l := openTest(t, dir, Options{MaxBytes: maxBytes, Keep: 2})
	const n = 40
	for i := range n {
		if err := l.Append(seqRec(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{liveName, rotatedName(1), rotatedName(2)} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("missing %s: %v", name, err)
		}
		if st.Size() > maxBytes {
			t.Errorf("%s is %d bytes, over the %d limit", name, st.Size(), maxBytes)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, rotatedName(3))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists with Keep 2 (err %v)", rotatedName(3), err)
	}
	recs, info := scanAll(t, dir)
	if info.Files != 3 || len(recs) < 7 || len(recs) > 9 {
		t.Fatalf("scan: %d records in %d files", len(recs), info.Files)
	}
	// The newest records, contiguous and oldest first.
	for i, r := range recs {
		want := int64(n - len(recs) + i + 1)
		if r.SettleMS != want {
			t.Fatalf("record %d has seq %d, want %d", i, r.SettleMS-1, want-1)
		}
	}
}

func TestOpenPrunesBeyondKeepAndScanSkipsOddNames(t *testing.T) {
	dir := t.TempDir()
	for i := 1; i <= 4; i++ {
		line, _ := EncodeLine(seqRec(10 - i))
		if err := os.WriteFile(filepath.Join(dir, rotatedName(i)), line, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	for _, odd := range []string{"history.01.jsonl", "history.x.jsonl", "history.jsonl.bak"} {
		if err := os.WriteFile(filepath.Join(dir, odd), []byte("junk\n"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	openTest(t, dir, Options{Keep: 2})
	if _, err := os.Stat(filepath.Join(dir, rotatedName(3))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("history.3.jsonl kept with Keep 2")
	}
	recs, info := scanAll(t, dir)
	if len(recs) != 2 || info.Garbled != 0 || recs[0].SettleMS != 9 || recs[1].SettleMS != 10 {
		t.Fatalf("records %+v, info %+v", recs, info)
	}
}

func TestKeepNegativeDropsOnRotation(t *testing.T) {
	dir := t.TempDir()
	line, _ := EncodeLine(seqRec(0))
	l := openTest(t, dir, Options{MaxBytes: int64(len(line) + 1), Keep: -1})
	for i := range 3 {
		if err := l.Append(seqRec(i)); err != nil {
			t.Fatal(err)
		}
	}
	recs, info := scanAll(t, dir)
	if len(recs) != 1 || info.Files != 1 || recs[0].SettleMS != 3 {
		t.Fatalf("records %+v, info %+v", recs, info)
	}
}

func TestSecondOpenRefused(t *testing.T) {
	dir := t.TempDir()
	l := openTest(t, dir, Options{})
	if _, err := Open(dir, Options{Logger: quiet}); err == nil || !strings.Contains(err.Error(), "another process") {
		t.Fatalf("second Open = %v, want refused", err)
	}
	l.Close()
	openTest(t, dir, Options{})
}

func TestScanMissingDirAndEmptyDir(t *testing.T) {
	if _, err := Scan(filepath.Join(t.TempDir(), "nope"), func(Record) error { return nil }); err == nil {
		t.Error("Scan of a missing directory succeeded")
	}
	recs, info := scanAll(t, t.TempDir())
	if len(recs) != 0 || info.Files != 0 {
		t.Errorf("empty dir: %d records, %+v", len(recs), info)
	}
}

func TestScanStopAndCallbackError(t *testing.T) {
	dir := t.TempDir()
	l := openTest(t, dir, Options{})
	for i := range 5 {
		if err := l.Append(seqRec(i)); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	info, err := Scan(dir, func(Record) error {
		n++
		if n == 2 {
			return ErrStop
		}
		return nil
	})
	if err != nil || n != 2 || info.Records != 2 {
		t.Errorf("ErrStop: err %v, n %d, info %+v", err, n, info)
	}
	boom := errors.New("boom")
	if _, err := Scan(dir, func(Record) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("callback error = %v, want boom", err)
	}
}

func TestConcurrentAppends(t *testing.T) {
	dir := t.TempDir()
	line, _ := EncodeLine(seqRec(0))
	l := openTest(t, dir, Options{MaxBytes: int64(10 * len(line)), Keep: 100})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 10 {
				if err := l.Append(seqRec(g*10 + i)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	recs, info := scanAll(t, dir)
	if len(recs) != 40 || info.Torn+info.Garbled != 0 {
		t.Fatalf("%d records, %+v", len(recs), info)
	}
	seen := map[int64]bool{}
	for _, r := range recs {
		seen[r.SettleMS] = true
	}
	if len(seen) != 40 {
		t.Errorf("%d distinct records, want 40", len(seen))
	}
}

func TestLogStatsIncrementalMatchesLoad(t *testing.T) {
	dir := t.TempDir()
	line, _ := EncodeLine(seqRec(0))
	l := openTest(t, dir, Options{MaxBytes: int64(5 * len(line)), Keep: 1})
	check := func(when string) {
		t.Helper()
		got, err := l.Stats()
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		gj, wj := mustJSON(t, got), mustJSON(t, want)
		if gj != wj {
			t.Fatalf("%s: Log.Stats\n%s\nLoad\n%s", when, gj, wj)
		}
	}
	check("empty")
	for i := range 23 { // rotates several times, dropping old files
		if err := l.Append(seqRec(i)); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			check(fmt.Sprintf("after %d", i))
		}
	}
	if err := l.Append(Record{Time: t0, Kind: KindError, Code: rules.CodeMisread}); err != nil {
		t.Fatal(err)
	}
	check("after error")
}

// BenchmarkAppend measures one durable append (write + fsync) of a typical
// result record to a file on the benchmark's temp dir.
func BenchmarkAppend(b *testing.B) {
	l := openWith(b, b.TempDir(), Options{})
	r := resultRec(t0, Face{rules.D8, 3}, Face{rules.D8, 7})
	r.Result = []byte(`{"v":1,"id":"r-17","label":"Stealth","tower":"tower-1","seq":42,"at":"2026-11-29T13:00:00Z","source":"camera","system":"ydin","request":{"system":"ydin","attribute":4,"skill":2,"mode":"under","modifiers":[1]},"dice":[{"die":"d8","face":3,"kept":true},{"die":"d8","face":7,"kept":false}],"total":3,"target":6,"outcome":"success","odds":{"critical_success":0.4375,"success":0.5,"failure":0.060546875,"catastrophic_failure":0.001953125},"text":"Stealth: 2d8 keep lowest → 3 vs 6: success","details":{}}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Append(r); err != nil {
			b.Fatal(err)
		}
	}
}
