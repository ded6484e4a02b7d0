//go:build linux

package demo

import (
	"os"
	"syscall"
)

// sysProcAttr puts a controller in its own process group, so that Ctrl-C at the terminal
// reaches the demo alone, which then stops the controllers before the API servers they
// watch; and has the kernel kill it if the demo dies without cleaning up. SIGKILL, not
// SIGTERM: the sandbox died with the demo, so no batch in flight can land, and a graceful
// stop would spend its grace retrying a dead endpoint.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// terminate sends SIGTERM to p.
func terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }
