package kubetest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/crossfade-io/crossfade/internal/child"
)

// process is one server started for a cluster, in its own process group, with its output
// in a log file.
type process struct {
	*child.Process
	name string
}

// startProcess runs path with args, output to log. The caller stops it (Cluster.Stop,
// or launch itself when a later step fails).
func startProcess(path, log string, args ...string) (*process, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = serverEnv(os.Environ())
	c, err := child.Start(cmd, log)
	if err != nil {
		return nil, err
	}
	return &process{Process: c, name: filepath.Base(path)}, nil
}

// stop kills the server: SIGKILL, not SIGTERM, since the data goes with the cluster and
// a graceful shutdown would only make every test's cleanup slower.
func (p *process) stop() error { return p.Kill() }

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
	tail := p.Tail(40)
	err := fmt.Errorf("waiting for %s: %s exited (%v); log (last lines):\n%s", what, p.name, p.Err(), tail)
	if strings.Contains(tail, "address already in use") {
		return errors.Join(errPortTaken, err)
	}
	return err
}
