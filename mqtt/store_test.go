package mqtt

import (
	"slices"
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
// connection: dial, OnConnect (the publisher starts publishing), then the
// resume lists the store and gets each packet. What was stored before
// OnConnect is the resume's to send; what was put after it went out
// already and must not be sent again (an "online" resent after "offline").
func TestResumeSendsOnlyWhatWasNotSent(t *testing.T) {
	var acked []uint64
	s := newTrackStore(func(n uint64) { acked = append(acked, n) })
	s.Open()
	closed := make(chan struct{})
	close(closed)

	// Published while no connection is up: stored, to be resumed.
	s.setExpect(7)
	s.Put("o.1", publishPacket(1))
	if !s.waitResumed(closed, time.Minute) {
		t.Fatal("waitResumed waited with no connection up")
	}

	s.dialed()
	s.connected()
	s.Put("o.2", publishPacket(2)) // the round's "online", sent at once
	if got := s.All(); !slices.Equal(got, []string{"o.1", "o.2"}) {
		t.Fatalf("All = %q", got)
	}
	if s.Get("o.1") == nil {
		t.Fatal("Get hides a packet stored before the connection came up: it would never be sent")
	}
	if s.Get("o.2") != nil {
		t.Fatal("Get gives the resume a packet already sent on this connection: it goes out twice")
	}
	if s.waitResumed(closed, time.Minute) {
		t.Fatal("waitResumed did not wait for the resumed packet's acknowledgement")
	}

	// A waiter wakes when the resumed packet is acknowledged.
	res := make(chan bool, 1)
	go func() { res <- s.waitResumed(make(chan struct{}), time.Minute) }()
	s.Del("o.1")
	select {
	case ok := <-res:
		if !ok {
			t.Fatal("waitResumed gave up although the resumed packet was acknowledged")
		}
	case <-time.After(30 * time.Second): // failure guard
		t.Fatal("waitResumed did not wake on the acknowledgement")
	}
	if !slices.Equal(acked, []uint64{7}) {
		t.Fatalf("acknowledged entries %v, want [7]", acked)
	}

	// The connection drops before o.2's PUBACK: the next resume sends it.
	s.lost()
	if !s.waitResumed(closed, time.Minute) {
		t.Fatal("waitResumed waited with the connection down")
	}
	s.dialed()
	if s.Get("o.2") == nil {
		t.Fatal("a packet unacknowledged when the connection dropped is not resumed")
	}
	s.connected()
	if s.waitResumed(closed, time.Minute) {
		t.Fatal("waitResumed did not wait for the packet resumed on the new connection")
	}
	// A limit ends the wait when the broker never acknowledges.
	if s.waitResumed(make(chan struct{}), time.Millisecond) {
		t.Fatal("waitResumed reported success at its limit")
	}
	s.Del("o.2")
	if !s.waitResumed(closed, time.Minute) {
		t.Fatal("waitResumed waits with nothing left to resume")
	}

	// paho reuses a packet id once it is free; Reset forgets everything.
	s.lost()
	s.Put("o.1", publishPacket(1))
	s.dialed()
	s.connected()
	s.Reset()
	if !s.waitResumed(closed, time.Minute) || len(s.All()) != 0 {
		t.Fatal("Reset left packets to resume")
	}
}
