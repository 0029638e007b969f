//go:build !unix

package outbox

import "os"

// lockFile only creates the lock file where flock is unavailable; towerd runs
// on Linux, this keeps the package building elsewhere.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}
