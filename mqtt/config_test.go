package mqtt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateListen(t *testing.T) {
	users := []User{{Username: "display", Password: "secret"}}
	for _, tc := range []struct {
		cfg  Config
		want string // "" when valid
	}{
		{Config{}, ""},
		{Config{Listen: "localhost:1883"}, ""},
		{Config{Listen: "[::1]:1883"}, ""},
		{Config{Listen: "0.0.0.0:1883"}, "allow_remote"},
		{Config{Listen: ":1883", AllowRemote: true}, "without users"},
		{Config{Listen: "192.168.1.5:1883", Users: users}, "allow_remote"},
		{Config{Listen: "0.0.0.0:1883", AllowRemote: true, Users: users}, ""},
		{Config{Users: []User{{Username: "u"}}}, "empty password"},
		{Config{Users: []User{{Username: "u", Password: "a", PasswordEnv: "B"}}}, "only one"},
		{Config{TowerID: "bad/id"}, "tower_id"},
		{Config{TowerID: "den.2"}, ""},
		{Config{Prefix: "$SYS/x"}, "prefix"},
		{Config{Prefix: "a/+/b"}, "prefix"},
		{Config{Broker: "http://x"}, "scheme"},
		{Config{Broker: "tcp://"}, "no host"},
		{Config{Broker: "tcp://h", CAFile: "/x"}, "not ssl"},
		{Config{Broker: "ssl://h", CertFile: "/x"}, "go together"},
		{Config{HomeAssistant: HomeAssistant{Enabled: true, DefaultRoll: `{"id":"x","system":"dice"}`}}, "id"},
		{Config{HomeAssistant: HomeAssistant{Enabled: true, DefaultRoll: `{"system":"nope"}`}}, "default_roll"},
		{Config{HomeAssistant: HomeAssistant{Enabled: true}}, ""},
	} {
		err := tc.cfg.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.cfg, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want one mentioning %q", tc.cfg, err, tc.want)
		}
	}
}

func TestPasswordSources(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "mqtt-password"), []byte("from-credential\n"), 0o600)
	path := filepath.Join(dir, "pw.txt")
	os.WriteFile(path, []byte("from-file\r\n"), 0o600)
	t.Setenv("TOWERD_TEST_PW", "from-env")
	t.Setenv("CREDENTIALS_DIRECTORY", dir)
	for _, tc := range []struct{ literal, env, file, cred, want string }{
		{"lit", "", "", "", "lit"},
		{"", "TOWERD_TEST_PW", "", "", "from-env"},
		{"", "", path, "", "from-file"},
		{"", "", "", "mqtt-password", "from-credential"},
	} {
		got, err := resolvePassword("password", tc.literal, tc.env, tc.file, tc.cred)
		if err != nil || got != tc.want {
			t.Errorf("%+v: %q %v", tc, got, err)
		}
	}
	if _, err := resolvePassword("password", "", "TOWERD_TEST_UNSET_VAR", "", ""); err == nil {
		t.Error("unset variable accepted")
	}
	t.Setenv("CREDENTIALS_DIRECTORY", "")
	if _, err := resolvePassword("password", "", "", "", "mqtt-password"); err == nil || !strings.Contains(err.Error(), "CREDENTIALS_DIRECTORY") {
		t.Errorf("credential without $CREDENTIALS_DIRECTORY: %v", err)
	}
	if _, err := resolvePassword("password", "x", "", "", "mqtt-password"); err == nil {
		t.Error("two password sources accepted")
	}
}

func TestBrokerURLDefaults(t *testing.T) {
	for in, want := range map[string]string{
		"tcp://h":           "tcp://h:1883",
		"ssl://h":           "ssl://h:8883",
		"ws://h/mqtt":       "ws://h:80/mqtt",
		"wss://h:9001/mqtt": "wss://h:9001/mqtt",
		"tcp://[::1]":       "tcp://[::1]:1883",
		"mqtt://h":          "mqtt://h:1883",
		"mqtts://h":         "mqtts://h:8883",
		"tls://h":           "tls://h:8883",
	} {
		u, err := brokerURL(in)
		if err != nil || u.String() != want {
			t.Errorf("brokerURL(%q) = %v %v, want %s", in, u, err, want)
		}
	}
	// The error names every scheme the client dials, as config's does.
	_, err := brokerURL("http://h:80")
	if err == nil {
		t.Fatal("brokerURL accepted http")
	}
	for _, s := range BrokerSchemes {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("brokerURL(http): %v; want it to name %s", err, s)
		}
	}
}

func TestDiscoveryConfigs(t *testing.T) {
	cfg := Config{TowerID: "t-1", HomeAssistant: HomeAssistant{Enabled: true, DefaultRoll: `{"system":"dice","expr":"1d20"}`}}.withDefaults()
	msgs := discoveryMessages(cfg)
	want := []string{
		"homeassistant/sensor/towerd_t-1/last_result/config",
		"homeassistant/event/towerd_t-1/outcome/config",
		"homeassistant/button/towerd_t-1/roll/config",
	}
	if len(msgs) != len(want) {
		t.Fatalf("%d configs", len(msgs))
	}
	for i, m := range msgs {
		if m.topic != want[i] || !m.retain || m.qos != 1 {
			t.Errorf("config %d: %s retain=%v", i, m.topic, m.retain)
		}
		for _, s := range []string{`"availability_topic":"dicetower/t-1/status"`, `"identifiers":["towerd_t-1"]`} {
			if !strings.Contains(string(m.payload), s) {
				t.Errorf("%s lacks %s: %s", m.topic, s, m.payload)
			}
		}
	}
	if !strings.Contains(string(msgs[2].payload), `"payload_press":"{\"system\":\"dice\",\"expr\":\"1d20\"}"`) ||
		!strings.Contains(string(msgs[2].payload), `"command_topic":"dicetower/t-1/roll"`) {
		t.Errorf("button: %s", msgs[2].payload)
	}
	if !strings.Contains(string(msgs[1].payload), `"critical_success"`) {
		t.Errorf("event types: %s", msgs[1].payload)
	}
}
