package simcam_test

import (
	"context"
	"testing"

	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim/simcam"
)

// BenchmarkCaptureTumbling measures one 640x480 frame of seven dice
// tumbling (dice drawn over the pre-lit tray, then sensor noise).
func BenchmarkCaptureTumbling(b *testing.B) {
	kinds := []rules.Die{rules.D4, rules.D6, rules.D8, rules.D10, rules.D12, rules.D20, rules.D100}
	cam := simcam.New(simcam.Config{Seed: 1, TumbleFrames: 1 << 20})
	if err := cam.Roll(kinds); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for range 20 { // all seven dropped in
		cam.Capture(ctx)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cam.Capture(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
