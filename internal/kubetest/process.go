package kubetest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// stopTimeout bounds the wait for a killed process to be reaped; SIGKILL cannot be
// caught, so only a process stuck in the kernel would reach it.
const stopTimeout = 30 * time.Second

// process is one server started for a test, in its own process group, with its output
// in a log file.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	// done is closed once the process has exited and been reaped; err is Wait's result.
	done chan struct{}
	err  error
	stop func() error
}

// startProcess runs path with args, output to log. The caller stops it (Cluster.Stop,
// or launch itself when a later step fails).
func startProcess(path, log string, args ...string) (*process, error) {
	name := filepath.Base(path)
	out, err := os.Create(log)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer out.Close() // the child holds its own descriptor
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = serverEnv(os.Environ())
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	p.stop = sync.OnceValue(func() error {
		// SIGKILL, not SIGTERM: the data goes with the test, so a graceful shutdown
		// would only make every test's cleanup slower.
		killGroup(cmd.Process)
		select {
		case <-p.done:
		case <-time.After(stopTimeout):
			return fmt.Errorf("%s (pid %d) did not exit %s after SIGKILL", name, cmd.Process.Pid, stopTimeout)
		}
		// Anything the server forked is in its group and goes too.
		killGroup(cmd.Process)
		return nil
	})
	return p, nil
}

// serverEnv is the environment the servers run with: the test's, without ETCD_*
// variables, which etcd would read as flags.
func serverEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "ETCD_") {
			out = append(out, kv)
		}
	}
	return out
}

// exitError describes p's exit while the caller waited for what, with the end of its
// log; it wraps errPortTaken if a port was taken, so that Start tries other ports.
func (p *process) exitError(what string) error {
	tail := p.tail(40)
	err := fmt.Errorf("waiting for %s: %s exited (%v); log (last lines):\n%s", what, p.name, p.err, tail)
	if strings.Contains(tail, "address already in use") {
		return errors.Join(errPortTaken, err)
	}
	return err
}

// tail returns the last n lines of p's log.
func (p *process) tail(n int) string {
	data, err := os.ReadFile(p.log)
	if err != nil {
		return fmt.Sprintf("(log %s: %v)", p.log, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
