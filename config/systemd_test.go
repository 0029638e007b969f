package config

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const unitPath = "../systemd/towerd.service"

// unitSettings reads the [Service] and [Unit] lines of the unit as
// "Key=value" strings, comments dropped.
func unitSettings(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "[") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// The unit carries what the issue asks of it, and its paths match the
// config's defaults.
func TestUnitSettings(t *testing.T) {
	got := unitSettings(t)
	for _, want := range []string{
		"Type=notify",
		"WatchdogSec=30s",
		"Restart=on-failure",
		"User=towerd",
		"SupplementaryGroups=gpio video",
		"DevicePolicy=closed",
		"DeviceAllow=char-gpiochip rw",
		"DeviceAllow=char-video4linux rw",
		"ProtectSystem=strict",
		"NoNewPrivileges=yes",
		"StateDirectory=towerd",
		"ConfigurationDirectory=towerd",
		"ExecStart=/usr/local/bin/towerd run --config " + DefaultPath,
		"WorkingDirectory=" + Default().Tower.StateDir,
	} {
		if !slices.Contains(got, want) {
			t.Errorf("unit lacks %q", want)
		}
	}
	if Default().Tower.StateDir != "/var/lib/"+"towerd" {
		t.Errorf("tower.state_dir default %q is not StateDirectory=towerd", Default().Tower.StateDir)
	}
}

// systemd-analyze verify finds nothing wrong with the unit. verify needs
// ExecStart's binary to exist, so a copy pointing at this test binary is
// checked.
func TestUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	unit := strings.ReplaceAll(string(b), "/usr/local/bin/towerd", self)
	dir := t.TempDir()
	path := filepath.Join(dir, "towerd.service")
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	// verify exits 0 on unknown keys and bad values, printing a warning
	// that names the file; other lines are about the host, not the unit.
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "towerd.service") {
			t.Errorf("systemd-analyze verify: %s", l)
		}
	}
}

// systemd-sysusers creates the user in the gpio and video groups.
func TestSysusers(t *testing.T) {
	sysusers, err := exec.LookPath("systemd-sysusers")
	if err != nil {
		t.Skip("systemd-sysusers not installed")
	}
	if os.Geteuid() != 0 {
		t.Skip("systemd-sysusers --root needs root to set file ownership")
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf, err := filepath.Abs("../systemd/towerd.sysusers.conf")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(sysusers, "--root="+root, conf).CombinedOutput(); err != nil {
		t.Fatalf("systemd-sysusers: %v\n%s", err, out)
	}
	passwd, _ := os.ReadFile(filepath.Join(root, "etc/passwd"))
	group, _ := os.ReadFile(filepath.Join(root, "etc/group"))
	if !strings.Contains(string(passwd), "towerd:x:") || !strings.Contains(string(passwd), ":/var/lib/towerd:/usr/sbin/nologin") {
		t.Errorf("passwd lacks the towerd user:\n%s", passwd)
	}
	for _, g := range []string{"gpio", "video"} {
		found := false
		for _, l := range strings.Split(string(group), "\n") {
			f := strings.Split(l, ":")
			if len(f) == 4 && f[0] == g && slices.Contains(strings.Split(f[3], ","), "towerd") {
				found = true
			}
		}
		if !found {
			t.Errorf("towerd is not in group %s:\n%s", g, group)
		}
	}
}
