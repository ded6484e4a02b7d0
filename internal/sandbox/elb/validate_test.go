package elb

import (
	"strings"
	"testing"
)

func TestCreateLoadBalancerErrors(t *testing.T) {
	s := newStore(t, Options{})
	two := []string{"subnet-a", "subnet-b"}
	if _, err := s.CreateLoadBalancer(CreateLoadBalancerInput{Name: "taken", Subnets: two}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		in         CreateLoadBalancerInput
		code, want string
	}{
		{"one subnet", CreateLoadBalancerInput{Name: "a", Subnets: []string{"subnet-a"}}, CodeValidation, "At least two subnets in two different Availability Zones must be specified"},
		{"same subnet twice", CreateLoadBalancerInput{Name: "a", Subnets: []string{"subnet-a", "subnet-a"}}, CodeValidation, "specified more than once"},
		{"long name", CreateLoadBalancerInput{Name: strings.Repeat("a", 33), Subnets: two}, CodeValidation, "cannot be longer than '32' characters"},
		{"underscore", CreateLoadBalancerInput{Name: "a_b", Subnets: two}, CodeValidation, "alphanumeric characters or hyphens"},
		{"leading hyphen", CreateLoadBalancerInput{Name: "-a", Subnets: two}, CodeValidation, "cannot begin or end with '-'"},
		{"internal- prefix", CreateLoadBalancerInput{Name: "internal-a", Subnets: two}, CodeValidation, "cannot begin with 'internal-'"},
		{"gateway type", CreateLoadBalancerInput{Name: "a", Subnets: two, Type: "gateway"}, CodeValidation, "not supported by the crossfade sandbox"},
		{"bad scheme", CreateLoadBalancerInput{Name: "a", Subnets: two, Scheme: "public"}, CodeValidation, "Value 'public' at 'scheme' failed to satisfy constraint: Member must satisfy enum value set: [internet-facing, internal]"},
		{"unknown region", CreateLoadBalancerInput{Name: "a", Subnets: two, Region: "xx-moon-1"}, CodeValidation, "region 'xx-moon-1'"},
		{"same name, other settings", CreateLoadBalancerInput{Name: "taken", Subnets: two, Scheme: "internal"}, CodeDuplicateLoadBalancerName, "A load balancer with the same name 'taken' exists, but with different settings"},
		{"reserved tag", CreateLoadBalancerInput{Name: "a", Subnets: two, Tags: []Tag{{Key: "aws:x"}}}, CodeValidation, "Tag key 'aws:x' cannot start with 'aws:'"},
		{"duplicate tag keys", CreateLoadBalancerInput{Name: "a", Subnets: two, Tags: []Tag{{Key: "k"}, {Key: "k"}}}, CodeDuplicateTagKeys, "Tag key 'k' was specified more than once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.CreateLoadBalancer(tc.in)
			wantErr(t, err, tc.code, tc.want)
		})
	}
	// Same settings: the existing one, as ELBv2's CreateLoadBalancer is idempotent.
	before, _, err := s.DescribeLoadBalancers(DescribeLoadBalancersInput{Names: []string{"taken"}})
	if err != nil {
		t.Fatal(err)
	}
	again := must(s.CreateLoadBalancer(CreateLoadBalancerInput{Name: "taken", Subnets: two}))(t)
	lbs, _, _ := s.DescribeLoadBalancers(DescribeLoadBalancersInput{})
	if again.ARN != before[0].ARN || len(lbs) != 1 {
		t.Fatalf("create with the same settings gave %s and %d load balancers, want the existing one", again.ARN, len(lbs))
	}
}

func TestLoadBalancerShape(t *testing.T) {
	s := newStore(t, Options{})
	lb := must(s.CreateLoadBalancer(CreateLoadBalancerInput{Name: "web", Region: "eu-west-1", Scheme: "internal", Subnets: []string{"subnet-1", "subnet-2"}}))(t)
	region, kind, ok := arnParts(lb.ARN)
	if !ok || region != "eu-west-1" || kind != kindLoadBalancer || !strings.HasPrefix(lb.ARN, "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/web/") || len(lb.ARN)-strings.LastIndex(lb.ARN, "/") != 17 {
		t.Errorf("ARN %s", lb.ARN)
	}
	if !strings.HasPrefix(lb.DNSName, "internal-web-") || !strings.HasSuffix(lb.DNSName, ".eu-west-1.elb.amazonaws.com") {
		t.Errorf("DNS name %s", lb.DNSName)
	}
	if lb.CanonicalHostedZoneID != "Z32O12XQLNTSW2" || lb.State != "active" || lb.VPCID != SandboxVPCID {
		t.Errorf("zone %s state %s vpc %s", lb.CanonicalHostedZoneID, lb.State, lb.VPCID)
	}
	if got := lb.AvailabilityZones; len(got) != 2 || got[0] != (AvailabilityZone{"eu-west-1a", "subnet-1"}) || got[1] != (AvailabilityZone{"eu-west-1b", "subnet-2"}) {
		t.Errorf("zones %v", got)
	}
	// Regions are apart: us-east-1 does not see it.
	if _, _, err := s.DescribeLoadBalancers(DescribeLoadBalancersInput{ARNs: []string{lb.ARN}}); err == nil {
		t.Error("an eu-west-1 load balancer was found in us-east-1")
	}
}

func TestCreateTargetGroupErrors(t *testing.T) {
	s := newStore(t, Options{})
	base := func(mod func(*CreateTargetGroupInput)) CreateTargetGroupInput {
		in := CreateTargetGroupInput{Name: "tg", Protocol: "HTTP", Port: ptr(80), VPCID: "vpc-1", TargetType: "ip"}
		mod(&in)
		return in
	}
	must(s.CreateTargetGroup(base(func(in *CreateTargetGroupInput) { in.Name = "taken" })))(t)
	for _, tc := range []struct {
		name       string
		in         CreateTargetGroupInput
		code, want string
	}{
		{"no protocol", base(func(in *CreateTargetGroupInput) { in.Protocol = "" }), CodeValidation, "A protocol must be specified"},
		{"udp", base(func(in *CreateTargetGroupInput) { in.Protocol = "UDP" }), CodeValidation, "not supported by the crossfade sandbox"},
		{"no port", base(func(in *CreateTargetGroupInput) { in.Port = nil }), CodeValidation, "A port must be specified"},
		{"port 0", base(func(in *CreateTargetGroupInput) { in.Port = ptr(0) }), CodeValidation, "Value '0' at 'port' failed to satisfy constraint: Member must have value greater than or equal to 1"},
		{"no vpc", base(func(in *CreateTargetGroupInput) { in.VPCID = "" }), CodeValidation, "A VPC ID must be specified"},
		{"lambda", base(func(in *CreateTargetGroupInput) { in.TargetType = "lambda" }), CodeValidation, "not supported by the crossfade sandbox"},
		{"interval 4", base(func(in *CreateTargetGroupInput) { in.HealthCheck.IntervalSeconds = ptr(4) }), CodeValidation, "at 'healthCheckIntervalSeconds' failed to satisfy constraint: Member must have value greater than or equal to 5"},
		{"timeout 121", base(func(in *CreateTargetGroupInput) { in.HealthCheck.TimeoutSeconds = ptr(121) }), CodeValidation, "at 'healthCheckTimeoutSeconds'"},
		{"threshold 11", base(func(in *CreateTargetGroupInput) { in.HealthCheck.HealthyThreshold = ptr(11) }), CodeValidation, "at 'healthyThresholdCount'"},
		{"timeout not below interval", base(func(in *CreateTargetGroupInput) {
			in.HealthCheck.IntervalSeconds, in.HealthCheck.TimeoutSeconds = ptr(10), ptr(10)
		}), CodeValidation, "Health check interval must be greater than the timeout."},
		{"matcher 500", base(func(in *CreateTargetGroupInput) { in.HealthCheck.Matcher = ptr("200,500") }), CodeValidation, "Health check matcher HTTP code '500' must be within '200-499' code range."},
		{"path without slash", base(func(in *CreateTargetGroupInput) { in.HealthCheck.Path = ptr("healthz") }), CodeValidation, "must begin with a '/'"},
		{"health checks off", base(func(in *CreateTargetGroupInput) { in.HealthCheck.Enabled = ptr(false) }), CodeValidation, "cannot be disabled"},
		{"same name, other port", base(func(in *CreateTargetGroupInput) { in.Name, in.Port = "taken", ptr(81) }), CodeDuplicateTargetGroupName, "A target group with the same name 'taken' exists, but with different settings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.CreateTargetGroup(tc.in)
			wantErr(t, err, tc.code, tc.want)
		})
	}
	tg := must(s.CreateTargetGroup(base(func(in *CreateTargetGroupInput) {
		in.HealthCheck = HealthCheckInput{Path: ptr("/healthz"), IntervalSeconds: ptr(5), TimeoutSeconds: ptr(2), HealthyThreshold: ptr(2), Matcher: ptr("200-299")}
	})))(t)
	want := HealthCheck{Enabled: true, Protocol: "HTTP", Port: "traffic-port", Path: "/healthz", IntervalSeconds: 5, TimeoutSeconds: 2, HealthyThreshold: 2, UnhealthyThreshold: 2, Matcher: "200-299"}
	if tg.HealthCheck != want {
		t.Errorf("health check %+v, want %+v", tg.HealthCheck, want)
	}
	if tg.DeregistrationDelay().Seconds() != 300 || tg.Stickiness().Enabled {
		t.Errorf("defaults: delay %v stickiness %+v", tg.DeregistrationDelay(), tg.Stickiness())
	}
}

func TestTargetGroupAttributes(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name       string
		set        []Attribute
		code, want string
	}{
		{"unknown key", []Attribute{{"no.such", "1"}}, CodeValidation, "Target group attribute key 'no.such' is not recognized"},
		{"an NLB attribute", []Attribute{{"proxy_protocol_v2.enabled", "true"}}, CodeInvalidConfigurationRequest, "The provided target group attribute is not supported"},
		{"source_ip stickiness", []Attribute{{AttrStickinessType, "source_ip"}}, CodeInvalidConfigurationRequest, "The provided target group attribute is not supported"},
		{"delay above an hour", []Attribute{{AttrDeregistrationDelay, "3601"}}, CodeValidation, "an integer from 0 to 3600"},
		{"stickiness yes", []Attribute{{AttrStickinessEnabled, "yes"}}, CodeValidation, "true or false"},
		{"cookie a week and a second", []Attribute{{AttrLBCookieDuration, "604801"}}, CodeValidation, "from 1 to 604800"},
		{"nothing", nil, CodeValidation, "Value null at 'attributes'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.s.ModifyTargetGroupAttributes("", f.blue, tc.set)
			wantErr(t, err, tc.code, tc.want)
		})
	}
	attrs := must(f.s.ModifyTargetGroupAttributes("", f.blue, []Attribute{{AttrDeregistrationDelay, "5"}, {AttrStickinessEnabled, "true"}, {AttrLBCookieDuration, "60"}}))(t)
	if len(attrs) != len(attributeSpecs) {
		t.Errorf("modify returned %d attributes, want all %d", len(attrs), len(attributeSpecs))
	}
	tg, _ := f.s.Snapshot().TargetGroup(f.blue)
	if st := tg.Stickiness(); tg.DeregistrationDelay().Seconds() != 5 || !st.Enabled || st.Duration.Seconds() != 60 || st.Type != "lb_cookie" {
		t.Errorf("after modify: delay %v stickiness %+v", tg.DeregistrationDelay(), tg.Stickiness())
	}
}

func TestActionErrors(t *testing.T) {
	f := newFixture(t)
	other := must(f.s.CreateLoadBalancer(CreateLoadBalancerInput{Name: "other", Subnets: []string{"subnet-a", "subnet-b"}}))(t)
	six := []any{}
	for i := range 6 {
		six = append(six, f.tg(t, "g"+string(rune('a'+i))), 1)
	}
	missingTG := strings.Replace(f.blue, "/blue/", "/gone/", 1)
	for _, tc := range []struct {
		name       string
		lb         string // the load balancer the listener is on; "" the fixture's
		actions    []ActionInput
		code, want string
	}{
		{"weight 1000", "", weighted(f.blue, 1000, f.green, 0), CodeValidation, "The weight for each target group must be between 0 and 999, inclusive"},
		{"weight -1", "", weighted(f.blue, -1), CodeValidation, "between 0 and 999"},
		{"two groups, a weight missing", "", []ActionInput{{Type: ActionForward, Forward: &ForwardInput{TargetGroups: []WeightInput{{TargetGroupARN: f.blue, Weight: ptr(1)}, {TargetGroupARN: f.green}}}}},
			CodeValidation, "The weight for each target group must be between 0 and 999, inclusive"},
		{"six groups", "", weighted(six...), CodeTooManyTargetGroups, "at most 5 target groups"},
		{"same group twice", "", weighted(f.blue, 1, f.blue, 2), CodeValidation, "more than once"},
		{"unknown group", "", weighted(missingTG, 1), CodeTargetGroupNotFound, "Target groups '" + missingTG + "' not found"},
		{"not an ARN", "", weighted("blue", 1), CodeValidation, "'blue' is not a valid target group ARN"},
		{"group of another load balancer", other.ARN, weighted(f.blue, 1), CodeTargetGroupAssociationLimit, "The following target groups cannot be associated with more than one load balancer: " + f.blue},
		{"stickiness 0 s", "", []ActionInput{{Type: ActionForward, Forward: &ForwardInput{TargetGroups: []WeightInput{{TargetGroupARN: f.blue}},
			Stickiness: &StickinessInput{Enabled: ptr(false), DurationSeconds: ptr(0)}}}}, CodeValidation, "Target group stickiness duration must be between 1 and 604800 seconds"},
		{"stickiness over a week", "", []ActionInput{{Type: ActionForward, Forward: &ForwardInput{TargetGroups: []WeightInput{{TargetGroupARN: f.blue}},
			Stickiness: &StickinessInput{Enabled: ptr(true), DurationSeconds: ptr(604801)}}}}, CodeValidation, "between 1 and 604800 seconds"},
		{"stickiness on without duration", "", []ActionInput{{Type: ActionForward, Forward: &ForwardInput{TargetGroups: []WeightInput{{TargetGroupARN: f.blue}},
			Stickiness: &StickinessInput{Enabled: ptr(true)}}}}, CodeValidation, "between 1 and 604800 seconds"},
		{"ARN and config disagree", "", []ActionInput{{Type: ActionForward, TargetGroupARN: f.blue, Forward: &ForwardInput{TargetGroups: []WeightInput{{TargetGroupARN: f.green}}}}},
			CodeValidation, "different target groups"},
		{"forward to nothing", "", []ActionInput{{Type: ActionForward}}, CodeValidation, "A target group ARN must be specified"},
		{"no type", "", []ActionInput{{TargetGroupARN: f.blue}}, CodeValidation, "Value null at 'actions.1.member.type'"},
		{"bad type", "", []ActionInput{{Type: "drop"}}, CodeValidation, "Value 'drop' at 'actions.1.member.type' failed to satisfy constraint"},
		{"oidc", "", []ActionInput{{Type: "authenticate-oidc"}}, CodeValidation, "not supported by the crossfade sandbox"},
		{"two terminal actions", "", append(weighted(f.blue, 1), ActionInput{Type: ActionFixedResponse, FixedResponse: &FixedResponse{StatusCode: "404"}}),
			CodeInvalidLoadBalancerAction, "Only one forward, redirect or fixed-response action"},
		{"fixed 302", "", []ActionInput{{Type: ActionFixedResponse, FixedResponse: &FixedResponse{StatusCode: "302"}}}, CodeValidation, `regular expression pattern: ^(2|4|5)\d\d$`},
		{"fixed xml", "", []ActionInput{{Type: ActionFixedResponse, FixedResponse: &FixedResponse{StatusCode: "200", ContentType: "text/xml"}}}, CodeValidation, "Content type 'text/xml'"},
		{"redirect loop", "", []ActionInput{{Type: ActionRedirect, Redirect: &RedirectConfig{StatusCode: "HTTP_301"}}}, CodeInvalidLoadBalancerAction, "creates a loop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lb := f.lb.ARN
			if tc.lb != "" {
				lb = tc.lb
			}
			_, err := f.s.CreateListener(CreateListenerInput{LoadBalancerARN: lb, Port: ptr(8443), DefaultActions: tc.actions})
			wantErr(t, err, tc.code, strings.Replace(tc.want, "actions.", "defaultActions.", 1))
			if tc.lb == "" {
				_, err = f.s.CreateRule(CreateRuleInput{ListenerARN: f.listener, Priority: ptr(7), Conditions: hostIs("x.example.com"), Actions: tc.actions})
				wantErr(t, err, tc.code, tc.want)
			}
		})
	}
	if n := len(f.s.Snapshot().Rules); n != 1 {
		t.Fatalf("refused actions left %d rules, want the default one", n)
	}
}

func TestConditionErrors(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name  string
		conds []ConditionInput
		want  string
	}{
		{"none", []ConditionInput{}, "A rule must have at least one condition"},
		{"no field", []ConditionInput{{Values: []string{"a"}}}, "Value null at 'conditions.1.member.field'"},
		{"http-header", []ConditionInput{{Field: "http-header"}}, "not supported by the crossfade sandbox: condition field 'http-header'"},
		{"regex", []ConditionInput{{Field: FieldHostHeader, Unsupported: "RegexValues"}}, "not supported by the crossfade sandbox: condition member RegexValues"},
		{"values and config", []ConditionInput{{Field: FieldHostHeader, Values: []string{"a"}, HostHeaderConfig: []string{"b"}}}, "both 'Values' and 'HostHeaderConfig'"},
		{"path config on host field", []ConditionInput{{Field: FieldHostHeader, PathPatternConfig: []string{"/a"}}}, "'PathPatternConfig' for a condition whose field is 'host-header'"},
		{"no value", []ConditionInput{{Field: FieldPathPattern, PathPatternConfig: []string{}}}, "at least one value"},
		{"long value", []ConditionInput{{Field: FieldPathPattern, Values: []string{"/" + strings.Repeat("a", 128)}}}, "between 1 and 128 characters"},
		{"two host conditions", []ConditionInput{{Field: FieldHostHeader, Values: []string{"a"}}, {Field: FieldHostHeader, Values: []string{"b"}}}, "A rule can only have one 'host-header' condition"},
		{"six values", []ConditionInput{{Field: FieldHostHeader, HostHeaderConfig: []string{"a", "b", "c"}}, {Field: FieldPathPattern, Values: []string{"/1", "/2", "/3"}}}, "A rule can only have '5' condition values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.s.CreateRule(CreateRuleInput{ListenerARN: f.listener, Priority: ptr(1), Conditions: tc.conds, Actions: weighted(f.blue, 1)})
			wantErr(t, err, CodeValidation, tc.want)
		})
	}
}

func TestListenerErrors(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name       string
		in         CreateListenerInput
		code, want string
	}{
		{"tcp", CreateListenerInput{Protocol: "TCP", Port: ptr(81)}, CodeValidation, "Listener protocol 'TCP' must be one of 'HTTPS, HTTP'"},
		{"https without certificate", CreateListenerInput{Protocol: "HTTPS", Port: ptr(443)}, CodeValidation, "A certificate must be specified for HTTPS listeners"},
		{"no port", CreateListenerInput{}, CodeValidation, "A listener port must be specified"},
		{"port 80 taken", CreateListenerInput{Port: ptr(80), DefaultActions: weighted(f.blue, 1)}, CodeDuplicateListener, "A listener already exists on this port for this load balancer '" + f.lb.ARN + "'"},
		{"unknown load balancer", CreateListenerInput{LoadBalancerARN: strings.Replace(f.lb.ARN, "/alb/", "/nope/", 1), Port: ptr(81)}, CodeLoadBalancerNotFound, "One or more load balancers not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.in.LoadBalancerARN == "" {
				tc.in.LoadBalancerARN = f.lb.ARN
			}
			if tc.in.DefaultActions == nil {
				tc.in.DefaultActions = weighted(f.spare, 1)
			}
			_, err := f.s.CreateListener(tc.in)
			wantErr(t, err, tc.code, tc.want)
		})
	}
	// The same settings again: the existing listener.
	l := must(f.s.CreateListener(CreateListenerInput{LoadBalancerARN: f.lb.ARN, Port: ptr(80), DefaultActions: weighted(f.blue, 99, f.green, 1)}))(t)
	if l.ARN != f.listener {
		t.Errorf("identical CreateListener gave %s, want %s", l.ARN, f.listener)
	}
	https := must(f.s.CreateListener(CreateListenerInput{LoadBalancerARN: f.lb.ARN, Protocol: "HTTPS", Port: ptr(443),
		Certificates: []string{"arn:aws:acm:us-east-1:123456789012:certificate/x"}, DefaultActions: weighted(f.blue, 1)}))(t)
	if https.SSLPolicy != DefaultSSLPolicy {
		t.Errorf("HTTPS listener policy %q", https.SSLPolicy)
	}
	_, err := f.s.ModifyListener(ModifyListenerInput{ARN: https.ARN, Port: ptr(80)})
	wantErr(t, err, CodeValidation, "Listener port '80' is already in use")
	_, _, err = f.s.DescribeListeners(DescribeListenersInput{})
	wantErr(t, err, CodeValidation, "You must specify either listener ARNs or a load balancer ARN")
	_, _, err = f.s.DescribeListeners(DescribeListenersInput{ARNs: []string{https.ARN + "0"}})
	wantErr(t, err, CodeListenerNotFound, "One or more listeners not found")
}

func TestRegisterTargetErrors(t *testing.T) {
	f := newFixture(t)
	inst := must(f.s.CreateTargetGroup(CreateTargetGroupInput{Name: "inst", Protocol: "HTTP", Port: ptr(80), VPCID: "vpc-1"}))(t)
	for _, tc := range []struct {
		name, tg   string
		targets    []TargetInput
		code, want string
	}{
		{"not an IP", f.blue, []TargetInput{{ID: "web-1"}}, CodeValidation, "The IP address 'web-1' is not a valid IPv4 address"},
		{"IPv6 in an IPv4 group", f.blue, []TargetInput{{ID: "::1"}}, CodeValidation, "not a valid IPv4 address"},
		{"instance id", inst.ARN, []TargetInput{{ID: "i-0123456789abcdef0"}}, CodeInvalidTarget, "has no EC2 instances"},
		{"neither", inst.ARN, []TargetInput{{ID: "web-1"}}, CodeValidation, "Instance ID 'web-1' is not valid"},
		{"port 0", f.blue, []TargetInput{{ID: "127.0.0.1", Port: ptr(0)}}, CodeValidation, "at 'targets.1.member.port'"},
		{"no id", f.blue, []TargetInput{{}}, CodeValidation, "Value null at 'targets.1.member.id'"},
		{"unknown group", strings.Replace(f.blue, "/blue/", "/gone/", 1), []TargetInput{{ID: "127.0.0.1"}}, CodeTargetGroupNotFound, "One or more target groups not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, f.s.RegisterTargets("", tc.tg, tc.targets), tc.code, tc.want)
		})
	}
	// An instance group takes IP addresses: the sandbox's stand-in for instances.
	if err := f.s.RegisterTargets("", inst.ARN, []TargetInput{{ID: "127.0.0.9"}}); err != nil {
		t.Fatal(err)
	}
}
