package main

import (
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

// stopGrace is how long a child gets to exit on SIGTERM before its process group is killed.
const stopGrace = 5 * time.Second

// errStopped marks a child that ended before it was asked to.
var errStopped = errors.New("exited on its own")

// child is a long-running process (nginx, or the albproxy in a process of its own) whose
// output goes to a log file in the temp dir, so that a failure can show why.
type child struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed once Wait has returned
	waitErr error         // Wait's result, set before done is closed
}

// childAttrs puts a child in a process group of its own, so that stop can kill it with
// everything it forked (nginx's workers), and so that a Ctrl-C in the terminal reaches
// only this program, which then stops its children in order. Pdeathsig covers the one case
// the defers cannot: this program being killed. nginx's master turns SIGTERM into a fast
// shutdown of its workers; SIGKILL would orphan them.
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// startChild starts args with extra environment env, its stdout going to stdout (nil:
// the log file) and its stderr to the log file. It is not tied to a context: the caller
// stops it with stop (deferred), which also covers Ctrl-C, because run returns through
// its defers.
func startChild(name, logPath string, stdin io.Reader, stdout io.Writer, env []string, args ...string) (*child, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s: log file: %w", name, err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin = stdin
	cmd.Stdout, cmd.Stderr = logf, logf
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = childAttrs()
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

// stop ends the child: SIGTERM first so it can shut down cleanly (nginx stops its
// workers), then SIGKILL to its whole process group after stopGrace. A member of the group
// left behind by a leader that is gone (a worker whose master died) is killed too.
func (c *child) stop(log *slog.Logger) {
	pgid := c.cmd.Process.Pid // Setpgid: the group is named after the child
	defer killLeftovers(pgid)
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
	log.Warn("child ignored SIGTERM; killing its process group", "child", c.name, "pid", pgid)
	// The leader is not reaped yet, so the group id is still ours.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-c.done
}

// killLeftovers kills the members of process group pgid once its leader, a child of this
// program, has been reaped. Only while no process has the pid pgid: then nobody can have
// made a new group of that id since, and every member is something the leader started.
func killLeftovers(pgid int) {
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pgid)); err == nil {
		return // the pid is in use again: not ours
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	want := strconv.Itoa(pgid)
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, ok := statFields(n); ok && len(f) > 2 && f[2] == want {
			_ = syscall.Kill(n, syscall.SIGKILL)
		}
	}
}

// userHZ is the unit of /proc's CPU times: 100 on every Linux architecture Go supports
// (reading it would need cgo).
const userHZ = 100

// processCPU is the user+system CPU time of a process, read from /proc (Linux); ok is
// false where that is not available, and the report then says n/a.
func processCPU(pid int) (time.Duration, bool) {
	f, ok := statFields(pid)
	if !ok || len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / userHZ, true
}

// statFields are the fields of /proc/<pid>/stat after the command name: state is [0],
// ppid [1], pgrp [2], utime [11], stime [12]. The name (field 2) may hold spaces and parentheses,
// so the split starts after its closing parenthesis.
func statFields(pid int) ([]string, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(s[i+1:]), true
}

// treeCPU is the CPU time of a process and its live children (nginx's master and
// workers). Workers live for the whole run, so none of their time is lost to reaping.
func treeCPU(pid int) (time.Duration, bool) {
	total, ok := processCPU(pid)
	if !ok {
		return 0, false
	}
	for _, kid := range childrenOf(pid) {
		if d, ok := processCPU(kid); ok {
			total += d
		}
	}
	return total, true
}

// childrenOf lists the processes whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	want := strconv.Itoa(pid)
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, ok := statFields(n); ok && len(f) > 1 && f[1] == want {
			out = append(out, n)
		}
	}
	return out
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

// loadAverage is the 1-, 5- and 15-minute load average, "" where /proc/loadavg is not there.
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

// firstLine returns the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
