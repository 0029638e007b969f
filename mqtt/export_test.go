package mqtt

import "time"

// Crash stops c as a killed process would: no DISCONNECT (the broker sends
// the last will), no final sync of the state files.
func Crash(c *Client) { c.crash() }

// Unacked is how many results and errors c has published without a PUBACK.
func Unacked(c *Client) int { return c.store.UnackedCount() }

// Pending reports whether a connected client of b has a delivery on topic
// in flight.
func Pending(b *Broker, topic string) bool { return b.pending(topic) }

// Drain waits, at most limit, until no connected client of b has a
// delivery on topic in flight, as Close does first for the status.
func Drain(b *Broker, topic string, limit time.Duration) { b.drain(topic, limit) }
