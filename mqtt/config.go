package mqtt

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/towerd/towerd/rules"
)

// Config is the MQTT part of towerd's configuration. The zero value (plus a
// tower id) is a working setup: an embedded broker on 127.0.0.1:1883.
type Config struct {
	// Broker is an external broker's URL: tcp://host[:1883],
	// ssl://host[:8883] (also tls://, mqtts://), ws://host[:80]/path or
	// wss://. Empty: towerd serves the embedded broker (StartBroker).
	Broker string `yaml:"broker"`

	// Listen is the embedded broker's TCP address (127.0.0.1:1883).
	Listen string `yaml:"listen"`
	// AllowRemote lets the embedded broker listen on a non-loopback
	// address; Users must be configured as well.
	AllowRemote bool `yaml:"allow_remote"`
	// Users are the embedded broker's accounts. With none it accepts
	// anonymous clients, which is only allowed on loopback.
	Users []User `yaml:"users"`

	// Username and at most one of Password, PasswordEnv (an environment
	// variable's name), PasswordFile (a file holding it on one line) or
	// Credential (a systemd LoadCredential= name, read from
	// $CREDENTIALS_DIRECTORY) log in to an external broker.
	Username     string `yaml:"username"`
	Password     string `yaml:"password"`
	PasswordEnv  string `yaml:"password_env"`
	PasswordFile string `yaml:"password_file"`
	Credential   string `yaml:"credential"`

	// TLS for ssl:// and wss:// brokers: the CA that signed the broker's
	// certificate (system roots when empty), a client certificate and key
	// (both or neither), and the name to verify (the URL's host when empty).
	CAFile     string `yaml:"ca_file"`
	CertFile   string `yaml:"cert_file"`
	KeyFile    string `yaml:"key_file"`
	ServerName string `yaml:"server_name"`

	// TowerID names the tower in topics and results (tower-1); 1-64 of
	// letters, digits, '.', '_' and '-'.
	TowerID string `yaml:"tower_id"`
	// Prefix is the topic tree (dicetower/<tower id>).
	Prefix string `yaml:"prefix"`
	// ClientID is the MQTT client id (towerd-<tower id>). It must stay the
	// same across restarts: the broker keeps the session under it.
	ClientID string `yaml:"client_id"`

	HomeAssistant HomeAssistant `yaml:"home_assistant"`

	// QueueSize is how many requests may wait for the tower; more are
	// answered busy (32).
	QueueSize int `yaml:"queue_size"`
	// DedupeKeep and DedupeFor bound the answered request ids remembered so
	// a redelivered request is answered again instead of rolled again
	// (1024, 24h).
	DedupeKeep int           `yaml:"dedupe_keep"`
	DedupeFor  time.Duration `yaml:"dedupe_for"`

	// KeepAlive is the MQTT keepalive (30s); MaxReconnectInterval caps the
	// reconnect backoff (10s); ConnectTimeout bounds one attempt to
	// connect, CONNACK included (10s): an attempt that reached a broker
	// as it restarted waits that long for an answer that never comes;
	// WriteTimeout bounds a publish's write (10s): one caught as the
	// connection drops waits that long (the message is kept and sent
	// after the reconnect either way).
	KeepAlive            time.Duration `yaml:"keepalive"`
	MaxReconnectInterval time.Duration `yaml:"max_reconnect_interval"`
	ConnectTimeout       time.Duration `yaml:"connect_timeout"`
	WriteTimeout         time.Duration `yaml:"write_timeout"`
}

// User is an account of the embedded broker; set one of the password
// fields (as in Config).
type User struct {
	Username     string `yaml:"username"`
	Password     string `yaml:"password"`
	PasswordEnv  string `yaml:"password_env"`
	PasswordFile string `yaml:"password_file"`
	Credential   string `yaml:"credential"`
}

// HomeAssistant configures MQTT discovery.
type HomeAssistant struct {
	Enabled bool `yaml:"enabled"`
	// Prefix is Home Assistant's discovery prefix (homeassistant).
	Prefix string `yaml:"prefix"`
	// Name is the device name ("Dice tower <tower id>").
	Name string `yaml:"name"`
	// DefaultRoll is the request the button sends, as JSON
	// ({"system":"dice"}: a free roll of whatever dice are in the tower). It
	// must not carry an id: every press is a new roll.
	DefaultRoll string `yaml:"default_roll"`
}

// MaxPayload is the largest request accepted (16 KiB).
const MaxPayload = 16 << 10

const (
	defaultListen      = "127.0.0.1:1883"
	defaultTower       = "tower-1"
	defaultDefaultRoll = `{"system":"dice"}`
)

var towerIDRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.TowerID == "" {
		c.TowerID = defaultTower
	}
	if c.Listen == "" {
		c.Listen = defaultListen
	}
	if c.Prefix == "" {
		c.Prefix = "dicetower/" + c.TowerID
	}
	c.Prefix = strings.TrimSuffix(c.Prefix, "/")
	if c.ClientID == "" {
		c.ClientID = "towerd-" + c.TowerID
	}
	if c.HomeAssistant.Prefix == "" {
		c.HomeAssistant.Prefix = "homeassistant"
	}
	c.HomeAssistant.Prefix = strings.TrimSuffix(c.HomeAssistant.Prefix, "/")
	if c.HomeAssistant.Name == "" {
		c.HomeAssistant.Name = "Dice tower " + c.TowerID
	}
	if c.HomeAssistant.DefaultRoll == "" {
		c.HomeAssistant.DefaultRoll = defaultDefaultRoll
	}
	if c.QueueSize <= 0 {
		c.QueueSize = 32
	}
	if c.DedupeKeep <= 0 {
		c.DedupeKeep = 1024
	}
	if c.DedupeFor <= 0 {
		c.DedupeFor = 24 * time.Hour
	}
	if c.KeepAlive <= 0 {
		c.KeepAlive = 30 * time.Second
	}
	if c.MaxReconnectInterval <= 0 {
		c.MaxReconnectInterval = 10 * time.Second
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 10 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 10 * time.Second
	}
	return c
}

// Validate checks the configuration (defaults applied) without touching the
// network; password files and environment variables are read.
func (c Config) Validate() error {
	c = c.withDefaults()
	if !towerIDRe.MatchString(c.TowerID) {
		return fmt.Errorf("mqtt: tower_id %q: use 1-64 letters, digits, '.', '_' or '-'", c.TowerID)
	}
	if err := checkTopicPrefix("prefix", c.Prefix); err != nil {
		return err
	}
	if c.HomeAssistant.Enabled {
		if err := checkTopicPrefix("home_assistant.prefix", c.HomeAssistant.Prefix); err != nil {
			return err
		}
		if err := checkDefaultRoll(c.HomeAssistant.DefaultRoll); err != nil {
			return err
		}
	}
	if c.ClientID == "" || len(c.ClientID) > 128 {
		return fmt.Errorf("mqtt: client_id %q: 1-128 characters", c.ClientID)
	}
	if c.Broker == "" {
		if _, err := c.brokerUsers(); err != nil {
			return err
		}
		return checkListen(c)
	}
	if _, err := brokerURL(c.Broker); err != nil {
		return err
	}
	if _, err := c.clientPassword(); err != nil {
		return err
	}
	if _, err := c.tlsConfig(); err != nil {
		return err
	}
	return nil
}

func checkTopicPrefix(field, p string) error {
	if p == "" || strings.ContainsAny(p, "+#\x00") || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "$") || strings.Contains(p, "//") {
		return fmt.Errorf("mqtt: %s %q: a topic without wildcards, empty levels or a leading '/' or '$'", field, p)
	}
	return nil
}

// checkDefaultRoll validates the button's request: a valid request, and
// without an id (a fixed id would make every press after the first a
// duplicate answered from the journal).
func checkDefaultRoll(s string) error {
	req, err := rules.ParseRequest([]byte(s))
	if err != nil {
		return fmt.Errorf("mqtt: home_assistant.default_roll: %w", err)
	}
	if req.ID != "" {
		return errors.New("mqtt: home_assistant.default_roll: must not carry an id (every press would be the same request)")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &obj) != nil {
		return errors.New("mqtt: home_assistant.default_roll: not a JSON object")
	}
	return nil
}

// brokerURL parses an external broker URL, adding the default port.
func brokerURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("mqtt: broker %q: %w", s, err)
	}
	if !slices.Contains(BrokerSchemes, u.Scheme) {
		return nil, fmt.Errorf("mqtt: broker %q: scheme must be one of %s", s, strings.Join(BrokerSchemes, ", "))
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("mqtt: broker %q: no host", s)
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), DefaultPort(u.Scheme))
	}
	return u, nil
}

// DefaultPort is the port a broker URL of scheme s (one of BrokerSchemes)
// means when it names none: MQTT's 1883, or 8883 over TLS; the web's for
// websockets.
func DefaultPort(s string) string {
	switch {
	case s == "ws":
		return "80"
	case s == "wss":
		return "443"
	case TLSScheme(s):
		return "8883"
	}
	return "1883"
}

// BrokerSchemes are the broker URL schemes the client dials (brokerURL).
var BrokerSchemes = []string{"tcp", "ssl", "tls", "ws", "wss", "mqtt", "mqtts"}

// TLSScheme reports whether broker URL scheme s is a TLS one.
func TLSScheme(s string) bool {
	switch s {
	case "ssl", "tls", "mqtts", "wss":
		return true
	}
	return false
}

func isTLS(u *url.URL) bool { return TLSScheme(u.Scheme) }

// clientPassword is the external broker's password from its one source.
func (c Config) clientPassword() (string, error) {
	return resolvePassword("password", c.Password, c.PasswordEnv, c.PasswordFile, c.Credential)
}

// resolvePassword returns the password from the one source given ("" for
// none).
func resolvePassword(field, literal, env, file, credential string) (string, error) {
	n := 0
	for _, s := range []string{literal, env, file, credential} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		return "", fmt.Errorf("mqtt: set only one of %[1]s, %[1]s_env, %[1]s_file and credential", field)
	}
	read := func(key, path string) (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("mqtt: %s: %w", key, err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	switch {
	case env != "":
		v, ok := os.LookupEnv(env)
		if !ok {
			return "", fmt.Errorf("mqtt: %s_env: environment variable %s is not set", field, env)
		}
		return v, nil
	case file != "":
		return read(field+"_file", file)
	case credential != "":
		dir := os.Getenv("CREDENTIALS_DIRECTORY")
		if dir == "" {
			return "", fmt.Errorf("mqtt: credential %q: $CREDENTIALS_DIRECTORY is not set (add LoadCredential=%s:<file> to the systemd unit)", credential, credential)
		}
		if strings.ContainsAny(credential, "/\\") {
			return "", fmt.Errorf("mqtt: credential %q: a name, not a path", credential)
		}
		return read("credential", filepath.Join(dir, credential))
	}
	return literal, nil
}

// brokerUsers resolves the embedded broker's accounts.
func (c Config) brokerUsers() (map[string]string, error) {
	users := map[string]string{}
	for i, u := range c.Users {
		if u.Username == "" {
			return nil, fmt.Errorf("mqtt: users[%d]: username is empty", i)
		}
		if _, dup := users[u.Username]; dup {
			return nil, fmt.Errorf("mqtt: users[%d]: username %q given twice", i, u.Username)
		}
		p, err := resolvePassword("password", u.Password, u.PasswordEnv, u.PasswordFile, u.Credential)
		if err != nil {
			return nil, fmt.Errorf("mqtt: users[%d] (%s): %w", i, u.Username, err)
		}
		if p == "" {
			return nil, fmt.Errorf("mqtt: users[%d] (%s): empty password", i, u.Username)
		}
		users[u.Username] = p
	}
	return users, nil
}

// checkListen refuses an embedded broker reachable from the network unless
// access was opened on purpose and is protected by accounts.
func checkListen(c Config) error {
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return fmt.Errorf("mqtt: listen %q: %w", c.Listen, err)
	}
	if isLoopback(host) {
		return nil
	}
	if !c.AllowRemote {
		return fmt.Errorf("mqtt: listen %q is not a loopback address: set allow_remote (and users) to open the broker to the network", c.Listen)
	}
	if len(c.Users) == 0 {
		return fmt.Errorf("mqtt: refusing to listen on %q without users: configure at least one username and password", c.Listen)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tlsConfig builds the client TLS settings (nil for plain brokers).
func (c Config) tlsConfig() (*tls.Config, error) {
	u, err := brokerURL(c.Broker)
	if err != nil || !isTLS(u) {
		if (c.CAFile != "" || c.CertFile != "") && err == nil {
			return nil, fmt.Errorf("mqtt: ca_file/cert_file given but broker %q is not ssl:// or wss://", c.Broker)
		}
		return nil, err
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if tc.ServerName == "" {
		tc.ServerName = u.Hostname()
	}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("mqtt: ca_file: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("mqtt: ca_file %s: no PEM certificate in it", c.CAFile)
		}
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, errors.New("mqtt: cert_file and key_file go together")
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("mqtt: client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// topics is the topic tree of one tower.
type topics struct {
	status, state, roll, result, error, event, stats string
	haStatus                                         string
}

func (c Config) topics() topics {
	p := c.Prefix
	return topics{
		status: p + "/status", state: p + "/state", roll: p + "/roll",
		result: p + "/result", error: p + "/error", event: p + "/event",
		stats:    p + "/stats",
		haStatus: c.HomeAssistant.Prefix + "/status",
	}
}
