//go:build !linux

package demo

import (
	"os"
	"syscall"
)

// sysProcAttr sets nothing outside Linux: Ctrl-C reaches the controllers too, and they
// stop on their own as the demo stops them.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// terminate sends SIGTERM to p; where there are no signals (Windows) it fails, and stop
// kills p instead.
func terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }
