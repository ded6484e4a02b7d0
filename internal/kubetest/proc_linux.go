//go:build linux

package kubetest

import (
	"os"
	"syscall"
)

// sysProcAttr puts a server in its own process group, so that stopping it stops
// everything it started, and has the kernel kill it if the test binary dies first (a
// panic, `go test -timeout`), when no cleanup runs.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends SIGKILL to p's process group; a group already gone is not an error.
func killGroup(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
}

// groupAlive says whether any process of the group led by pid still exists.
func groupAlive(pid int) bool {
	return syscall.Kill(-pid, 0) != syscall.ESRCH
}
