package cputime

import "testing"

func TestNowAdvancesWithWork(t *testing.T) {
	t0 := Now()
	x := uint64(1)
	for Now() == t0 {
		for i := 0; i < 1_000_000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if x == 0 || Now() <= t0 {
		t.Fatalf("CPU time did not advance: %v", Now()-t0)
	}
}

func BenchmarkReport(b *testing.B) {
	t0 := Now()
	for b.Loop() {
		_ = Now()
	}
	Report(b, t0)
}
