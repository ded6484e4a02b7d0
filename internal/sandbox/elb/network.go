package elb

// Network Load Balancers. The sandbox serves the part of them a weighted cutover needs: an
// NLB, TCP target groups with TCP health checks, and TCP listeners whose default action
// forwards to one or several weighted target groups.
//
// The rules, from AWS's documentation:
//   - "Network Load Balancers now support Weighted Target Groups" (AWS Networking & Content
//     Delivery blog, and the NLB guide's document history: "This release adds support for
//     default action with weighted target groups", November 19, 2025): a listener's default
//     action forwards to several target groups, each with a weight 0–999; weight 0 gets no
//     traffic; the weights are changed with ModifyListener.
//   - "Listeners for your Network Load Balancers", section "Route traffic to multiple target
//     groups": "After you add a target group or update target group weights, new
//     connections are routed according to the new target group weights. Existing
//     connections are not affected and continue normally until they are closed."
//   - Listener protocols TCP, TLS, UDP, TCP_UDP, QUIC, TCP_QUIC; target group protocols TCP,
//     TLS, UDP, TCP_UDP; a TCP listener forwards to TCP (or TCP_UDP) groups ("Target groups
//     for your Network Load Balancers", its table of listener and target group protocols).
//     The sandbox serves TCP and says so for the others.
//   - NLB target groups have source_ip stickiness (a target group attribute), not the
//     forward action's lb-cookie group stickiness (TargetGroupStickinessConfig), which is
//     an ALB feature: an NLB forward action that enables it is refused.
//   - The guide's document history lists "Listener rules" for NLBs (source IP address type
//     conditions, July 10, 2026). The sandbox does not model them: CreateRule on an NLB
//     listener is refused as not supported, never silently accepted.
//
// The number of target groups an NLB forward action takes is not stated where the sandbox
// could check it; it applies the ALB's limit of five (maxTargetGroupsPerAction).

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Load balancer types.
const (
	TypeApplication = "application"
	TypeNetwork     = "network"
)

// Protocols of NLB listeners and target groups the sandbox serves.
const ProtocolTCP = "TCP"

// nlbListenerProtocols are every NLB listener protocol, as the refusal of another lists
// them.
const nlbListenerProtocols = "TCP_QUIC, QUIC, TCP, UDP, TLS, TCP_UDP"

// IsNetwork reports whether lb is a Network Load Balancer.
func (lb LoadBalancer) IsNetwork() bool { return lb.Type == TypeNetwork }

// IsTCP reports whether tg is a TCP target group (a Network Load Balancer's).
func (tg TargetGroup) IsTCP() bool { return tg.Protocol == ProtocolTCP }

// ConnectionTermination is deregistration_delay.connection_termination.enabled: whether
// a deregistered target's connections are closed when its deregistration delay ends.
func (tg TargetGroup) ConnectionTermination() bool {
	return tg.Attribute(AttrConnectionTermination) == "true"
}

// arnTypePart is the part of a load balancer ARN after "loadbalancer/": app or net.
func arnTypePart(lbType string) string {
	if lbType == TypeNetwork {
		return "net"
	}
	return "app"
}

// nlbDNSName is an NLB's DNS name, <name>-<16 hex>.elb.<region>.amazonaws.com: the region
// after "elb", unlike an ALB's, which is how a Route 53 alias tells the families apart
// (internal/elbzone).
func nlbDNSName(name, region string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	domain := "amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		domain = "amazonaws.com.cn"
	}
	return fmt.Sprintf("%s-%s.elb.%s.%s", name, hex.EncodeToString(b), region, domain)
}

// checkNLBListenerProtocol validates an NLB listener's protocol.
func checkNLBListenerProtocol(protocol string) *Error {
	if err := enumCheck(protocol, "protocol", "HTTP", "HTTPS", "TCP", "TLS", "UDP", "TCP_UDP", "GENEVE", "QUIC", "TCP_QUIC"); err != nil {
		return err
	}
	switch protocol {
	case ProtocolTCP:
		return nil
	case "TLS", "UDP", "TCP_UDP", "QUIC", "TCP_QUIC":
		return unsupported("listener protocol '%s': the sandbox serves TCP listeners on Network Load Balancers", protocol)
	}
	return validationf("Listener protocol '%s' must be one of '%s'", protocol, nlbListenerProtocols)
}

// checkGroupForListener refuses a forward from a listener of lb to a target group of the
// other family: an ALB forwards to HTTP/HTTPS groups, a TCP listener of an NLB to TCP ones.
func checkGroupForListener(lb *LoadBalancer, tg *TargetGroup) *Error {
	switch {
	case lb.IsNetwork() && !tg.IsTCP():
		return errorf(CodeInvalidConfigurationRequest, "The target group '%s' has protocol '%s', which a TCP listener of a Network Load Balancer cannot forward to: use a TCP target group", tg.ARN, tg.Protocol)
	case !lb.IsNetwork() && tg.IsTCP():
		return errorf(CodeInvalidConfigurationRequest, "The target group '%s' has protocol 'TCP', which an Application Load Balancer cannot forward to: use an HTTP or HTTPS target group", tg.ARN)
	}
	return nil
}

// defaultTCPHealthCheck is what ELBv2 gives a TCP target group: a TCP connect to the
// traffic port every 30 s, 10 s timeout, 5 successes to healthy, 2 failures to unhealthy.
func defaultTCPHealthCheck() HealthCheck {
	return HealthCheck{Enabled: true, Protocol: ProtocolTCP, Port: "traffic-port",
		IntervalSeconds: 30, TimeoutSeconds: 10, HealthyThreshold: 5, UnhealthyThreshold: 2}
}

// AttrConnectionTermination is the NLB target group attribute that closes a deregistered
// target's connections at the end of its deregistration delay.
const AttrConnectionTermination = "deregistration_delay.connection_termination.enabled"

// tcpAttributeSpecs are the attributes of a TCP target group the sandbox models, in
// ELBv2's order. source_ip stickiness is listed but only "false" is served.
var tcpAttributeSpecs = []attributeSpec{
	{AttrDeregistrationDelay, "300", intIn(0, 3600), "an integer from 0 to 3600"},
	{AttrConnectionTermination, "false", oneOf("true", "false"), "true or false"},
	{AttrStickinessEnabled, "false", oneOf("false"), "false (the sandbox does not model source_ip stickiness)"},
	{AttrStickinessType, "source_ip", oneOf("source_ip"), "source_ip"},
}

// HealthSource returns the store's health source, nil when none is set: a second checker
// (the NLB proxy's) combines with the one already there rather than replace it.
func (s *Store) HealthSource() HealthSource {
	if h := s.health.Load(); h != nil {
		return h.src
	}
	return nil
}

// applyTCPHealthCheck returns a TCP target group's health check hc with in applied. The
// sandbox checks TCP groups with a TCP connect; HTTP and HTTPS checks of a TCP group, which
// ELBv2 offers, are refused as not modelled rather than run as something else.
func applyTCPHealthCheck(hc HealthCheck, in HealthCheckInput) (HealthCheck, *Error) {
	if in.Enabled != nil && !*in.Enabled {
		return hc, validationf("Health checks cannot be disabled for target groups with the target type 'ip' or 'instance'")
	}
	if in.Protocol != nil {
		if err := enumCheck(*in.Protocol, "healthCheckProtocol", "HTTP", "HTTPS", "TCP", "TLS", "UDP", "TCP_UDP", "GENEVE"); err != nil {
			return hc, err
		}
		switch *in.Protocol {
		case ProtocolTCP:
		case "HTTP", "HTTPS":
			return hc, unsupported("health check protocol '%s' of a TCP target group: the sandbox checks TCP target groups with TCP connects", *in.Protocol)
		default:
			return hc, validationf("Health check protocol '%s' is not supported for target groups with the protocol 'TCP'", *in.Protocol)
		}
	}
	if in.Path != nil {
		return hc, validationf("Health check path cannot be specified for the health check protocol 'TCP'")
	}
	if in.Matcher != nil {
		return hc, validationf("Health check matcher cannot be specified for the health check protocol 'TCP'")
	}
	// The port and the counts follow the HTTP rules.
	rest := in
	rest.Protocol, rest.Enabled = nil, nil
	return applyHealthCheck("HTTP", hc, rest)
}

// applyTCPAttributes returns a TCP target group's attributes have with set applied.
func applyTCPAttributes(have, set []Attribute) ([]Attribute, *Error) {
	out := slices.Clone(have)
	for _, a := range set {
		i := slices.IndexFunc(tcpAttributeSpecs, func(s attributeSpec) bool { return s.key == a.Key })
		switch {
		case i < 0 && (slices.Contains(otherTargetGroupAttributes, a.Key) || a.Key == "load_balancing.cross_zone.enabled"):
			return nil, unsupported("target group attribute '%s' of a TCP target group", a.Key)
		case i < 0 && slices.ContainsFunc(attributeSpecs, func(s attributeSpec) bool { return s.key == a.Key }):
			// An ALB target group's attribute.
			return nil, errorf(CodeInvalidConfigurationRequest, "The provided target group attribute is not supported")
		case i < 0:
			return nil, validationf("Target group attribute key '%s' is not recognized", a.Key)
		}
		if spec := tcpAttributeSpecs[i]; !spec.check(a.Value) {
			if a.Key == AttrStickinessEnabled && a.Value == "true" {
				return nil, unsupported("source_ip stickiness (%s=true)", a.Key)
			}
			return nil, validationf("Target group attribute '%s' value '%s' is not valid: it must be %s", a.Key, a.Value, spec.want)
		}
		out[slices.IndexFunc(out, func(x Attribute) bool { return x.Key == a.Key })] = a
	}
	return out, nil
}
