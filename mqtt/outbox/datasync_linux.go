package outbox

import (
	"os"
	"syscall"
)

// datasync makes written data durable; in a preallocated file the size does
// not change, so fdatasync skips the metadata (journal) commit of fsync.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
