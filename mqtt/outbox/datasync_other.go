//go:build !linux

package outbox

import "os"

func datasync(f *os.File) error { return f.Sync() }
