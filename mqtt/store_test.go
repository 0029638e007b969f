package mqtt

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.mqtt.golang/packets"
)

func publishPacket(id uint16) *packets.PublishPacket {
	p := packets.NewControlPacket(packets.Publish).(*packets.PublishPacket)
	p.Qos, p.MessageID, p.TopicName = 1, id, "t/status"
	return p
}

// TestResumeSendsOnlyWhatWasNotSent follows paho v1.5.1's order on a
// connection: dial, the connection marked up (Publish sends at once from
// then on), then the resume lists the store and gets each packet. What was
// stored while the connection was not up is the resume's to send; what was
// put while it was went out already and must not be sent again (an
// "online" resent after "offline").
func TestResumeSendsOnlyWhatWasNotSent(t *testing.T) {
	var up atomic.Bool
	var acked []uint64
	s := newTrackStore(func(n uint64) { acked = append(acked, n) })
	s.open = up.Load
	s.Open()
	closed := make(chan struct{})
	close(closed)
	// waits reports whether waitResumed would block now.
	waits := func() bool { return !s.waitResumed(closed, time.Minute) }

	// Published while no connection is up: stored, to be resumed.
	s.setExpect(7)
	s.Put("o.1", publishPacket(1))
	if waits() {
		t.Fatal("waitResumed waits with no connection up")
	}
	s.dialed()
	s.Put("o.2", publishPacket(2)) // between dial and CONNACK: stored only
	s.Put("i.9", publishPacket(9)) // a request the broker redelivers
	up.Store(true)
	s.Put("o.3", publishPacket(3)) // sent at once
	if got := s.All(); !slices.Equal(got, []string{"o.1", "o.2", "i.9", "o.3"}) {
		t.Fatalf("All = %q", got)
	}
	for _, k := range []string{"o.1", "o.2", "i.9"} {
		if s.Get(k) == nil {
			t.Fatalf("Get hides %s, stored while the connection was not up: it would never be sent", k)
		}
	}
	if s.Get("o.3") != nil {
		t.Fatal("Get gives the resume a publish already sent on this connection: it goes out twice")
	}
	if !waits() {
		t.Fatal("waitResumed does not wait for the resumed publishes' acknowledgements")
	}

	// A waiter wakes when the last resumed publish is acknowledged; an
	// incoming publish (acknowledged by the roll loop, in its own time)
	// is not waited for.
	s.Del("o.2")
	wakes(t, s, func() { s.Del("o.1") }, "on the acknowledgement")
	if !slices.Equal(acked, []uint64{7}) {
		t.Fatalf("acknowledged entries %v, want [7]", acked)
	}

	// The connection drops before o.3's PUBACK: the next resume sends it.
	up.Store(false)
	if waits() {
		t.Fatal("waitResumed waits with the connection down")
	}
	s.dialed()
	up.Store(true)
	if s.Get("o.3") == nil {
		t.Fatal("a publish unacknowledged when the connection dropped is not resumed")
	}
	// A broker that does not acknowledge is waited for at most the limit
	// in all on one connection (the first wait sets it).
	if s.waitResumed(make(chan struct{}), time.Millisecond) {
		t.Fatal("waitResumed reported success at its limit")
	}
	if s.waitResumed(make(chan struct{}), time.Hour) {
		t.Fatal("waitResumed reported success past its connection's limit")
	}
	s.dialed() // a new connection waits again
	if !waits() {
		t.Fatal("a new connection does not wait for its resumed publishes")
	}
	s.Del("o.3")
	if waits() {
		t.Fatal("waitResumed waits with nothing left to resume")
	}

	// paho reuses a packet id once it is free: put again while down, the
	// publish is the resume's; Reset forgets everything.
	s.Put("o.3", publishPacket(3))
	up.Store(false)
	s.Put("o.3", publishPacket(3))
	up.Store(true)
	if s.Get("o.3") == nil || !waits() {
		t.Fatal("a publish stored again while the connection was down is not resumed")
	}
	s.Reset()
	if waits() || len(s.All()) != 0 {
		t.Fatal("Reset left publishes to resume")
	}

	// While a dialed connection is not up yet, publishing waits for it: a
	// publish stored just as paho marks it up would be counted as not
	// sent, go out at once, and again from the resume.
	var up2 atomic.Bool
	c := newTrackStore(func(uint64) {})
	c.open, c.connectLimit = up2.Load, time.Hour
	c.dialed()
	if c.waitResumed(closed, time.Minute) {
		t.Fatal("waitResumed does not wait for a dialed connection to come up")
	}
	wakes(t, c, func() {
		up2.Store(true)
		c.connected() // paho's OnConnect
	}, "when the connection came up")
	// One that never comes up is waited for at most connectLimit.
	up2.Store(false)
	c.connectLimit = time.Millisecond
	c.dialed()
	if !c.waitResumed(make(chan struct{}), time.Hour) {
		t.Fatal("waitResumed did not go on after the connect limit")
	}

	// A publish whose Put saw the connection up just as a new one was
	// dialed is the new connection's resume's to send.
	s.open = func() bool { s.dialed(); return true }
	s.Put("o.4", publishPacket(4))
	s.open = up.Load
	if s.Get("o.4") == nil {
		t.Fatal("a publish put across a reconnect is hidden from the new connection's resume")
	}
}

// wakes checks that a waitResumed blocked on s returns true once event
// has happened.
func wakes(t *testing.T, s *trackStore, event func(), what string) {
	t.Helper()
	blocked := make(chan struct{}, 1)
	s.onWait = func() { blocked <- struct{}{} }
	defer func() { s.onWait = nil }()
	res := make(chan bool, 1)
	go func() { res <- s.waitResumed(make(chan struct{}), time.Minute) }()
	<-blocked
	event()
	select {
	case ok := <-res:
		if !ok {
			t.Fatalf("waitResumed gave up instead of waking %s", what)
		}
	case <-time.After(30 * time.Second): // failure guard
		t.Fatalf("waitResumed did not wake %s", what)
	}
}
