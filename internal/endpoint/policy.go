package endpoint

import (
	"fmt"
	"strings"
)

// RoutingKind says how Route 53 chooses among the sets of one name and type.
type RoutingKind uint8

// Routing kinds crossfade publishes.
const (
	// Simple is a single record set with no set identifier.
	Simple RoutingKind = iota
	// Weighted chooses a member in proportion to its weight.
	Weighted
	// Failover answers the primary while it is healthy, else the secondary.
	Failover
)

// String names the kind as Route 53's console does.
func (k RoutingKind) String() string {
	switch k {
	case Weighted:
		return "weighted"
	case Failover:
		return "failover"
	default:
		return "simple"
	}
}

// Failover roles.
const (
	Primary   = "PRIMARY"
	Secondary = "SECONDARY"
)

// MaxWeight is Route 53's largest weight.
const MaxWeight = 255

// RoutingPolicy is a record set's routing policy. The zero value is simple routing.
type RoutingPolicy struct {
	Kind RoutingKind
	// Weight applies to Weighted, 0..255.
	Weight int64
	// Role applies to Failover: PRIMARY or SECONDARY.
	Role string
}

// WeightedPolicy returns a weighted policy.
func WeightedPolicy(w int64) RoutingPolicy { return RoutingPolicy{Kind: Weighted, Weight: w} }

// FailoverPolicy returns a failover policy for role (case-insensitive).
func FailoverPolicy(role string) RoutingPolicy {
	return RoutingPolicy{Kind: Failover, Role: strings.ToUpper(role)}
}

// String renders the policy: "simple", "weighted(3)", "failover(PRIMARY)".
func (p RoutingPolicy) String() string {
	switch p.Kind {
	case Weighted:
		return fmt.Sprintf("weighted(%d)", p.Weight)
	case Failover:
		return "failover(" + p.Role + ")"
	default:
		return "simple"
	}
}
