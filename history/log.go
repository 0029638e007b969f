package history

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/towerd/towerd/clock"
)

// Defaults for Options.
const (
	DefaultMaxBytes = 10 << 20
	DefaultKeep     = 5
)

// Options tune a Log; the zero value is the default.
type Options struct {
	// MaxBytes is the size at which the live file is rotated (10 MiB).
	MaxBytes int64
	// Keep is how many rotated files are kept (5); negative keeps none, so a
	// rotation starts the history afresh.
	Keep int
	// Clock stamps records appended without a time (the real clock).
	Clock clock.Clock
	// Logger receives repair and rotation notices (slog.Default()).
	Logger *slog.Logger

	// sync replaces fsync in tests: fault injection, and speed where
	// durability is not what is tested.
	sync func(*os.File) error
}

func (o *Options) fill() {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Keep == 0 {
		o.Keep = DefaultKeep
	}
	if o.Keep < 0 {
		o.Keep = 0
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.sync == nil {
		o.sync = (*os.File).Sync
	}
}

// Log is the open history of one state directory. Only one process may hold
// it open (the daemon); readers use Scan or Load. Safe for concurrent use.
type Log struct {
	dir  string
	opts Options
	lock io.Closer

	mu   sync.Mutex
	f    *os.File
	size int64 // bytes of complete lines in f
	// dirty is set when a failed write may have left a partial line that
	// could not be cut off; the next Append repairs first.
	dirty bool
	// acc, when not nil, holds the statistics of everything on disk.
	acc     *Accumulator
	scanned ScanInfo
	closed  bool
}

// Open opens (creating when needed) the history in dir, the daemon's state
// directory. A torn last line left by a crash is cut off so the next record
// starts on a line of its own; it was never acknowledged, since Append
// returns only after fsync.
func Open(dir string, opts Options) (*Log, error) {
	opts.fill()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("history: open %s: %w", dir, err)
	}
	lk, err := lockDir(filepath.Join(dir, lockName))
	if err != nil {
		return nil, fmt.Errorf("history: open %s: %w", dir, err)
	}
	l := &Log{dir: dir, opts: opts, lock: lk}
	if err := l.openLive(); err != nil {
		lk.Close()
		return nil, fmt.Errorf("history: open %s: %w", dir, err)
	}
	if err := l.pruneLocked(); err != nil {
		l.f.Close()
		lk.Close()
		return nil, fmt.Errorf("history: open %s: %w", dir, err)
	}
	return l, nil
}

// Dir is the state directory the log lives in.
func (l *Log) Dir() string { return l.dir }

// openLive opens the live file, repairing a torn tail.
func (l *Log) openLive() error {
	path := filepath.Join(l.dir, liveName)
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, os.ErrNotExist)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	size, err := completeSize(f)
	if err != nil {
		f.Close()
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if st.Size() != size {
		l.opts.Logger.Warn("history: cutting off a torn last line", "file", path, "bytes", st.Size()-size)
		if err := f.Truncate(size); err != nil {
			f.Close()
			return fmt.Errorf("cut torn line of %s: %w", path, err)
		}
		if err := l.opts.sync(f); err != nil {
			f.Close()
			return fmt.Errorf("sync %s: %w", path, err)
		}
	}
	if created {
		if err := l.syncDir(); err != nil {
			f.Close()
			return err
		}
	}
	l.f, l.size, l.dirty = f, size, false
	return nil
}

// completeSize returns the length of f up to and including its last newline.
func completeSize(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	end := st.Size()
	buf := make([]byte, 32<<10)
	for end > 0 {
		n := int64(len(buf))
		if n > end {
			n = end
		}
		if _, err := f.ReadAt(buf[:n], end-n); err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("read %s: %w", f.Name(), err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return end - n + int64(i) + 1, nil
		}
		end -= n
	}
	return 0, nil
}

// Append writes rec as one line and fsyncs it before returning; on error
// nothing of rec remains in the file (or, failing that, the next Append
// cuts it off). A zero rec.Time is set from the clock.
func (l *Log) Append(rec Record) error {
	if rec.Time.IsZero() {
		rec.Time = l.opts.Clock.Now()
	}
	line, err := EncodeLine(rec)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errors.New("history: append: log is closed")
	}
	if l.f == nil || l.dirty {
		if err := l.repairLocked(); err != nil {
			return fmt.Errorf("history: append: %w", err)
		}
	}
	if l.size > 0 && l.size+int64(len(line)) > l.opts.MaxBytes {
		if err := l.rotateLocked(); err != nil {
			return fmt.Errorf("history: append: rotate: %w", err)
		}
	}
	if _, err := l.f.Write(line); err != nil {
		l.cutLocked()
		return fmt.Errorf("history: append to %s: %w", l.f.Name(), err)
	}
	if err := l.opts.sync(l.f); err != nil {
		// The line may or may not be on disk; cut it so the caller's retry
		// or error report is the only account of this record.
		l.cutLocked()
		return fmt.Errorf("history: sync %s: %w", l.f.Name(), err)
	}
	l.size += int64(len(line))
	if l.acc != nil {
		rec.Time = rec.Time.UTC()
		l.acc.Add(rec)
		l.scanned.Records++
	}
	return nil
}

// cutLocked removes a partial write after a failure.
func (l *Log) cutLocked() {
	if err := l.f.Truncate(l.size); err != nil {
		l.dirty = true
		return
	}
	if err := l.opts.sync(l.f); err != nil {
		l.dirty = true
	}
}

// repairLocked reopens the live file after a failed write or rotation.
func (l *Log) repairLocked() error {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	return l.openLive()
}

// rotateLocked shifts history.N.jsonl to N+1 (dropping those beyond Keep),
// the live file to history.1.jsonl, and starts an empty live file.
func (l *Log) rotateLocked() error {
	if err := l.f.Close(); err != nil {
		l.f = nil
		return err
	}
	l.f = nil
	l.acc = nil // statistics now cover less; recomputed on demand
	idx, err := rotatedIndices(l.dir)
	if err != nil {
		return err
	}
	live := filepath.Join(l.dir, liveName)
	if l.opts.Keep == 0 {
		if err := os.Remove(live); err != nil {
			return err
		}
	} else {
		for i := len(idx) - 1; i >= 0; i-- {
			n := idx[i]
			if n >= l.opts.Keep {
				continue // removed by pruneLocked below
			}
			if err := os.Rename(filepath.Join(l.dir, rotatedName(n)), filepath.Join(l.dir, rotatedName(n+1))); err != nil {
				return err
			}
		}
		if err := os.Rename(live, filepath.Join(l.dir, rotatedName(1))); err != nil {
			return err
		}
	}
	if err := l.pruneLocked(); err != nil {
		return err
	}
	if err := l.openLive(); err != nil {
		return err
	}
	l.opts.Logger.Info("history: rotated", "dir", l.dir, "keep", l.opts.Keep)
	return l.syncDir()
}

// pruneLocked removes rotated files numbered beyond Keep.
func (l *Log) pruneLocked() error {
	idx, err := rotatedIndices(l.dir)
	if err != nil {
		return err
	}
	removed := false
	for _, n := range idx {
		if n > l.opts.Keep {
			if err := os.Remove(filepath.Join(l.dir, rotatedName(n))); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			removed = true
		}
	}
	if removed {
		return l.syncDir()
	}
	return nil
}

// Stats returns the statistics of the whole history on disk (what Load
// gives). The first call after Open or a rotation scans the files; later
// calls only add what was appended since, so the daemon may call it after
// every roll to refresh its retained stats topic.
func (l *Log) Stats() (Stats, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return Stats{}, errors.New("history: stats: log is closed")
	}
	if l.acc == nil {
		acc := &Accumulator{}
		info, err := Scan(l.dir, func(r Record) error { acc.Add(r); return nil })
		if err != nil {
			return Stats{}, err
		}
		l.acc, l.scanned = acc, info
	}
	s := l.acc.Stats()
	s.SkippedLines = l.scanned.Torn + l.scanned.Garbled
	return s, nil
}

// Close closes the live file and releases the directory.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	var err error
	if l.f != nil {
		err = l.f.Close()
	}
	if lerr := l.lock.Close(); err == nil {
		err = lerr
	}
	if err != nil {
		return fmt.Errorf("history: close: %w", err)
	}
	return nil
}

// syncDir makes renames and new files in the directory durable.
func (l *Log) syncDir() error {
	d, err := os.Open(l.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := l.opts.sync(d); err != nil {
		return fmt.Errorf("sync dir %s: %w", l.dir, err)
	}
	return nil
}
