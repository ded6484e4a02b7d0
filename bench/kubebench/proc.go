package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long a controller gets to exit after SIGTERM before its process group
// is killed. crossfade lets the batch in flight finish for up to 25 s.
const stopGrace = 30 * time.Second

// child is a controller process under test. It runs in its own process group, so that a
// Ctrl-C at the terminal reaches only kubebench, which then stops it in order; and the
// kernel kills it if kubebench dies without stopping it.
type child struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	started time.Time
	done    chan struct{} // closed once Wait has returned
	waitErr error         // Wait's result, set before done is closed
}

// startChild runs args with env added to this process's environment, output to logPath.
// The caller stops it with stop.
func startChild(name, logPath string, env []string, args ...string) (*child, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s: log file: %w", name, err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	c := &child{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	c.started = time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("%s: start %s: %w", name, args[0], err)
	}
	go func() {
		c.waitErr = cmd.Wait()
		logf.Close()
		close(c.done)
	}()
	return c, nil
}

// exited reports whether the child has ended.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// exitError describes a child that ended before it was asked to, with the end of its log.
func (c *child) exitError() error {
	return fmt.Errorf("%s exited on its own (%v); log tail:\n%s", c.name, c.waitErr, tailFile(c.logPath, 4096))
}

// stop ends the child: SIGTERM so it can shut down as it would in a pod, then SIGKILL to
// its whole group after stopGrace. It reports how the child exited: nil for a clean exit
// after SIGTERM.
func (c *child) stop(log *slog.Logger) error {
	if c.exited() {
		return c.exitError()
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		log.Warn("signal child", "child", c.name, "err", err)
	}
	select {
	case <-c.done:
		// Anything it started goes too.
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		var exit *exec.ExitError
		if errors.As(c.waitErr, &exit) && exit.ExitCode() != 0 {
			return fmt.Errorf("%s exited with %v after SIGTERM; log tail:\n%s", c.name, c.waitErr, tailFile(c.logPath, 2048))
		}
		return nil
	case <-time.After(stopGrace):
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.done
	return fmt.Errorf("%s did not exit %s after SIGTERM: killed", c.name, stopGrace)
}

// procStatus reads the fields of /proc/<pid>/status that are sizes in kB (VmHWM, VmRSS,
// …), in bytes.
func procStatus(pid int) (map[string]uint64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseStatus(f)
}

// parseStatus parses /proc/<pid>/status text: "VmHWM:\t  123456 kB" lines.
func parseStatus(r io.Reader) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		num, ok := strings.CutSuffix(strings.TrimSpace(val), " kB")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(num), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("status field %s %q: %w", key, val, err)
		}
		out[key] = n * 1024
	}
	return out, sc.Err()
}

// userHZ is the unit of /proc's CPU times: 100 on every Linux architecture Go supports.
const userHZ = 100

// processCPU is the user+system CPU time a process has used, from /proc/<pid>/stat.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime+stime out of /proc/<pid>/stat text. The command name (field
// 2) may hold spaces and parentheses; the fields after its closing parenthesis are plain:
// state is the 3rd field, utime the 14th, stime the 15th.
func parseStatCPU(s string) (time.Duration, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("stat: no command name")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("stat: %d fields after the command name, want 13 or more", len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("stat: %w", err)
	}
	return time.Duration(utime+stime) * time.Second / userHZ, nil
}

// loadAverage is the 1-minute load average, "" where /proc/loadavg is not there.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
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

// output runs a short command and returns its trimmed combined output.
func output(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}
