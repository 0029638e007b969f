package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/towerd/towerd/mqtt"
	"github.com/towerd/towerd/rules"
)

// Limits that Validate enforces.
const (
	MaxMotorOnTime = 30 * time.Second // the motor is never on longer in one go
	maxStateTime   = 5 * time.Minute
)

var (
	pinRE        = regexp.MustCompile(`^GPIO(0|[1-9][0-9]{0,2})$`)
	idRE         = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	envRE        = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	credentialRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,255}$`)
)

// Validate checks every value and the relations between them. It returns
// Errors naming each bad key (with its line when the file wrote it), or nil.
func (c *Config) Validate() error {
	v := &validator{c: c}
	v.tower()
	v.button()
	v.motor()
	v.light()
	v.pins()
	v.camera()
	v.vision()
	v.mqtt()
	v.history()
	v.log()
	if len(v.errs) == 0 {
		return nil
	}
	return v.errs.sorted()
}

type validator struct {
	c    *Config
	errs Errors
}

func (v *validator) bad(key, format string, args ...any) {
	v.errs = append(v.errs, v.c.errorf(key, format, args...))
}

func (v *validator) intRange(key string, x, lo, hi int) {
	if x < lo || x > hi {
		v.bad(key, "must be %d to %d, got %d", lo, hi, x)
	}
}

// durRange checks lo ≤ d ≤ hi, or 0 < d ≤ hi when lo is 0 and positive.
func (v *validator) durRange(key string, d, lo, hi time.Duration, positive bool) {
	switch {
	case positive && d <= 0:
		v.bad(key, "must be more than 0, got %s", d)
	case d < lo:
		v.bad(key, "must be at least %s, got %s", lo, d)
	case d > hi:
		v.bad(key, "must be at most %s, got %s", hi, d)
	}
}

// fraction checks 0 < x ≤ 1.
func (v *validator) fraction(key string, x float64) {
	if !(x > 0 && x <= 1) {
		v.bad(key, "must be more than 0 and at most 1, got %g", x)
	}
}

func (v *validator) oneOf(key, got string, allowed ...string) bool {
	if slices.Contains(allowed, got) {
		return true
	}
	v.bad(key, "must be one of %s, got %q", strings.Join(allowed, ", "), got)
	return false
}

func (v *validator) pin(key, p string, required bool) {
	switch {
	case p == "" && required:
		v.bad(key, "a pin is required, like \"GPIO17\"")
	case p != "" && !pinRE.MatchString(p):
		v.bad(key, "want a pin name like \"GPIO17\" (the BCM number), got %q", p)
	}
}

func (v *validator) tower() {
	t := &v.c.Tower
	if !idRE.MatchString(t.ID) {
		v.bad("tower.id", "must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit (it is part of MQTT topics), got %q", t.ID)
	}
	if t.StateDir == "" {
		v.bad("tower.state_dir", "must not be empty")
	} else if strings.ContainsRune(t.StateDir, 0) {
		v.bad("tower.state_dir", "must not contain a NUL byte")
	}
	if len(t.DefaultRequest) == 0 {
		v.bad("tower.default_request", "is required: the roll a button press starts")
	} else if err := requestShape(t.DefaultRequest); err != nil {
		v.bad("tower.default_request", "%v", err)
	}
	v.intRange("tower.max_retries", t.MaxRetries, 0, 10)
	v.intRange("tower.queue_size", t.QueueSize, 1, 1024)
	v.durRange("tower.settle_timeout", t.SettleTimeout, 0, maxStateTime, true)
	v.durRange("tower.read_timeout", t.ReadTimeout, 0, maxStateTime, true)
	v.durRange("tower.wait_timeout", t.WaitTimeout, 0, 24*time.Hour, true)
	if cs := v.c.Camera.Settle.Timeout; t.SettleTimeout > 0 && t.SettleTimeout < cs {
		v.bad("tower.settle_timeout", "must be at least camera.settle.timeout (%s), got %s", cs, t.SettleTimeout)
	}
}

func (v *validator) button() {
	b := &v.c.Button
	v.pin("button.pin", b.Pin, false)
	if v.oneOf("button.pull", b.Pull, "up", "down", "none") {
		// A pull toward the pressed level reads as a button held down forever.
		if b.ActiveLow && b.Pull == "down" {
			v.bad("button.pull", "down with active_low true reads the button as always pressed; use up (or none with an external pull-up)")
		}
		if !b.ActiveLow && b.Pull == "up" {
			v.bad("button.pull", "up with active_low false reads the button as always pressed; use down (or none with an external pull-down)")
		}
	}
	v.durRange("button.debounce", b.Debounce, 0, time.Second, false)
	v.durRange("button.long_press", b.LongPress, 0, time.Minute, true)
	if b.LongPress > 0 && b.LongPress <= b.Debounce {
		v.bad("button.long_press", "must be longer than button.debounce (%s), got %s", b.Debounce, b.LongPress)
	}
	if len(b.LongPressRequest) > 0 {
		if err := requestShape(b.LongPressRequest); err != nil {
			v.bad("button.long_press_request", "%v", err)
		}
	}
}

func (v *validator) motor() {
	m := &v.c.Motor
	if v.oneOf("motor.driver", m.Driver, DriverOnOff, DriverDirection, DriverPWM, DriverStepper) {
		switch m.Driver {
		case DriverOnOff:
			v.pin("motor.pin", m.Pin, true)
			if m.DirPin != "" {
				v.bad("motor.dir_pin", "is not used by the onoff driver (use driver direction, pwm or stepper)")
			}
		case DriverDirection:
			v.pin("motor.pin", m.Pin, true)
			v.pin("motor.dir_pin", m.DirPin, true)
		case DriverPWM, DriverStepper:
			v.pin("motor.pin", m.Pin, false)
			v.pin("motor.dir_pin", m.DirPin, false)
		}
		if m.DirInvert && m.DirPin == "" {
			v.bad("motor.dir_invert", "needs a direction pin (motor.dir_pin)")
		}
		switch {
		case m.Driver == DriverStepper && m.StepPWM:
			if m.StepPin != "" {
				v.bad("motor.step_pin", "is not used with step_pwm (STEP comes from motor.pwm_chip, motor.pwm_channel)")
			}
		case m.Driver == DriverStepper:
			v.pin("motor.step_pin", m.StepPin, true)
		case m.StepPin != "":
			v.bad("motor.step_pin", "is only used by the stepper driver")
		}
		if m.StepPWM && m.Driver != DriverStepper {
			v.bad("motor.step_pwm", "is only used by the stepper driver")
		}
	}
	if m.PWMChip < 0 {
		v.bad("motor.pwm_chip", "must be 0 or more, got %d", m.PWMChip)
	}
	if m.PWMChannel < 0 {
		v.bad("motor.pwm_channel", "must be 0 or more, got %d", m.PWMChannel)
	}
	v.intRange("motor.pwm_frequency", m.PWMFrequency, 1, 1_000_000)
	v.intRange("motor.steps_per_second", m.StepsPerSecond, 1, 100_000)
	v.durRange("motor.max_on_time", m.MaxOnTime, 0, MaxMotorOnTime, true)
	v.fraction("motor.duty_limit", m.DutyLimit)
	v.durRange("motor.duty_window", m.DutyWindow, max(m.MaxOnTime, time.Second), time.Hour, true)

	p := &m.Profile
	v.durRange("motor.profile.run", p.Run, 0, MaxMotorOnTime, true)
	v.fraction("motor.profile.speed", p.Speed)
	v.durRange("motor.profile.reverse_jolt", p.ReverseJolt, 0, 2*time.Second, false)
	v.durRange("motor.profile.brake", p.Brake, 0, 2*time.Second, false)
	on := p.Run + p.ReverseJolt
	if p.Run > 0 && m.MaxOnTime > 0 && on > m.MaxOnTime {
		v.bad("motor.profile.run", "run + reverse_jolt (%s) must not exceed motor.max_on_time (%s)", on, m.MaxOnTime)
	}
	if budget := time.Duration(m.DutyLimit * float64(m.DutyWindow)); m.DutyLimit > 0 && m.DutyWindow > 0 && on > budget {
		v.bad("motor.profile.run", "one tumble (run + reverse_jolt = %s) exceeds the duty budget duty_limit × duty_window = %s", on, budget)
	}
}

func (v *validator) light() {
	l := &v.c.Light
	v.pin("light.pin", l.Pin, false)
	if (l.PWMChip == nil) != (l.PWMChannel == nil) {
		v.bad("light.pwm_chip", "set light.pwm_chip and light.pwm_channel together (or neither)")
	}
	pwm := l.PWMChip != nil && l.PWMChannel != nil
	if l.PWMChip != nil && *l.PWMChip < 0 {
		v.bad("light.pwm_chip", "must be 0 or more, got %d", *l.PWMChip)
	}
	if l.PWMChannel != nil && *l.PWMChannel < 0 {
		v.bad("light.pwm_channel", "must be 0 or more, got %d", *l.PWMChannel)
	}
	v.fraction("light.brightness", l.Brightness)
	if l.Brightness < 1 && !pwm {
		v.bad("light.brightness", "below 1 needs PWM (light.pwm_chip and light.pwm_channel)")
	}
	m := &v.c.Motor
	if pwm && m.usesPWM() && *l.PWMChip == m.PWMChip && *l.PWMChannel == m.PWMChannel {
		v.bad("light.pwm_channel", "PWM chip %d channel %d is already the motor's (motor.pwm_chip, motor.pwm_channel)", m.PWMChip, m.PWMChannel)
	}
}

// pins rejects one pin wired to two things.
func (v *validator) pins() {
	seen := map[string]string{}
	for _, p := range []struct{ key, pin string }{
		{"button.pin", v.c.Button.Pin},
		{"motor.pin", v.c.Motor.Pin},
		{"motor.dir_pin", v.c.Motor.DirPin},
		{"motor.step_pin", v.c.Motor.StepPin},
		{"light.pin", v.c.Light.Pin},
	} {
		if p.pin == "" {
			continue
		}
		if other, dup := seen[p.pin]; dup {
			v.bad(p.key, "%s is already used by %s", p.pin, other)
			continue
		}
		seen[p.pin] = p.key
	}
}

func (v *validator) camera() {
	c := &v.c.Camera
	if v.oneOf("camera.source", c.Source, SourceV4L2, SourceLibcamera, SourceSim) && c.Source == SourceV4L2 {
		if !strings.HasPrefix(c.Device, "/dev/") {
			v.bad("camera.device", "must be a device path like \"/dev/video0\", got %q", c.Device)
		}
	}
	v.intRange("camera.width", c.Width, 16, 8192)
	v.intRange("camera.height", c.Height, 16, 8192)
	v.intRange("camera.fps", c.FPS, 1, 240)
	if c.Rotate != 0 && c.Rotate != 90 && c.Rotate != 180 && c.Rotate != 270 {
		v.bad("camera.rotate", "must be 0, 90, 180 or 270 (degrees clockwise), got %d", c.Rotate)
	}
	s := &c.Settle
	v.intRange("camera.settle.still_frames", s.StillFrames, 1, 100)
	if !(s.DiffThreshold > 0 && s.DiffThreshold <= 255) {
		v.bad("camera.settle.diff_threshold", "must be more than 0 and at most 255 (grey levels), got %g", s.DiffThreshold)
	}
	v.durRange("camera.settle.timeout", s.Timeout, 0, time.Minute, true)
	if c.FPS > 0 && s.StillFrames > 0 && s.Timeout > 0 {
		if need := time.Duration(s.StillFrames) * time.Second / time.Duration(c.FPS); s.Timeout < need {
			v.bad("camera.settle.timeout", "%s is too short to see %d still frames at %d fps (needs %s)", s.Timeout, s.StillFrames, c.FPS, need)
		}
	}
}

func (v *validator) vision() {
	vi := &v.c.Vision
	if vi.Model == "" {
		v.bad("vision.model", "must not be empty")
	}
	v.fraction("vision.min_confidence", vi.MinConfidence)
	if len(vi.Dice) == 0 {
		v.bad("vision.dice", "must list at least one die kind (d4, d6, d8, d10, d12, d20, d100)")
	}
	seen := map[rules.Die]bool{}
	for i, d := range vi.Dice {
		key := fmt.Sprintf("vision.dice[%d]", i)
		switch {
		case !d.Valid():
			v.bad(key, "%d is not a die kind", int(d))
		case seen[d]:
			v.bad(key, "%s is listed twice", d)
		}
		seen[d] = true
	}
}

func (v *validator) mqtt() {
	m := &v.c.MQTT
	var scheme string
	if m.Broker != "" {
		scheme = v.brokerURL(m.Broker)
	}
	embedded := m.Broker == ""

	if host, port, err := net.SplitHostPort(m.Listen); err != nil {
		v.bad("mqtt.listen", "want host:port like \"127.0.0.1:1883\", got %q", m.Listen)
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		v.bad("mqtt.listen", "port must be 1 to 65535, got %q", port)
	} else if loop, ok := loopback(host); !ok {
		v.bad("mqtt.listen", "host must be an IP address, \"localhost\" or empty (every interface), got %q", host)
	} else if !loop && embedded {
		// Reachable from the network: only on purpose, and never open.
		if !m.AllowRemote {
			v.bad("mqtt.listen", "%s is reachable from the network; set mqtt.allow_remote: true to mean it", m.Listen)
		}
		if len(m.Users) == 0 {
			v.bad("mqtt.listen", "%s is reachable from the network, so mqtt.users must list who may log in", m.Listen)
		}
	}
	names := map[string]bool{}
	for i, u := range m.Users {
		key := fmt.Sprintf("mqtt.users[%d]", i)
		switch {
		case u.Username == "":
			v.bad(key+".username", "must not be empty")
		case names[u.Username]:
			v.bad(key+".username", "%q is listed twice", u.Username)
		}
		names[u.Username] = true
		if u.PasswordFile == "" {
			v.bad(key+".password_file", "must name the file holding the password")
		}
	}

	var sources []string
	for _, s := range []struct{ key, val string }{
		{"mqtt.password", m.Password},
		{"mqtt.password_env", m.PasswordEnv},
		{"mqtt.password_file", m.PasswordFile},
		{"mqtt.credential", m.Credential},
	} {
		if s.val != "" {
			sources = append(sources, s.key)
		}
	}
	if len(sources) > 1 {
		v.bad(sources[1], "give one password source, not %s", strings.Join(sources, " and "))
	}
	if len(sources) > 0 && m.Username == "" {
		v.bad("mqtt.username", "is required with %s", sources[0])
	}
	if embedded {
		for _, s := range append([]string{"mqtt.username"}, sources...) {
			if s == "mqtt.username" && m.Username == "" {
				continue
			}
			v.bad(s, "is only used with an external broker (mqtt.broker); the embedded broker's logins are mqtt.users")
		}
	}
	if m.PasswordEnv != "" && !envRE.MatchString(m.PasswordEnv) {
		v.bad("mqtt.password_env", "must be an environment variable name, got %q", m.PasswordEnv)
	}
	if m.Credential != "" && !credentialRE.MatchString(m.Credential) {
		v.bad("mqtt.credential", "must be a credential name like \"mqtt-password\" (letters, digits, '.', '_', '-'), got %q", m.Credential)
	}
	for _, s := range []struct{ key, val string }{
		{"mqtt.ca_file", m.CAFile},
		{"mqtt.cert_file", m.CertFile},
		{"mqtt.key_file", m.KeyFile},
		{"mqtt.server_name", m.ServerName},
	} {
		if s.val != "" && !mqtt.TLSScheme(scheme) {
			v.bad(s.key, "is only used with a TLS broker (ssl://, mqtts:// or wss://)")
		}
	}
	if (m.CertFile == "") != (m.KeyFile == "") {
		v.bad("mqtt.cert_file", "set mqtt.cert_file and mqtt.key_file together (or neither)")
	}
	v.topic("mqtt.prefix", m.Prefix)
	if m.ClientID == "" || len(m.ClientID) > 256 || strings.ContainsFunc(m.ClientID, isControl) {
		v.bad("mqtt.client_id", "must be 1 to 256 printable characters, got %q", m.ClientID)
	}
	v.topic("mqtt.homeassistant.prefix", m.HomeAssistant.Prefix)
}

// brokerURL checks the broker URL and returns its scheme.
func (v *validator) brokerURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		v.bad("mqtt.broker", "want a URL like \"tcp://host:1883\" or \"mqtts://host:8883\", got %q", s)
		return ""
	}
	if !slices.Contains(mqtt.BrokerSchemes, u.Scheme) {
		v.bad("mqtt.broker", "scheme must be one of %s, got %q", strings.Join(mqtt.BrokerSchemes, ", "), u.Scheme)
		return ""
	}
	switch {
	case u.User != nil:
		v.bad("mqtt.broker", "must not hold credentials; use mqtt.username and a password source")
	case u.Hostname() == "":
		v.bad("mqtt.broker", "names no host: %q", s)
	case u.Port() == "" && u.Scheme != "ws" && u.Scheme != "wss":
		v.bad("mqtt.broker", "give the port, like %s://%s:%s", u.Scheme, u.Hostname(), mqtt.DefaultPort(u.Scheme))
	case u.Port() != "":
		if n, err := strconv.Atoi(u.Port()); err != nil || n < 1 || n > 65535 {
			v.bad("mqtt.broker", "port must be 1 to 65535, got %q", u.Port())
		}
	}
	if (u.Path != "" && u.Path != "/") && u.Scheme != "ws" && u.Scheme != "wss" {
		v.bad("mqtt.broker", "only ws:// and wss:// URLs have a path, got %q", u.Path)
	}
	return u.Scheme
}

// loopback reports whether a listen host reaches only this machine; ok is
// false for a host that is neither an IP, "localhost" nor empty.
func loopback(host string) (loop, ok bool) {
	if host == "localhost" {
		return true, true
	}
	if host == "" {
		return false, true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false, false
	}
	return ip.IsLoopback(), true
}

// topic checks an MQTT topic prefix: levels without wildcards.
func (v *validator) topic(key, t string) {
	switch {
	case t == "":
		v.bad(key, "must not be empty")
	case strings.ContainsAny(t, "+#"):
		v.bad(key, "must not contain the wildcards + or #, got %q", t)
	case strings.HasPrefix(t, "/") || strings.HasSuffix(t, "/") || strings.Contains(t, "//"):
		v.bad(key, "must not start or end with '/' or have empty levels, got %q", t)
	case strings.HasPrefix(t, "$"):
		v.bad(key, "must not start with '$' (reserved for the broker), got %q", t)
	case strings.ContainsFunc(t, isControl) || len(t) > 1024:
		v.bad(key, "must be at most 1024 printable characters")
	}
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func (v *validator) history() {
	h := &v.c.History
	if h.MaxBytes < 4*KiB || h.MaxBytes > GiB {
		v.bad("history.max_bytes", "must be 4KiB to 1GiB, got %s", h.MaxBytes)
	}
	v.intRange("history.keep", h.Keep, 0, 100)
}

func (v *validator) log() {
	v.oneOf("log.level", v.c.Log.Level, "debug", "info", "warn", "error")
	v.oneOf("log.format", v.c.Log.Format, "text", "json")
}

// requestShape checks what the config can without the rules core: a JSON
// object naming its system.
func requestShape(r Request) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r, &m); err != nil || m == nil {
		return errors.New("must be a JSON object (a mapping)")
	}
	raw, ok := m["system"]
	if !ok {
		return errors.New(`needs a "system" (dice, dsdn, d20tn, d4tactical or ydin)`)
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || s == "" {
		return errors.New(`"system" must be a name (dice, dsdn, d20tn, d4tactical or ydin)`)
	}
	return nil
}

// DefaultRequest parses tower.default_request with the rules core; an
// error names the key and the request field at fault.
func (c *Config) DefaultRequest() (*rules.Request, error) {
	return c.parseRequest("tower.default_request", c.Tower.DefaultRequest)
}

// LongPressRequest parses button.long_press_request; nil, nil when none is
// set (a long press then rolls the default request).
func (c *Config) LongPressRequest() (*rules.Request, error) {
	if len(c.Button.LongPressRequest) == 0 {
		return nil, nil
	}
	return c.parseRequest("button.long_press_request", c.Button.LongPressRequest)
}

// CheckRequests parses both requests and checks that the dice they plan
// are among vision.dice; `towerd config check` runs it after Validate.
func (c *Config) CheckRequests() error {
	var errs Errors
	for _, f := range []struct {
		key   string
		parse func() (*rules.Request, error)
	}{
		{"tower.default_request", c.DefaultRequest},
		{"button.long_press_request", c.LongPressRequest},
	} {
		r, err := f.parse()
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				e = c.errorf(f.key, "%v", err)
			}
			errs = append(errs, e)
			continue
		}
		if r == nil {
			continue
		}
		for _, d := range r.Plan().Dice {
			if !slices.Contains(c.Vision.Dice, d) {
				errs = append(errs, c.errorf(f.key, "needs a %s, which vision.dice does not list", d))
				break
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs.sorted()
}

func (c *Config) parseRequest(key string, r Request) (*rules.Request, error) {
	req, err := rules.ParseRequest(r)
	if err == nil {
		return req, nil
	}
	var re *rules.Error
	if errors.As(err, &re) {
		k := key
		if re.Field != "" {
			k += "." + re.Field
		}
		e := c.errorf(key, "%s", re.Message)
		e.Key = k
		return nil, e
	}
	return nil, c.errorf(key, "%v", err)
}
