package mqtt

// Crash stops c as a killed process would: no DISCONNECT (the broker sends
// the last will), no final sync of the state files.
func Crash(c *Client) { c.crash() }
