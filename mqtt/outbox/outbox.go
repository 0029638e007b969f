// Package outbox is the durable side of towerd's MQTT layer: the per-tower
// result sequence, the results and errors the broker has not acknowledged
// yet, and the journal of accepted request keys, kept in one checksummed,
// preallocated, group-committed log in the state directory.
package outbox

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/towerd/towerd/clock"
)

// Kind is what an outbox entry carries.
type Kind uint8

// Entry kinds.
const (
	Result Kind = 1
	Error  Kind = 2
)

// Entry is one message to deliver: a result or an error.
type Entry struct {
	// N orders entries (and accepts) in the log; it only grows.
	N uint64
	// Seq is the result's per-tower sequence number, 0 for errors.
	Seq  uint64
	Kind Kind
	// Key is the request the entry answers, "" when no request asked for it
	// (a roll started by the button).
	Key string
	At  time.Time
	// Payload is the MQTT payload, exactly as it is published.
	Payload []byte

	ticket Ticket
	acked  bool
}

// State is how far a request key has got.
type State uint8

// Key states.
const (
	Unknown  State = iota // never seen, or forgotten
	Accepted              // accepted, no durable answer yet
	Done                  // answered; Lookup returns the answer
)

// Accept is a request accepted and not yet answered.
type Accept struct {
	Key     string
	N       uint64
	At      time.Time
	Payload []byte
}

// Ticket names a point in the log; Sync(t) returns once everything appended
// up to it is durable.
type Ticket uint64

// Options tune a Store; zero values take the defaults.
type Options struct {
	// KeepDone is how many answered keys are remembered for deduplication
	// (1024).
	KeepDone int
	// KeepFor forgets answered keys older than this (24 h).
	KeepFor time.Duration
	// SegmentSize is the log size that triggers a compaction (4 MiB, at
	// least 64 KiB; more when the live state is large).
	SegmentSize int64
	Clock       clock.Clock
	Log         *slog.Logger
}

// ErrClosed is returned after Close or Abandon.
var ErrClosed = errors.New("outbox: closed")

// ErrDone is returned by Finish for a key that already has its answer.
var ErrDone = errors.New("outbox: request already answered")

// ErrKnown is returned by Accept for a key already accepted or answered.
var ErrKnown = errors.New("outbox: request key already known")

const (
	logName  = "outbox.log"
	tmpName  = "outbox.tmp"
	lockName = "lock"
	// zeroChunk is how far ahead of the records the file is zero-filled.
	zeroChunk = 256 << 10
)

// Store is the durable outbox and request journal. Safe for concurrent use.
type Store struct {
	dir  string
	opt  Options
	log  *slog.Logger
	lock *os.File

	// syncMu lets one goroutine at a time run fdatasync; the others wait and
	// usually find their ticket covered by it (group commit).
	syncMu sync.Mutex

	mu        sync.Mutex
	f         *os.File
	off       int64 // next write offset in f
	zeroEnd   int64 // f is zero-filled up to here
	compactAt int64 // compact when off passes this
	written   uint64
	synced    uint64
	closed    bool
	buf       []byte
	retired   []*os.File // replaced files, closed by the next Sync

	nextN   uint64
	seq     uint64
	keys    map[string]*keyState
	unacked map[uint64]*Entry
	done    []doneRef // answered keys, oldest first, for forgetting
	last    *Entry    // newest result
}

type keyState struct {
	n       uint64
	at      time.Time
	payload []byte // the request while it is pending
	done    *Entry
}

type doneRef struct {
	key string
	n   uint64
	at  time.Time
}

// Open opens (creating when needed) the store in dir, replays its log and
// takes the directory's lock.
func Open(dir string, opt Options) (*Store, error) {
	if opt.KeepDone <= 0 {
		opt.KeepDone = 1024
	}
	if opt.KeepFor <= 0 {
		opt.KeepFor = 24 * time.Hour
	}
	if opt.SegmentSize <= 0 {
		opt.SegmentSize = 4 << 20
	}
	opt.SegmentSize = max(opt.SegmentSize, 64<<10)
	if opt.Clock == nil {
		opt.Clock = clock.Real{}
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	lock, err := lockFile(filepath.Join(dir, lockName))
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	s := &Store{
		dir: dir, opt: opt, log: opt.Log, lock: lock, nextN: 1,
		keys: map[string]*keyState{}, unacked: map[uint64]*Entry{},
	}
	if err := s.load(); err != nil {
		s.closeFiles()
		return nil, err
	}
	return s, nil
}

func (s *Store) path(name string) string { return filepath.Join(s.dir, name) }

// load replays the log, or creates it.
func (s *Store) load() error {
	os.Remove(s.path(tmpName))
	data, err := os.ReadFile(s.path(logName))
	if errors.Is(err, os.ErrNotExist) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.compactLocked(0)
	}
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	off := 0
	for {
		r, n, err := readFrame(data[off:])
		if err == errEnd {
			break
		}
		if err == errTorn {
			next := salvage(data, off+1)
			if next < 0 {
				// The normal case: the last write was cut short by a crash.
				s.log.Warn("outbox: damaged tail discarded (write interrupted by a crash?)",
					"file", s.path(logName), "offset", off)
				break
			}
			s.log.Error("outbox: damaged record skipped", "file", s.path(logName), "offset", off, "bytes", next-off)
			off = next
			continue
		}
		s.apply(&r)
		off += n
	}
	f, err := os.OpenFile(s.path(logName), os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.f, s.off, s.zeroEnd, s.compactAt = f, int64(off), int64(len(data)), s.opt.SegmentSize
	// Start afresh when the log is long or ends in damage: compaction
	// rewrites only what is live.
	if s.off > s.opt.SegmentSize/2 || !allZero(data[off:]) {
		return s.compactLocked(0)
	}
	return nil
}

// salvage finds the next intact frame at or after from, or -1: a damaged
// record in the middle of the log (not a torn tail) costs only itself.
func salvage(data []byte, from int) int {
	for i := from; i+frameHeader < len(data); i++ {
		if _, _, err := readFrame(data[i:]); err == nil {
			return i
		}
	}
	return -1
}

// apply replays one record into memory.
func (s *Store) apply(r *record) {
	s.nextN = max(s.nextN, r.n+1)
	switch r.typ {
	case recMeta:
		s.seq = max(s.seq, r.seq)
	case recAccept:
		s.keys[r.key] = &keyState{n: r.n, at: fromUnixNano(r.at), payload: r.payload}
	case recOut:
		e := &Entry{N: r.n, Seq: r.seq, Kind: r.kind, Key: r.key, At: fromUnixNano(r.at), Payload: r.payload}
		s.unacked[e.N] = e
		s.finished(e)
	case recAck:
		if e := s.unacked[r.n]; e != nil {
			e.acked = true
			delete(s.unacked, r.n)
		}
	}
}

// finished records e as its key's answer and as the newest result.
func (s *Store) finished(e *Entry) {
	if e.Kind == Result {
		s.seq = max(s.seq, e.Seq)
		if s.last == nil || e.Seq > s.last.Seq {
			s.last = e
		}
	}
	if e.Key == "" {
		return
	}
	ks := s.keys[e.Key]
	if ks == nil {
		ks = &keyState{n: e.N, at: e.At}
		s.keys[e.Key] = ks
	}
	ks.done, ks.payload = e, nil
	s.done = append(s.done, doneRef{key: e.Key, n: e.N, at: e.At})
	s.forget()
}

// forget drops the oldest answered keys beyond KeepDone or KeepFor.
func (s *Store) forget() {
	cutoff := s.opt.Clock.Now().Add(-s.opt.KeepFor)
	i := 0
	for ; i < len(s.done); i++ {
		d := s.done[i]
		if len(s.done)-i <= s.opt.KeepDone && !d.at.Before(cutoff) {
			break
		}
		if ks := s.keys[d.key]; ks != nil && ks.done != nil && ks.done.N == d.n {
			delete(s.keys, d.key)
		}
	}
	s.done = s.done[i:]
}

// Lookup tells how far key has got; for Done it returns the durable answer.
// An answer written but not yet durable reads as Accepted, so it is never
// re-published before it is safe on disk.
func (s *Store) Lookup(key string) (State, *Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ks := s.keys[key]
	switch {
	case ks == nil:
		return Unknown, nil
	case ks.done != nil && uint64(ks.done.ticket) <= s.synced:
		return Done, ks.done
	}
	return Accepted, nil
}

// Accept journals a request under key (a caller-chosen key, or "" to have
// one assigned: such requests cannot be deduplicated). The request is
// durable once Sync(ticket) returns.
func (s *Store) Accept(key string, payload []byte) (string, Ticket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", 0, ErrClosed
	}
	if key != "" && s.keys[key] != nil {
		return key, 0, ErrKnown
	}
	n := s.nextN
	s.nextN++
	if key == "" {
		key = "#" + strconv.FormatUint(n, 10)
	}
	at := s.opt.Clock.Now()
	p := slices.Clone(payload)
	t, err := s.appendLocked(&record{typ: recAccept, n: n, at: unixNano(at), key: key, payload: p})
	if err != nil {
		return "", 0, err
	}
	s.keys[key] = &keyState{n: n, at: at, payload: p}
	return key, t, nil
}

// Finish appends the answer for key ("" for a result no request asked for)
// and returns once it is durable. For a Result, build is given the next
// sequence number, so the number is persisted with the payload it is in.
// A key already answered gets ErrDone and its earlier answer.
func (s *Store) Finish(key string, kind Kind, build func(seq uint64) ([]byte, error)) (*Entry, error) {
	e, t, err := s.finish(key, kind, build)
	if err != nil {
		return e, err
	}
	return e, s.Sync(t)
}

func (s *Store) finish(key string, kind Kind, build func(seq uint64) ([]byte, error)) (*Entry, Ticket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, 0, ErrClosed
	}
	if ks := s.keys[key]; key != "" && ks != nil && ks.done != nil {
		return ks.done, ks.done.ticket, ErrDone
	}
	var seq uint64
	if kind == Result {
		seq = s.seq + 1
	}
	payload, err := build(seq)
	if err != nil {
		return nil, 0, fmt.Errorf("outbox: build payload: %w", err)
	}
	e := &Entry{N: s.nextN, Seq: seq, Kind: kind, Key: key, At: s.opt.Clock.Now(), Payload: payload}
	t, err := s.appendLocked(&record{typ: recOut, n: e.N, seq: seq, at: unixNano(e.At), kind: kind, key: key, payload: payload})
	if err != nil {
		return nil, 0, err
	}
	s.nextN++
	e.ticket = t
	s.unacked[e.N] = e
	s.finished(e)
	return e, t, nil
}

// Ack records that the broker acknowledged entry n, returning the entry (nil
// when n is not waiting). Acks are not synced on their own: losing one only
// means the entry is delivered once more after a crash.
func (s *Store) Ack(n uint64) *Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.unacked[n]
	if e == nil || s.closed {
		return nil
	}
	delete(s.unacked, n)
	e.acked = true
	if _, err := s.appendLocked(&record{typ: recAck, n: n}); err != nil {
		s.log.Warn("outbox: record ack", "n", n, "err", err)
	}
	return e
}

// Delivered reports whether the broker acknowledged e.
func (s *Store) Delivered(e *Entry) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return e.acked
}

// Mark is a ticket for everything appended so far.
func (s *Store) Mark() Ticket {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Ticket(s.written)
}

// Durable reports whether e is safely on disk.
func (s *Store) Durable(e *Entry) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return uint64(e.ticket) <= s.synced
}

// Unacked returns the entries the broker has not acknowledged, oldest first.
func (s *Store) Unacked() []*Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Entry, 0, len(s.unacked))
	for _, e := range s.unacked {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *Entry) int { return cmpN(a.N, b.N) })
	return out
}

// UnackedCount is len(Unacked()) without the copy.
func (s *Store) UnackedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.unacked)
}

// Pending returns the requests accepted and not answered, oldest first.
func (s *Store) Pending() []Accept {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Accept
	for k, ks := range s.keys {
		if ks.done == nil {
			out = append(out, Accept{Key: k, N: ks.n, At: ks.at, Payload: ks.payload})
		}
	}
	slices.SortFunc(out, func(a, b Accept) int { return cmpN(a.N, b.N) })
	return out
}

// Last returns the newest result, or nil.
func (s *Store) Last() *Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Seq returns the newest result sequence number.
func (s *Store) Seq() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

func cmpN(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Sync returns once everything appended up to t is durable. Concurrent
// callers share one fdatasync.
func (s *Store) Sync(t Ticket) error {
	if t == 0 {
		return nil
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.mu.Lock()
	if uint64(t) <= s.synced {
		s.mu.Unlock()
		return nil
	}
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	target, f := s.written, s.f
	s.mu.Unlock()

	err := datasync(f)

	s.mu.Lock()
	if err == nil && target > s.synced {
		s.synced = target
	}
	retired := s.retired
	s.retired = nil
	s.mu.Unlock()
	for _, r := range retired {
		r.Close()
	}
	if err != nil {
		return fmt.Errorf("outbox: sync %s: %w", s.path(logName), err)
	}
	return nil
}

// appendLocked writes r at the end of the log, compacting first when the
// log has grown past compactAt.
func (s *Store) appendLocked(r *record) (Ticket, error) {
	s.buf = appendFrame(s.buf[:0], r)
	n := int64(len(s.buf))
	if n-frameHeader > maxBody {
		return 0, fmt.Errorf("outbox: record of %d bytes is over the %d limit", n, maxBody)
	}
	if s.off+n > s.compactAt {
		frame := s.buf
		s.buf = nil
		if err := s.compactLocked(n); err != nil {
			return 0, err
		}
		s.buf = frame
	}
	if s.off+n > s.zeroEnd {
		// Zero-fill ahead: one size change (journal commit) per chunk
		// instead of one per sync. Only an optimisation, so a failure is
		// no error: the record is simply appended.
		if _, err := s.f.WriteAt(make([]byte, zeroChunk), s.zeroEnd); err == nil {
			s.zeroEnd += zeroChunk
		}
	}
	if _, err := s.f.WriteAt(s.buf, s.off); err != nil {
		// The offset does not move, so the next record overwrites whatever
		// part of this one reached the file.
		return 0, fmt.Errorf("outbox: write %s: %w", s.path(logName), err)
	}
	s.off += n
	s.zeroEnd = max(s.zeroEnd, s.off)
	s.written += uint64(n)
	return Ticket(s.written), nil
}

// compactLocked writes the live state into a fresh file (zero-filled for
// extra more bytes and a chunk) and swaps it in: the pending requests, the entries not
// acknowledged, the answers remembered for deduplication and the newest
// result. Everything appended so far is durable when it returns.
func (s *Store) compactLocked(extra int64) error {
	var b []byte
	b = appendFrame(b, &record{typ: recMeta, n: s.nextN - 1, seq: s.seq})
	var accepts []*record
	entries := map[uint64]*Entry{}
	for k, ks := range s.keys {
		if ks.done == nil {
			accepts = append(accepts, &record{typ: recAccept, n: ks.n, at: unixNano(ks.at), key: k, payload: ks.payload})
		} else {
			entries[ks.done.N] = ks.done
		}
	}
	for n, e := range s.unacked {
		entries[n] = e
	}
	if s.last != nil {
		entries[s.last.N] = s.last
	}
	slices.SortFunc(accepts, func(a, b *record) int { return cmpN(a.n, b.n) })
	for _, r := range accepts {
		b = appendFrame(b, r)
	}
	ns := make([]uint64, 0, len(entries))
	for n := range entries {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	for _, n := range ns {
		e := entries[n]
		b = appendFrame(b, &record{typ: recOut, n: e.N, seq: e.Seq, at: unixNano(e.At), kind: e.Kind, key: e.Key, payload: e.Payload})
		if e.acked {
			b = appendFrame(b, &record{typ: recAck, n: e.N})
		}
	}

	from := s.path(tmpName)
	f, err := os.OpenFile(from, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("outbox: compact: %w", err)
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(from)
		return fmt.Errorf("outbox: compact: %w", err)
	}
	zeroEnd := int64(len(b)) + extra + zeroChunk
	if _, err := f.WriteAt(append(b, make([]byte, zeroEnd-int64(len(b)))...), 0); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := os.Rename(from, s.path(logName)); err != nil {
		return fail(err)
	}
	if err := syncDir(s.dir); err != nil {
		// The rename happened; the new segment is the log from now on even
		// if the directory entry is not durable yet.
		s.log.Warn("outbox: sync state dir", "dir", s.dir, "err", err)
	}
	if s.f != nil {
		s.retired = append(s.retired, s.f)
	}
	s.f, s.off, s.zeroEnd = f, int64(len(b)), zeroEnd
	s.compactAt = max(s.opt.SegmentSize, 4*(int64(len(b))+extra))
	s.synced = s.written
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Close makes everything durable and releases the files and the lock.
func (s *Store) Close() error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	var err error
	if s.written > s.synced {
		if err = datasync(s.f); err == nil {
			s.synced = s.written
		}
	}
	s.mu.Unlock()
	s.closeFiles()
	if err != nil {
		return fmt.Errorf("outbox: close: %w", err)
	}
	return nil
}

// Abandon releases the files and the lock without syncing, as a crash of
// the process would (data already written stays in the page cache); tests
// use it to simulate one.
func (s *Store) Abandon() {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.closeFiles()
}

func (s *Store) closeFiles() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range append(s.retired, s.f) {
		if f != nil {
			f.Close()
		}
	}
	s.retired, s.f = nil, nil
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
}
