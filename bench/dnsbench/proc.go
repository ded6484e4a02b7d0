package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/child"
)

// stopGrace is how long a child gets to exit on SIGTERM before it is killed.
const stopGrace = 5 * time.Second

// logTailLines is how much of a child's log an error shows.
const logTailLines = 20

// startChild starts args (the sandbox or knotd) as a child named name, its output going to
// a log file in the temp dir so that a failure can show why. It is not tied to a context:
// the caller stops it with stopChild (deferred), which also covers Ctrl-C, because run
// returns through its defers.
func startChild(name, logPath string, args ...string) (*child.Process, error) {
	return child.StartWith(exec.Command(args[0], args[1:]...), logPath, child.Options{Name: name})
}

// stopChild ends a child: SIGTERM first so that it can shut down cleanly, SIGKILL to its
// process group after stopGrace.
func stopChild(c *child.Process, log *slog.Logger) {
	if err := c.Stop(stopGrace); err != nil {
		log.Warn("stop child", "child", c.Name(), "err", err)
	}
}

// freePort finds a loopback port that is free for both UDP and TCP, as a DNS server needs
// both. Another process could take it before the child binds it; the child then fails to
// start and says so, which is rare enough on a benchmark machine to accept.
func freePort() (int, error) {
	var lastErr error
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("free port: %w", err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		pc, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
		ln.Close()
		if err != nil {
			lastErr = err
			continue
		}
		pc.Close()
		return port, nil
	}
	return 0, fmt.Errorf("free port: no port free for both tcp and udp: %w", lastErr)
}

// tailBuffer keeps the last max bytes written to it: dnsperf may print a line per timed
// out query to stderr, which must not grow without bound.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

func (t *tailBuffer) String() string { return string(t.buf) }

// output runs a short command and returns its trimmed stdout.
func output(ctx context.Context, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}
