package config

import (
	"fmt"
	"io"

	"github.com/goccy/go-yaml"
)

// Mask replaces a secret in Masked and Show.
const Mask = "********"

// Masked returns a copy of c with secrets (mqtt.password) replaced by Mask.
// Password files, environment variable and credential names are not
// secret and stay.
func (c *Config) Masked() *Config {
	d := c.Clone()
	if d.MQTT.Password != "" {
		d.MQTT.Password = Mask
	}
	return d
}

// Show writes the effective configuration (defaults and derived keys filled
// in, secrets masked) as YAML that Parse reads back.
func (c *Config) Show(w io.Writer) error {
	b, err := yaml.MarshalWithOptions(c.Masked(), yaml.Indent(2), yaml.IndentSequence(true))
	if err != nil {
		return fmt.Errorf("config: show: %w", err)
	}
	if _, err := fmt.Fprintf(w, "# towerd effective configuration: defaults filled in, secrets masked\n%s", b); err != nil {
		return fmt.Errorf("config: show: %w", err)
	}
	return nil
}
