//go:build linux

package child

import (
	"os"
	"strconv"
	"syscall"
)

// sysProcAttr puts a child in its own process group, so that stopping it stops
// everything it started and Ctrl-C at a terminal reaches the parent alone (which stops
// its children in order), and has the kernel send it death (SIGKILL when 0) if the
// parent dies first (a panic, `go test -timeout`), when no cleanup runs.
func sysProcAttr(death syscall.Signal) *syscall.SysProcAttr {
	if death == 0 {
		death = syscall.SIGKILL
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: death}
}

// killGroup sends SIGKILL to p's process group; a group already gone is not an error.
func killGroup(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
}

// killOrphans kills what is left of the process group of a child that has been reaped:
// whatever it forked (a worker whose master died). Only while no process has the pid: the
// kernel does not hand out a pid that is still some group's id, so then every member is
// the child's; once the pid is in use again, the group is gone and that one is not ours.
func killOrphans(pgid int) {
	if _, err := os.Stat("/proc/" + strconv.Itoa(pgid)); err == nil {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// terminate sends SIGTERM to p.
func terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }

// GroupAlive says whether any process of the group led by pid still exists.
func GroupAlive(pid int) bool {
	return syscall.Kill(-pid, 0) != syscall.ESRCH
}
