// Package cputime reports the CPU time a benchmark used per operation: on a
// machine shared with other jobs (or a VM whose host steals its time) the
// wall time of a benchmark says little, the CPU time what the code costs.
package cputime

import (
	"syscall"
	"testing"
	"time"
)

// Now is the process's CPU time so far (user and system, every thread).
func Now() time.Duration {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// Report adds the metric cpu-ns/op: the CPU time since t0 over b.N. Run
// with -cpu 1 so it is the cost on one core (the GC's work included).
func Report(b *testing.B, t0 time.Duration) {
	b.ReportMetric(float64(Now()-t0)/float64(b.N), "cpu-ns/op")
}
