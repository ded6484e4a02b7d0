//go:build aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd

package dnsserver

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// reusePortSupported reports whether several UDP sockets can share one port, so that the
// kernel spreads queries over one reader per CPU.
const reusePortSupported = true

// reusePort sets SO_REUSEPORT on a socket before it is bound.
func reusePort(_, _ string, c syscall.RawConn) error {
	var sockErr error
	if err := c.Control(func(fd uintptr) {
		sockErr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	}); err != nil {
		return err
	}
	return sockErr
}
