package elb

import (
	"reflect"
	"slices"
)

// DefaultSSLPolicy is the security policy an HTTPS listener gets when none is given.
const DefaultSSLPolicy = "ELBSecurityPolicy-2016-08"

// CreateListenerInput is CreateListener's request.
type CreateListenerInput struct {
	Region          string
	LoadBalancerARN string
	Protocol        string // "" means HTTP
	Port            *int
	Certificates    []string // CertificateArn of each
	SSLPolicy       string
	DefaultActions  []ActionInput
	Tags            []Tag
}

// checkListenerProtocol validates a listener's protocol and certificates for its load
// balancer's type.
func checkListenerProtocol(lb *LoadBalancer, protocol string, certs []string) *Error {
	if lb.IsNetwork() {
		return checkNLBListenerProtocol(protocol)
	}
	if err := enumCheck(protocol, "protocol", "HTTP", "HTTPS", "TCP", "TLS", "UDP", "TCP_UDP", "GENEVE"); err != nil {
		return err
	}
	if protocol != "HTTP" && protocol != "HTTPS" {
		return validationf("Listener protocol '%s' must be one of 'HTTPS, HTTP'", protocol)
	}
	if protocol == "HTTPS" && len(certs) == 0 {
		return validationf("A certificate must be specified for HTTPS listeners")
	}
	return nil
}

// CreateListener creates a listener and its default rule. Creating one that exists on the
// same port with the same settings returns it, as ELBv2 does.
func (s *Store) CreateListener(in CreateListenerInput) (Listener, error) {
	if in.Port == nil {
		return Listener{}, validationf("A listener port must be specified")
	}
	if err := rangeCheck(*in.Port, "port", 1, 65535); err != nil {
		return Listener{}, err
	}
	if err := checkTags(in.Tags, "tags"); err != nil {
		return Listener{}, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	lb, err := t.getLB(in.Region, in.LoadBalancerARN)
	if err != nil {
		return Listener{}, err
	}
	if lb.IsNetwork() && in.Protocol == "" {
		return Listener{}, validationf("A listener protocol must be specified for a Network Load Balancer")
	}
	in.Protocol = cmpOr(in.Protocol, "HTTP")
	if err := checkListenerProtocol(lb, in.Protocol, in.Certificates); err != nil {
		return Listener{}, err
	}
	actions, err := t.resolveActions(in.DefaultActions, "defaultActions", lb.ARN)
	if err != nil {
		return Listener{}, err
	}
	l := Listener{LoadBalancerARN: lb.ARN, Port: *in.Port, Protocol: in.Protocol,
		Certificates: slices.Clone(in.Certificates), DefaultActions: actions, Tags: slices.Clone(in.Tags)}
	if l.Protocol == "HTTPS" {
		l.SSLPolicy = cmpOr(in.SSLPolicy, DefaultSSLPolicy)
	}
	existing := t.lbListeners(lb.ARN)
	for _, have := range existing {
		if have.Port != l.Port {
			continue
		}
		if have.Protocol == l.Protocol && slices.Equal(have.Certificates, l.Certificates) && reflect.DeepEqual(have.DefaultActions, l.DefaultActions) {
			return *have, nil
		}
		return Listener{}, errorf(CodeDuplicateListener, "A listener already exists on this port for this load balancer '%s'", lb.ARN)
	}
	if len(existing) >= maxListenersPerBalancer {
		return Listener{}, errorf(CodeTooManyListeners, "You've reached the limit on the number of listeners per load balancer (%d)", maxListenersPerBalancer)
	}
	lbPart := lastSegments(lb.ARN) // app/<name>/<id>
	l.ARN = s.arnPrefix(lb.Region) + "listener/" + lbPart + "/" + newHexID()
	l.DefaultRuleARN = s.arnPrefix(lb.Region) + "listener-rule/" + lastSegments(l.ARN) + "/" + newHexID()
	l.Seq = t.nextSeq()
	t.listeners[l.ARN] = &l
	t.rules[l.DefaultRuleARN] = &Rule{ARN: l.DefaultRuleARN, ListenerARN: l.ARN, IsDefault: true, Actions: actions}
	if err := s.commit(t); err != nil {
		return Listener{}, err
	}
	s.log.Info("elbv2: listener created", "load_balancer", lb.Name, "port", l.Port)
	return l, nil
}

// getListener returns a listener of the region by ARN, or ListenerNotFound.
func (t *txn) getListener(region, arn string) (*Listener, *Error) {
	if err := checkARN(arn, kindListener); err != nil {
		return nil, err
	}
	l := t.listener(arn)
	if l == nil || t.lb(l.LoadBalancerARN).Region != cmpOr(region, DefaultRegion) {
		return nil, listenerNotFound()
	}
	return l, nil
}

// DescribeListenersInput is DescribeListeners' request.
type DescribeListenersInput struct {
	Region          string
	LoadBalancerARN string
	ARNs            []string
	Marker          string
	PageSize        int
}

// DescribeListeners lists a load balancer's listeners, or the given ones.
func (s *Store) DescribeListeners(in DescribeListenersInput) ([]Listener, string, error) {
	if (in.LoadBalancerARN == "") == (len(in.ARNs) == 0) {
		return nil, "", validationf("You must specify either listener ARNs or a load balancer ARN")
	}
	s.writeMu.Lock()
	t := s.begin()
	var out []Listener
	var err *Error
	if in.LoadBalancerARN != "" {
		if _, err = t.getLB(in.Region, in.LoadBalancerARN); err == nil {
			for _, l := range s.Snapshot().Listeners {
				if l.LoadBalancerARN == in.LoadBalancerARN {
					out = append(out, l)
				}
			}
		}
	}
	for _, arn := range dedupe(in.ARNs) {
		var l *Listener
		if l, err = t.getListener(in.Region, arn); err != nil {
			break
		}
		out = append(out, *l)
	}
	s.writeMu.Unlock()
	if err != nil {
		return nil, "", err
	}
	page, next, err := paginate(out, in.Marker, in.PageSize)
	if err != nil {
		return nil, "", err
	}
	return page, next, nil
}

// ModifyListenerInput is ModifyListener's request; nil and empty members are unchanged.
type ModifyListenerInput struct {
	Region         string
	ARN            string
	Port           *int
	Protocol       string
	Certificates   []string
	SSLPolicy      string
	DefaultActions []ActionInput // nil: unchanged
}

// ModifyListener changes a listener; new default actions apply to its default rule in the
// same write.
func (s *Store) ModifyListener(in ModifyListenerInput) (Listener, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	l, err := t.getListener(in.Region, in.ARN)
	if err != nil {
		return Listener{}, err
	}
	n := *l
	if in.Protocol != "" {
		n.Protocol = in.Protocol
	}
	if in.Certificates != nil {
		n.Certificates = slices.Clone(in.Certificates)
	}
	if err := checkListenerProtocol(t.lb(l.LoadBalancerARN), n.Protocol, n.Certificates); err != nil {
		return Listener{}, err
	}
	switch {
	case n.Protocol == "HTTP" || n.Protocol == ProtocolTCP:
		n.Certificates, n.SSLPolicy = nil, ""
	case in.SSLPolicy != "":
		n.SSLPolicy = in.SSLPolicy
	default:
		n.SSLPolicy = cmpOr(n.SSLPolicy, DefaultSSLPolicy)
	}
	if in.Port != nil {
		if err := rangeCheck(*in.Port, "port", 1, 65535); err != nil {
			return Listener{}, err
		}
		for _, other := range t.lbListeners(l.LoadBalancerARN) {
			if other.ARN != l.ARN && other.Port == *in.Port {
				return Listener{}, validationf("Listener port '%d' is already in use", *in.Port)
			}
		}
		n.Port = *in.Port
	}
	if in.DefaultActions != nil {
		if n.DefaultActions, err = t.resolveActions(in.DefaultActions, "defaultActions", l.LoadBalancerARN); err != nil {
			return Listener{}, err
		}
		dr := *t.rule(l.DefaultRuleARN)
		dr.Actions = n.DefaultActions
		t.rules[dr.ARN] = &dr
	}
	t.listeners[n.ARN] = &n
	if err := s.commit(t); err != nil {
		return Listener{}, err
	}
	return n, nil
}

// DeleteListener deletes a listener and its rules.
func (s *Store) DeleteListener(region, arn string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	l, err := t.getListener(region, arn)
	if err != nil {
		return err
	}
	t.deleteListener(l)
	return s.commit(t)
}

func (t *txn) deleteListener(l *Listener) {
	t.listeners[l.ARN] = nil
	for _, r := range t.listenerRules(l.ARN) {
		t.rules[r.ARN] = nil
	}
}
