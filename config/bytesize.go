package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// ByteSize is a number of bytes, written 10MiB, 512KiB, 1GB or 1048576.
type ByteSize int64

// Binary and decimal size units.
const (
	KiB ByteSize = 1 << 10
	MiB ByteSize = 1 << 20
	GiB ByteSize = 1 << 30
)

var sizeUnits = []struct {
	name string
	mult ByteSize
}{
	{"KiB", KiB}, {"MiB", MiB}, {"GiB", GiB},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
	{"B", 1},
}

// ParseByteSize reads a whole number of bytes with an optional unit (B, KB,
// MB, GB, KiB, MiB, GiB; any case).
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	mult := ByteSize(1)
	for _, u := range sizeUnits {
		if len(t) > len(u.name) && strings.EqualFold(t[len(t)-len(u.name):], u.name) {
			mult, t = u.mult, strings.TrimSpace(t[:len(t)-len(u.name)])
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a size like 10MiB, 512KiB or a number of bytes, got %q", s)
	}
	if n > math.MaxInt64/int64(mult) {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return ByteSize(n) * mult, nil
}

// String writes the size in the largest binary unit that divides it.
func (b ByteSize) String() string {
	for _, u := range []struct {
		name string
		mult ByteSize
	}{{"GiB", GiB}, {"MiB", MiB}, {"KiB", KiB}} {
		if b != 0 && b%u.mult == 0 {
			return fmt.Sprintf("%d%s", b/u.mult, u.name)
		}
	}
	return fmt.Sprintf("%dB", int64(b))
}

// MarshalText writes String.
func (b ByteSize) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalYAML implements yaml.NodeUnmarshaler.
func (b *ByteSize) UnmarshalYAML(n ast.Node) error {
	txt := scalarText(n)
	if isInt(n) {
		txt = intValue(n)
	}
	v, err := ParseByteSize(txt)
	if err != nil {
		return err
	}
	*b = v
	return nil
}
