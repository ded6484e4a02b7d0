package demo

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// controllerProc is one cluster's `crossfade controller`, a child process of the demo
// with its output in a log file.
type controllerProc struct {
	cmd     *exec.Cmd
	logPath string
	// done is closed once the process has exited and been reaped; err is Wait's result.
	done chan struct{}
	err  error
	once sync.Once
	// stopErr is stop's result, the same for every call.
	stopErr error
}

// startController runs bin with args and env, its output appended to logPath.
func startController(bin string, args, env []string, logPath string) (*controllerProc, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, fmt.Errorf("controller log: %w", err)
	}
	out, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("controller log: %w", err)
	}
	defer out.Close() // the child holds its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = env
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s controller: %w", bin, err)
	}
	p := &controllerProc{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *controllerProc) pid() int { return p.cmd.Process.Pid }

// stop asks the controller to stop (SIGTERM: the batch in flight lands first), kills it
// if it has not exited within grace, and waits until it has.
func (p *controllerProc) stop(grace time.Duration) error {
	p.once.Do(func() {
		select {
		case <-p.done:
			return
		default:
		}
		if err := terminate(p.cmd.Process); err != nil {
			_ = p.cmd.Process.Kill()
		}
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			_ = p.cmd.Process.Kill()
			<-p.done
			p.stopErr = fmt.Errorf("controller pid %d did not exit %s after SIGTERM: killed", p.pid(), grace)
		}
	})
	return p.stopErr
}

// controllerEnv is the controllers' environment: the demo's, without AWS_* and KUBECONFIG
// (a profile or endpoint of the user's must not redirect them), plus the throw-away
// credentials the sandbox accepts; an AWS client refuses to sign without any.
func controllerEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "KUBECONFIG=") {
			env = append(env, kv)
		}
	}
	return append(env, "AWS_ACCESS_KEY_ID="+accessKey, "AWS_SECRET_ACCESS_KEY="+secretKey, "AWS_EC2_METADATA_DISABLED=true")
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
