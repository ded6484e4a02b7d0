package elb

import (
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/elbzone"
)

// nlbFixture is a Network Load Balancer with two TCP target groups, an HTTP group and a TCP
// listener on port 5432 forwarding 100/0 to the TCP groups, next to an ALB.
type nlbFixture struct {
	s                 *Store
	nlb, alb          LoadBalancer
	blue, green, http string
	listener          string
}

func newNLBFixture(t *testing.T) *nlbFixture {
	t.Helper()
	f := &nlbFixture{s: newStore(t, Options{})}
	f.nlb = must(f.s.CreateLoadBalancer(CreateLoadBalancerInput{Name: "db", Type: TypeNetwork, Subnets: []string{"subnet-a"}}))(t)
	f.alb = must(f.s.CreateLoadBalancer(CreateLoadBalancerInput{Name: "web", Subnets: []string{"subnet-a", "subnet-b"}}))(t)
	tcp := func(name string) string {
		return must(f.s.CreateTargetGroup(CreateTargetGroupInput{Name: name, Protocol: "TCP", Port: ptr(5432), VPCID: "vpc-1", TargetType: "ip"}))(t).ARN
	}
	f.blue, f.green = tcp("blue"), tcp("green")
	f.http = must(f.s.CreateTargetGroup(CreateTargetGroupInput{Name: "web", Protocol: "HTTP", Port: ptr(80), VPCID: "vpc-1", TargetType: "ip"}))(t).ARN
	f.listener = must(f.s.CreateListener(CreateListenerInput{LoadBalancerARN: f.nlb.ARN, Protocol: "TCP", Port: ptr(5432), DefaultActions: weighted(f.blue, 100, f.green, 0)}))(t).ARN
	return f
}

func TestNetworkLoadBalancerShape(t *testing.T) {
	f := newNLBFixture(t)
	lb := f.nlb
	if !strings.Contains(lb.ARN, ":loadbalancer/net/db/") || lb.Type != TypeNetwork {
		t.Errorf("ARN %s type %s, want loadbalancer/net/db/… of type network", lb.ARN, lb.Type)
	}
	// NLB names put the region after "elb", and their zone is the NLB one.
	if !strings.HasPrefix(lb.DNSName, "db-") || !strings.HasSuffix(lb.DNSName, ".elb.us-east-1.amazonaws.com") {
		t.Errorf("DNS name %s, want db-<hex>.elb.us-east-1.amazonaws.com", lb.DNSName)
	}
	if want, _ := elbzone.ZoneFor("x-0123.elb.us-east-1.amazonaws.com"); lb.CanonicalHostedZoneID != want || want != "Z26RNL4JYFTOTI" {
		t.Errorf("zone %s, want the NLB zone of us-east-1 Z26RNL4JYFTOTI", lb.CanonicalHostedZoneID)
	}
	tgs := must2(f.s.DescribeTargetGroups(DescribeTargetGroupsInput{ARNs: []string{f.blue}}))(t)
	tg := tgs[0]
	if tg.ProtocolVersion != "" || tg.HealthCheck != defaultTCPHealthCheck() {
		t.Errorf("TCP group: protocol version %q, health check %+v", tg.ProtocolVersion, tg.HealthCheck)
	}
	if tg.HealthCheck.Protocol != "TCP" || tg.HealthCheck.Path != "" || tg.HealthCheck.Matcher != "" {
		t.Errorf("TCP health check %+v: want protocol TCP, no path, no matcher", tg.HealthCheck)
	}
	if len(tg.LoadBalancerARNs) != 1 || tg.LoadBalancerARNs[0] != lb.ARN {
		t.Errorf("blue is used by %v, want the NLB", tg.LoadBalancerARNs)
	}
	if tg.Attribute(AttrStickinessType) != "source_ip" || tg.Attribute(AttrConnectionTermination) != "false" || tg.Attribute(AttrDeregistrationDelay) != "300" {
		t.Errorf("TCP group attributes %v", tg.Attributes)
	}
	// The weights move with ModifyListener, as on an ALB.
	l := must(f.s.ModifyListener(ModifyListenerInput{ARN: f.listener, DefaultActions: weighted(f.blue, 20, f.green, 80)}))(t)
	if got := l.DefaultActions[0].Forward.TargetGroups; len(got) != 2 || got[0].Weight != 20 || got[1].Weight != 80 {
		t.Errorf("weights after ModifyListener: %+v", got)
	}
	// Stickiness disabled, as the ALB lever sends back what it read, is accepted.
	in := weighted(f.blue, 0, f.green, 100)
	in[0].Forward.Stickiness = &StickinessInput{Enabled: ptr(false)}
	must(f.s.ModifyListener(ModifyListenerInput{ARN: f.listener, DefaultActions: in}))(t)
}

func TestNetworkLoadBalancerErrors(t *testing.T) {
	f := newNLBFixture(t)
	sticky := weighted(f.blue, 1, f.green, 1)
	sticky[0].Forward.Stickiness = &StickinessInput{Enabled: ptr(true), DurationSeconds: ptr(60)}
	for _, tc := range []struct {
		name       string
		do         func() error
		code, want string
	}{
		{"NLB without a subnet", func() error {
			_, err := f.s.CreateLoadBalancer(CreateLoadBalancerInput{Name: "n2", Type: TypeNetwork})
			return err
		}, CodeValidation, "At least one subnet must be specified"},
		{"HTTP listener on an NLB", func() error {
			_, err := f.s.CreateListener(CreateListenerInput{LoadBalancerARN: f.nlb.ARN, Protocol: "HTTP", Port: ptr(80), DefaultActions: weighted(f.blue, 1)})
			return err
		}, CodeValidation, "Listener protocol 'HTTP' must be one of 'TCP_QUIC, QUIC, TCP, UDP, TLS, TCP_UDP'"},
		{"NLB listener without a protocol", func() error {
			_, err := f.s.CreateListener(CreateListenerInput{LoadBalancerARN: f.nlb.ARN, Port: ptr(81), DefaultActions: weighted(f.blue, 1)})
			return err
		}, CodeValidation, "A listener protocol must be specified"},
		{"UDP listener", func() error {
			_, err := f.s.CreateListener(CreateListenerInput{LoadBalancerARN: f.nlb.ARN, Protocol: "UDP", Port: ptr(53), DefaultActions: weighted(f.blue, 1)})
			return err
		}, CodeValidation, "not supported by the crossfade sandbox: listener protocol 'UDP'"},
		{"TCP listener on an ALB", func() error {
			_, err := f.s.CreateListener(CreateListenerInput{LoadBalancerARN: f.alb.ARN, Protocol: "TCP", Port: ptr(81), DefaultActions: weighted(f.http, 1)})
			return err
		}, CodeValidation, "Listener protocol 'TCP' must be one of 'HTTPS, HTTP'"},
		{"NLB forwards to an HTTP group", func() error {
			_, err := f.s.ModifyListener(ModifyListenerInput{ARN: f.listener, DefaultActions: weighted(f.http, 1)})
			return err
		}, CodeInvalidConfigurationRequest, "which a TCP listener of a Network Load Balancer cannot forward to"},
		{"ALB forwards to a TCP group", func() error {
			_, err := f.s.CreateListener(CreateListenerInput{LoadBalancerARN: f.alb.ARN, Port: ptr(80), DefaultActions: weighted(f.blue, 1)})
			return err
		}, CodeInvalidConfigurationRequest, "which an Application Load Balancer cannot forward to"},
		{"weight above 999", func() error {
			_, err := f.s.ModifyListener(ModifyListenerInput{ARN: f.listener, DefaultActions: weighted(f.blue, 1000, f.green, 0)})
			return err
		}, CodeValidation, "between 0 and 999"},
		{"group stickiness on an NLB", func() error {
			_, err := f.s.ModifyListener(ModifyListenerInput{ARN: f.listener, DefaultActions: sticky})
			return err
		}, CodeValidation, "not supported for load balancers of type 'network'"},
		{"fixed response on an NLB", func() error {
			_, err := f.s.ModifyListener(ModifyListenerInput{ARN: f.listener, DefaultActions: []ActionInput{{Type: ActionFixedResponse, FixedResponse: &FixedResponse{StatusCode: "200"}}}})
			return err
		}, CodeInvalidLoadBalancerAction, "Action type 'fixed-response' is not supported for load balancers of type 'network'"},
		{"rule on an NLB listener", func() error {
			_, err := f.s.CreateRule(CreateRuleInput{ListenerARN: f.listener, Priority: ptr(1), Conditions: hostIs("a.example.com"), Actions: weighted(f.blue, 1)})
			return err
		}, CodeValidation, "not supported by the crossfade sandbox: listener rules on a Network Load Balancer listener"},
		{"modify an NLB listener to HTTP", func() error {
			_, err := f.s.ModifyListener(ModifyListenerInput{ARN: f.listener, Protocol: "HTTP"})
			return err
		}, CodeValidation, "Listener protocol 'HTTP' must be one of"},
		{"TCP group with a protocol version", func() error {
			_, err := f.s.CreateTargetGroup(CreateTargetGroupInput{Name: "pv", Protocol: "TCP", ProtocolVersion: "HTTP1", Port: ptr(1), VPCID: "vpc-1"})
			return err
		}, CodeValidation, "Protocol version 'HTTP1' can be specified only for target groups with the protocol 'HTTP' or 'HTTPS'"},
		{"TCP health check with a path", func() error {
			_, err := f.s.ModifyTargetGroup("", f.blue, HealthCheckInput{Path: ptr("/")})
			return err
		}, CodeValidation, "Health check path cannot be specified for the health check protocol 'TCP'"},
		{"HTTP health check of a TCP group", func() error {
			_, err := f.s.ModifyTargetGroup("", f.blue, HealthCheckInput{Protocol: ptr("HTTP")})
			return err
		}, CodeValidation, "not supported by the crossfade sandbox: health check protocol 'HTTP' of a TCP target group"},
		{"TCP health check of an HTTP group", func() error {
			_, err := f.s.ModifyTargetGroup("", f.http, HealthCheckInput{Protocol: ptr("TCP")})
			return err
		}, CodeValidation, "Health check protocol 'TCP' is not supported for target groups with the protocol 'HTTP' or 'HTTPS'"},
		{"ALB attribute on a TCP group", func() error {
			_, err := f.s.ModifyTargetGroupAttributes("", f.blue, []Attribute{{Key: AttrSlowStart, Value: "30"}})
			return err
		}, CodeInvalidConfigurationRequest, "The provided target group attribute is not supported"},
		{"source_ip stickiness", func() error {
			_, err := f.s.ModifyTargetGroupAttributes("", f.blue, []Attribute{{Key: AttrStickinessEnabled, Value: "true"}})
			return err
		}, CodeValidation, "not supported by the crossfade sandbox: source_ip stickiness"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantErr(t, tc.do(), tc.code, tc.want) })
	}
	// What the refusals left: the listener still forwards 100/0 to the TCP groups.
	ls := must2(f.s.DescribeListeners(DescribeListenersInput{ARNs: []string{f.listener}}))(t)
	if l := ls[0]; l.Protocol != "TCP" || l.DefaultActions[0].Forward.TargetGroups[0].Weight != 100 {
		t.Fatalf("listener after the refusals: %+v", l)
	}
	// Connection termination on deregistration is served.
	attrs := must(f.s.ModifyTargetGroupAttributes("", f.blue, []Attribute{{Key: AttrConnectionTermination, Value: "true"}}))(t)
	if (TargetGroup{Attributes: attrs}).ConnectionTermination() != true {
		t.Fatalf("attributes %v", attrs)
	}
}

// must2 unwraps a page, its marker and a nil error.
func must2[V any](v V, _ string, err error) func(t *testing.T) V {
	return func(t *testing.T) V {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
