package mqtt

import (
	"bytes"
	"net"
	"strings"
	"testing"

	"github.com/towerd/towerd/rules"
)

func TestDecodeRequest(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		id       string
		field    string // "" with ok for a valid request
		ok       bool
	}{
		{name: "valid", in: `{"id":"r1","system":"dice","expr":"2d6"}`, id: "r1", ok: true},
		{name: "no id", in: `{"system":"dice","expr":"d20"}`, ok: true},
		{name: "malformed JSON keeps the id", in: `{"id":"r2","system":"dice",`, id: "r2"},
		{name: "wrong type", in: `{"id":"r3","system":"dice","expr":7}`, id: "r3", field: "expr"},
		{name: "unknown system", in: `{"id":"r4","system":"chess"}`, id: "r4", field: "system"},
		{name: "not an object", in: `[1,2,3]`},
		{name: "number id", in: `{"id":5,"system":"dice"}`, field: "id"},
		{name: "empty", in: ``},
		{name: "binary garbage", in: "\x00\xff\xfe{\"id\":\"x\"}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, id, err := decodeRequest([]byte(tc.in))
			if id != tc.id {
				t.Errorf("id %q, want %q", id, tc.id)
			}
			if tc.ok {
				if err != nil || req == nil || req.ID != tc.id {
					t.Fatalf("got %v %v, want a request", req, err)
				}
				return
			}
			if err == nil || req != nil {
				t.Fatalf("got request %v, want an error", req)
			}
			if err.Code != rules.CodeBadRequest || err.Message == "" {
				t.Errorf("error %+v, want bad_request with a message", err)
			}
			if tc.field != "" && err.Field != tc.field {
				t.Errorf("field %q, want %q", err.Field, tc.field)
			}
		})
	}
}

func TestDecodeRequestOversizeKeepsID(t *testing.T) {
	p := []byte(`{"id":"big","system":"dice","label":"` + strings.Repeat("x", MaxPayload) + `"}`)
	req, id, err := decodeRequest(p)
	if req != nil || err == nil || err.Code != rules.CodeBadRequest || !strings.Contains(err.Message, "limit") {
		t.Fatalf("got %v %+v, want bad_request about the limit", req, err)
	}
	if id != "big" {
		t.Errorf("id %q, want big", id)
	}
}

// FuzzDecodeRequest: bytes in, a request or a bad_request error out, never a
// panic; an accepted request is within the size limit and valid UTF-8.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"id":"r1","system":"dice","expr":"2d6"}`,
		`{"id":"r-17","label":"Stealth","system":"ydin","attribute":4,"skill":2,"mode":"under","modifiers":[1]}`,
		`{"system":"dsdn","roll":"damage","expr":"2d6","apply":{"kind":"creature","hp":5,"max_hp":9}}`,
		`{"system":"d4tactical","rad":3,"test":"cdt","dt":12,"effect":2}`,
		`{"system":"d20tn","trauma":1,"skill_rank":2,"item":"skill"}`,
		`{"id":"x","system":"dice","expr":7}`,
		`{"id":"y"`, "\xff\x00", `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		req, id, err := decodeRequest(p)
		switch {
		case err != nil:
			if req != nil || err.Code != rules.CodeBadRequest || err.Message == "" {
				t.Fatalf("bad error %+v (req %v)", err, req)
			}
		case req == nil:
			t.Fatal("neither a request nor an error")
		default:
			if len(p) > MaxPayload || id != req.ID {
				t.Fatalf("accepted %d bytes, id %q vs %q", len(p), id, req.ID)
			}
		}
		if len(id) > 256 {
			t.Fatalf("echoed id of %d bytes", len(id))
		}
	})
}

func TestSniffConnReadsSessionPresent(t *testing.T) {
	for _, tc := range []struct {
		chunks  [][]byte
		present bool
	}{
		{[][]byte{{0x20, 0x02, 0x01, 0x00}}, true},
		{[][]byte{{0x20}, {0x02}, {0x00, 0x00}}, false},
		{[][]byte{{0x20, 0x02}, {0x01}, {0x00, 0x30}}, true},
		{[][]byte{{0x30, 0x02, 0x01, 0x00}}, false}, // not a CONNACK
	} {
		a, b := net.Pipe()
		go func() {
			for _, c := range tc.chunks {
				a.Write(c)
			}
			a.Close()
		}()
		sc := &sniffConn{Conn: b}
		var got bytes.Buffer
		buf := make([]byte, 1)
		for {
			n, err := sc.Read(buf)
			got.Write(buf[:n])
			if err != nil {
				break
			}
		}
		if sc.present.Load() != tc.present {
			t.Errorf("%x: present %v, want %v", tc.chunks, sc.present.Load(), tc.present)
		}
		if !bytes.Equal(got.Bytes(), bytes.Join(tc.chunks, nil)) {
			t.Errorf("sniffing changed the stream")
		}
	}
}
