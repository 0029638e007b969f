package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"

	"github.com/towerd/towerd/clock"
	"github.com/towerd/towerd/config"
	"github.com/towerd/towerd/history"
	"github.com/towerd/towerd/hw"
	"github.com/towerd/towerd/hw/hwtest"
	"github.com/towerd/towerd/mqtt"
	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim"
	"github.com/towerd/towerd/tower"
)

func init() {
	Register(&Command{
		Name:    "run",
		Usage:   "run [--config FILE] [--sim [--sim-camera] [--seed N]] [--broker URL] [--listen ADDR] [--id ID] [--state-dir DIR]",
		Summary: "Run the tower daemon: the roll loop on the tower's hardware (or a simulated tower with --sim), publishing over MQTT (an embedded broker unless --broker or mqtt.broker names one).",
		Run:     runRun,
	})
}

// runOpts are the flags of towerd run.
type runOpts struct {
	configPath string
	sim        bool
	simCamera  bool
	seed       int64
	simTumble  time.Duration
	simMisread int
	overrides  config.Overrides
	listenSet  bool
}

func runRun(ctx context.Context, env *Env, args []string) error {
	c := commands["run"]
	flags := NewFlagSet(env, c)
	var o runOpts
	flags.StringVar(&o.configPath, "config", "", configFlagHelp)
	flags.BoolVar(&o.sim, "sim", false, "simulated tower: fake GPIO, simulated dice; press Enter to press the button")
	flags.BoolVar(&o.simCamera, "sim-camera", false, "with --sim: render tray photos and read them with the vision reader instead of drawing faces directly")
	flags.DurationVar(&o.simTumble, "sim-tumble", 50*time.Millisecond, "with --sim: how long the simulated motor runs")
	flags.IntVar(&o.simMisread, "sim-misread", 0, "with --sim: leave one die of every Nth look unread, to see misreads re-tumble (0: never)")
	flags.Int64Var(&o.seed, "seed", -1, "with --sim: seed of the simulated dice (reproducible runs); default: real randomness")
	flags.StringVar(&o.overrides.Broker, "broker", "", "external MQTT broker URL (tcp://, ssl://, ws://); overrides mqtt.broker")
	flags.StringVar(&o.overrides.Listen, "listen", "", "address of the embedded broker (default 127.0.0.1:1883); overrides mqtt.listen")
	flags.StringVar(&o.overrides.ID, "id", "", "tower id; overrides tower.id")
	flags.StringVar(&o.overrides.StateDir, "state-dir", "", "state directory (history, outbox, calibration); overrides tower.state_dir")
	if err := ParseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() != 0 {
		flags.Usage()
		return Exit(2, "")
	}
	o.listenSet = o.overrides.Listen != ""
	if (o.simCamera || o.seed >= 0 || o.simMisread != 0) && !o.sim {
		return Exit(2, "towerd run: --sim-camera, --seed and --sim-misread need --sim")
	}
	if o.simMisread < 0 {
		return Exit(2, fmt.Sprintf("towerd run: --sim-misread must be 0 or more, got %d", o.simMisread))
	}
	cfg, err := loadRunConfig(o)
	if err != nil {
		return err
	}
	return serve(ctx, env, cfg, o)
}

// loadRunConfig reads the configuration and applies the flags. A --sim run
// without a file or --state-dir keeps its state in the user's state
// directory, so it works without root.
func loadRunConfig(o runOpts) (*config.Config, error) {
	cfg, _, _, err := loadConfig(o.configPath)
	var errs config.Errors
	if errors.As(err, &errs) {
		return nil, Exit(2, err.Error())
	}
	if err != nil {
		return nil, Exit(2, "towerd run: "+err.Error())
	}
	if o.sim && o.overrides.StateDir == "" && o.configPath == "" {
		id := cfg.Tower.ID
		if o.overrides.ID != "" {
			id = o.overrides.ID // two simulated towers keep apart
		}
		o.overrides.StateDir = simStateDir(id)
	}
	if err := cfg.Apply(o.overrides); err != nil {
		return nil, Exit(2, err.Error())
	}
	if err := cfg.CheckRequests(); err != nil {
		return nil, Exit(2, err.Error())
	}
	return cfg, nil
}

func simStateDir(id string) string {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		if home, err := os.UserHomeDir(); err == nil {
			base = filepath.Join(home, ".local", "state")
		} else {
			base = os.TempDir()
		}
	}
	return filepath.Join(base, "towerd-sim", id)
}

func newLogger(w io.Writer, c config.Log) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: lv}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// serve runs the daemon until ctx ends: the broker, the MQTT client, the
// history, the hardware (real or simulated), the eyes and the roll loop.
// Everything opened is closed in reverse order, the motor first.
func serve(ctx context.Context, env *Env, cfg *config.Config, o runOpts) (err error) {
	log := newLogger(env.Stderr, cfg.Log)
	stateDir := cfg.Tower.StateDir
	if err := os.MkdirAll(stateDir, 0o750); err != nil {
		return fmt.Errorf("towerd run: state dir: %w", err)
	}

	hist, err := history.Open(filepath.Join(stateDir, "history"), history.Options{
		MaxBytes: int64(cfg.History.MaxBytes), Keep: cfg.History.Keep, Logger: log})
	if err != nil {
		return fmt.Errorf("towerd run: %w", err)
	}
	defer hist.Close()

	// The hardware comes first so the motor is known off before anything
	// can ask it to turn.
	tw, pressButton, err := openHardware(cfg, o, log)
	if err != nil {
		return fmt.Errorf("towerd run: %w", err)
	}
	defer tw.Close()
	stopSignals := tw.OffOnSignal()
	defer stopSignals()

	mcfg := cfg.MQTTConfig()
	brokerDesc := mcfg.Broker
	if mcfg.Broker == "" {
		if o.sim && !o.listenSet && listening(mcfg.Listen) {
			// A broker (Debian's mosquitto, say) already serves the default
			// address: use it, so its tools and the docs' one-liners work.
			mcfg.Broker = "tcp://" + mcfg.Listen
			brokerDesc = mcfg.Broker + " (already running there)"
			log.Info("towerd: a broker already listens on the default address; using it", "broker", mcfg.Broker)
		} else {
			// Not bound to ctx: the broker must outlive the client's last
			// flush and its offline status at shutdown.
			b, err := mqtt.StartBroker(context.WithoutCancel(ctx), mcfg, log)
			if err != nil {
				return fmt.Errorf("towerd run: %w", err)
			}
			defer b.Close()
			mcfg = b.ClientConfig(mcfg)
			brokerDesc = b.URL() + " (embedded)"
		}
	}
	client, err := mqtt.Connect(ctx, mcfg, stateDir, log)
	if err != nil {
		return fmt.Errorf("towerd run: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if cerr := client.Close(cctx); cerr != nil {
			log.Warn("towerd: mqtt close", "err", cerr)
		}
	}()
	tw.Observe(func(ev hw.MotorEvent) {
		f := map[string]any{"driver": ev.Driver}
		if ev.Kind == "motor_stop" {
			f["reason"], f["on_ms"] = ev.Reason, ev.On.Milliseconds()
		}
		client.PublishEvent(ev.Kind, f)
	})

	eyes, closeEyes, source, err := openEyes(cfg, o, log)
	if err != nil {
		return fmt.Errorf("towerd run: %w", err)
	}
	defer closeEyes()

	def, _ := cfg.DefaultRequest()
	long, _ := cfg.LongPressRequest()
	stats := &statsOut{hist: hist, out: client, log: log}
	lcfg := tower.Config{
		Tower: cfg.Tower.ID, Default: def, LongPress: long,
		AutoRoll: cfg.Tower.AutoRoll || o.sim, WaitTimeout: cfg.Tower.WaitTimeout,
		MaxRetries: cfg.Tower.MaxRetries, Source: source,
		SettleTimeout: cfg.Tower.SettleTimeout, ReadTimeout: cfg.Tower.ReadTimeout,
		Clock: clock.Real{}, Log: log,
		Done: func(d tower.Done) {
			stats.publish()
			if o.sim {
				printDone(env.Stdout, d)
			}
		},
	}
	if iv, _ := daemon.SdWatchdogEnabled(false); iv > 0 {
		lcfg.Progress, lcfg.ProgressEvery = watchdog(iv), iv/3
	}
	loop, err := tower.New(lcfg, tw.Motor, tw.Button.Events(), eyes, client, hist)
	if err != nil {
		return fmt.Errorf("towerd run: %w", err)
	}
	stats.publish()

	if o.sim {
		fmt.Fprintf(env.Stdout, "towerd: simulated tower %q, broker %s, topics %s/#\n", cfg.Tower.ID, brokerDesc, cfg.MQTT.Prefix)
		fmt.Fprintf(env.Stdout, "  press Enter to press the button (rolls %s); Ctrl-C stops\n", cfg.Tower.DefaultRequest)
		fmt.Fprintf(env.Stdout, "  ask for a roll:  mosquitto_pub -h %s -t %s/roll -m '{\"id\":\"r1\",\"label\":\"Fireball\",\"system\":\"dice\",\"expr\":\"8d6\"}'\n",
			hostOf(mcfg.Broker), cfg.MQTT.Prefix)
		go console(ctx, env.Stdin, pressButton)
	}
	daemon.SdNotify(false, daemon.SdNotifyReady)
	log.Info("towerd: running", "tower", cfg.Tower.ID, "sim", o.sim, "broker", brokerDesc, "state_dir", stateDir)
	err = loop.Run(ctx)
	daemon.SdNotify(false, daemon.SdNotifyStopping)
	log.Info("towerd: stopping")
	// Motor and light off before anything else is flushed or closed.
	if cerr := tw.Close(); cerr != nil {
		log.Error("towerd: hardware close", "err", cerr)
	}
	return err
}

// openHardware opens the tower's GPIO, or a simulated tower on fake pins
// whose button press is returned.
func openHardware(cfg *config.Config, o runOpts, log *slog.Logger) (*hw.Tower, func(), error) {
	hc := cfg.HW()
	if !o.sim {
		t, err := hw.Open(hc, log)
		return t, func() {}, err
	}
	if hc.Button.Pin == "" {
		hc.Button.Pin = "GPIO17" // Enter needs a button to press
	}
	// The simulated motor runs in a blink by default: the dice are
	// simulated anyway.
	hc.Motor.Profile = hw.Profile{Run: o.simTumble, Reverse: -1, Brake: -1}
	hc.Motor.MaxOn = max(hc.Motor.MaxOn, o.simTumble)
	s, err := hwtest.NewTower(hc, clock.Real{}, log)
	if err != nil {
		return nil, nil, err
	}
	return s.Tower, func() { s.Press(0) }, nil
}

// openEyes returns what reads the dice and the results' source.
func openEyes(cfg *config.Config, o runOpts, log *slog.Logger) (tower.Eyes, func(), string, error) {
	if o.sim && !o.simCamera {
		src := sim.NewSource()
		if o.seed >= 0 {
			src = sim.NewSeeded(uint64(o.seed))
		}
		e := tower.NewEntropyEyes(src)
		e.MisreadEvery = o.simMisread
		return e, func() {}, rules.SourceSim, nil
	}
	if openCameraEyes == nil {
		return nil, nil, "", errors.New("this build has no camera reader")
	}
	e, closeFn, err := openCameraEyes(cfg, o.sim, o.seed, log)
	source := rules.SourceCamera
	if o.sim || cfg.Camera.Source == config.SourceSim {
		// Rendered dice with faces from the simulated source are never
		// camera reads, whatever drives the motor.
		source = rules.SourceSim
	}
	return e, closeFn, source, err
}

// openCameraEyes opens the camera (or the simulated one) and the vision
// reader; set by the file that wires vision in.
var openCameraEyes func(cfg *config.Config, sim bool, seed int64, log *slog.Logger) (tower.Eyes, func(), error)

// listening reports whether something accepts TCP connections on addr.
func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func hostOf(url string) string {
	h := url
	if i := strings.Index(h, "://"); i >= 0 {
		h = h[i+3:]
	}
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		return h
	}
	if port == "1883" {
		return host
	}
	return host + " -p " + port
}

// console turns each line on stdin into a button press.
func console(ctx context.Context, in io.Reader, press func()) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if ctx.Err() != nil {
			return
		}
		press() // one after the other: two at once would be one press
	}
}

// printDone prints a finished roll as one readable line.
func printDone(w io.Writer, d tower.Done) {
	who := "request " + d.Request.ID
	if d.Button {
		who = "button"
	} else if d.Request.ID == "" {
		who = "request"
	}
	if d.Result != nil {
		fmt.Fprintf(w, "#%d %s: %s\n", d.Result.Seq, who, d.Result.Text)
		return
	}
	fmt.Fprintf(w, "%s: %s error: %s\n", who, d.Error.Code, d.Error.Message)
}

// watchdog feeds systemd's watchdog, at most once per third of its
// interval: only the roll loop calls it, so a stuck loop stops the feeding.
func watchdog(iv time.Duration) func() {
	var mu sync.Mutex
	var last time.Time
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.Sub(last) >= iv/3 {
			last = now
			daemon.SdNotify(false, daemon.SdNotifyWatchdog)
		}
	}
}

// statsOut refreshes the retained stats topic after every roll.
type statsOut struct {
	hist *history.Log
	out  any
	log  *slog.Logger
}

// statsPublisher is the MQTT client's stats method.
type statsPublisher interface {
	PublishStats(payload []byte) error
}

func (s *statsOut) publish() {
	p, ok := s.out.(statsPublisher)
	if !ok {
		return
	}
	st, err := s.hist.Stats()
	if err != nil {
		s.log.Warn("towerd: stats", "err", err)
		return
	}
	b, err := json.Marshal(st)
	if err == nil {
		err = p.PublishStats(b)
	}
	if err != nil {
		s.log.Warn("towerd: publish stats", "err", err)
	}
}
