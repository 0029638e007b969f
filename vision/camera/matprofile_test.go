//go:build matprofile

package camera

import (
	"os"
	"testing"

	"github.com/towerd/towerd/internal/matcheck"
)

// With -tags matprofile the package fails when a gocv Mat is left open
// after its tests: `go test -tags matprofile ./vision/camera/`.
func TestMain(m *testing.M) { os.Exit(matcheck.Check("vision/camera", m.Run())) }
