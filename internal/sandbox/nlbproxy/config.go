// Package nlbproxy is the sandbox's Network Load Balancer data path: a weighted TCP proxy.
// Each NLB TCP listener is served on a loopback port; each new connection picks one of the
// listener's target groups by weight, then a healthy target of that group, and the bytes
// are spliced both ways until either side closes. As on AWS ("Listeners for your Network
// Load Balancers": "new connections are routed according to the new target group weights.
// Existing connections are not affected and continue normally until they are closed"), a
// weight change applies to new connections only: a connection stays with the target it was
// given. A deregistered target gets no new connection; its open ones continue for the
// group's deregistration delay, and are closed at its end only when the group's
// deregistration_delay.connection_termination.enabled says so.
//
// Targets are dialled only through a *targetaddr.Dialer: a registered address becomes a
// connection to the loopback backend mapped to it, or to nothing (an unmapped target is
// unhealthy, "no route in the sandbox", and no packet is sent for it). Health checks are
// TCP connects through the same dialer.
package nlbproxy

import (
	"fmt"
	"net"
	"strconv"
	"time"
)

// Config is the proxy's whole desired state; Apply makes it so.
type Config struct {
	TargetGroups []TargetGroup
	Listeners    []Listener
}

// TargetGroup is a TCP target group.
type TargetGroup struct {
	// ID is the target group's ARN.
	ID string
	// Targets are the registered, not draining, targets' addresses (IP:port).
	Targets []string
	// DeregistrationDelay is how long a deregistered target drains.
	DeregistrationDelay time.Duration
	// ConnectionTermination closes a drained target's connections when its delay ends.
	ConnectionTermination bool
	HealthCheck           HealthCheck
}

// HealthCheck is a TCP health check: a connect to the target (or to Port) every Interval,
// failed after Timeout.
type HealthCheck struct {
	// Port is "traffic-port" (or "") for the target's own port, else a port number.
	Port               string
	Interval           time.Duration
	Timeout            time.Duration
	HealthyThreshold   int
	UnhealthyThreshold int
}

// Listener is a TCP listener of a Network Load Balancer and its default forward action.
type Listener struct {
	// ID is the listener's ARN; LoadBalancer the load balancer's, for the metrics.
	ID           string
	LoadBalancer string
	// Addr is where to listen when the listener is new ("127.0.0.1:0"); a listener the
	// proxy already serves keeps its address.
	Addr         string
	TargetGroups []WeightedTargetGroup
}

// WeightedTargetGroup is one group of a forward action; weights are relative, 0 gets no
// new connection.
type WeightedTargetGroup struct {
	TargetGroupID string
	Weight        int
}

// Defaults of a TCP health check (ELBv2's for a TCP target group).
const (
	defaultInterval           = 30 * time.Second
	defaultTimeout            = 10 * time.Second
	defaultHealthyThreshold   = 5
	defaultUnhealthyThreshold = 2
)

func (h HealthCheck) withDefaults() HealthCheck {
	if h.Interval <= 0 {
		h.Interval = defaultInterval
	}
	if h.Timeout <= 0 {
		h.Timeout = defaultTimeout
	}
	if h.HealthyThreshold <= 0 {
		h.HealthyThreshold = defaultHealthyThreshold
	}
	if h.UnhealthyThreshold <= 0 {
		h.UnhealthyThreshold = defaultUnhealthyThreshold
	}
	return h
}

// checkAddr is where the health check of the target at addr connects.
func (h HealthCheck) checkAddr(addr string) (string, error) {
	if h.Port == "" || h.Port == "traffic-port" {
		return addr, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("target %q: %w", addr, err)
	}
	if p, err := strconv.Atoi(h.Port); err != nil || p < 1 || p > 65535 {
		return "", fmt.Errorf("health check port %q: want traffic-port or 1..65535", h.Port)
	}
	return net.JoinHostPort(host, h.Port), nil
}

// validate reports the first thing wrong with cfg.
func (cfg Config) validate() error {
	groups := map[string]bool{}
	for _, g := range cfg.TargetGroups {
		if g.ID == "" || groups[g.ID] {
			return fmt.Errorf("target group %q: empty or duplicate ID", g.ID)
		}
		groups[g.ID] = true
		for _, t := range g.Targets {
			if _, _, err := net.SplitHostPort(t); err != nil {
				return fmt.Errorf("target group %s: target %q: %w", g.ID, t, err)
			}
		}
		if _, err := g.HealthCheck.checkAddr("127.0.0.1:1"); err != nil {
			return fmt.Errorf("target group %s: %w", g.ID, err)
		}
	}
	seen := map[string]bool{}
	for _, l := range cfg.Listeners {
		if l.ID == "" || seen[l.ID] {
			return fmt.Errorf("listener %q: empty or duplicate ID", l.ID)
		}
		seen[l.ID] = true
		for _, w := range l.TargetGroups {
			if !groups[w.TargetGroupID] {
				return fmt.Errorf("listener %s: forwards to unknown target group %s", l.ID, w.TargetGroupID)
			}
			if w.Weight < 0 || w.Weight > 999 {
				return fmt.Errorf("listener %s: target group %s: weight %d: want 0..999", l.ID, w.TargetGroupID, w.Weight)
			}
		}
	}
	return nil
}
