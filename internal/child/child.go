// Package child runs the servers crossfade's tests, benchmarks and demo start beside
// it (etcd, kube-apiserver, external-dns, `crossfade controller`, nginx, knotd) as child
// processes: each in its own process group, so that stopping it stops whatever it forked,
// killed by the kernel if the parent dies without cleaning up, its output in a log file.
// It also reads what a benchmark measures of a process from /proc: CPU time and memory.
package child

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// KillTimeout bounds the wait for a killed process to be reaped; SIGKILL cannot be
// caught, so only a process stuck in the kernel would reach it.
const KillTimeout = 30 * time.Second

// ErrExited marks a child that ended before it was asked to stop.
var ErrExited = errors.New("exited on its own")

// exitTailLines is how much of its log an ExitError shows: enough for the fatal message
// and what led to it.
const exitTailLines = 20

// Options are the settings of a child beyond its command.
type Options struct {
	// Name names the child in errors; empty: the base name of the command.
	Name string
	// DeathSignal is what the kernel sends the child if this process dies without
	// stopping it; 0: SIGKILL. A server that forks workers (nginx) wants SIGTERM, so that
	// it stops them itself: SIGKILL to the master alone would leave them running. Linux
	// only.
	DeathSignal syscall.Signal
}

// Process is a running child.
type Process struct {
	// Cmd is the child; its Process is set.
	Cmd *exec.Cmd
	// LogPath is the file holding its output.
	LogPath string
	name    string
	done    chan struct{}
	err     error
	once    sync.Once
	stopErr error
}

// Start runs cmd in its own process group with its standard output and error in a new
// file at logPath; see StartWith.
func Start(cmd *exec.Cmd, logPath string) (*Process, error) {
	return StartWith(cmd, logPath, Options{})
}

// StartWith runs cmd in its own process group, as o says, with its standard error in a
// new file at logPath, and its standard output too unless cmd.Stdout is set (a child
// that reports on stdout to its parent). cmd.Stdin and cmd.Env are used as set.
func StartWith(cmd *exec.Cmd, logPath string, o Options) (*Process, error) {
	name := o.Name
	if name == "" {
		name = filepath.Base(cmd.Path)
	}
	out, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s: log: %w", name, err)
	}
	defer out.Close() // the child holds its own descriptor
	if cmd.Stdout == nil {
		cmd.Stdout = out
	}
	cmd.Stderr = out
	cmd.SysProcAttr = sysProcAttr(o.DeathSignal)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Cmd: cmd, LogPath: logPath, name: name, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Name is what errors call the child: Options.Name, or the base name of its command.
func (p *Process) Name() string { return p.name }

// Pid is the child's process id, which is also its process group's.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Done is closed once the child has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the child has exited and been reaped.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is Wait's result, once Done is closed.
func (p *Process) Err() error { return p.err }

// ExitError describes a child that ended before it was asked to stop, once Done is
// closed: how it ended and the end of its log. It wraps ErrExited.
func (p *Process) ExitError() error {
	return fmt.Errorf("%s %w (%v); log (last lines):\n%s", p.name, ErrExited, p.err, p.Tail(exitTailLines))
}

// Kill sends SIGKILL to the child's process group and waits until the child is reaped.
// Every call after the first returns the first one's result.
func (p *Process) Kill() error {
	p.once.Do(func() {
		killGroup(p.Cmd.Process)
		select {
		case <-p.done:
		case <-time.After(KillTimeout):
			p.stopErr = fmt.Errorf("%s (pid %d) did not exit %s after SIGKILL", p.name, p.Pid(), KillTimeout)
			return
		}
		// Anything the child forked is in its group and goes too.
		killOrphans(p.Pid())
	})
	return p.stopErr
}

// Stop sends SIGTERM (a graceful stop: a controller lets its batch in flight land),
// kills the group if the child has not exited within grace, and waits until it has.
// Whatever the child forked and left behind goes too, also when the child had already
// exited on its own. Every call after the first returns the first one's result.
func (p *Process) Stop(grace time.Duration) error {
	p.once.Do(func() {
		defer func() { killOrphans(p.Pid()) }()
		select {
		case <-p.done:
			return
		default:
		}
		if err := terminate(p.Cmd.Process); err != nil {
			killGroup(p.Cmd.Process)
		}
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			killGroup(p.Cmd.Process)
			<-p.done
			p.stopErr = fmt.Errorf("%s (pid %d) did not exit %s after SIGTERM: killed", p.name, p.Pid(), grace)
		}
	})
	return p.stopErr
}

// Tail returns the last n lines of the child's log.
func (p *Process) Tail(n int) string { return Tail(p.LogPath, n) }

// Tail returns the last n lines of the file at path.
func Tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(log %s: %v)", path, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
