// Package history keeps the tower's append-only result log and computes
// fairness statistics from it.
package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/towerd/towerd/rules"
)

// Record kinds.
const (
	KindResult = "result"
	KindError  = "error"
)

// FormatVersion is written as "v" on every line. Readers accept lines of
// later versions and use the fields they know (fields are only ever added).
const FormatVersion = 1

// MaxLine is the longest line the log writes or reads, newline included; a
// longer line on disk is skipped as garbled rather than read into memory.
const MaxLine = 1 << 20

// Face is one physical die as the camera (or the simulator) saw it: d10 0–9
// and the percentile d100 0, 10, …, 90, as vision reports them. Rules faces
// (d10 1–10, d100 1–100) are accepted too; the statistics fold both onto the
// same physical faces (see DieStats).
type Face struct {
	Die  rules.Die
	Face int
}

// Record is one line of the history: a published result or error.
type Record struct {
	// Time is when the roll finished; Append fills it from the clock when zero.
	Time time.Time
	// Kind is KindResult or KindError.
	Kind string
	// Source is the result's source (camera, sim, manual), if known.
	Source string
	// Faces are the physical dice read, for camera and sim rolls. Only results
	// count towards fairness; manual faces are never physical evidence.
	Faces []Face
	// SettleMS is how long the dice took to come to rest, in milliseconds;
	// 0 means not measured (manual rolls, errors before settling).
	SettleMS int64
	// Code is the error code of an error record (rules.CodeMisread, ...).
	Code string
	// Result is the full result JSON as published (results only).
	Result json.RawMessage
	// Error is the full error JSON as published (errors only).
	Error json.RawMessage
}

// wireFace and wireRecord are the JSON form of a line. Decoding goes through
// them so a bad value is reported with the field that holds it.
type wireFace struct {
	Die  string `json:"die"`
	Face *int   `json:"face"`
}

type wireRecord struct {
	V        int             `json:"v"`
	Time     *time.Time      `json:"time"`
	Kind     string          `json:"kind"`
	Source   string          `json:"source,omitempty"`
	Faces    []wireFace      `json:"faces,omitempty"`
	SettleMS int64           `json:"settle_ms,omitempty"`
	Code     string          `json:"code,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    json.RawMessage `json:"error,omitempty"`
}

// faceRange is the set of faces accepted for a kind: physical and rules
// numbering together (d10 0–10, d100 0–100), 1–n for the others.
func faceRange(d rules.Die) (lo, hi int) {
	switch d {
	case rules.D10, rules.D100:
		return 0, int(d)
	}
	return 1, int(d)
}

// Validate reports the first thing wrong with r, naming its field.
func (r *Record) Validate() error {
	if r.Time.IsZero() {
		return errors.New("field time: missing")
	}
	switch r.Kind {
	case KindResult:
		if r.Code != "" {
			return fmt.Errorf("field code: a result has no error code, got %q", r.Code)
		}
	case KindError:
		if r.Code == "" {
			return errors.New("field code: missing for an error record")
		}
	case "":
		return errors.New("field kind: missing")
	default:
		return fmt.Errorf("field kind: must be %q or %q, got %q", KindResult, KindError, r.Kind)
	}
	for i, f := range r.Faces {
		if !f.Die.Valid() {
			return fmt.Errorf("field faces[%d].die: %d is not a die kind", i, int(f.Die))
		}
		if lo, hi := faceRange(f.Die); f.Face < lo || f.Face > hi {
			return fmt.Errorf("field faces[%d].face: %d is outside %s (%d-%d)", i, f.Face, f.Die, lo, hi)
		}
	}
	if r.SettleMS < 0 {
		return fmt.Errorf("field settle_ms: must be >= 0, got %d", r.SettleMS)
	}
	if len(r.Result) > 0 && !json.Valid(r.Result) {
		return errors.New("field result: not valid JSON")
	}
	if len(r.Error) > 0 && !json.Valid(r.Error) {
		return errors.New("field error: not valid JSON")
	}
	return nil
}

// EncodeLine returns r as one JSON line ending in a newline.
func EncodeLine(r Record) ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("history: encode record: %w", err)
	}
	t := r.Time.UTC()
	w := wireRecord{
		V: FormatVersion, Time: &t, Kind: r.Kind, Source: r.Source,
		SettleMS: r.SettleMS, Code: r.Code, Result: r.Result, Error: r.Error,
	}
	for _, f := range r.Faces {
		face := f.Face
		w.Faces = append(w.Faces, wireFace{Die: f.Die.String(), Face: &face})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&w); err != nil { // Encode appends the newline
		return nil, fmt.Errorf("history: encode record: %w", err)
	}
	if buf.Len() > MaxLine {
		return nil, fmt.Errorf("history: encode record: line of %d bytes exceeds the %d byte limit", buf.Len(), MaxLine)
	}
	return buf.Bytes(), nil
}

// DecodeLine parses one line (with or without its newline). The error names
// the field at fault; it never panics, whatever the input.
func DecodeLine(line []byte) (Record, error) {
	line = bytes.TrimRight(line, "\r\n")
	var w wireRecord
	if err := json.Unmarshal(line, &w); err != nil {
		return Record{}, fmt.Errorf("not a history record: %w", err)
	}
	if w.Time == nil {
		return Record{}, errors.New("field time: missing")
	}
	r := Record{
		Time: w.Time.UTC(), Kind: w.Kind, Source: w.Source, SettleMS: w.SettleMS,
		Code: w.Code, Result: w.Result, Error: w.Error,
	}
	if len(w.Faces) > 0 {
		r.Faces = make([]Face, 0, len(w.Faces))
	}
	for i, f := range w.Faces {
		d, err := rules.ParseDie(f.Die)
		if err != nil {
			return Record{}, fmt.Errorf("field faces[%d].die: %q is not a die kind", i, f.Die)
		}
		if f.Face == nil {
			return Record{}, fmt.Errorf("field faces[%d].face: missing", i)
		}
		r.Faces = append(r.Faces, Face{Die: d, Face: *f.Face})
	}
	if err := r.Validate(); err != nil {
		return Record{}, err
	}
	return r, nil
}

// ResultRecord is the record of a published result. faces are the physical
// dice read; when nil for a camera or sim roll they are taken from the
// result's dice (rules faces, which the statistics fold onto physical ones).
func ResultRecord(res rules.Result, faces []Face, settle time.Duration) (Record, error) {
	raw, err := json.Marshal(res)
	if err != nil {
		return Record{}, fmt.Errorf("history: encode result %q: %w", res.ID, err)
	}
	if faces == nil && (res.Source == rules.SourceCamera || res.Source == rules.SourceSim) {
		for _, d := range res.Dice {
			faces = append(faces, Face{Die: d.Die, Face: d.Face})
		}
	}
	return Record{
		Time: res.At, Kind: KindResult, Source: res.Source, Faces: faces,
		SettleMS: settle.Milliseconds(), Result: raw,
	}, nil
}

// ErrorRecord is the record of a published error; faces and settle are
// whatever was seen before the roll failed (may be nil and 0).
func ErrorRecord(msg rules.ErrorMsg, faces []Face, settle time.Duration) (Record, error) {
	raw, err := json.Marshal(msg)
	if err != nil {
		return Record{}, fmt.Errorf("history: encode error %q: %w", msg.ID, err)
	}
	return Record{
		Time: msg.At, Kind: KindError, Code: msg.Code, Faces: faces,
		SettleMS: settle.Milliseconds(), Error: raw,
	}, nil
}
