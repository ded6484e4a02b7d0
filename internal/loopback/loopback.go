// Package loopback tells the names and addresses that mean this machine, for the servers
// that have no authentication and so serve loopback only: the sandbox API and the
// dashboard. It is one place for the rule, so that a listen address and a request's Host
// are judged alike everywhere.
package loopback

import (
	"net"
	"strings"
)

// Listen reports whether host, the host part of a listen address, is "localhost" or a
// loopback IP. An empty host (":8080") listens on every interface, so it is not one.
func Listen(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Name reports whether host, the host of a request's Host header without its port or
// brackets (see Host), names this machine in a way DNS cannot rebind: a loopback IP
// (127.0.0.0/8, ::1), "localhost", or a name under "localhost" (RFC 6761: browsers answer
// those with loopback themselves, never asking DNS), each with or without the root's
// trailing dot. Any other name may resolve to 127.0.0.1 for a moment and to an
// attacker's web server the next (DNS rebinding), so it is not one.
func Name(host string) bool {
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	return name == "localhost" || (len(name) > len(".localhost") && strings.HasSuffix(name, ".localhost"))
}

// Host is the host of a Host header ("127.0.0.1:8080", "[::1]:8080", "localhost"): without
// its port and brackets, lower-cased. An empty header gives "".
func Host(hostport string) string {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
}
