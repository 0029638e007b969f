package mqtt

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// dialer opens broker connections for paho. Owning the dial lets the client
// see each CONNACK's session-present flag (paho does not report it on
// reconnects) and lets tests cut the connection the way a crash would.
type dialer struct {
	tls     *tls.Config
	timeout time.Duration
	opened  func() // called for each connection opened, before its CONNECT

	mu      sync.Mutex
	cur     *sniffConn
	stopped bool
}

var errDialStopped = errors.New("mqtt: client stopped")

func (d *dialer) open(u *url.URL, _ paho.ClientOptions) (net.Conn, error) {
	d.mu.Lock()
	stopped := d.stopped
	d.mu.Unlock()
	if stopped {
		return nil, errDialStopped
	}
	var (
		c   net.Conn
		err error
	)
	nd := &net.Dialer{Timeout: d.timeout}
	switch u.Scheme {
	case "ssl", "tls", "mqtts":
		c, err = (&tls.Dialer{NetDialer: nd, Config: d.tls}).DialContext(context.Background(), "tcp", u.Host)
	case "ws", "wss":
		wu := *u
		wu.User = nil
		c, err = paho.NewWebsocket(wu.String(), d.tls, d.timeout, nil, nil)
	default:
		c, err = nd.Dial("tcp", u.Host)
	}
	if err != nil {
		return nil, err
	}
	sc := &sniffConn{Conn: c}
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		c.Close()
		return nil, errDialStopped
	}
	d.cur = sc
	d.mu.Unlock()
	if d.opened != nil {
		d.opened()
	}
	return sc, nil
}

// sessionPresent reports the flag of the newest connection's CONNACK.
func (d *dialer) sessionPresent() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cur != nil && d.cur.present.Load()
}

// kill closes the connection without an MQTT DISCONNECT, so the broker
// publishes the last will, and refuses further dials: a crash, for tests.
func (d *dialer) kill() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
	if d.cur != nil {
		d.cur.Conn.Close()
	}
}

// sniffConn watches the first bytes the broker sends, the CONNACK
// (0x20, 0x02, flags, code), for the session-present bit.
type sniffConn struct {
	net.Conn
	seen    int
	done    bool
	present atomic.Bool
}

func (c *sniffConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.done {
		for _, b := range p[:n] {
			switch c.seen {
			case 0:
				if b>>4 != 2 { // not a CONNACK
					c.done = true
				}
			case 2:
				c.present.Store(b&1 == 1)
				c.done = true
			}
			c.seen++
			if c.done {
				break
			}
		}
	}
	return n, err
}
