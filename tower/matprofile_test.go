//go:build matprofile

package tower

import (
	"os"
	"testing"

	"github.com/towerd/towerd/internal/matcheck"
)

// With -tags matprofile the package fails when a gocv Mat is left open
// after its tests: `go test -tags matprofile ./tower/`.
func TestMain(m *testing.M) { os.Exit(matcheck.Check("tower", m.Run())) }
