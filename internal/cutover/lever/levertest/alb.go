package levertest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	leveralb "github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/alb/albtest"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/authority"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// ALB is an ALB on a sandbox started for the test: an HTTP listener whose default action
// forwards blue=100 green=0 and a host-header rule forwarding the same.
type ALB struct {
	// SB is the sandbox.
	SB *sandbox.Sandbox
	// API is the sandbox's ELBv2 client (the real query protocol through aws-sdk-go-v2).
	API *elbv2.Client
	// LB, Listener and Rule are the ARNs; Default is the listener's default rule.
	LB, Listener, Rule, Default string
	// Blue and Green are the target groups' ARNs.
	Blue, Green string
	// RuleName and ListenerName name the rule and the listener as the lever's messages do.
	RuleName, ListenerName string
}

// NewALB starts a sandbox and sets up the load balancer on it; it skips in -short.
func NewALB(t *testing.T) *ALB {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a sandbox; not in -short")
	}
	return ALBOn(t, sandboxtest.Start(t), nil)
}

// ALBOn sets up NewALB's load balancer on sb, its client retrying with retryer (nil: the
// SDK's default).
func ALBOn(t *testing.T, sb *sandbox.Sandbox, retryer aws.Retryer) *ALB {
	t.Helper()
	a := &ALB{SB: sb, API: elbv2.New(elbv2.Options{Region: "us-east-1", BaseEndpoint: aws.String(sb.APIURL()),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), Retryer: retryer})}
	ctx := context.Background()
	lb, err := a.API.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("shop"), Subnets: []string{"subnet-1", "subnet-2"}})
	if err != nil {
		t.Fatalf("levertest: create load balancer shop: %v", err)
	}
	a.LB = aws.ToString(lb.LoadBalancers[0].LoadBalancerArn)
	for _, g := range []struct {
		name string
		arn  *string
	}{{"blue", &a.Blue}, {"green", &a.Green}} {
		out, err := a.API.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String(g.name), Protocol: types.ProtocolEnumHttp,
			Port: aws.Int32(8080), VpcId: aws.String("vpc-1"), TargetType: types.TargetTypeEnumIp})
		if err != nil {
			t.Fatalf("levertest: create target group %s: %v", g.name, err)
		}
		*g.arn = aws.ToString(out.TargetGroups[0].TargetGroupArn)
	}
	fwd := []types.Action{albtest.Forward(&types.TargetGroupStickinessConfig{Enabled: aws.Bool(false)}, a.Blue, 100, a.Green, 0)}
	l, err := a.API.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: aws.String(a.LB), Protocol: types.ProtocolEnumHttp,
		Port: aws.Int32(80), DefaultActions: fwd})
	if err != nil {
		t.Fatalf("levertest: create listener on %s: %v", a.LB, err)
	}
	a.Listener = aws.ToString(l.Listeners[0].ListenerArn)
	r, err := a.API.CreateRule(ctx, &elbv2.CreateRuleInput{ListenerArn: aws.String(a.Listener), Priority: aws.Int32(10), Actions: fwd,
		Conditions: []types.RuleCondition{{Field: aws.String("host-header"), HostHeaderConfig: &types.HostHeaderConditionConfig{Values: []string{"shop.example.com"}}}}})
	if err != nil {
		t.Fatalf("levertest: create rule on %s: %v", a.Listener, err)
	}
	a.Rule = aws.ToString(r.Rules[0].RuleArn)
	rules, err := a.API.DescribeRules(ctx, &elbv2.DescribeRulesInput{ListenerArn: aws.String(a.Listener)})
	if err != nil {
		t.Fatalf("levertest: describe rules of %s: %v", a.Listener, err)
	}
	for _, r := range rules.Rules {
		if aws.ToBool(r.IsDefault) {
			a.Default = aws.ToString(r.RuleArn)
		}
	}
	a.RuleName, a.ListenerName = RuleName(a.Rule), RuleName(a.Listener)
	return a
}

// Plan moves the rule and the listener from blue to green in 50 and 100 % steps.
func (a *ALB) Plan(name string) *spec.Plan {
	return &spec.Plan{Name: name, ALB: &spec.ALB{ListenerRules: []string{a.Rule, a.Listener}, From: "blue", To: "green"},
		From: "blue", To: "green", Rollback: spec.PlanRollback{Mode: spec.RollbackImmediate}, OnDrift: spec.DriftPause,
		InSyncTimeout: 5 * time.Second, StepTimeout: 5 * time.Second,
		Steps: []spec.PlanStep{{Weights: spec.Weights{From: 50, To: 50}}, {Weights: spec.Weights{From: 0, To: 100}}}}
}

// Tag puts key=value on the rule arn.
func (a *ALB) Tag(t *testing.T, arn, key, value string) {
	t.Helper()
	if _, err := a.API.AddTags(context.Background(), &elbv2.AddTagsInput{ResourceArns: []string{arn}, Tags: []types.Tag{{Key: aws.String(key), Value: aws.String(value)}}}); err != nil {
		t.Fatalf("levertest: tag %s with %s: %v", arn, key, err)
	}
}

// Tags lists the tags of the rule arn.
func (a *ALB) Tags(t *testing.T, arn string) []authority.Tag {
	t.Helper()
	out, err := a.API.DescribeTags(context.Background(), &elbv2.DescribeTagsInput{ResourceArns: []string{arn}})
	if err != nil {
		t.Fatalf("levertest: tags of %s: %v", arn, err)
	}
	var got []authority.Tag
	for _, d := range out.TagDescriptions {
		for _, tg := range d.Tags {
			got = append(got, authority.Tag{Key: aws.ToString(tg.Key), Value: aws.ToString(tg.Value)})
		}
	}
	return got
}

// Untag removes keys from the rule arn.
func (a *ALB) Untag(t *testing.T, arn string, keys []string) {
	t.Helper()
	if _, err := a.API.RemoveTags(context.Background(), &elbv2.RemoveTagsInput{ResourceArns: []string{arn}, TagKeys: keys}); err != nil {
		t.Fatalf("levertest: untag %s: %v", arn, err)
	}
}

// Weights renders the rule's and the listener's forward weights: "blue=50 green=50".
func (a *ALB) Weights(t *testing.T) (rule, listener string) {
	t.Helper()
	ctx := context.Background()
	rs, err := a.API.DescribeRules(ctx, &elbv2.DescribeRulesInput{RuleArns: []string{a.Rule}})
	if err != nil {
		t.Fatalf("levertest: describe rule %s: %v", a.Rule, err)
	}
	ls, err := a.API.DescribeListeners(ctx, &elbv2.DescribeListenersInput{ListenerArns: []string{a.Listener}})
	if err != nil {
		t.Fatalf("levertest: describe listener %s: %v", a.Listener, err)
	}
	render := func(acts []types.Action) string {
		var parts []string
		for _, act := range acts {
			if act.ForwardConfig == nil {
				continue
			}
			for _, g := range act.ForwardConfig.TargetGroups {
				parts = append(parts, fmt.Sprintf("%s=%d", spec.TargetGroupName(aws.ToString(g.TargetGroupArn)), aws.ToInt32(g.Weight)))
			}
		}
		return strings.Join(parts, " ")
	}
	return render(rs.Rules[0].Actions), render(ls.Listeners[0].DefaultActions)
}

// Counted is the sandbox's client, counted in c when c is set.
func (a *ALB) Counted(c *Calls) leveralb.ELBv2 {
	if c == nil {
		return a.API
	}
	return CountingELB{Client: a.API, Calls: c}
}

// CountingELB is the real ELBv2 client with its calls counted in Calls.
type CountingELB struct {
	*elbv2.Client
	*Calls
}

// AddTags counts the call (and runs Calls.BeforeTag the first time) and sends it.
func (c CountingELB) AddTags(ctx context.Context, in *elbv2.AddTagsInput, o ...func(*elbv2.Options)) (*elbv2.AddTagsOutput, error) {
	c.onTag("AddTags")
	return c.Client.AddTags(ctx, in, o...)
}

// RemoveTags counts the call and sends it, or fails it with Calls.FailUntag.
func (c CountingELB) RemoveTags(ctx context.Context, in *elbv2.RemoveTagsInput, o ...func(*elbv2.Options)) (*elbv2.RemoveTagsOutput, error) {
	if err := c.onUntag("RemoveTags"); err != nil {
		return nil, err
	}
	return c.Client.RemoveTags(ctx, in, o...)
}

// DescribeTags counts the call (and runs Calls.BeforeVerify after a tag call) and sends it.
func (c CountingELB) DescribeTags(ctx context.Context, in *elbv2.DescribeTagsInput, o ...func(*elbv2.Options)) (*elbv2.DescribeTagsOutput, error) {
	c.onVerify("DescribeTags")
	return c.Client.DescribeTags(ctx, in, o...)
}

// ModifyRule counts the call and sends it.
func (c CountingELB) ModifyRule(ctx context.Context, in *elbv2.ModifyRuleInput, o ...func(*elbv2.Options)) (*elbv2.ModifyRuleOutput, error) {
	c.Count("ModifyRule")
	return c.Client.ModifyRule(ctx, in, o...)
}

// ModifyListener counts the call and sends it.
func (c CountingELB) ModifyListener(ctx context.Context, in *elbv2.ModifyListenerInput, o ...func(*elbv2.Options)) (*elbv2.ModifyListenerOutput, error) {
	c.Count("ModifyListener")
	return c.Client.ModifyListener(ctx, in, o...)
}

// RuleName names a rule as the ALB lever's messages do: "rule shop/9683b2d02a6cabee",
// "listener shop/0467ef3c8400ae65".
func RuleName(arn string) string {
	kind := "rule"
	if spec.IsListenerARN(arn) {
		kind = "listener"
	}
	parts := strings.Split(arn, "/")
	if len(parts) < 5 {
		return kind + " " + arn
	}
	return kind + " " + parts[2] + "/" + parts[len(parts)-1]
}
