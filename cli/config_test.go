package cli

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Log: slog.New(slog.NewTextHandler(&errb, nil))}
	code = Main(context.Background(), args, env)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigCheck(t *testing.T) {
	code, out, errOut := runCLI(t, "config", "check", "../config/towerd.example.yaml")
	if code != 0 || out != "ok\n" {
		t.Errorf("check example: exit %d, stdout %q, stderr %q; want 0 and ok", code, out, errOut)
	}

	bad := writeFile(t, "bad.yaml", "motor:\n  max_on_time: 45s\n  pin: GPIO17\nlog:\n  level: loud\n")
	code, out, errOut = runCLI(t, "config", "check", bad)
	if code != 2 || out != "" {
		t.Errorf("check bad: exit %d, stdout %q; want 2 and nothing", code, out)
	}
	for _, want := range []string{
		bad + ":2:3: motor.max_on_time: must be at most 30s, got 45s",
		bad + ":3:3: motor.pin: GPIO17 is already used by button.pin",
		bad + ":5:3: log.level: must be one of debug, info, warn, error, got \"loud\"",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("check bad: stderr lacks %q:\n%s", want, errOut)
		}
	}

	// Keys and types are checked before values.
	unknown := writeFile(t, "unknown.yaml", "log:\n  colour: red\n")
	if code, _, errOut := runCLI(t, "config", "check", unknown); code != 2 || !strings.Contains(errOut, unknown+":2:3: log.colour: unknown key") {
		t.Errorf("check unknown key: exit %d, stderr %q", code, errOut)
	}

	// A request the rules core rejects fails the check at its key.
	req := writeFile(t, "req.yaml", "tower:\n  default_request: {system: dice, expr: 2d7}\n")
	code, _, errOut = runCLI(t, "config", "check", req)
	if code != 2 || !strings.Contains(errOut, req+":2:3: tower.default_request") {
		t.Errorf("check bad request: exit %d, stderr %q", code, errOut)
	}

	for _, args := range [][]string{{"config"}, {"config", "check"}, {"config", "frobnicate"}, {"config", "check", "a", "b"}} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, _, errOut := runCLI(t, "config", "check", filepath.Join(t.TempDir(), "none.yaml")); code != 2 || !strings.Contains(errOut, "no such file") {
		t.Errorf("check missing: exit %d, stderr %q", code, errOut)
	}
}

func TestConfigShow(t *testing.T) {
	p := writeFile(t, "t.yaml", "tower:\n  id: den\nmqtt:\n  broker: tcp://10.0.0.2:1883\n  username: u\n  password: s3cret-pw\n")
	code, out, errOut := runCLI(t, "config", "show", "--config", p)
	if code != 0 {
		t.Fatalf("show: exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"id: den", "prefix: dicetower/den", `password: "********"`, "max_on_time: 5s"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret-pw") {
		t.Errorf("show prints the password:\n%s", out)
	}

	bad := writeFile(t, "bad.yaml", "tower:\n  queue_size: 0\n")
	if code, _, errOut := runCLI(t, "config", "show", "--config", bad); code != 2 || !strings.Contains(errOut, "tower.queue_size") {
		t.Errorf("show bad: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := runCLI(t, "config", "show", "--config", filepath.Join(t.TempDir(), "none.yaml")); code != 1 {
		t.Errorf("show of a missing --config file: exit %d, want 1", code)
	}
}
