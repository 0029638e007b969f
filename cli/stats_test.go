package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/towerd/towerd/history"
	"github.com/towerd/towerd/rules"
)

// runStatsCLI runs towerd with args (own helper: other command tests in
// this package are written concurrently).
func runStatsCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Log: slog.New(slog.NewTextHandler(&errb, nil))}
	code = Main(context.Background(), args, env)
	return code, out.String(), errb.String()
}

// statsHistoryDir writes a history file by hand (no daemon, no fsync): 60
// d6 rolls with every face ten times, one misread and a torn last line.
func statsHistoryDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	at := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
	var content []byte
	for i := range 60 {
		line, err := history.EncodeLine(history.Record{
			Time: at.Add(time.Duration(i) * time.Minute), Kind: history.KindResult, Source: rules.SourceCamera,
			Faces: []history.Face{{Die: rules.D6, Face: i%6 + 1}}, SettleMS: 900,
			Result: json.RawMessage(`{"v":1}`),
		})
		if err != nil {
			t.Fatal(err)
		}
		content = append(content, line...)
	}
	line, err := history.EncodeLine(history.Record{Time: at, Kind: history.KindError, Code: rules.CodeMisread})
	if err != nil {
		t.Fatal(err)
	}
	content = append(content, line...)
	content = append(content, `{"v":1,"time":"2026-11-`...)
	if err := os.WriteFile(filepath.Join(dir, "history.jsonl"), content, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestStatsText(t *testing.T) {
	dir := statsHistoryDir(t)
	code, out, errOut := runStatsCLI(t, "stats", "--state-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, want := range []string{"60 results, 1 errors", "misread rate: 1.64%", "settle time: mean 900 ms", "d6", " ok", "1:10 2:10 3:10 4:10 5:10 6:10"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "skipped history.jsonl line 62: torn line") {
		t.Errorf("stderr does not report the torn line: %q", errOut)
	}
}

func TestStatsJSON(t *testing.T) {
	dir := statsHistoryDir(t)
	code, out, errOut := runStatsCLI(t, "stats", "--json", "--state-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	if strings.Count(out, "\n") != 1 {
		t.Errorf("want one JSON line, got %q", out)
	}
	var s history.Stats
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if s.Results != 60 || s.Misreads != 1 || s.SkippedLines != 1 || len(s.Dice) != 1 ||
		s.Dice[0].Die != rules.D6 || s.Dice[0].P != 1 || s.Dice[0].Verdict != history.VerdictOK {
		t.Errorf("stats %+v", s)
	}
}

func TestStatsErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	if code, _, errOut := runStatsCLI(t, "stats", "--state-dir", missing); code != 1 || !strings.Contains(errOut, "no history") {
		t.Errorf("missing dir: exit %d, stderr %q; want 1 and no history", code, errOut)
	}
	if code, _, _ := runStatsCLI(t, "stats", "--bogus"); code != 2 {
		t.Errorf("bad flag: exit %d, want 2", code)
	}
	if code, _, _ := runStatsCLI(t, "stats", "extra"); code != 2 {
		t.Errorf("extra argument: exit %d, want 2", code)
	}
	if code, out, _ := runStatsCLI(t, "stats", "--state-dir", t.TempDir()); code != 0 || !strings.Contains(out, "no rolls recorded yet") {
		t.Errorf("empty dir: exit %d, stdout %q", code, out)
	}
	cfg := filepath.Join(t.TempDir(), "towerd.yaml")
	if err := os.WriteFile(cfg, []byte("tower:\n  state_dir: "+statsHistoryDir(t)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runStatsCLI(t, "stats", "--config", cfg); code != 0 || !strings.Contains(out, "60 results") {
		t.Errorf("--config: exit %d, stdout %q", code, out)
	}
}
