//go:build !(aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package dnsserver

import "syscall"

// reusePortSupported is false where SO_REUSEPORT is missing: one UDP socket serves.
const reusePortSupported = false

// reusePort is a no-op where SO_REUSEPORT is missing.
func reusePort(_, _ string, _ syscall.RawConn) error { return nil }
