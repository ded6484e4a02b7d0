// Package targetaddr is the one place the sandbox turns a registered target's address into
// a connection. Targets are registered as on AWS, with the addresses their pods or
// instances have (in tests, TEST-NET-1: 192.0.2.0/24, documentation only); the sandbox
// never dials those. Each is mapped to a loopback backend that stands for it, and a
// target without a mapping has no route: it is unhealthy, and no packet is sent for it.
// A target registered with a loopback address is its own backend, as before mappings
// existed.
package targetaddr

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
)

// NoRouteError is a target address with no loopback backend mapped to it.
type NoRouteError struct {
	// Addr is the target's IP:port.
	Addr string
}

func (e *NoRouteError) Error() string {
	return fmt.Sprintf("no route in the sandbox to %s: it dials only loopback; map the target to a loopback backend (PUT /_sandbox/addresses)", e.Addr)
}

// Map maps target addresses (IP:port) to loopback backends (IP:port). The zero value is
// not usable; New makes one. It is safe for concurrent use.
type Map struct {
	mu sync.RWMutex
	m  map[netip.AddrPort]netip.AddrPort
}

// New returns an empty map: only loopback targets have a route.
func New() *Map { return &Map{m: map[netip.AddrPort]netip.AddrPort{}} }

// Parse reads a mapping as PUT /_sandbox/addresses takes it: a JSON object from target
// "IP:port" to loopback "IP:port". Every error names the entry.
func Parse(data []byte) (map[netip.AddrPort]netip.AddrPort, error) {
	var raw map[string]string
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("addresses: want a JSON object of \"IP:port\": \"loopback IP:port\": %w", err)
	}
	return parseEntries(raw)
}

// ParseFlag reads a mapping as the sandbox's flag takes it: comma-separated
// "IP:port=loopbackIP:port" entries. An empty string is no mapping.
func ParseFlag(s string) (map[netip.AddrPort]netip.AddrPort, error) {
	raw := map[string]string{}
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		from, to, ok := strings.Cut(e, "=")
		if !ok {
			return nil, fmt.Errorf("addresses: entry %q: want IP:port=loopbackIP:port", e)
		}
		if _, dup := raw[from]; dup {
			return nil, fmt.Errorf("addresses: entry %q: %s is mapped twice", e, from)
		}
		raw[from] = to
	}
	return parseEntries(raw)
}

func parseEntries(raw map[string]string) (map[netip.AddrPort]netip.AddrPort, error) {
	out := make(map[netip.AddrPort]netip.AddrPort, len(raw))
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same input names the same bad entry every time
	for _, k := range keys {
		from, err := netip.ParseAddrPort(k)
		if err != nil {
			return nil, fmt.Errorf("addresses: key %q: want a target's IP:port: %w", k, err)
		}
		to, err := netip.ParseAddrPort(raw[k])
		if err != nil {
			return nil, fmt.Errorf("addresses: %q: value %q: want a loopback IP:port: %w", k, raw[k], err)
		}
		if !to.Addr().Unmap().IsLoopback() {
			return nil, fmt.Errorf("addresses: %q: value %q is not a loopback address: the sandbox dials only loopback", k, raw[k])
		}
		key := netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		if _, dup := out[key]; dup {
			// "[::ffff:192.0.2.11]:8080" is "192.0.2.11:8080": which backend wins must
			// not depend on the keys' sort order.
			return nil, fmt.Errorf("addresses: key %q: %s is mapped twice (%q and %q name one target)", k, key, firstKey(raw, key, k), k)
		}
		out[key] = netip.AddrPortFrom(to.Addr().Unmap(), to.Port())
	}
	if err := Validate(out); err != nil {
		return nil, err
	}
	return out, nil
}

// firstKey is the key of raw other than k that names target key, for messages.
func firstKey(raw map[string]string, key netip.AddrPort, k string) string {
	for other := range raw {
		if ap, err := netip.ParseAddrPort(other); err == nil && other != k && netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()) == key {
			return other
		}
	}
	return key.String()
}

// notTarget says why addr cannot be a target's address ("" when it can): no ELBv2 target
// is unspecified, multicast, broadcast or link-local, and a mapping of one ("0.0.0.0:8080"
// meant as "any address") would route a target that has no address of its own.
func notTarget(addr netip.Addr) string {
	a := addr.Unmap()
	switch {
	case a.IsUnspecified():
		return "unspecified"
	case a.IsMulticast():
		return "multicast"
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "broadcast"
	case a.IsLinkLocalUnicast():
		return "link-local"
	}
	return ""
}

// Validate checks a mapping as Go callers build it: every key a target's IP and a port,
// every value a loopback IP and a port. The error names the first bad entry in address
// order.
func Validate(entries map[netip.AddrPort]netip.AddrPort) error {
	keys := slices.SortedFunc(maps.Keys(entries), netip.AddrPort.Compare)
	for _, from := range keys {
		to := entries[from]
		switch {
		case !from.IsValid() || from.Port() == 0:
			return fmt.Errorf("addresses: key %q: want a target's IP:port with a port above 0", from)
		case notTarget(from.Addr()) != "":
			return fmt.Errorf("addresses: key %q: not a target's address (%s): map each target's own IP:port", from, notTarget(from.Addr()))
		case !to.IsValid() || to.Port() == 0:
			return fmt.Errorf("addresses: %q: value %q: want a loopback IP:port with a port above 0", from, to)
		case !to.Addr().Unmap().IsLoopback():
			return fmt.Errorf("addresses: %q: value %q is not a loopback address: the sandbox dials only loopback", from, to)
		}
	}
	return nil
}

// Set makes entries the whole mapping after Validate; a refused mapping changes nothing.
func (m *Map) Set(entries map[netip.AddrPort]netip.AddrPort) error {
	if err := Validate(entries); err != nil {
		return err
	}
	norm := make(map[netip.AddrPort]netip.AddrPort, len(entries))
	for from, to := range entries {
		// Resolve looks targets up unmapped: "::ffff:192.0.2.11" is 192.0.2.11.
		k := netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		if _, dup := norm[k]; dup {
			return fmt.Errorf("addresses: key %q: %s is mapped twice", from, k)
		}
		norm[k] = netip.AddrPortFrom(to.Addr().Unmap(), to.Port())
	}
	m.Replace(norm)
	return nil
}

// Replace makes entries the whole mapping.
func (m *Map) Replace(entries map[netip.AddrPort]netip.AddrPort) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m = maps.Clone(entries)
	if m.m == nil {
		m.m = map[netip.AddrPort]netip.AddrPort{}
	}
}

// Entries returns a copy of the mapping.
func (m *Map) Entries() map[netip.AddrPort]netip.AddrPort {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return maps.Clone(m.m)
}

// Resolve returns the loopback address that stands for the target at addr (IP:port): the
// mapped backend, or addr itself when it is loopback. Anything else is a *NoRouteError.
func (m *Map) Resolve(addr string) (string, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return "", fmt.Errorf("target %q: not an IP:port: %w", addr, err)
	}
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	m.mu.RLock()
	to, ok := m.m[ap]
	m.mu.RUnlock()
	switch {
	case ok:
		return to.String(), nil
	case ap.Addr().IsLoopback():
		return ap.String(), nil
	}
	return "", &NoRouteError{Addr: ap.String()}
}

// Dialer dials targets through a Map: the address it is given is a target's, and the
// connection goes to its loopback backend or nowhere.
type Dialer struct {
	Map *Map
	// Dialer makes the connection to the resolved loopback address.
	Dialer net.Dialer
}

// DialContext resolves addr through the map and dials the result, which is always a
// loopback address: a *NoRouteError sends no packet.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	to, err := d.Map.Resolve(addr)
	if err != nil {
		return nil, err
	}
	// Resolve returns only loopback addresses; checked again here because this is the
	// last line before a packet is sent.
	if ap, err := netip.ParseAddrPort(to); err != nil || !ap.Addr().IsLoopback() {
		return nil, &NoRouteError{Addr: addr}
	}
	return d.Dialer.DialContext(ctx, network, to)
}
