package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long a child gets to exit on SIGTERM before it is killed.
const stopGrace = 5 * time.Second

// child is a long-running process (the sandbox or knotd) whose output goes to a log file in
// the temp dir, so that a failure can show why.
type child struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed once Wait has returned
	waitErr error         // Wait's result, set before done is closed
}

// startChild starts name with args. It is not tied to a context: the caller stops it with
// stop (deferred), which also covers Ctrl-C, because run returns through its defers.
func startChild(name, logPath string, args ...string) (*child, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s: log file: %w", name, err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("%s: start %s: %w", name, args[0], err)
	}
	c := &child{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		logf.Close()
		close(c.done)
	}()
	return c, nil
}

// exited reports whether the child has already ended.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// earlyExit describes a child that ended on its own, with the end of its log.
func (c *child) earlyExit() error {
	return fmt.Errorf("%s %w (%v); log tail:\n%s", c.name, errStopped, c.waitErr, tailFile(c.logPath, 2048))
}

// stop ends the child: SIGTERM first so it can shut down cleanly, SIGKILL after stopGrace.
func (c *child) stop(log *slog.Logger) {
	if c.exited() {
		return
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		log.Warn("signal child", "child", c.name, "err", err)
	}
	select {
	case <-c.done:
		return
	case <-time.After(stopGrace):
	}
	log.Warn("child ignored SIGTERM; killing it", "child", c.name, "pid", c.cmd.Process.Pid)
	_ = c.cmd.Process.Kill()
	<-c.done
}

// userHZ is the unit of /proc's CPU times: 100 on every Linux architecture Go supports
// (reading it would need cgo).
const userHZ = 100

// cpuTime is the CPU time the child has used so far; see processCPU.
func (c *child) cpuTime() (time.Duration, bool) { return processCPU(c.cmd.Process.Pid) }

// processCPU is the user+system CPU time of a process, read from /proc (Linux); ok is false
// where that is not available, and the report then says n/a.
func processCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces and parentheses; the fields after its
	// closing parenthesis are plain numbers: state is 3rd, utime 14th, stime 15th.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / userHZ, true
}

// machineCPU reads the CPU time all processes have used (busy) out of the time passed on
// every CPU (total), from /proc/stat; ok is false where that is not available.
func machineCPU() (busy, total time.Duration, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	// "cpu  user nice system idle iowait irq softirq steal guest guest_nice", in USER_HZ.
	f := strings.Fields(firstLine(string(b)))
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, false
	}
	var ticks [8]int64
	for i := range ticks {
		if ticks[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
			return 0, 0, false
		}
	}
	var sum int64
	for _, t := range ticks {
		sum += t
	}
	idle := ticks[3] + ticks[4]
	return time.Duration(sum-idle) * time.Second / userHZ, time.Duration(sum) * time.Second / userHZ, true
}

// tailFile returns up to n bytes from the end of a file, for error messages.
func tailFile(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	off := max(st.Size()-n, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return "(log unreadable: " + err.Error() + ")"
	}
	return string(buf)
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

// firstLine returns the first line of s.
func firstLine(s string) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	if sc.Scan() {
		return sc.Text()
	}
	return ""
}
