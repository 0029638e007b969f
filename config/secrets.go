package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ClientPassword returns the MQTT client password from whichever source
// is set: mqtt.password, the environment variable mqtt.password_env, the
// file mqtt.password_file, or the systemd credential mqtt.credential (read
// from $CREDENTIALS_DIRECTORY). It returns "" when none is set. A trailing
// newline in a file is not part of the password.
func (m *MQTT) ClientPassword() (string, error) {
	switch {
	case m.Password != "":
		return m.Password, nil
	case m.PasswordEnv != "":
		p, ok := os.LookupEnv(m.PasswordEnv)
		if !ok {
			return "", fmt.Errorf("config: mqtt.password_env: environment variable %s is not set", m.PasswordEnv)
		}
		return p, nil
	case m.PasswordFile != "":
		return readSecret("mqtt.password_file", m.PasswordFile)
	case m.Credential != "":
		dir := os.Getenv("CREDENTIALS_DIRECTORY")
		if dir == "" {
			return "", fmt.Errorf("config: mqtt.credential: $CREDENTIALS_DIRECTORY is not set; is towerd running under systemd with LoadCredential=%s:...?", m.Credential)
		}
		return readSecret("mqtt.credential", filepath.Join(dir, m.Credential))
	}
	return "", nil
}

// Password reads the user's password file.
func (u User) Password() (string, error) {
	return readSecret("mqtt.users "+u.Username+" password_file", u.PasswordFile)
}

func readSecret(key, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("config: %s: %w", key, err)
	}
	p := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if p == "" {
		return "", fmt.Errorf("config: %s: %s is empty", key, path)
	}
	if strings.ContainsAny(p, "\r\n") {
		return "", errors.New("config: " + key + ": " + path + " holds more than one line")
	}
	return p, nil
}
