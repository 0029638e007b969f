package clock

import (
	"testing"
	"time"
)

func TestFakeFiresInOrder(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	a := f.NewTimer(2 * time.Second)
	b := f.NewTimer(1 * time.Second)
	f.Advance(1500 * time.Millisecond)
	select {
	case <-b.C():
	default:
		t.Fatal("1s timer did not fire at 1.5s")
	}
	select {
	case <-a.C():
		t.Fatal("2s timer fired early")
	default:
	}
	if !a.Stop() {
		t.Fatal("Stop of a pending timer returned false")
	}
	f.Advance(time.Hour)
	select {
	case <-a.C():
		t.Fatal("stopped timer fired")
	default:
	}
	if f.Pending() != 0 {
		t.Fatalf("pending = %d, want 0", f.Pending())
	}
}

func TestFakeBlockUntil(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	done := make(chan struct{})
	go func() {
		<-f.After(time.Second)
		close(done)
	}()
	f.BlockUntil(1)
	f.Advance(time.Second)
	<-done
	if got := f.Now(); !got.Equal(time.Unix(1, 0)) {
		t.Fatalf("now = %v", got)
	}
}
