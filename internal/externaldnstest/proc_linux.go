//go:build linux

package externaldnstest

import (
	"os"
	"syscall"
)

// sysProcAttr puts external-dns in its own process group, so that stopping it stops
// anything it started, and has the kernel kill it if the test binary dies first (a panic,
// `go test -timeout`), when no cleanup runs.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends SIGKILL to p's process group; a group already gone is not an error.
func killGroup(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
}
