//go:build matprofile

package matcheck

import (
	"fmt"
	"os"

	"gocv.io/x/gocv"
)

// Check returns the exit code for a finished test run of pkg: 1 when any
// gocv Mat is still open (their creation stacks go to stderr), else code.
func Check(pkg string, code int) int {
	if n := gocv.MatProfile.Count(); n > 0 {
		fmt.Fprintf(os.Stderr, "%s: %d gocv Mats left open:\n", pkg, n)
		gocv.MatProfile.WriteTo(os.Stderr, 1)
		return 1
	}
	fmt.Fprintf(os.Stderr, "%s: 0 gocv Mats left open\n", pkg)
	return code
}
