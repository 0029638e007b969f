// Package config loads, validates and prints towerd's YAML configuration
// (/etc/towerd/towerd.yaml), where every key has a default.
package config

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/towerd/towerd/rules"
)

// DefaultPath is where the daemon and `towerd config show` look by default.
const DefaultPath = "/etc/towerd/towerd.yaml"

// MaxFileSize bounds a configuration file; a larger file is certainly a
// mistake, and the bound keeps the YAML parser's work small.
const MaxFileSize = 1 << 20

// Config is the whole configuration. The zero value is not useful: start
// from Default, Load or Parse.
type Config struct {
	Tower   Tower   `yaml:"tower"`
	Button  Button  `yaml:"button"`
	Motor   Motor   `yaml:"motor"`
	Light   Light   `yaml:"light"`
	Camera  Camera  `yaml:"camera"`
	Vision  Vision  `yaml:"vision"`
	MQTT    MQTT    `yaml:"mqtt"`
	History History `yaml:"history"`
	Log     Log     `yaml:"log"`

	file    string          // as given to Load, for error messages
	pos     map[string]pos  // key path -> where the key was written
	derived map[string]bool // key paths whose value was derived from others
}

// Tower is the roll loop.
type Tower struct {
	ID       string `yaml:"id"`
	StateDir string `yaml:"state_dir"`
	// DefaultRequest is what a button press rolls, as JSON for
	// rules.ParseRequest.
	DefaultRequest Request `yaml:"default_request"`
	// MaxRetries is how many times a misread roll is tumbled again before
	// the roll fails with code misread.
	MaxRetries int `yaml:"max_retries"`
	// QueueSize bounds waiting requests; one more is refused as busy.
	QueueSize int `yaml:"queue_size"`
	// SettleTimeout is the hard limit of the settling state (motor stopped,
	// waiting for still dice); it must cover Camera.Settle.Timeout.
	SettleTimeout time.Duration `yaml:"settle_timeout"`
	// ReadTimeout is the hard limit of the reading state (capture and vision).
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// AutoRoll rolls a request as soon as it arrives; otherwise the tower
	// announces the dice to drop and waits for the button (a tower whose
	// dice never leave the drum wants true).
	AutoRoll bool `yaml:"auto_roll"`
	// WaitTimeout is how long a request waits for the button before it is
	// answered with code timeout.
	WaitTimeout time.Duration `yaml:"wait_timeout"`
}

// Button is the push button that starts a roll.
type Button struct {
	Pin       string        `yaml:"pin"` // "" means no button (MQTT only)
	ActiveLow bool          `yaml:"active_low"`
	Pull      string        `yaml:"pull"` // up, down, none
	Debounce  time.Duration `yaml:"debounce"`
	LongPress time.Duration `yaml:"long_press"`
	// LongPressRequest is rolled on a long press; empty means a long press
	// rolls DefaultRequest like a short one.
	LongPressRequest Request `yaml:"long_press_request"`
}

// Motor drivers.
const (
	DriverOnOff     = "onoff"
	DriverDirection = "direction"
	DriverPWM       = "pwm"
	DriverStepper   = "stepper"
)

// Motor is the tumble motor and its safety limits.
type Motor struct {
	Driver string `yaml:"driver"`
	Pin    string `yaml:"pin"`     // on/off or enable pin
	DirPin string `yaml:"dir_pin"` // direction pin; needed to reverse
	// DirInvert swaps the direction pin's sense: forward is high, for a
	// motor that runs backwards without swapping its leads.
	DirInvert bool `yaml:"dir_invert"`
	ActiveLow bool `yaml:"active_low"`
	// PWM output through /sys/class/pwm (driver pwm).
	PWMChip      int `yaml:"pwm_chip"`
	PWMChannel   int `yaml:"pwm_channel"`
	PWMFrequency int `yaml:"pwm_frequency"` // Hz
	// Stepper driver (step/dir); speed 1.0 is StepsPerSecond. StepPWM
	// takes STEP from the PWM channel above instead of StepPin.
	StepPin        string `yaml:"step_pin"`
	StepPWM        bool   `yaml:"step_pwm"`
	StepsPerSecond int    `yaml:"steps_per_second"`
	// MaxOnTime cuts the motor whatever the profile says.
	MaxOnTime time.Duration `yaml:"max_on_time"`
	// The motor may be on at most DutyLimit of any DutyWindow.
	DutyLimit  float64       `yaml:"duty_limit"`
	DutyWindow time.Duration `yaml:"duty_window"`
	Profile    Profile       `yaml:"profile"`
}

// Profile is one tumble.
type Profile struct {
	Run         time.Duration `yaml:"run"`
	Speed       float64       `yaml:"speed"`        // 0–1; pwm and stepper only
	ReverseJolt time.Duration `yaml:"reverse_jolt"` // needs a direction
	Brake       time.Duration `yaml:"brake"`
}

// Light is the tray light, switched by a pin or dimmed by PWM.
type Light struct {
	Pin        string  `yaml:"pin"` // "" with no PWM means no light
	ActiveLow  bool    `yaml:"active_low"`
	PWMChip    *int    `yaml:"pwm_chip"`    // nil: no PWM
	PWMChannel *int    `yaml:"pwm_channel"` // nil: no PWM
	Brightness float64 `yaml:"brightness"`  // below 1 needs PWM
}

// Camera sources.
const (
	SourceV4L2      = "v4l2"
	SourceLibcamera = "libcamera"
	SourceSim       = "sim"
)

// Camera is the camera over the tray.
type Camera struct {
	Source           string `yaml:"source"`
	Device           string `yaml:"device"` // v4l2 only
	Width            int    `yaml:"width"`
	Height           int    `yaml:"height"`
	FPS              int    `yaml:"fps"`
	LockExposure     bool   `yaml:"lock_exposure"`
	LockWhiteBalance bool   `yaml:"lock_white_balance"`
	// TopDown: the camera looks straight down on the tray, so a die whose
	// up face is seen foreshortened is leaning (cocked). False for a camera
	// that looks into the tray at an angle.
	TopDown bool `yaml:"top_down"`
	// Rotate turns every frame clockwise by 0, 90, 180 or 270 degrees, so
	// that the far side of the tray is at the top: a camera mounted on
	// its side or upside down.
	Rotate int    `yaml:"rotate"`
	Settle Settle `yaml:"settle"`
}

// Settle says when the dice have come to rest.
type Settle struct {
	// StillFrames consecutive still frames mean the dice are at rest; the
	// reading is agreed over them.
	StillFrames int `yaml:"still_frames"`
	// DiffThreshold is the mean absolute grey-level difference (0–255)
	// between consecutive frames below which a frame counts as still.
	DiffThreshold float64 `yaml:"diff_threshold"`
	// Timeout: after it the latest frames are read anyway (a misread then
	// re-tumbles).
	Timeout time.Duration `yaml:"timeout"`
}

// Vision is the dice reader.
type Vision struct {
	// Model is the file `towerd enroll` wrote; default state_dir/model.json.
	Model         string      `yaml:"model"`
	MinConfidence float64     `yaml:"min_confidence"`
	Dice          []rules.Die `yaml:"dice"` // kinds that may be in the tray
}

// MQTT is the broker connection, or the embedded broker.
type MQTT struct {
	// Broker is an external broker URL; empty runs the embedded broker.
	Broker string `yaml:"broker"`
	// Listen, AllowRemote and Users configure the embedded broker.
	Listen      string `yaml:"listen"`
	AllowRemote bool   `yaml:"allow_remote"`
	Users       []User `yaml:"users"`
	// Client credentials for an external broker; at most one password source.
	Username     string `yaml:"username"`
	Password     string `yaml:"password"`
	PasswordEnv  string `yaml:"password_env"`
	PasswordFile string `yaml:"password_file"`
	Credential   string `yaml:"credential"` // systemd LoadCredential= name
	// TLS for ssl://, mqtts:// and wss:// brokers.
	CAFile     string `yaml:"ca_file"`
	CertFile   string `yaml:"cert_file"`
	KeyFile    string `yaml:"key_file"`
	ServerName string `yaml:"server_name"`
	// Prefix of every topic; default dicetower/<tower.id>.
	Prefix string `yaml:"prefix"`
	// ClientID; default towerd-<tower.id>.
	ClientID      string        `yaml:"client_id"`
	HomeAssistant HomeAssistant `yaml:"homeassistant"`
}

// User may log in to the embedded broker.
type User struct {
	Username     string `yaml:"username"`
	PasswordFile string `yaml:"password_file"`
}

// HomeAssistant is MQTT discovery.
type HomeAssistant struct {
	Enabled bool   `yaml:"enabled"`
	Prefix  string `yaml:"prefix"`
}

// History is the roll history log in the state directory.
type History struct {
	MaxBytes ByteSize `yaml:"max_bytes"` // rotate beyond this
	Keep     int      `yaml:"keep"`      // rotated files kept
}

// Log is the daemon's log.
type Log struct {
	Level  string `yaml:"level"`  // debug, info, warn, error
	Format string `yaml:"format"` // text, json
}

// Default returns the configuration used when a file sets nothing.
func Default() *Config {
	c := base()
	c.resolve()
	return c
}

// base is Default before derived keys are filled in; files are decoded onto
// it so that a key derived from another (mqtt.prefix from tower.id) follows
// the value the file gives.
func base() *Config {
	return &Config{
		Tower: Tower{
			ID:             "tower-1",
			StateDir:       "/var/lib/towerd",
			DefaultRequest: Request(`{"system":"dice","expr":"2d6"}`),
			MaxRetries:     2,
			QueueSize:      32,
			SettleTimeout:  8 * time.Second,
			ReadTimeout:    10 * time.Second,
			WaitTimeout:    10 * time.Minute,
		},
		Button: Button{
			Pin:       "GPIO17",
			ActiveLow: true,
			Pull:      "up",
			Debounce:  30 * time.Millisecond,
			LongPress: time.Second,
		},
		Motor: Motor{
			Driver:         DriverOnOff,
			Pin:            "GPIO27",
			PWMFrequency:   20000,
			StepsPerSecond: 800,
			MaxOnTime:      5 * time.Second,
			DutyLimit:      0.5,
			DutyWindow:     60 * time.Second,
			Profile: Profile{
				Run:         1500 * time.Millisecond,
				Speed:       0.8,
				ReverseJolt: 200 * time.Millisecond,
				Brake:       100 * time.Millisecond,
			},
		},
		Light: Light{
			Pin:        "GPIO22",
			Brightness: 1.0,
		},
		Camera: Camera{
			Source:           SourceV4L2,
			Device:           "/dev/video0",
			Width:            1296,
			Height:           972,
			FPS:              30,
			LockExposure:     true,
			LockWhiteBalance: true,
			TopDown:          true,
			Settle: Settle{
				StillFrames:   3,
				DiffThreshold: 2.0,
				Timeout:       5 * time.Second,
			},
		},
		Vision: Vision{
			MinConfidence: 0.9,
			Dice:          append([]rules.Die(nil), rules.Kinds...),
		},
		MQTT: MQTT{
			Listen:        "127.0.0.1:1883",
			HomeAssistant: HomeAssistant{Enabled: true, Prefix: "homeassistant"},
		},
		History: History{MaxBytes: 10 * MiB, Keep: 5},
		Log:     Log{Level: "info", Format: "text"},
	}
}

// resolve fills the keys left empty that default to a value derived from
// other keys, and remembers which they were so that Apply can derive them
// again.
func (c *Config) resolve() {
	if c.derived == nil {
		c.derived = map[string]bool{}
	}
	derive := func(key string, field *string, value string) {
		if *field == "" || c.derived[key] {
			*field = value
			c.derived[key] = true
		}
	}
	derive("vision.model", &c.Vision.Model, filepath.Join(c.Tower.StateDir, "model.json"))
	derive("mqtt.prefix", &c.MQTT.Prefix, "dicetower/"+c.Tower.ID)
	derive("mqtt.client_id", &c.MQTT.ClientID, "towerd-"+c.Tower.ID)
}

// Derived reports whether the key at path (e.g. "mqtt.prefix") was left
// empty and derived from other keys.
func (c *Config) Derived(path string) bool { return c.derived[path] }

// Load reads, decodes and validates the file at path. An empty path gives
// Default. Errors are Errors naming the file, line and key.
func Load(path string) (*Config, error) {
	if path == "" {
		return Default(), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, Errors{{File: path, Msg: fmt.Sprintf("file is larger than %d bytes", MaxFileSize)}}
	}
	c, err := parse(data, path)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Parse decodes and validates a configuration held in memory. Keys absent
// from data keep their defaults.
func Parse(data []byte) (*Config, error) {
	if len(data) > MaxFileSize {
		return nil, Errors{{Msg: fmt.Sprintf("configuration is larger than %d bytes", MaxFileSize)}}
	}
	return parse(data, "")
}

func parse(data []byte, file string) (*Config, error) {
	c := base()
	c.file = file
	if err := c.decode(data); err != nil {
		return nil, err
	}
	c.resolve()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Overrides are command-line flags that replace keys (--id, --state-dir,
// --broker, --listen); an empty field leaves its key alone.
type Overrides struct {
	ID       string // tower.id
	StateDir string // tower.state_dir
	Broker   string // mqtt.broker
	Listen   string // mqtt.listen
}

// Apply sets the keys o overrides, derives again the keys that were derived
// (mqtt.prefix, mqtt.client_id, vision.model) and validates the result.
func (c *Config) Apply(o Overrides) error {
	set := func(key string, field *string, v string) {
		if v == "" {
			return
		}
		*field = v
		delete(c.pos, key) // the file no longer says where the value came from
	}
	set("tower.id", &c.Tower.ID, o.ID)
	set("tower.state_dir", &c.Tower.StateDir, o.StateDir)
	set("mqtt.broker", &c.MQTT.Broker, o.Broker)
	set("mqtt.listen", &c.MQTT.Listen, o.Listen)
	c.resolve()
	return c.Validate()
}

// Clone returns a deep copy of c.
func (c *Config) Clone() *Config {
	d := *c
	d.Tower.DefaultRequest = append(Request(nil), c.Tower.DefaultRequest...)
	d.Button.LongPressRequest = append(Request(nil), c.Button.LongPressRequest...)
	d.Light.PWMChip = cloneInt(c.Light.PWMChip)
	d.Light.PWMChannel = cloneInt(c.Light.PWMChannel)
	d.Vision.Dice = append([]rules.Die(nil), c.Vision.Dice...)
	d.MQTT.Users = append([]User(nil), c.MQTT.Users...)
	d.pos = make(map[string]pos, len(c.pos))
	for k, v := range c.pos {
		d.pos[k] = v
	}
	d.derived = make(map[string]bool, len(c.derived))
	for k, v := range c.derived {
		d.derived[k] = v
	}
	return &d
}

func cloneInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
