package cli

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/towerd/towerd/config"
)

func TestSelftestSim(t *testing.T) {
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Log: slog.New(slog.DiscardHandler)}
	// An empty file: the defaults, whatever /etc/towerd holds on this machine.
	cfgFile := filepath.Join(t.TempDir(), "towerd.yaml")
	if err := os.WriteFile(cfgFile, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code := Main(context.Background(), []string{"selftest", "--sim", "--config", cfgFile}, env)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"light   ok", "motor   ok", "button  ok", "all checks passed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestHWConfigFromDefaults(t *testing.T) {
	h := config.Default().HW().WithDefaults()
	if err := h.Validate(); err != nil {
		t.Fatalf("the default configuration does not map to a valid hw.Config: %v", err)
	}
	if h.Button.Pin != "GPIO17" || h.Motor.Pin != "GPIO27" || h.Light.Pin != "GPIO22" || h.Motor.MaxOn != config.Default().Motor.MaxOnTime {
		t.Fatalf("mapped %+v", h)
	}
}
