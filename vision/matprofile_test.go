//go:build matprofile

package vision

import (
	"fmt"
	"os"
	"testing"

	"gocv.io/x/gocv"
)

// TestMain, built only with -tags matprofile, fails the package when any
// gocv Mat made by its code or tests is still open after the tests:
// `go test -tags matprofile ./vision/`.
func TestMain(m *testing.M) {
	code := m.Run()
	if n := gocv.MatProfile.Count(); n > 0 {
		fmt.Fprintf(os.Stderr, "vision: %d gocv Mats left open:\n", n)
		gocv.MatProfile.WriteTo(os.Stderr, 1)
		code = 1
	} else {
		fmt.Fprintln(os.Stderr, "vision: 0 gocv Mats left open")
	}
	os.Exit(code)
}
