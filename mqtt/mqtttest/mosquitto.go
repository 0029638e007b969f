// Package mqtttest provides test helpers for towerd's MQTT layer: a real
// mosquitto broker on a free loopback port, a simulated zero-time roller and
// a bot that sends requests and collects the answers.
package mqtttest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Mosquitto is a mosquitto broker run for one test, with persistence in a
// temporary directory so a Stop/Start keeps sessions and queued messages
// (as a packaged mosquitto does across a restart).
type Mosquitto struct {
	tb   testing.TB
	bin  string
	dir  string
	addr string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	tail []string // last log lines, for failure messages
}

// MosquittoPath finds the mosquitto binary ("" when not installed).
func MosquittoPath() string {
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// StartMosquitto starts mosquitto on a free 127.0.0.1 port, skipping the
// test when mosquitto is not installed (make deps installs it). extra lines
// are appended to its configuration. It is stopped when the test ends.
func StartMosquitto(tb testing.TB, extra ...string) *Mosquitto {
	tb.Helper()
	bin := MosquittoPath()
	if bin == "" {
		tb.Skip("mosquitto is not installed (make deps installs it: apt-get install mosquitto)")
	}
	m := &Mosquitto{tb: tb, bin: bin, dir: tb.TempDir()}
	var lastErr error
	for range 5 { // a free port can be taken between picking and binding it
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatalf("mqtttest: pick a port: %v", err)
		}
		m.addr = l.Addr().String()
		l.Close()
		if err := m.writeConfig(extra); err != nil {
			tb.Fatalf("mqtttest: %v", err)
		}
		if lastErr = m.start(); lastErr == nil {
			tb.Cleanup(m.Stop)
			return m
		}
	}
	tb.Fatalf("mqtttest: start mosquitto: %v", lastErr)
	return nil
}

func (m *Mosquitto) writeConfig(extra []string) error {
	_, port, _ := net.SplitHostPort(m.addr)
	lines := []string{
		"listener " + port + " 127.0.0.1",
		"allow_anonymous true",
		"persistence true",
		"persistence_location " + m.dir + "/",
		"log_dest stderr",
		"max_queued_messages 0",
	}
	if u, err := user.Current(); err == nil && u.Uid == "0" {
		// As root mosquitto drops to user "mosquitto", which cannot write
		// the test's persistence directory.
		lines = append(lines, "user root")
	}
	lines = append(lines, extra...)
	return os.WriteFile(filepath.Join(m.dir, "mosquitto.conf"), []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

// Addr is host:port; URL is tcp://host:port.
func (m *Mosquitto) Addr() string { return m.addr }

// URL is the broker's tcp:// URL.
func (m *Mosquitto) URL() string { return "tcp://" + m.addr }

// start runs mosquitto and waits until its log says it is running.
func (m *Mosquitto) start() error {
	cmd := exec.Command(m.bin, "-c", filepath.Join(m.dir, "mosquitto.conf"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	ready := make(chan bool, 1)
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			m.mu.Lock()
			m.tail = append(m.tail, line)
			if len(m.tail) > 40 {
				m.tail = m.tail[1:]
			}
			m.mu.Unlock()
			if !signalled && strings.Contains(line, " running") {
				ready <- true
				signalled = true
			}
		}
		if !signalled {
			ready <- false
		}
		cmd.Wait()
		close(done)
	}()
	select {
	case ok := <-ready:
		if !ok {
			<-done
			return fmt.Errorf("mosquitto exited: %s", m.logTail())
		}
	case <-time.After(30 * time.Second): // failure guard only
		cmd.Process.Kill()
		<-done
		return fmt.Errorf("mosquitto did not start: %s", m.logTail())
	}
	m.mu.Lock()
	m.cmd, m.done = cmd, done
	m.mu.Unlock()
	return nil
}

func (m *Mosquitto) logTail() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.tail, "\n")
}

// Stop terminates mosquitto the way a service stop does (SIGTERM: it saves
// its persistence file) and waits for it.
func (m *Mosquitto) Stop() {
	m.mu.Lock()
	cmd, done := m.cmd, m.done
	m.cmd = nil
	m.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(30 * time.Second): // failure guard only
		cmd.Process.Kill()
		<-done
	}
}

// Start starts mosquitto again on the same port after Stop.
func (m *Mosquitto) Start() {
	m.tb.Helper()
	if err := m.start(); err != nil {
		m.tb.Fatalf("mqtttest: restart mosquitto: %v", err)
	}
}
