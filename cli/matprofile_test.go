//go:build matprofile

package cli

import "github.com/towerd/towerd/internal/matcheck"

// With -tags matprofile the package fails when a gocv Mat made by the
// commands it runs is left open after the tests: `go test -tags
// matprofile ./cli/`.
func init() {
	afterTests = func(code int) int { return matcheck.Check("cli", code) }
}
