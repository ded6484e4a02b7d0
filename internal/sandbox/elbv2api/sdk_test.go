package elbv2api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/smithy-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/sandbox/elb"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
)

type fixture struct {
	api    *API
	store  *elb.Store
	faults *faults.Injector
	srv    *httptest.Server
	client *elbv2.Client
}

// newFixture serves the API on loopback and points the real SDK client at it.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	store, err := elb.Open(elb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	inj, _ := faults.New(faults.Config{})
	api, err := New(Config{Store: store, Faults: inj, Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &fixture{api: api, store: store, faults: inj, srv: srv, client: clientFor(srv.URL, "us-east-1")}
}

func clientFor(endpoint, region string) *elbv2.Client {
	return elbv2.New(elbv2.Options{
		Region:       region,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer:      retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = 5 * time.Millisecond }),
	})
}

func forward(pairs ...any) []types.Action {
	fc := &types.ForwardActionConfig{}
	for i := 0; i < len(pairs); i += 2 {
		fc.TargetGroups = append(fc.TargetGroups, types.TargetGroupTuple{TargetGroupArn: aws.String(pairs[i].(string)), Weight: aws.Int32(int32(pairs[i+1].(int)))})
	}
	return []types.Action{{Type: types.ActionTypeEnumForward, ForwardConfig: fc}}
}

func weightsOf(a types.Action) map[string]int32 {
	out := map[string]int32{}
	for _, g := range a.ForwardConfig.TargetGroups {
		out[*g.TargetGroupArn] = *g.Weight
	}
	return out
}

// env is a load balancer with two target groups and a listener forwarding 99/1.
type env struct {
	lb, blue, green, listener string
}

func (f *fixture) build(t *testing.T, ctx context.Context) env {
	t.Helper()
	lb, err := f.client.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("web"), Subnets: []string{"subnet-1", "subnet-2"},
		Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("web")}}})
	if err != nil {
		t.Fatal(err)
	}
	var e env
	e.lb = *lb.LoadBalancers[0].LoadBalancerArn
	for _, name := range []string{"blue", "green"} {
		out, err := f.client.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{
			Name: aws.String(name), Protocol: types.ProtocolEnumHttp, Port: aws.Int32(8080), VpcId: aws.String("vpc-1"),
			TargetType: types.TargetTypeEnumIp, HealthCheckPath: aws.String("/healthz"), HealthCheckIntervalSeconds: aws.Int32(5),
			HealthCheckTimeoutSeconds: aws.Int32(2), HealthyThresholdCount: aws.Int32(2), Matcher: &types.Matcher{HttpCode: aws.String("200-299")},
		})
		if err != nil {
			t.Fatal(err)
		}
		if name == "blue" {
			e.blue = *out.TargetGroups[0].TargetGroupArn
		} else {
			e.green = *out.TargetGroups[0].TargetGroupArn
		}
	}
	actions := forward(e.blue, 99, e.green, 1)
	actions[0].ForwardConfig.TargetGroupStickinessConfig = &types.TargetGroupStickinessConfig{Enabled: aws.Bool(true), DurationSeconds: aws.Int32(300)}
	l, err := f.client.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: aws.String(e.lb), Protocol: types.ProtocolEnumHttp,
		Port: aws.Int32(80), DefaultActions: actions})
	if err != nil {
		t.Fatal(err)
	}
	e.listener = *l.Listeners[0].ListenerArn
	return e
}

// TestSDKEveryOperation drives each served operation through aws-sdk-go-v2 and checks what
// the SDK decodes.
func TestSDKEveryOperation(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	e := f.build(t, ctx)

	lbs, err := f.client.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{Names: []string{"web"}})
	if err != nil {
		t.Fatal(err)
	}
	lb := lbs.LoadBalancers[0]
	if *lb.LoadBalancerArn != e.lb || lb.Type != types.LoadBalancerTypeEnumApplication || lb.State.Code != types.LoadBalancerStateEnumActive ||
		*lb.CanonicalHostedZoneId != "Z35SXDOTRQ7X7K" || !strings.HasSuffix(*lb.DNSName, ".us-east-1.elb.amazonaws.com") ||
		len(lb.AvailabilityZones) != 2 || *lb.AvailabilityZones[1].ZoneName != "us-east-1b" || lb.CreatedTime == nil || time.Since(*lb.CreatedTime) > time.Minute {
		t.Errorf("load balancer %+v", lb)
	}

	tgs, err := f.client.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{LoadBalancerArn: aws.String(e.lb)})
	if err != nil {
		t.Fatal(err)
	}
	if len(tgs.TargetGroups) != 2 {
		t.Fatalf("target groups of the load balancer: %d", len(tgs.TargetGroups))
	}
	tg := tgs.TargetGroups[0]
	if *tg.HealthCheckPath != "/healthz" || *tg.HealthCheckIntervalSeconds != 5 || *tg.Matcher.HttpCode != "200-299" || tg.LoadBalancerArns[0] != e.lb || tg.TargetType != types.TargetTypeEnumIp {
		t.Errorf("target group %+v", tg)
	}
	mod, err := f.client.ModifyTargetGroup(ctx, &elbv2.ModifyTargetGroupInput{TargetGroupArn: aws.String(e.blue), HealthCheckPath: aws.String("/ready"), UnhealthyThresholdCount: aws.Int32(3)})
	if err != nil || *mod.TargetGroups[0].HealthCheckPath != "/ready" || *mod.TargetGroups[0].UnhealthyThresholdCount != 3 {
		t.Errorf("ModifyTargetGroup: %v %+v", err, mod)
	}
	attrs, err := f.client.ModifyTargetGroupAttributes(ctx, &elbv2.ModifyTargetGroupAttributesInput{TargetGroupArn: aws.String(e.blue),
		Attributes: []types.TargetGroupAttribute{{Key: aws.String("deregistration_delay.timeout_seconds"), Value: aws.String("0")}}})
	if err != nil || len(attrs.Attributes) < 10 {
		t.Fatalf("ModifyTargetGroupAttributes: %v %+v", err, attrs)
	}
	got, err := f.client.DescribeTargetGroupAttributes(ctx, &elbv2.DescribeTargetGroupAttributesInput{TargetGroupArn: aws.String(e.blue)})
	if err != nil || *got.Attributes[0].Key != "deregistration_delay.timeout_seconds" || *got.Attributes[0].Value != "0" {
		t.Errorf("DescribeTargetGroupAttributes: %v %+v", err, got)
	}

	// Listener: weights and group stickiness, then a weight change.
	ls, err := f.client.DescribeListeners(ctx, &elbv2.DescribeListenersInput{LoadBalancerArn: aws.String(e.lb)})
	if err != nil {
		t.Fatal(err)
	}
	def := ls.Listeners[0].DefaultActions[0]
	if w := weightsOf(def); w[e.blue] != 99 || w[e.green] != 1 || !*def.ForwardConfig.TargetGroupStickinessConfig.Enabled || *def.ForwardConfig.TargetGroupStickinessConfig.DurationSeconds != 300 {
		t.Errorf("listener default action %+v", def)
	}
	ml, err := f.client.ModifyListener(ctx, &elbv2.ModifyListenerInput{ListenerArn: aws.String(e.listener), DefaultActions: forward(e.blue, 50, e.green, 50)})
	if err != nil || weightsOf(ml.Listeners[0].DefaultActions[0])[e.green] != 50 {
		t.Errorf("ModifyListener: %v", err)
	}

	// Rules: host-header in both forms, path-pattern, legacy TargetGroupArn.
	r1, err := f.client.CreateRule(ctx, &elbv2.CreateRuleInput{ListenerArn: aws.String(e.listener), Priority: aws.Int32(10),
		Conditions: []types.RuleCondition{{Field: aws.String("host-header"), HostHeaderConfig: &types.HostHeaderConditionConfig{Values: []string{"app.example.com", "*.app.example.com"}}}},
		Actions:    forward(e.blue, 99, e.green, 1), Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := f.client.CreateRule(ctx, &elbv2.CreateRuleInput{ListenerArn: aws.String(e.listener), Priority: aws.Int32(20),
		Conditions: []types.RuleCondition{{Field: aws.String("path-pattern"), Values: []string{"/api/*"}}},
		Actions:    []types.Action{{Type: types.ActionTypeEnumForward, TargetGroupArn: aws.String(e.green)}}})
	if err != nil {
		t.Fatal(err)
	}
	a2 := r2.Rules[0].Actions[0]
	if *a2.TargetGroupArn != e.green || *a2.ForwardConfig.TargetGroups[0].Weight != 1 || *a2.ForwardConfig.TargetGroupStickinessConfig.Enabled {
		t.Errorf("legacy forward described as %+v", a2)
	}
	if c := r2.Rules[0].Conditions[0]; c.Values[0] != "/api/*" || c.PathPatternConfig.Values[0] != "/api/*" {
		t.Errorf("path condition described as %+v", c)
	}
	rule1 := *r1.Rules[0].RuleArn
	mr, err := f.client.ModifyRule(ctx, &elbv2.ModifyRuleInput{RuleArn: aws.String(rule1), Actions: forward(e.blue, 0, e.green, 999)})
	if err != nil || weightsOf(mr.Rules[0].Actions[0])[e.green] != 999 || mr.Rules[0].Conditions[0].HostHeaderConfig.Values[1] != "*.app.example.com" {
		t.Errorf("ModifyRule: %v %+v", err, mr)
	}
	sp, err := f.client.SetRulePriorities(ctx, &elbv2.SetRulePrioritiesInput{RulePriorities: []types.RulePriorityPair{
		{RuleArn: aws.String(rule1), Priority: aws.Int32(20)}, {RuleArn: r2.Rules[0].RuleArn, Priority: aws.Int32(10)}}})
	if err != nil || *sp.Rules[0].Priority != "20" {
		t.Errorf("SetRulePriorities: %v", err)
	}
	rules, err := f.client.DescribeRules(ctx, &elbv2.DescribeRulesInput{ListenerArn: aws.String(e.listener)})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range rules.Rules {
		order = append(order, *r.Priority)
	}
	if strings.Join(order, ",") != "10,20,default" || !*rules.Rules[2].IsDefault || len(rules.Rules[2].Conditions) != 0 {
		t.Errorf("rules %v", order)
	}

	// Targets.
	if _, err := f.client.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: aws.String(e.blue),
		Targets: []types.TargetDescription{{Id: aws.String("127.0.0.1"), Port: aws.Int32(9001)}, {Id: aws.String("127.0.0.2")}}}); err != nil {
		t.Fatal(err)
	}
	th, err := f.client.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(e.blue)})
	if err != nil || len(th.TargetHealthDescriptions) != 2 {
		t.Fatalf("DescribeTargetHealth: %v %+v", err, th)
	}
	if d := th.TargetHealthDescriptions[1]; *d.Target.Port != 8080 || d.TargetHealth.State != types.TargetHealthStateEnumInitial || d.TargetHealth.Reason != types.TargetHealthReasonEnumRegistrationInProgress || *d.HealthCheckPort != "8080" {
		t.Errorf("health %+v %+v", d.Target, d.TargetHealth)
	}
	if _, err := f.client.DeregisterTargets(ctx, &elbv2.DeregisterTargetsInput{TargetGroupArn: aws.String(e.blue),
		Targets: []types.TargetDescription{{Id: aws.String("127.0.0.1"), Port: aws.Int32(9001)}}}); err != nil {
		t.Fatal(err)
	}
	th, _ = f.client.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(e.blue)})
	if len(th.TargetHealthDescriptions) != 1 {
		t.Errorf("with a 0 s deregistration delay the target goes at once: %d left", len(th.TargetHealthDescriptions))
	}

	// Tags: one resource per AddTags and RemoveTags, as ELBv2 takes them.
	for _, arn := range []string{e.lb, e.blue, e.listener, rule1} {
		if _, err := f.client.AddTags(ctx, &elbv2.AddTagsInput{ResourceArns: []string{arn},
			Tags: []types.Tag{{Key: aws.String("env"), Value: aws.String("test")}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.client.RemoveTags(ctx, &elbv2.RemoveTagsInput{ResourceArns: []string{e.lb}, TagKeys: []string{"team"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := f.client.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: []string{e.lb, rule1}})
	if err != nil || len(tags.TagDescriptions[0].Tags) != 1 || len(tags.TagDescriptions[1].Tags) != 2 || *tags.TagDescriptions[1].Tags[0].Key != "k" {
		t.Errorf("DescribeTags: %v %+v", err, tags)
	}
	// A listener's default rule is a rule of its own, tagged as one (the ALB lever keeps a
	// listener's authority tag there), and ModifyListener leaves its tags alone.
	listed, err := f.client.DescribeRules(ctx, &elbv2.DescribeRulesInput{ListenerArn: aws.String(e.listener)})
	if err != nil {
		t.Fatal(err)
	}
	var dflt string
	for _, r := range listed.Rules {
		if aws.ToBool(r.IsDefault) {
			dflt = aws.ToString(r.RuleArn)
		}
	}
	key := "crossfade.io/cutover/shop/0a1b2c3d4e5f6a7b"
	if _, err := f.client.AddTags(ctx, &elbv2.AddTagsInput{ResourceArns: []string{dflt}, Tags: []types.Tag{{Key: aws.String(key), Value: aws.String("0a1b2c3d4e5f6a7b@laptop:42")}}}); err != nil {
		t.Fatalf("AddTags on the default rule: %v", err)
	}
	if _, err := f.client.ModifyListener(ctx, &elbv2.ModifyListenerInput{ListenerArn: aws.String(e.listener), DefaultActions: forward(e.blue, 1, e.green, 1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.ModifyRule(ctx, &elbv2.ModifyRuleInput{RuleArn: aws.String(rule1), Actions: forward(e.blue, 1, e.green, 1)}); err != nil {
		t.Fatal(err)
	}
	tags, err = f.client.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: []string{dflt, rule1}})
	if err != nil || len(tags.TagDescriptions[0].Tags) != 1 || aws.ToString(tags.TagDescriptions[0].Tags[0].Key) != key || len(tags.TagDescriptions[1].Tags) != 2 {
		t.Errorf("tags after ModifyListener and ModifyRule: %v %+v", err, tags)
	}

	// Deletes.
	if _, err := f.client.DeleteRule(ctx, &elbv2.DeleteRuleInput{RuleArn: aws.String(rule1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.DeleteListener(ctx, &elbv2.DeleteListenerInput{ListenerArn: aws.String(e.listener)}); err != nil {
		t.Fatal(err)
	}
	for _, tg := range []string{e.blue, e.green} {
		if _, err := f.client.DeleteTargetGroup(ctx, &elbv2.DeleteTargetGroupInput{TargetGroupArn: aws.String(tg)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.client.DeleteLoadBalancer(ctx, &elbv2.DeleteLoadBalancerInput{LoadBalancerArn: aws.String(e.lb)}); err != nil {
		t.Fatal(err)
	}
	snap := f.store.Snapshot()
	if len(snap.LoadBalancers)+len(snap.Listeners)+len(snap.Rules)+len(snap.TargetGroups) != 0 {
		t.Errorf("left after deleting everything: %+v", snap)
	}

	// Every operation was counted.
	for _, op := range []string{"CreateLoadBalancer", "DescribeLoadBalancers", "DeleteLoadBalancer", "CreateTargetGroup", "DescribeTargetGroups",
		"ModifyTargetGroup", "DeleteTargetGroup", "ModifyTargetGroupAttributes", "DescribeTargetGroupAttributes", "RegisterTargets",
		"DeregisterTargets", "DescribeTargetHealth", "CreateListener", "DescribeListeners", "ModifyListener", "DeleteListener",
		"CreateRule", "DescribeRules", "ModifyRule", "DeleteRule", "SetRulePriorities", "AddTags", "RemoveTags", "DescribeTags"} {
		if n := f.api.chain.Calls.Count(op, "ok"); n < 1 {
			t.Errorf("%s ok counted %v times", op, n)
		}
	}
}

// TestSDKTypedErrors checks that each ELBv2 error reaches the SDK as its typed exception
// (or, for ValidationError, which the model does not declare, as an API error with that
// code), with ELBv2's message.
func TestSDKTypedErrors(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	e := f.build(t, ctx)
	other, err := f.client.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("other"), Subnets: []string{"subnet-1", "subnet-2"}})
	if err != nil {
		t.Fatal(err)
	}
	var six []any
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		out, err := f.client.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String(n), Protocol: types.ProtocolEnumHttp, Port: aws.Int32(80), VpcId: aws.String("vpc-1")})
		if err != nil {
			t.Fatal(err)
		}
		six = append(six, *out.TargetGroups[0].TargetGroupArn, 1)
	}
	rule, err := f.client.CreateRule(ctx, &elbv2.CreateRuleInput{ListenerArn: aws.String(e.listener), Priority: aws.Int32(5),
		Conditions: []types.RuleCondition{{Field: aws.String("host-header"), Values: []string{"a.example.com"}}}, Actions: forward(e.blue, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defRules, _ := f.client.DescribeRules(ctx, &elbv2.DescribeRulesInput{ListenerArn: aws.String(e.listener)})
	defaultRule := defRules.Rules[len(defRules.Rules)-1].RuleArn
	goneTG := strings.Replace(e.blue, "/blue/", "/gone/", 1)
	hostCond := []types.RuleCondition{{Field: aws.String("host-header"), Values: []string{"b.example.com"}}}

	for _, tc := range []struct {
		name string
		call func() error
		want any // a pointer to the typed exception, or a code
		msg  string
	}{
		{"priority in use", func() error {
			_, err := f.client.CreateRule(ctx, &elbv2.CreateRuleInput{ListenerArn: aws.String(e.listener), Priority: aws.Int32(5), Conditions: hostCond, Actions: forward(e.blue, 1)})
			return err
		}, new(*types.PriorityInUseException), "Priority '5' is currently in use"},
		{"six target groups", func() error {
			_, err := f.client.ModifyListener(ctx, &elbv2.ModifyListenerInput{ListenerArn: aws.String(e.listener), DefaultActions: forward(six...)})
			return err
		}, new(*types.TooManyTargetGroupsException), "at most 5 target groups"},
		{"weight 1000", func() error {
			_, err := f.client.ModifyRule(ctx, &elbv2.ModifyRuleInput{RuleArn: rule.Rules[0].RuleArn, Actions: forward(e.blue, 1000)})
			return err
		}, "ValidationError", "The weight for each target group must be between 0 and 999, inclusive"},
		{"stickiness a week and a second", func() error {
			a := forward(e.blue, 1)
			a[0].ForwardConfig.TargetGroupStickinessConfig = &types.TargetGroupStickinessConfig{Enabled: aws.Bool(true), DurationSeconds: aws.Int32(604801)}
			_, err := f.client.ModifyRule(ctx, &elbv2.ModifyRuleInput{RuleArn: rule.Rules[0].RuleArn, Actions: a})
			return err
		}, "ValidationError", "Target group stickiness duration must be between 1 and 604800 seconds"},
		{"no conditions", func() error {
			_, err := f.client.ModifyRule(ctx, &elbv2.ModifyRuleInput{RuleArn: rule.Rules[0].RuleArn, Conditions: []types.RuleCondition{}})
			return err
		}, "ValidationError", "A rule must have at least one condition"},
		{"modify the default rule", func() error {
			_, err := f.client.ModifyRule(ctx, &elbv2.ModifyRuleInput{RuleArn: defaultRule, Actions: forward(e.blue, 1)})
			return err
		}, new(*types.OperationNotPermittedException), "cannot be modified"},
		{"unknown target group in an action", func() error {
			_, err := f.client.ModifyRule(ctx, &elbv2.ModifyRuleInput{RuleArn: rule.Rules[0].RuleArn, Actions: forward(goneTG, 1)})
			return err
		}, new(*types.TargetGroupNotFoundException), "Target groups '" + goneTG + "' not found"},
		{"group of another load balancer", func() error {
			_, err := f.client.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: other.LoadBalancers[0].LoadBalancerArn, Port: aws.Int32(80), DefaultActions: forward(e.blue, 1)})
			return err
		}, new(*types.TargetGroupAssociationLimitException), "cannot be associated with more than one load balancer"},
		{"unknown load balancer", func() error {
			_, err := f.client.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{Names: []string{"nope"}})
			return err
		}, new(*types.LoadBalancerNotFoundException), "Load balancers '[nope]' not found"},
		{"unknown listener", func() error {
			_, err := f.client.DescribeListeners(ctx, &elbv2.DescribeListenersInput{ListenerArns: []string{e.listener + "0"}})
			return err
		}, new(*types.ListenerNotFoundException), "One or more listeners not found"},
		{"unknown rule", func() error {
			_, err := f.client.DeleteRule(ctx, &elbv2.DeleteRuleInput{RuleArn: aws.String(*rule.Rules[0].RuleArn + "0")})
			return err
		}, new(*types.RuleNotFoundException), "One or more rules not found"},
		{"unknown target group", func() error {
			_, err := f.client.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{TargetGroupArns: []string{goneTG}})
			return err
		}, new(*types.TargetGroupNotFoundException), "One or more target groups not found"},
		{"duplicate load balancer name", func() error {
			_, err := f.client.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("web"), Subnets: []string{"subnet-3", "subnet-4"}})
			return err
		}, new(*types.DuplicateLoadBalancerNameException), "A load balancer with the same name 'web' exists, but with different settings"},
		{"duplicate target group name", func() error {
			_, err := f.client.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String("blue"), Protocol: types.ProtocolEnumHttp, Port: aws.Int32(81), VpcId: aws.String("vpc-1")})
			return err
		}, new(*types.DuplicateTargetGroupNameException), "A target group with the same name 'blue' exists, but with different settings"},
		{"duplicate listener", func() error {
			_, err := f.client.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: aws.String(e.lb), Port: aws.Int32(80), DefaultActions: forward(e.green, 1)})
			return err
		}, new(*types.DuplicateListenerException), "A listener already exists on this port for this load balancer"},
		{"instance id", func() error {
			_, err := f.client.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: aws.String(six[0].(string)), Targets: []types.TargetDescription{{Id: aws.String("i-0abc")}}})
			return err
		}, new(*types.InvalidTargetException), "no EC2 instances"},
		{"delete a group in use", func() error {
			_, err := f.client.DeleteTargetGroup(ctx, &elbv2.DeleteTargetGroupInput{TargetGroupArn: aws.String(e.green)})
			return err
		}, new(*types.ResourceInUseException), "is currently in use by a listener or a rule"},
		{"duplicate tag keys", func() error {
			_, err := f.client.AddTags(ctx, &elbv2.AddTagsInput{ResourceArns: []string{e.lb}, Tags: []types.Tag{{Key: aws.String("a")}, {Key: aws.String("a")}}})
			return err
		}, new(*types.DuplicateTagKeysException), "Tag key 'a' was specified more than once"},
		{"tags on two resources", func() error {
			_, err := f.client.AddTags(ctx, &elbv2.AddTagsInput{ResourceArns: []string{e.lb, e.blue}, Tags: []types.Tag{{Key: aws.String("a")}}})
			return err
		}, "ValidationError", "Only one resource can be tagged at a time"},
		{"51 tags", func() error {
			var tags []types.Tag
			for i := range 51 {
				tags = append(tags, types.Tag{Key: aws.String(fmt.Sprintf("k%d", i))})
			}
			_, err := f.client.AddTags(ctx, &elbv2.AddTagsInput{ResourceArns: []string{e.blue}, Tags: tags})
			return err
		}, new(*types.TooManyTagsException), "You've reached the limit on the number of tags for this resource"},
		{"tags of a rule that is gone", func() error {
			_, err := f.client.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: []string{aws.ToString(rule.Rules[0].RuleArn) + "0"}})
			return err
		}, new(*types.RuleNotFoundException), "One or more rules not found"},
		{"untag a rule that is gone", func() error {
			_, err := f.client.RemoveTags(ctx, &elbv2.RemoveTagsInput{ResourceArns: []string{aws.ToString(rule.Rules[0].RuleArn) + "0"}, TagKeys: []string{"a"}})
			return err
		}, new(*types.RuleNotFoundException), "One or more rules not found"},
		{"the aws: prefix", func() error {
			_, err := f.client.AddTags(ctx, &elbv2.AddTagsInput{ResourceArns: []string{e.blue}, Tags: []types.Tag{{Key: aws.String("aws:x")}}})
			return err
		}, "ValidationError", "Tag key 'aws:x' cannot start with 'aws:'"},
		{"redirect loop", func() error {
			_, err := f.client.ModifyRule(ctx, &elbv2.ModifyRuleInput{RuleArn: rule.Rules[0].RuleArn,
				Actions: []types.Action{{Type: types.ActionTypeEnumRedirect, RedirectConfig: &types.RedirectActionConfig{StatusCode: types.RedirectActionStatusCodeEnumHttp301}}}})
			return err
		}, new(*types.InvalidLoadBalancerActionException), "creates a loop"},
		{"not an ARN", func() error {
			_, err := f.client.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String("blue")})
			return err
		}, "ValidationError", "'blue' is not a valid target group ARN"},
		{"rule transforms", func() error {
			_, err := f.client.ModifyRule(ctx, &elbv2.ModifyRuleInput{RuleArn: rule.Rules[0].RuleArn, ResetTransforms: aws.Bool(true)})
			return err
		}, "ValidationError", "not supported by the crossfade sandbox: rule transforms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil {
				t.Fatal("no error")
			}
			var api smithy.APIError
			if !errors.As(err, &api) {
				t.Fatalf("error %v is not an API error", err)
			}
			switch want := tc.want.(type) {
			case string:
				if api.ErrorCode() != want {
					t.Fatalf("code %s, want %s: %v", api.ErrorCode(), want, err)
				}
			default:
				if !errors.As(err, want) {
					t.Fatalf("error %T %v, want %T", api, err, want)
				}
				// The SDK knows a modelled exception is the caller's fault: not retried.
				if api.ErrorFault() != smithy.FaultClient {
					t.Errorf("fault %v, want client", api.ErrorFault())
				}
			}
			if !strings.Contains(api.ErrorMessage(), tc.msg) {
				t.Fatalf("message %q, want it to contain %q", api.ErrorMessage(), tc.msg)
			}
		})
	}
}

func TestSDKPaginatorsAndRegions(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, n := range []string{"a", "b", "c"} {
		if _, err := f.client.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String(n), Subnets: []string{"s-1", "s-2"}}); err != nil {
			t.Fatal(err)
		}
	}
	pages := 0
	var names []string
	p := elbv2.NewDescribeLoadBalancersPaginator(f.client, &elbv2.DescribeLoadBalancersInput{PageSize: aws.Int32(1)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, lb := range out.LoadBalancers {
			names = append(names, *lb.LoadBalancerName)
		}
	}
	if pages != 3 || strings.Join(names, "") != "abc" {
		t.Errorf("%d pages: %v", pages, names)
	}

	// A client signing for another region sees only that region's load balancers, and gets
	// ARNs and DNS names of that region.
	eu := clientFor(f.srv.URL, "eu-west-1")
	out, err := eu.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("a"), Subnets: []string{"s-1", "s-2"}})
	if err != nil {
		t.Fatal(err)
	}
	lb := out.LoadBalancers[0]
	if !strings.HasPrefix(*lb.LoadBalancerArn, "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/a/") || *lb.CanonicalHostedZoneId != "Z32O12XQLNTSW2" {
		t.Errorf("eu-west-1 load balancer %s %s", *lb.LoadBalancerArn, *lb.CanonicalHostedZoneId)
	}
	all, _ := eu.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{})
	if len(all.LoadBalancers) != 1 {
		t.Errorf("eu-west-1 lists %d load balancers, want its own 1", len(all.LoadBalancers))
	}
}

// TestFaultsAndWire covers what the SDK hides: injected faults and their retries, the
// response shape, and requests no SDK would send.
func TestFaultsAndWire(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := f.faults.Set(faults.Config{ThrottleRate: 1, Operations: []string{"DescribeLoadBalancers"}}); err != nil {
		t.Fatal(err)
	}
	_, err := f.client.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{})
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "Throttling" {
		t.Fatalf("throttled call: %v", err)
	}
	if n := f.api.chain.Calls.Count("DescribeLoadBalancers", "Throttling"); n != 3 {
		t.Errorf("throttled attempts counted %v, want the SDK's 3", n)
	}
	// A write whose answer is lost took effect: the SDK's retry of CreateLoadBalancer finds
	// it and, the call being idempotent, gets it back.
	if err := f.faults.Set(faults.Config{CommitThenFailRate: 1, Operations: []string{"CreateTargetGroup"}}); err != nil {
		t.Fatal(err)
	}
	_, err = f.client.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String("x"), Protocol: types.ProtocolEnumHttp, Port: aws.Int32(80), VpcId: aws.String("vpc-1")})
	if !errors.As(err, &api) || api.ErrorCode() != "InternalFailure" {
		t.Fatalf("commit-then-fail: %v", err)
	}
	if len(f.store.Snapshot().TargetGroups) != 1 {
		t.Fatal("the lost-answer write did not take effect")
	}
	_ = f.faults.Set(faults.Config{})

	for _, tc := range []struct {
		name, body string
		status     int
		want       []string
	}{
		{"envelope", "Action=DescribeTargetGroups&Version=2015-12-01", 200, []string{
			`<DescribeTargetGroupsResponse xmlns="http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/"><DescribeTargetGroupsResult><TargetGroups><member>`,
			`</DescribeTargetGroupsResult><ResponseMetadata><RequestId>`}},
		{"empty list", "Action=DescribeLoadBalancers&Version=2015-12-01", 200, []string{"<LoadBalancers></LoadBalancers>"}},
		{"unknown action", "Action=Frobnicate&Version=2015-12-01", 400, []string{
			`<ErrorResponse xmlns="http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/"><Error><Type>Sender</Type><Code>InvalidAction</Code><Message>The action Frobnicate is not valid for this web service.</Message></Error><RequestId>`}},
		{"unserved action", "Action=SetSubnets&Version=2015-12-01", 400, []string{"<Code>InvalidAction</Code>", "not supported by the crossfade sandbox"}},
		{"missing member", "Action=CreateRule&Version=2015-12-01", 400, []string{"<Code>ValidationError</Code><Message>1 validation error detected: Value null at &#39;listenerArn&#39; failed to satisfy constraint: Member must not be null</Message>"}},
		{"not a number", "Action=DescribeTargetGroups&Version=2015-12-01&PageSize=ten", 400, []string{"<Code>ValidationError</Code><Message>1 validation error detected: Value &#39;ten&#39; at &#39;pageSize&#39; failed to satisfy constraint: Member must be an integer</Message>"}},
		{"page size out of range", "Action=DescribeTargetGroups&Version=2015-12-01&PageSize=401", 400, []string{"<Code>ValidationError</Code><Message>1 validation error detected: Value &#39;401&#39; at &#39;pageSize&#39; failed to satisfy constraint: Member must have value between 1 and 400</Message>"}},
		{"not a bool", "Action=CreateRule&Version=2015-12-01&ListenerArn=x&ResetTransforms=yes", 400, []string{"<Code>ValidationError</Code><Message>1 validation error detected: Value &#39;yes&#39; at &#39;resetTransforms&#39; failed to satisfy constraint: Member must be true or false</Message>"}},
		{"nested member", "Action=CreateListener&Version=2015-12-01&LoadBalancerArn=x&Port=80&DefaultActions.member.1.Order=first", 400, []string{"at &#39;defaultActions.1.member.order&#39;"}},
		{"other version", "Action=DescribeLoadBalancers&Version=2012-06-01", 400, []string{"serves ELBv2 version 2015-12-01 only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(f.srv.URL, "application/x-www-form-urlencoded", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || resp.Header.Get("x-amzn-RequestId") == "" {
				t.Fatalf("status %d, request id %q: %s", resp.StatusCode, resp.Header.Get("x-amzn-RequestId"), body)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(body), w) {
					t.Errorf("body lacks %s:\n%s", w, body)
				}
			}
		})
	}
}

func TestParams(t *testing.T) {
	v, _ := url.ParseQuery("Conditions=&Actions.member.2.Type=b&Actions.member.10.Type=c&Actions.member.1.Type=a&Tags.member.1.Key=k")
	p := params{v: v}
	if m := p.members("Conditions"); m == nil || len(m) != 0 {
		t.Errorf("an empty list sent as Conditions= read as %#v, want empty and not nil", m)
	}
	if m := p.members("Absent"); m != nil {
		t.Errorf("an absent list read as %#v", m)
	}
	var types []string
	for _, m := range p.members("Actions") {
		types = append(types, p.str(m+".Type"))
	}
	if strings.Join(types, "") != "abc" {
		t.Errorf("members in order %v, want by index", types)
	}
	for in, want := range map[string]string{
		"Actions.member.1.ForwardConfig.TargetGroups.member.2.Weight": "actions.1.member.forwardConfig.targetGroups.2.member.weight",
		"ListenerArn": "listenerArn",
	} {
		if got := wirePath(in); got != want {
			t.Errorf("wirePath(%s) = %s, want %s", in, got, want)
		}
	}
}
