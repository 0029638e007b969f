//go:build !unix

package history

import (
	"io"
	"os"
)

// lockDir only creates the lock file where flock is unavailable; towerd
// runs on Linux, this keeps the package building elsewhere.
func lockDir(path string) (io.Closer, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
}
