package history

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/towerd/towerd/rules"
)

var t0 = time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)

func resultRec(at time.Time, faces ...Face) Record {
	return Record{
		Time: at, Kind: KindResult, Source: rules.SourceCamera, Faces: faces, SettleMS: 800,
		Result: json.RawMessage(`{"v":1,"tower":"t","seq":1}`),
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	recs := []Record{
		resultRec(t0, Face{rules.D6, 3}, Face{rules.D10, 0}, Face{rules.D100, 90}),
		{Time: t0.Add(time.Second), Kind: KindError, Code: rules.CodeMisread, Error: json.RawMessage(`{"code":"misread"}`)},
		{Time: t0.Add(2 * time.Second), Kind: KindResult, Source: rules.SourceManual},
	}
	for _, r := range recs {
		line, err := EncodeLine(r)
		if err != nil {
			t.Fatalf("EncodeLine(%+v): %v", r, err)
		}
		if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
			t.Fatalf("line %q is not exactly one line", line)
		}
		got, err := DecodeLine(line)
		if err != nil {
			t.Fatalf("DecodeLine(%s): %v", line, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, r)
		}
	}
}

func TestEncodeLineRejects(t *testing.T) {
	cases := map[string]Record{
		"field time":           {Kind: KindResult},
		"field kind":           {Time: t0, Kind: "roll"},
		"field code: missing":  {Time: t0, Kind: KindError},
		"field code: a result": {Time: t0, Kind: KindResult, Code: "misread"},
		"faces[1].face":        {Time: t0, Kind: KindResult, Faces: []Face{{rules.D6, 6}, {rules.D6, 7}}},
		"faces[0].die":         {Time: t0, Kind: KindResult, Faces: []Face{{rules.Die(7), 1}}},
		"field settle_ms":      {Time: t0, Kind: KindResult, SettleMS: -1},
		"field result":         {Time: t0, Kind: KindResult, Result: json.RawMessage(`{`)},
	}
	for want, r := range cases {
		_, err := EncodeLine(r)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("EncodeLine(%+v) = %v, want an error naming %q", r, err, want)
		}
	}
}

func TestDecodeLineNamesField(t *testing.T) {
	cases := map[string]string{
		`{"v":1,"kind":"result"}`:                                                               "field time",
		`{"v":1,"time":"2026-11-29T13:00:00Z","kind":"nope"}`:                                   "field kind",
		`{"v":1,"time":"2026-11-29T13:00:00Z","kind":"result","faces":[{"die":"d7","face":1}]}`: "faces[0].die",
		`{"v":1,"time":"2026-11-29T13:00:00Z","kind":"result","faces":[{"die":"d6"}]}`:          "faces[0].face",
		`{"v":1,"time":"2026-11-29T13:00:00Z","kind":"result","faces":[{"die":"d4","face":0}]}`: "faces[0].face",
		`{"v":1,"time":"2026-11-29T13:00:00Z","kind":"error"}`:                                  "field code",
		`{"v":1,"time":"2026-11-29T13:00:00Z","kind":"result"} trailing`:                        "not a history record",
		`[1,2]`:           "not a history record",
		`{"time":"soon"}`: "not a history record",
	}
	for line, want := range cases {
		_, err := DecodeLine([]byte(line))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeLine(%s) = %v, want an error naming %q", line, err, want)
		}
	}
}

// Later format versions may add fields; a reader keeps what it knows.
func TestDecodeLineToleratesNewFields(t *testing.T) {
	r, err := DecodeLine([]byte(`{"v":2,"time":"2026-11-29T13:00:00Z","kind":"result","source":"sim","faces":[{"die":"d20","face":20,"tilt":3}],"colour":"red"}` + "\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != KindResult || len(r.Faces) != 1 || r.Faces[0] != (Face{rules.D20, 20}) {
		t.Errorf("got %+v", r)
	}
}

func TestResultAndErrorRecord(t *testing.T) {
	res := rules.Result{V: 1, ID: "r-1", Tower: "t", Seq: 3, At: t0, Source: rules.SourceSim, System: "dice",
		Request: json.RawMessage(`{"system":"dice","expr":"d10+d%"}`),
		Outcome: rules.Outcome{Dice: []rules.RolledDie{{Die: rules.D10, Face: 10, Kept: true}, {Die: rules.D100, Face: 37, Kept: true}}, Total: 47, Outcome: "rolled"}}
	r, err := ResultRecord(res, nil, 1234*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != KindResult || r.Source != rules.SourceSim || r.SettleMS != 1234 || !r.Time.Equal(t0) {
		t.Errorf("record %+v", r)
	}
	if want := []Face{{rules.D10, 10}, {rules.D100, 37}}; !reflect.DeepEqual(r.Faces, want) {
		t.Errorf("faces from result = %v, want %v", r.Faces, want)
	}
	var back rules.Result
	if err := json.Unmarshal(r.Result, &back); err != nil || back.ID != "r-1" || back.Total != 47 {
		t.Errorf("result JSON %s: %v", r.Result, err)
	}
	if err := r.Validate(); err != nil {
		t.Error(err)
	}

	res.Source = rules.SourceManual
	if r, _ := ResultRecord(res, nil, 0); r.Faces != nil {
		t.Errorf("manual result got faces %v; hand-entered faces are not physical evidence", r.Faces)
	}
	phys := []Face{{rules.D10, 0}, {rules.D100, 30}}
	res.Source = rules.SourceCamera
	if r, _ := ResultRecord(res, phys, 0); !reflect.DeepEqual(r.Faces, phys) {
		t.Errorf("given physical faces replaced: %v", r.Faces)
	}

	e, err := ErrorRecord(rules.ErrorMsg{V: 1, ID: "r-2", Tower: "t", At: t0, Code: rules.CodeMisread, Message: "no dice"}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e.Kind != KindError || e.Code != rules.CodeMisread || e.Validate() != nil {
		t.Errorf("error record %+v", e)
	}
}

// FuzzDecodeLine: no input panics; whatever decodes re-encodes to a line
// that decodes to the same record.
func FuzzDecodeLine(f *testing.F) {
	good, _ := EncodeLine(resultRec(t0, Face{rules.D6, 3}, Face{rules.D100, 0}))
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(`{"v":1,"time":"2026-11-29T13:00:00Z","kind":"error","code":"misread","error":{"x":[1,2]}}`))
	f.Add([]byte(`{"time":"2026-11-29T13:00:00Z","kind":"result","faces":[{"die":"d%","face":100},null]}`))
	f.Add([]byte(`{"time":null,"faces":{"die":1}}`))
	f.Add([]byte("\x00\xff{\"v\":"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := DecodeLine(line)
		if err != nil {
			return
		}
		enc, err := EncodeLine(r)
		if err != nil {
			t.Fatalf("decoded record %+v does not encode: %v", r, err)
		}
		r2, err := DecodeLine(enc)
		if err != nil {
			t.Fatalf("re-encoded line %q does not decode: %v", enc, err)
		}
		enc2, err := EncodeLine(r2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding not stable:\n%q\n%q (%v)", enc, enc2, err)
		}
	})
}
