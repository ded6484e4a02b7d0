package albproxy

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is the whole desired state of the proxy: every load balancer with its listeners
// and rules, and every target group with its targets. Apply takes a complete Config each
// time; what is missing from it is removed (listeners stop, targets drain).
type Config struct {
	LoadBalancers []LoadBalancer
	TargetGroups  []TargetGroup
	// AllowRemote permits non-loopback listener addresses. The proxy has no
	// authentication, so it refuses them by default.
	AllowRemote bool
}

// LoadBalancer is one Application Load Balancer: the unit CloudWatch's LoadBalancer
// dimension counts by, and the owner of the idle timeout.
type LoadBalancer struct {
	// ID names the load balancer (its ARN, or the CloudWatch dimension value).
	ID string
	// IdleTimeout is the ALB attribute idle_timeout.timeout_seconds: how long the proxy
	// waits for a target's response before answering 504. 0 means ALB's default, 60 s.
	IdleTimeout time.Duration
	Listeners   []Listener
}

// Listener is one HTTP listener of a load balancer, served on a loopback address.
type Listener struct {
	// ID names the listener (its ARN); Addr and the metrics are keyed by it.
	ID string
	// Addr is where to listen, e.g. "127.0.0.1:0" (port 0 picks a free port, which the
	// listener keeps for as long as it exists). Empty means "127.0.0.1:0".
	Addr string
	// Rules are evaluated in Priority order, lowest first; the first that matches wins.
	Rules []Rule
	// DefaultAction applies when no rule matches.
	DefaultAction ForwardAction
}

// Rule is a listener rule: all of its conditions must match.
type Rule struct {
	// ID names the rule (its ARN) in errors.
	ID string
	// Priority is 1–50000, unique within the listener.
	Priority   int
	Conditions []Condition
	Action     ForwardAction
}

// Condition field names, as ELBv2 spells them.
const (
	FieldHostHeader  = "host-header"
	FieldPathPattern = "path-pattern"
)

// Condition matches when any of its values matches. Values use ALB wildcards: `*` is any
// run of characters, `?` exactly one. host-header compares case-insensitively and ignores
// a port in the Host header; path-pattern compares case-sensitively against the path
// without its query string.
type Condition struct {
	Field  string
	Values []string
}

// ForwardAction forwards to one of up to five target groups chosen by weight.
type ForwardAction struct {
	TargetGroups []WeightedTargetGroup
	Stickiness   GroupStickiness
}

// WeightedTargetGroup is one target group of a forward action with its weight, 0–999.
// A weight-0 group receives no new requests (but stays in use: it is health checked, and
// clients stuck to it by the stickiness cookie stay on it).
type WeightedTargetGroup struct {
	TargetGroupID string
	Weight        int
}

// GroupStickiness is TargetGroupStickinessConfig: when enabled, the AWSALBTG cookie keeps
// a client on the group it was first sent to for Duration (1 s to 7 days), whatever the
// weights say meanwhile.
type GroupStickiness struct {
	Enabled  bool
	Duration time.Duration
}

// TargetGroup is an HTTP target group.
type TargetGroup struct {
	// ID names the group (its ARN, or the CloudWatch TargetGroup dimension value).
	ID string
	// Targets are "host:port" addresses, in registration order.
	Targets     []string
	HealthCheck HealthCheck
	// DeregistrationDelay is how long a deregistered target reports draining (ALB's
	// default is 300 s; the caller passes the group's attribute, and 0 means 0 here).
	DeregistrationDelay time.Duration
}

// HealthCheck holds a target group's health check settings. Zero fields take ALB's
// defaults: path "/", interval 30 s, timeout 5 s, healthy threshold 5, unhealthy
// threshold 2, matcher "200".
type HealthCheck struct {
	// Disabled turns health checks off; targets then report "unavailable" and receive
	// traffic, as on ALB.
	Disabled           bool
	Path               string
	Interval           time.Duration
	Timeout            time.Duration
	HealthyThreshold   int
	UnhealthyThreshold int
	// Matcher lists the healthy HTTP codes: "200", "200,202", "200-399".
	Matcher string
}

// ALB's documented defaults and limits.
const (
	DefaultIdleTimeout        = 60 * time.Second
	defaultHCPath             = "/"
	defaultHCInterval         = 30 * time.Second
	defaultHCTimeout          = 5 * time.Second
	defaultHealthyThreshold   = 5
	defaultUnhealthyThreshold = 2
	defaultMatcher            = "200"
	maxGroupsPerAction        = 5
	maxWeight                 = 999
	maxPriority               = 50000
	maxStickiness             = 7 * 24 * time.Hour
)

// withDefaults fills the zero fields with ALB's defaults.
func (h HealthCheck) withDefaults() HealthCheck {
	if h.Path == "" {
		h.Path = defaultHCPath
	}
	if h.Interval == 0 {
		h.Interval = defaultHCInterval
	}
	if h.Timeout == 0 {
		h.Timeout = defaultHCTimeout
	}
	if h.HealthyThreshold == 0 {
		h.HealthyThreshold = defaultHealthyThreshold
	}
	if h.UnhealthyThreshold == 0 {
		h.UnhealthyThreshold = defaultUnhealthyThreshold
	}
	if h.Matcher == "" {
		h.Matcher = defaultMatcher
	}
	return h
}

// codeRange is an inclusive range of HTTP status codes.
type codeRange struct{ lo, hi int }

// matcher is a parsed HealthCheck.Matcher.
type matcher []codeRange

func (m matcher) match(code int) bool {
	for _, r := range m {
		if code >= r.lo && code <= r.hi {
			return true
		}
	}
	return false
}

// parseMatcher reads "200", "200,202" or "200-299" (ALB allows codes 200–499).
func parseMatcher(s string) (matcher, error) {
	var m matcher
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		if !isRange {
			hi = lo
		}
		l, err1 := strconv.Atoi(lo)
		h, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || l < 200 || h > 499 || l > h {
			return nil, fmt.Errorf("matcher %q: want codes 200-499 as \"200\", \"200,202\" or \"200-299\"", s)
		}
		m = append(m, codeRange{l, h})
	}
	return m, nil
}

// validate checks the whole config and names the object and field of every problem.
func (c Config) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	groups := map[string]bool{}
	for i, g := range c.TargetGroups {
		if g.ID == "" {
			bad("target group %d: empty ID", i)
			continue
		}
		if groups[g.ID] {
			bad("target group %s: duplicate ID", g.ID)
		}
		groups[g.ID] = true
		seen := map[string]bool{}
		for _, t := range g.Targets {
			if _, _, err := net.SplitHostPort(t); err != nil {
				bad("target group %s: target %q: want host:port: %v", g.ID, t, err)
			}
			if seen[t] {
				bad("target group %s: target %q registered twice", g.ID, t)
			}
			seen[t] = true
		}
		hc := g.HealthCheck.withDefaults()
		if !strings.HasPrefix(hc.Path, "/") {
			bad("target group %s: health check path %q must start with /", g.ID, hc.Path)
		}
		if hc.Interval < 0 || hc.Timeout < 0 || hc.Timeout >= hc.Interval {
			bad("target group %s: health check timeout %v must be positive and less than the interval %v", g.ID, hc.Timeout, hc.Interval)
		}
		if hc.HealthyThreshold < 1 || hc.UnhealthyThreshold < 1 {
			bad("target group %s: health check thresholds must be at least 1", g.ID)
		}
		if _, err := parseMatcher(hc.Matcher); err != nil {
			bad("target group %s: health check %v", g.ID, err)
		}
		if g.DeregistrationDelay < 0 {
			bad("target group %s: negative deregistration delay", g.ID)
		}
	}

	checkAction := func(where string, a ForwardAction) {
		if len(a.TargetGroups) > maxGroupsPerAction {
			bad("%s: %d target groups, at most %d", where, len(a.TargetGroups), maxGroupsPerAction)
		}
		seen := map[string]bool{}
		for _, w := range a.TargetGroups {
			if !groups[w.TargetGroupID] {
				bad("%s: target group %q does not exist", where, w.TargetGroupID)
			}
			if seen[w.TargetGroupID] {
				bad("%s: target group %q listed twice", where, w.TargetGroupID)
			}
			seen[w.TargetGroupID] = true
			if w.Weight < 0 || w.Weight > maxWeight {
				bad("%s: target group %q: weight %d not in 0-%d", where, w.TargetGroupID, w.Weight, maxWeight)
			}
		}
		if s := a.Stickiness; s.Enabled && (s.Duration < time.Second || s.Duration > maxStickiness) {
			bad("%s: stickiness duration %v not in 1s-168h", where, s.Duration)
		}
	}

	lbs, listeners := map[string]bool{}, map[string]bool{}
	for i, lb := range c.LoadBalancers {
		if lb.ID == "" {
			bad("load balancer %d: empty ID", i)
		}
		if lbs[lb.ID] {
			bad("load balancer %s: duplicate ID", lb.ID)
		}
		lbs[lb.ID] = true
		if lb.IdleTimeout < 0 {
			bad("load balancer %s: negative idle timeout", lb.ID)
		}
		for j, l := range lb.Listeners {
			if l.ID == "" {
				bad("load balancer %s: listener %d: empty ID", lb.ID, j)
			}
			if listeners[l.ID] {
				bad("listener %s: duplicate ID", l.ID)
			}
			listeners[l.ID] = true
			if err := checkAddr(l.Addr, c.AllowRemote); err != nil {
				bad("listener %s: %v", l.ID, err)
			}
			checkAction("listener "+l.ID+": default action", l.DefaultAction)
			prios := map[int]bool{}
			for _, r := range l.Rules {
				where := fmt.Sprintf("listener %s: rule %s (priority %d)", l.ID, r.ID, r.Priority)
				if r.Priority < 1 || r.Priority > maxPriority {
					bad("%s: priority not in 1-%d", where, maxPriority)
				}
				if prios[r.Priority] {
					bad("%s: priority in use by another rule", where)
				}
				prios[r.Priority] = true
				if len(r.Conditions) == 0 {
					bad("%s: no conditions", where)
				}
				for _, cond := range r.Conditions {
					if cond.Field != FieldHostHeader && cond.Field != FieldPathPattern {
						bad("%s: condition field %q not supported (host-header, path-pattern)", where, cond.Field)
					}
					if len(cond.Values) == 0 {
						bad("%s: condition %s has no values", where, cond.Field)
					}
					for _, v := range cond.Values {
						if v == "" || len(v) > 128 {
							bad("%s: condition %s value %q must be 1-128 characters", where, cond.Field, v)
						}
					}
				}
				checkAction(where, r.Action)
			}
		}
	}
	return errors.Join(errs...)
}

// checkAddr refuses an unparsable address, and a non-loopback one unless allowed.
func checkAddr(addr string, allowRemote bool) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("addr %q: %w", addr, err)
	}
	if allowRemote || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("addr %q: not a loopback address; the proxy has no authentication, so set AllowRemote to listen there on purpose", addr)
	}
	return nil
}

// sortedRules returns the rules in evaluation order.
func sortedRules(rules []Rule) []Rule {
	out := slices.Clone(rules)
	slices.SortFunc(out, func(a, b Rule) int { return a.Priority - b.Priority })
	return out
}
