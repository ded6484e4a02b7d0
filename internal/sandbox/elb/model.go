package elb

import (
	"net"
	"strconv"
	"time"
)

// The records below are what the store keeps and what a Snapshot hands out. A record the
// store has published is never changed in place (every write builds a new one), so a
// Snapshot can share them; holders must treat them as read-only.

// Tag is a key/value tag on any ELBv2 resource.
type Tag struct {
	Key   string
	Value string
}

// AvailabilityZone is one subnet of a load balancer.
type AvailabilityZone struct {
	ZoneName string
	SubnetID string
}

// LoadBalancer is an Application or a Network Load Balancer.
type LoadBalancer struct {
	ARN                   string
	Name                  string
	Region                string
	DNSName               string
	CanonicalHostedZoneID string
	Scheme                string // internet-facing | internal
	Type                  string // application | network
	IPAddressType         string // ipv4 | dualstack
	VPCID                 string
	State                 string // active: the sandbox provisions at once
	AvailabilityZones     []AvailabilityZone
	SecurityGroups        []string
	CreatedTime           time.Time
	Tags                  []Tag
	Seq                   uint64 // creation order, for stable listings
}

// HealthCheck is a target group's health-check settings; the proxy's prober applies them.
type HealthCheck struct {
	Enabled            bool
	Protocol           string // HTTP | HTTPS | TCP
	Port               string // "traffic-port" or a port number
	Path               string
	IntervalSeconds    int
	TimeoutSeconds     int
	HealthyThreshold   int
	UnhealthyThreshold int
	Matcher            string // HTTP codes: "200", "200,202", "200-299"
}

// Attribute is a target group attribute, as DescribeTargetGroupAttributes lists it.
type Attribute struct {
	Key   string
	Value string
}

// Target is a registered target of a target group: in the sandbox an IP address (loopback
// in tests) and a port.
type Target struct {
	ID               string
	Port             int
	AvailabilityZone string
	RegisteredAt     time.Time
	// DrainUntil is set while the target drains after DeregisterTargets: it gets no new
	// requests, in-flight ones may finish, and the store forgets it at that time.
	DrainUntil time.Time `json:",omitzero"`
}

// Draining reports whether the target has been deregistered and is draining.
func (t Target) Draining() bool { return !t.DrainUntil.IsZero() }

// Key is the target's identity within its group.
func (t Target) Key() TargetKey { return TargetKey{ID: t.ID, Port: t.Port} }

// Address is host:port for dialling the target.
func (t Target) Address() string { return net.JoinHostPort(t.ID, strconv.Itoa(t.Port)) }

// TargetKey identifies a target within a group: the same IP may be registered on several
// ports.
type TargetKey struct {
	ID   string
	Port int
}

// TargetGroup is a target group with its targets.
type TargetGroup struct {
	ARN             string
	Name            string
	Region          string
	Protocol        string // HTTP | HTTPS | TCP (a Network Load Balancer's)
	ProtocolVersion string // HTTP1; "" for TCP
	Port            int
	VPCID           string
	TargetType      string // ip | instance
	IPAddressType   string // ipv4 | ipv6
	HealthCheck     HealthCheck
	Attributes      []Attribute // every attribute, defaults included, in a fixed order
	Targets         []Target    // registration order; draining ones included
	CreatedTime     time.Time
	Tags            []Tag
	Seq             uint64
}

// Attribute returns the value of attribute key ("" when unknown).
func (tg TargetGroup) Attribute(key string) string {
	for _, a := range tg.Attributes {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

// DeregistrationDelay is deregistration_delay.timeout_seconds: how long a deregistered
// target drains.
func (tg TargetGroup) DeregistrationDelay() time.Duration {
	n, _ := strconv.Atoi(tg.Attribute(AttrDeregistrationDelay))
	return time.Duration(n) * time.Second
}

// TargetStickiness is a target group's own (target-level) stickiness, from its attributes.
type TargetStickiness struct {
	Enabled       bool
	Type          string // lb_cookie | app_cookie
	Duration      time.Duration
	AppCookieName string
}

// Stickiness reads the stickiness.* attributes.
func (tg TargetGroup) Stickiness() TargetStickiness {
	st := TargetStickiness{Enabled: tg.Attribute(AttrStickinessEnabled) == "true", Type: tg.Attribute(AttrStickinessType)}
	key := AttrLBCookieDuration
	if st.Type == "app_cookie" {
		key = AttrAppCookieDuration
		st.AppCookieName = tg.Attribute(AttrAppCookieName)
	}
	n, _ := strconv.Atoi(tg.Attribute(key))
	st.Duration = time.Duration(n) * time.Second
	return st
}

// Listener is a load balancer listener.
type Listener struct {
	ARN             string
	LoadBalancerARN string
	Port            int
	Protocol        string // HTTP | HTTPS | TCP (a Network Load Balancer's)
	Certificates    []string
	SSLPolicy       string
	DefaultActions  []Action
	DefaultRuleARN  string
	Tags            []Tag
	Seq             uint64
}

// Rule is a listener rule. Every listener has one default rule (IsDefault, no conditions)
// whose actions are the listener's default actions.
type Rule struct {
	ARN         string
	ListenerARN string
	Priority    int // 1–50000; 0 for the default rule
	IsDefault   bool
	Conditions  []Condition
	Actions     []Action
	Tags        []Tag
}

// PriorityString is the priority as ELBv2 describes it: a number, or "default".
func (r Rule) PriorityString() string {
	if r.IsDefault {
		return "default"
	}
	return strconv.Itoa(r.Priority)
}

// Rule condition fields the sandbox serves.
const (
	FieldHostHeader  = "host-header"
	FieldPathPattern = "path-pattern"
)

// Condition is a host-header or path-pattern condition.
type Condition struct {
	Field string
	// Values is the legacy form (Values.member.N), kept as given so that it is described
	// back the way it was written; nil when the condition used HostHeaderConfig or
	// PathPatternConfig.
	Values []string `json:",omitempty"`
	// Patterns are the effective patterns, whichever form gave them.
	Patterns []string
}

// Action types.
const (
	ActionForward       = "forward"
	ActionFixedResponse = "fixed-response"
	ActionRedirect      = "redirect"
)

// Action is a rule or default action. A forward action always carries Forward, whichever
// form the request used, so readers look only there.
type Action struct {
	Type  string
	Order int // 0 when not given
	// TargetGroupARN is set when the action forwards to exactly one group, as ELBv2
	// describes it.
	TargetGroupARN string          `json:",omitempty"`
	Forward        *ForwardConfig  `json:",omitempty"`
	FixedResponse  *FixedResponse  `json:",omitempty"`
	Redirect       *RedirectConfig `json:",omitempty"`
}

// ForwardConfig distributes requests among up to five target groups by weight.
type ForwardConfig struct {
	TargetGroups []WeightedTargetGroup
	Stickiness   GroupStickiness
}

// WeightedTargetGroup is one group of a forward action; weights are 0–999 and relative.
type WeightedTargetGroup struct {
	TargetGroupARN string
	Weight         int
}

// GroupStickiness is the forward action's target-group stickiness: a client stays on the
// group it was sent to for Duration.
type GroupStickiness struct {
	Enabled         bool
	DurationSeconds int // 0 when not set
}

// FixedResponse answers the request itself.
type FixedResponse struct {
	StatusCode  string
	ContentType string `json:",omitempty"`
	MessageBody string `json:",omitempty"`
}

// RedirectConfig redirects the request; empty fields keep the request's own value
// (ELBv2's #{protocol}, #{host}, … defaults are filled in).
type RedirectConfig struct {
	Protocol   string
	Port       string
	Host       string
	Path       string
	Query      string
	StatusCode string // HTTP_301 | HTTP_302
}

// Snapshot is the whole ELBv2 state at one version: what the weighted proxy serves from.
// It is a plain value; its slices and records are shared with the store and other
// subscribers and must not be modified.
type Snapshot struct {
	// Version increases by one with every change; it starts at 1 each time the store is
	// opened, so it orders the snapshots of one process only.
	Version       uint64
	LoadBalancers []LoadBalancer // creation order
	Listeners     []Listener     // creation order
	// Rules holds every listener's rules, grouped by listener in Listeners' order and in
	// evaluation order within each: priority ascending, the default rule last.
	Rules        []Rule
	TargetGroups []TargetGroup // creation order
}

// ListenerRules returns the rules of one listener in evaluation order.
func (s Snapshot) ListenerRules(listenerARN string) []Rule {
	var out []Rule
	for _, r := range s.Rules {
		if r.ListenerARN == listenerARN {
			out = append(out, r)
		}
	}
	return out
}

// TargetGroup finds a target group by ARN.
func (s Snapshot) TargetGroup(arn string) (TargetGroup, bool) {
	for _, tg := range s.TargetGroups {
		if tg.ARN == arn {
			return tg, true
		}
	}
	return TargetGroup{}, false
}
