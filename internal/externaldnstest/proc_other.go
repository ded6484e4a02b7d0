//go:build !linux

package externaldnstest

import (
	"os"
	"syscall"
)

// sysProcAttr has no process group outside Linux: external-dns forks nothing, so killing
// the process is enough.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// killGroup kills p; a process already gone is not an error.
func killGroup(p *os.Process) {
	_ = p.Kill()
}
