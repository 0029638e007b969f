//go:build matprofile

package vision

import (
	"os"
	"testing"

	"github.com/towerd/towerd/internal/matcheck"
)

// With -tags matprofile the package fails when a gocv Mat is left open
// after its tests: `go test -tags matprofile ./vision/`.
func TestMain(m *testing.M) { os.Exit(matcheck.Check("vision", m.Run())) }
