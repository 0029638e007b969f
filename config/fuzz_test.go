package config

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// FuzzParse: no input panics; every error names a key or a line; whatever
// is accepted is valid and survives Show and Parse again.
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile("towerd.example.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		string(example),
		"",
		"tower:\n  id: den\n  default_request: {system: ydin, attribute: 4, modifiers: [1, -2]}\n",
		"tower:\n  default_request: '{\"system\":\"dice\",\"expr\":\"2d6\"}'\n",
		"motor:\n  max_on_tim: 5s\n",
		"button:\n  pin: 17\n  active_low: yes\n",
		"tower: &a {id: x}\nbutton: *a\n",
		"tower:\n  <<: {id: x}\n",
		"tower:\n  id: a\n  id: b\n",
		"- a\n",
		"tower:\n  queue_size: 99999999999999999999\n",
		"history:\n  max_bytes: 10MiB\n",
		"light:\n  pwm_chip: 0\n  pwm_channel: 1\n  brightness: 0.5\n",
		"mqtt:\n  listen: \"[::]:1883\"\n  allow_remote: true\n  users: [{username: a, password_file: /a}]\n",
		"vision:\n  dice: [d6, d%]\n",
		"tower: {}\n---\n",
		"a: !!binary aGVsbG8=\n",
		"? complex\n: key\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %v (%T) is not a non-empty config.Errors", err, err)
			}
			for _, e := range es {
				if e.Msg == "" || (e.Key == "" && e.Line == 0) {
					t.Fatalf("error names neither key nor line: %#v", e)
				}
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted an invalid config: %v", err)
		}
		var out bytes.Buffer
		if err := c.Show(&out); err != nil {
			t.Fatalf("Show: %v", err)
		}
		if _, err := Parse(out.Bytes()); err != nil {
			t.Fatalf("Show output does not parse: %v\ninput:\n%q\nshow:\n%s", err, data, out.String())
		}
	})
}
