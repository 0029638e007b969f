package hw_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/towerd/towerd/clock"
	"github.com/towerd/towerd/hw"
	"github.com/towerd/towerd/hw/hwtest"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newSim builds a simulated tower on a fake clock, closed at cleanup.
func newSim(tb testing.TB, cfg hw.Config) (*hwtest.Sim, *clock.Fake) {
	tb.Helper()
	clk := clock.NewFake(t0)
	s, err := hwtest.NewTower(cfg, clk, quiet())
	if err != nil {
		tb.Fatalf("NewTower: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s, clk
}

// drain closes the tower and returns every button event it delivered.
func drain(tb testing.TB, s *hwtest.Sim) []hw.ButtonEvent {
	tb.Helper()
	if err := s.Close(); err != nil {
		tb.Fatalf("Close: %v", err)
	}
	var evs []hw.ButtonEvent
	for e := range s.Button.Events() {
		evs = append(evs, e)
	}
	return evs
}
