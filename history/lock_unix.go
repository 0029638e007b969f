//go:build unix

package history

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// lockDir takes an exclusive advisory lock on path so a second daemon on
// the same state directory fails at once instead of interleaving writes.
func lockDir(path string) (io.Closer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is held by another process (is towerd already running?)", path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil // closing the file releases the lock
}
