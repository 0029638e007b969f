package history

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// File names in the state directory: the live file and its rotations,
// history.1.jsonl being the newest rotated file.
const (
	liveName   = "history.jsonl"
	lockName   = "history.lock"
	namePrefix = "history."
	nameSuffix = ".jsonl"
)

func rotatedName(i int) string { return namePrefix + strconv.Itoa(i) + nameSuffix }

// rotatedIndex returns N for "history.N.jsonl" (N >= 1).
func rotatedIndex(name string) (int, bool) {
	if len(name) <= len(namePrefix)+len(nameSuffix) ||
		!strings.HasPrefix(name, namePrefix) || !strings.HasSuffix(name, nameSuffix) {
		return 0, false // also "history.jsonl", where prefix and suffix overlap
	}
	s := name[len(namePrefix) : len(name)-len(nameSuffix)]
	if s == "" || s[0] == '0' || s[0] == '+' {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// rotatedIndices lists the N of every history.N.jsonl in dir, ascending.
func rotatedIndices(dir string) ([]int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var idx []int
	for _, e := range ents {
		if n, ok := rotatedIndex(e.Name()); ok && e.Type().IsRegular() {
			idx = append(idx, n)
		}
	}
	sort.Ints(idx)
	return idx, nil
}

// LineError is a line Scan skipped.
type LineError struct {
	File string // base name, e.g. "history.2.jsonl"
	Line int    // 1-based
	Torn bool   // the file's last line, without its newline
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s line %d: %v", e.File, e.Line, e.Err)
}

// maxLineErrors bounds ScanInfo.Skipped so a ruined file cannot fill memory.
const maxLineErrors = 20

// ScanInfo tells what Scan read and skipped.
type ScanInfo struct {
	Files   int // files read
	Records int // records passed to the callback
	// Torn counts last lines cut short (a crash or power loss mid-write, or a
	// write in progress); Garbled counts complete lines that did not decode.
	Torn    int
	Garbled int
	// Skipped describes the first skipped lines (at most 20).
	Skipped []*LineError
}

func (s *ScanInfo) skip(e *LineError) {
	if e.Torn {
		s.Torn++
	} else {
		s.Garbled++
	}
	if len(s.Skipped) < maxLineErrors {
		s.Skipped = append(s.Skipped, e)
	}
}

// ErrStop, returned by a Scan callback, ends the scan early without error.
var ErrStop = errors.New("history: stop scan")

// Scan calls fn for every record in dir, oldest first: the rotated files
// from the highest number down, then the live file. Torn and garbled lines
// are skipped and counted, never fatal. A directory without history is
// empty, not an error; a missing directory is an error. An error from fn
// ends the scan and is returned (ErrStop ends it quietly).
func Scan(dir string, fn func(Record) error) (ScanInfo, error) {
	var info ScanInfo
	idx, err := rotatedIndices(dir)
	if err != nil {
		return info, fmt.Errorf("history: scan %s: %w", dir, err)
	}
	names := make([]string, 0, len(idx)+1)
	for i := len(idx) - 1; i >= 0; i-- {
		names = append(names, rotatedName(idx[i]))
	}
	names = append(names, liveName)
	// Open every file before reading any: a rotation by a running daemon
	// renames files but the open descriptors still see a consistent set.
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, n := range names {
		f, err := os.Open(filepath.Join(dir, n))
		if errors.Is(err, os.ErrNotExist) {
			continue // rotated away meanwhile, or no live file yet
		}
		if err != nil {
			return info, fmt.Errorf("history: scan: %w", err)
		}
		files = append(files, f)
	}
	for _, f := range files {
		info.Files++
		if err := scanFile(f, filepath.Base(f.Name()), &info, fn); err != nil {
			if errors.Is(err, ErrStop) {
				return info, nil
			}
			return info, err
		}
	}
	return info, nil
}

func scanFile(f io.Reader, name string, info *ScanInfo, fn func(Record) error) error {
	lr := newLineReader(f)
	for {
		line, st, err := lr.next()
		if err != nil {
			return fmt.Errorf("history: read %s: %w", name, err)
		}
		n := lr.lineNo
		switch st {
		case lineEOF:
			return nil
		case lineTorn:
			info.skip(&LineError{File: name, Line: n, Torn: true, Err: errors.New("torn line (no newline at end of file)")})
			return nil
		case lineOverlong:
			info.skip(&LineError{File: name, Line: n, Err: fmt.Errorf("line longer than %d bytes", MaxLine)})
			continue
		}
		if len(line) == 0 {
			continue
		}
		rec, err := DecodeLine(line)
		if err != nil {
			info.skip(&LineError{File: name, Line: n, Err: err})
			continue
		}
		info.Records++
		if err := fn(rec); err != nil {
			return err
		}
	}
}

type lineStatus int

const (
	lineOK       lineStatus = iota
	lineTorn                // last line without a newline
	lineOverlong            // longer than MaxLine; its bytes were dropped
	lineEOF
)

// lineReader splits a stream into lines of at most MaxLine bytes without
// ever holding more than that in memory.
type lineReader struct {
	br     *bufio.Reader
	buf    []byte
	lineNo int
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line without its newline; the slice is valid until
// the following call.
func (lr *lineReader) next() ([]byte, lineStatus, error) {
	lr.buf = lr.buf[:0]
	overlong := false
	for {
		chunk, err := lr.br.ReadSlice('\n')
		if !overlong {
			if len(lr.buf)+len(chunk) > MaxLine {
				overlong = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			lr.lineNo++
			if overlong {
				return nil, lineOverlong, nil
			}
			return trimNewline(lr.buf), lineOK, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(lr.buf) == 0 && !overlong {
				return nil, lineEOF, nil
			}
			lr.lineNo++
			return lr.buf, lineTorn, nil
		default:
			return nil, lineEOF, err
		}
	}
}

func trimNewline(b []byte) []byte {
	b = b[:len(b)-1]
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
