//go:build matprofile

package cli

import (
	"fmt"
	"os"

	"gocv.io/x/gocv"
)

// Built only with -tags matprofile: the package fails when any gocv Mat
// made by the commands it runs is still open after the tests
// (`go test -tags matprofile ./cli/`).
func init() {
	afterTests = func(code int) int {
		if n := gocv.MatProfile.Count(); n > 0 {
			fmt.Fprintf(os.Stderr, "cli: %d gocv Mats left open:\n", n)
			gocv.MatProfile.WriteTo(os.Stderr, 1)
			return 1
		}
		fmt.Fprintln(os.Stderr, "cli: 0 gocv Mats left open")
		return code
	}
}
