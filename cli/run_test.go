package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/towerd/towerd/config"
	"github.com/towerd/towerd/mqtt/mqtttest"
)

// TestMain lets the end-to-end tests run towerd as a child process: the
// test binary itself, re-executed with TOWERD_TEST_MAIN set, is towerd.
func TestMain(m *testing.M) {
	if os.Getenv("TOWERD_TEST_MAIN") == "1" {
		var args []string
		if err := json.Unmarshal([]byte(os.Getenv("TOWERD_TEST_ARGS")), &args); err != nil {
			panic(err)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Main(ctx, args, StdEnv())
		stop()
		os.Exit(code)
	}
	code := m.Run()
	if afterTests != nil {
		code = afterTests(code)
	}
	os.Exit(code)
}

// afterTests, when set (by matprofile_test.go under -tags matprofile),
// checks the finished run and returns the exit code.
var afterTests func(code int) int

// freeAddr returns a loopback address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// lineWriter collects output and signals each complete line.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines chan string
	part  string
}

func newLineWriter() *lineWriter { return &lineWriter{lines: make(chan string, 100)} }

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	w.part += string(p)
	for {
		i := strings.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		select {
		case w.lines <- w.part[:i]:
		default:
		}
		w.part = w.part[i+1:]
	}
	return len(p), nil
}

// waitLine waits for a line containing s (the guard only fails the test).
func (w *lineWriter) waitLine(t *testing.T, s string) string {
	t.Helper()
	guard := time.After(60 * time.Second)
	for {
		select {
		case l := <-w.lines:
			if strings.Contains(l, s) {
				return l
			}
		case <-guard:
			t.Fatalf("no line with %q; output:\n%s", s, w.String())
		}
	}
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestRunSim runs `towerd run --sim` in process with its embedded broker:
// requests over MQTT and a press of Enter give results, a bad request an
// error with its id, and stopping publishes offline.
func TestRunSim(t *testing.T) {
	addr := freeAddr(t)
	out, errw := newLineWriter(), newLineWriter()
	stdinR, stdinW, _ := os.Pipe()
	defer stdinW.Close()
	env := &Env{Stdin: stdinR, Stdout: out, Stderr: errw}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"run", "--sim", "--seed", "1", "--listen", addr, "--id", "e2e", "--state-dir", t.TempDir()}, env)
	}()
	out.waitLine(t, "press Enter")

	bot := mqtttest.NewBot(t, "tcp://"+addr, "dicetower/e2e", mqtttest.BotOptions{})
	bot.Watch("dicetower/e2e/#")
	bot.WaitStatus(60*time.Second, "online") // towerd has subscribed
	bot.SendDice("a1", "3d6+2")
	bot.Send("y1", []byte(`{"id":"y1","system":"ydin","attribute":4,"skill":2}`))
	bot.Send("bad", []byte(`{"id":"bad","system":"dice","expr":"3d7"}`))
	bot.WaitAnswered(60*time.Second, "a1", "y1", "bad")
	if r := bot.Results("a1"); len(mqtttest.Seqs(r)) != 1 || r[0].Total < 5 || r[0].Total > 20 || r[0].Tower != "e2e" {
		t.Fatalf("a1: %+v", r)
	}
	if r := bot.Results("y1"); len(mqtttest.Seqs(r)) != 1 || r[0].System != "ydin" {
		t.Fatalf("y1: %+v", r)
	}
	if e := mqtttest.Distinct(bot.Errors("bad")); len(e) != 1 || e[0].Code != "bad_request" || e[0].Field != "expr" {
		t.Fatalf("bad: %+v", e)
	}
	// Enter presses the simulated button: the default request (2d6) rolls.
	stdinW.Write([]byte("\n"))
	line := out.waitLine(t, "button: 2d6")
	bot.Wait("button result", 60*time.Second, func() bool { return len(bot.Results("")) > 0 })
	if r := bot.Results(""); r[0].Total < 2 || r[0].Total > 12 {
		t.Fatalf("button result %+v (console %q)", r, line)
	}
	// Every state change and motor event went out, in order: the last
	// roll shows tumbling → settling → reading → idle after its button.
	seen := func() (states, events []string) {
		for _, m := range bot.Watched() {
			var v map[string]any
			json.Unmarshal(m.Payload, &v)
			switch {
			case strings.HasSuffix(m.Topic, "/state"):
				states = append(states, v["state"].(string))
			case strings.HasSuffix(m.Topic, "/event"):
				events = append(events, v["event"].(string))
			}
		}
		return states, events
	}
	bot.Wait("idle after the button roll", 60*time.Second, func() bool {
		s, _ := seen()
		return len(s) > 0 && strings.HasSuffix(strings.Join(s, " "), "tumbling settling reading idle")
	})
	if _, events := seen(); !strings.Contains(strings.Join(events, " "), "button motor_start motor_stop") {
		t.Fatalf("events %v", events)
	}
	// The statistics follow every roll, retained on the stats topic.
	bot.Wait("stats counting the button roll", 60*time.Second, func() bool {
		for _, m := range bot.Watched() {
			var st struct{ Results int }
			if strings.HasSuffix(m.Topic, "/stats") && json.Unmarshal(m.Payload, &st) == nil && st.Results == 3 {
				return true
			}
		}
		return false
	})
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errw.String())
	}
	bot.WaitStatus(30*time.Second, "offline")
}

// TestRunSimMisread: with every second look leaving a die unread, the
// tower re-tumbles (a retumble event over MQTT) and still answers every
// request with the dice it read.
func TestRunSimMisread(t *testing.T) {
	bot, stop := simTower(t, "mis", t.TempDir(), "--seed", "2", "--sim-misread", "2")
	bot.Watch("dicetower/mis/event")
	bot.SendDice("m1", "2d6")
	bot.SendDice("m2", "2d6")
	bot.WaitAnswered(60*time.Second, "m1", "m2")
	for _, id := range []string{"m1", "m2"} {
		if r := mqtttest.Distinct(bot.Results(id)); len(r) != 1 || r[0].Total < 2 || r[0].Total > 12 {
			t.Fatalf("%s: %+v %+v", id, r, bot.Errors(id))
		}
	}
	bot.Wait("a retumble event", 60*time.Second, func() bool {
		for _, m := range bot.Watched() {
			if strings.Contains(string(m.Payload), `"event":"retumble"`) && strings.Contains(string(m.Payload), "could not be read") {
				return true
			}
		}
		return false
	})
	stop()
}

// simTower runs `towerd run --sim` with args as tower id, on a free port
// with state in dir, and returns a bot that has seen it online; stop ends
// it and fails the test unless it exits 0.
func simTower(t *testing.T, id, dir string, args ...string) (bot *mqtttest.Bot, stop func()) {
	t.Helper()
	addr := freeAddr(t)
	out := newLineWriter()
	env := &Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: newLineWriter()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	args = append([]string{"run", "--sim", "--listen", addr, "--id", id, "--state-dir", dir}, args...)
	go func() { done <- Main(ctx, args, env) }()
	out.waitLine(t, "press Enter")
	bot = mqtttest.NewBot(t, "tcp://"+addr, "dicetower/"+id, mqtttest.BotOptions{})
	bot.WaitStatus(60*time.Second, "online")
	return bot, func() {
		t.Helper()
		cancel()
		if code := <-done; code != 0 {
			t.Fatalf("exit %d", code)
		}
	}
}

// TestRunSimCamera: with --sim-camera the rolls go through the rendered
// camera, the settle wait and the vision reader. With no enrolled model pip
// d6 are read and a numbered die is never guessed: its roll ends misread.
func TestRunSimCamera(t *testing.T) {
	state := t.TempDir()
	cfg := filepath.Join(state, "towerd.yaml")
	os.WriteFile(cfg, []byte("tower:\n  max_retries: 1\n"), 0o644)
	bot, stop := simTower(t, "cam", state, "--sim-camera", "--seed", "4", "--config", cfg)
	bot.SendDice("p1", "3d6")
	bot.SendDice("n1", "d20")
	bot.WaitAnswered(120*time.Second, "p1", "n1")
	r := mqtttest.Distinct(bot.Results("p1"))
	if len(r) != 1 || r[0].Total < 3 || r[0].Total > 18 || !strings.Contains(string(r[0].Raw), `"source":"sim"`) {
		t.Fatalf("p1: %+v %+v", r, bot.Errors("p1"))
	}
	if e := mqtttest.Distinct(bot.Errors("n1")); len(e) != 1 || e[0].Code != "misread" || len(bot.Results("n1")) != 0 {
		t.Fatalf("n1: errors %+v results %+v", e, bot.Results("n1"))
	}
	stop()
}

// child is towerd run as a separate process (the test binary re-executed).
type child struct {
	cmd *exec.Cmd
	out *lineWriter
}

func startChild(t *testing.T, bot *mqtttest.Bot, args ...string) *child {
	t.Helper()
	a, _ := json.Marshal(append([]string{"run"}, args...))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TOWERD_TEST_MAIN=1", "TOWERD_TEST_ARGS="+string(a))
	c := &child{cmd: cmd, out: newLineWriter()}
	cmd.Stdout, cmd.Stderr = c.out, c.out
	cmd.Stdin = strings.NewReader("")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	c.out.waitLine(t, "towerd: running")
	bot.WaitStatus(60*time.Second, "online") // subscribed: requests reach it
	return c
}

// TestRunCrashAndStop: towerd with an external broker (mosquitto) is killed
// with SIGKILL in the middle of a roll and started again: the request is
// answered exactly once, and results published before the crash are not
// rolled again. Then SIGTERM mid-roll: exit 0 with the request answered
// after the next start.
func TestRunCrashAndStop(t *testing.T) {
	if mqtttest.MosquittoPath() == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("mosquitto is not installed (make deps installs it)")
		}
		t.Skip("mosquitto is not installed (make deps installs it)")
	}
	broker := mqtttest.StartMosquitto(t)
	state := t.TempDir()
	args := func(tumble string) []string {
		return []string{"--sim", "--broker", broker.URL(), "--id", "crash", "--state-dir", state, "--sim-tumble", tumble}
	}
	bot := mqtttest.NewBot(t, broker.URL(), "dicetower/crash", mqtttest.BotOptions{})
	bot.Watch("dicetower/crash/state")
	tumbling := func(id string) func() bool {
		return func() bool {
			for _, m := range bot.Watched() {
				if strings.Contains(string(m.Payload), `"tumbling"`) && strings.Contains(string(m.Payload), `"`+id+`"`) {
					return true
				}
			}
			return false
		}
	}

	c := startChild(t, bot, args("50ms")...)
	bot.SendDice("before", "1d20")
	bot.WaitAnswered(60*time.Second, "before")
	c.cmd.Process.Kill()
	c.cmd.Wait()
	bot.WaitStatus(30*time.Second, "offline") // the last will

	// A long tumble that the motor's duty limit (half of any minute)
	// still allows, so that k1 is sure to be mid-roll when killed.
	c = startChild(t, bot, args("20s")...)
	bot.SendDice("k1", "2d8")
	bot.Wait("k1 tumbling", 60*time.Second, tumbling("k1"))
	c.cmd.Process.Kill() // SIGKILL mid-roll
	c.cmd.Wait()
	bot.WaitStatus(30*time.Second, "offline")
	if n := len(bot.Results("k1")) + len(bot.Errors("k1")); n != 0 {
		t.Fatalf("k1 answered %d times before the crash finished its roll: %+v %+v\n%s", n, bot.Results("k1"), bot.Errors("k1"), c.out.String())
	}

	c = startChild(t, bot, args("20s")...)
	// The journal hands k1 out again: it tumbles anew (the long tumble).
	bot.Wait("k1 tumbling again", 60*time.Second, func() bool {
		n := 0
		for _, m := range bot.Watched() {
			if strings.Contains(string(m.Payload), `"tumbling"`) && strings.Contains(string(m.Payload), `"k1"`) {
				n++
			}
		}
		return n >= 2
	})
	c.cmd.Process.Signal(syscall.SIGTERM) // stop mid-roll: motor off, exit 0
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("SIGTERM mid-roll: %v\n%s", err, c.out.String())
	}
	if !strings.Contains(c.out.String(), "hw: signal, motor off") {
		t.Fatalf("no motor off on SIGTERM:\n%s", c.out.String())
	}
	bot.WaitStatus(30*time.Second, "offline")

	c = startChild(t, bot, args("50ms")...)
	bot.WaitAnswered(60*time.Second, "k1")
	if e := bot.Errors("k1"); len(e) != 0 {
		t.Fatalf("k1 answered with an error: %+v\n%s", e, c.out.String())
	}
	// QoS 1 may deliver a result twice and the retained last result comes
	// again on resubscribing; subscribers drop duplicates by seq. A request
	// rolled twice would show two seqs.
	if s := mqtttest.Seqs(bot.Results("k1")); len(s) != 1 {
		t.Fatalf("k1 results with seqs %v, want exactly one", s)
	}
	if s := mqtttest.Seqs(bot.Results("before")); len(s) != 1 {
		t.Fatalf("before: seqs %v, want one (rolled again after the crash?)", s)
	}
}

// TestSimStateDirFollowsID: a simulated tower run with --id keeps its
// state under that id (docs/daemon.md), so two of them can run side by
// side; without --id it is the configured tower's.
func TestSimStateDirFollowsID(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	base := os.Getenv("XDG_STATE_HOME")
	for _, tc := range []struct{ id, want string }{
		{"", "tower-1"},
		{"attic", "attic"},
	} {
		cfg, err := loadRunConfig(runOpts{sim: true, overrides: config.Overrides{ID: tc.id}})
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(base, "towerd-sim", tc.want); cfg.Tower.StateDir != want {
			t.Errorf("--id %q: state dir %q, want %q", tc.id, cfg.Tower.StateDir, want)
		}
	}
}
