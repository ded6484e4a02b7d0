package cutover

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	leveralb "github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/alb/albtest"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/authority"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// The ALB lever's authority tags against the sandbox's leveralb.ELBv2 API (the real query
// protocol through aws-sdk-go-v2, leveralb.ELBv2's tag limits and errors). The protocol's tests are
// authority_tags_test.go's, run for this lever through albTagLever; here are the lever's
// sandbox, its API double, its words, and what only leveralb.ELBv2 asks of it.

// sandboxALB is an ALB on a sandbox started for the test: an HTTP listener whose default
// action forwards blue=100 green=0 and a host-header rule forwarding the same.
type sandboxALB struct {
	api                      *elbv2.Client
	lb, listener, rule, dflt string // dflt: the listener's default rule
	blue, green              string
	ruleName, listenerName   string
}

func newSandboxALB(t *testing.T) *sandboxALB {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a sandbox; not in -short")
	}
	return albOn(t, sandboxtest.Start(t), nil)
}

// albOn sets up newSandboxALB's load balancer on sb, its client retrying with retryer (nil:
// the SDK's default).
func albOn(t *testing.T, sb *sandbox.Sandbox, retryer aws.Retryer) *sandboxALB {
	t.Helper()
	a := &sandboxALB{api: elbv2.New(elbv2.Options{Region: "us-east-1", BaseEndpoint: aws.String(sb.APIURL()),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), Retryer: retryer})}
	ctx := context.Background()
	lb, err := a.api.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("shop"), Subnets: []string{"subnet-1", "subnet-2"}})
	if err != nil {
		t.Fatal(err)
	}
	a.lb = aws.ToString(lb.LoadBalancers[0].LoadBalancerArn)
	for _, g := range []*string{&a.blue, &a.green} {
		name := map[*string]string{&a.blue: "blue", &a.green: "green"}[g]
		out, err := a.api.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String(name), Protocol: types.ProtocolEnumHttp,
			Port: aws.Int32(8080), VpcId: aws.String("vpc-1"), TargetType: types.TargetTypeEnumIp})
		if err != nil {
			t.Fatal(err)
		}
		*g = aws.ToString(out.TargetGroups[0].TargetGroupArn)
	}
	fwd := []types.Action{albtest.Forward(&types.TargetGroupStickinessConfig{Enabled: aws.Bool(false)}, a.blue, 100, a.green, 0)}
	l, err := a.api.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: aws.String(a.lb), Protocol: types.ProtocolEnumHttp,
		Port: aws.Int32(80), DefaultActions: fwd})
	if err != nil {
		t.Fatal(err)
	}
	a.listener = aws.ToString(l.Listeners[0].ListenerArn)
	r, err := a.api.CreateRule(ctx, &elbv2.CreateRuleInput{ListenerArn: aws.String(a.listener), Priority: aws.Int32(10), Actions: fwd,
		Conditions: []types.RuleCondition{{Field: aws.String("host-header"), HostHeaderConfig: &types.HostHeaderConditionConfig{Values: []string{"shop.example.com"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	a.rule = aws.ToString(r.Rules[0].RuleArn)
	rules, err := a.api.DescribeRules(ctx, &elbv2.DescribeRulesInput{ListenerArn: aws.String(a.listener)})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules.Rules {
		if aws.ToBool(r.IsDefault) {
			a.dflt = aws.ToString(r.RuleArn)
		}
	}
	a.ruleName, a.listenerName = ruleName(a.rule), ruleName(a.listener)
	return a
}

// plan moves the rule and the listener from blue to green in 50 and 100 % steps.
func (a *sandboxALB) plan(name string) *spec.Plan {
	return &spec.Plan{Name: name, ALB: &spec.ALB{ListenerRules: []string{a.rule, a.listener}, From: "blue", To: "green"},
		From: "blue", To: "green", Rollback: spec.PlanRollback{Mode: spec.RollbackImmediate}, OnDrift: spec.DriftPause,
		InSyncTimeout: 5 * time.Second, StepTimeout: 5 * time.Second,
		Steps: []spec.PlanStep{{Weights: spec.Weights{From: 50, To: 50}}, {Weights: spec.Weights{From: 0, To: 100}}}}
}

// tag puts key=value on the tag rule arn.
func (a *sandboxALB) tag(t *testing.T, arn, key, value string) {
	t.Helper()
	if _, err := a.api.AddTags(context.Background(), &elbv2.AddTagsInput{ResourceArns: []string{arn}, Tags: []types.Tag{{Key: aws.String(key), Value: aws.String(value)}}}); err != nil {
		t.Fatal(err)
	}
}

// tags lists the tags of the rule arn.
func (a *sandboxALB) tags(t *testing.T, arn string) []authority.Tag {
	t.Helper()
	out, err := a.api.DescribeTags(context.Background(), &elbv2.DescribeTagsInput{ResourceArns: []string{arn}})
	if err != nil {
		t.Fatal(err)
	}
	var got []authority.Tag
	for _, d := range out.TagDescriptions {
		for _, tg := range d.Tags {
			got = append(got, authority.Tag{Key: aws.ToString(tg.Key), Value: aws.ToString(tg.Value)})
		}
	}
	return got
}

// untag removes keys from the rule arn.
func (a *sandboxALB) untag(t *testing.T, arn string, keys []string) {
	t.Helper()
	if _, err := a.api.RemoveTags(context.Background(), &elbv2.RemoveTagsInput{ResourceArns: []string{arn}, TagKeys: keys}); err != nil {
		t.Fatal(err)
	}
}

// weights renders the rule's and the listener's forward weights: "blue=50 green=50".
func (a *sandboxALB) weights(t *testing.T) (rule, listener string) {
	t.Helper()
	ctx := context.Background()
	rs, err := a.api.DescribeRules(ctx, &elbv2.DescribeRulesInput{RuleArns: []string{a.rule}})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := a.api.DescribeListeners(ctx, &elbv2.DescribeListenersInput{ListenerArns: []string{a.listener}})
	if err != nil {
		t.Fatal(err)
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

// countingELB is the real leveralb.ELBv2 client with its calls counted in tagCalls.
type countingELB struct {
	*elbv2.Client
	*tagCalls
}

func (c countingELB) AddTags(ctx context.Context, in *elbv2.AddTagsInput, o ...func(*elbv2.Options)) (*elbv2.AddTagsOutput, error) {
	c.onTag("AddTags")
	return c.Client.AddTags(ctx, in, o...)
}

func (c countingELB) RemoveTags(ctx context.Context, in *elbv2.RemoveTagsInput, o ...func(*elbv2.Options)) (*elbv2.RemoveTagsOutput, error) {
	if err := c.onUntag("RemoveTags"); err != nil {
		return nil, err
	}
	return c.Client.RemoveTags(ctx, in, o...)
}

func (c countingELB) DescribeTags(ctx context.Context, in *elbv2.DescribeTagsInput, o ...func(*elbv2.Options)) (*elbv2.DescribeTagsOutput, error) {
	c.onVerify("DescribeTags")
	return c.Client.DescribeTags(ctx, in, o...)
}

func (c countingELB) ModifyRule(ctx context.Context, in *elbv2.ModifyRuleInput, o ...func(*elbv2.Options)) (*elbv2.ModifyRuleOutput, error) {
	c.count("ModifyRule")
	return c.Client.ModifyRule(ctx, in, o...)
}

func (c countingELB) ModifyListener(ctx context.Context, in *elbv2.ModifyListenerInput, o ...func(*elbv2.Options)) (*elbv2.ModifyListenerOutput, error) {
	c.count("ModifyListener")
	return c.Client.ModifyListener(ctx, in, o...)
}

// counted is the sandbox's client, counted in c when c is set.
func (a *sandboxALB) counted(c *tagCalls) leveralb.ELBv2 {
	if c == nil {
		return a.api
	}
	return countingELB{Client: a.api, tagCalls: c}
}

// albTagLever is the ALB lever for the authority-tag tests: the tags are on the rule and
// on the listener's default rule (a read names it by the listener, a release by the rule).
func albTagLever(t *testing.T) *tagLever {
	a := newSandboxALB(t)
	return &tagLever{
		cutover: "shop",
		res:     []tagRes{{arn: a.rule, name: a.ruleName, releaseName: "rule " + a.rule, label: "rule "}, {arn: a.dflt, name: a.listenerName, releaseName: "rule " + a.dflt, label: "default "}},
		tagOp:   "AddTags", untagOp: "RemoveTags", readOp: "DescribeTags", writeOps: []string{"ModifyRule", "ModifyListener"},
		notReady:  "the listener rules are not ready for this cutover:\n  ",
		held:      "the rules",
		tooMany:   "has 50 tags, the most ELBv2 allows on a rule: the cutover's authority tag (crossfade.io/cutover/…) would be refused (TooManyTags)",
		denyUntag: errors.New("AccessDenied: not authorized to perform elasticloadbalancing:RemoveTags"),
		atFrom:    "blue=100 green=0 / blue=100 green=0",
		atHalf:    "blue=50 green=50 / blue=50 green=50",
		atTo:      "blue=0 green=100 / blue=0 green=100",
		// No restore: the weights stay between a test's parts, so the Run test's abort rolls back to
		// 100:0 from the 0:100 its whole run left.
		abortStart: `{"blue":100,"green":0}`, abortState: "blue=100 green=0 / blue=100 green=0",
		plan:  a.plan,
		lever: func(p *spec.Plan, c *tagCalls) tagGuarded { return leveralb.New(p, a.counted(c)) },
		config: func(p *spec.Plan, c *tagCalls, dir string) Config {
			cfg := quietConfig(p, dir)
			cfg.Levers = albLevers(a.counted(c), nil)
			return cfg
		},
		tag: a.tag, tags: a.tags, untag: a.untag,
		state: func(t *testing.T) string {
			rule, listener := a.weights(t)
			return rule + " / " + listener
		},
	}
}

// arnsELB records the resources each AddTags and RemoveTags names.
type arnsELB struct {
	countingELB
	mu          sync.Mutex
	add, remove [][]string
}

func (c *arnsELB) AddTags(ctx context.Context, in *elbv2.AddTagsInput, o ...func(*elbv2.Options)) (*elbv2.AddTagsOutput, error) {
	c.mu.Lock()
	c.add = append(c.add, in.ResourceArns)
	c.mu.Unlock()
	return c.countingELB.AddTags(ctx, in, o...)
}

func (c *arnsELB) RemoveTags(ctx context.Context, in *elbv2.RemoveTagsInput, o ...func(*elbv2.Options)) (*elbv2.RemoveTagsOutput, error) {
	c.mu.Lock()
	c.remove = append(c.remove, in.ResourceArns)
	c.mu.Unlock()
	return c.countingELB.RemoveTags(ctx, in, o...)
}

// TestALBAuthorityTagCalls: what only leveralb.ELBv2 asks of the protocol. Its AddTags and
// RemoveTags take many resources a call, and the lever sends one each (a failure names
// one rule): the rule, and for the listener its default rule, which leveralb.ELBv2 tags as a rule
// of its own, never the listener. The first write sends one ModifyRule and one
// ModifyListener after them.
func TestALBAuthorityTagCalls(t *testing.T) {
	a := newSandboxALB(t)
	ctx := context.Background()
	me := registry.Runner{Token: "a11ce0a11ce0a11c", Host: "alice-laptop", PID: 11}
	c := &arnsELB{countingELB: countingELB{Client: a.api, tagCalls: newTagCalls()}}
	lv := leveralb.New(a.plan("shop"), c)
	s, err := lv.Read(ctx, ReadOptions{Runner: me})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lv.Write(ctx, s, Change{Weights: map[string]int64{"blue": 50, "green": 50}}, testEnv()); err != nil {
		t.Fatal(err)
	}
	if c.n("AddTags") != 2 || c.n("ModifyRule") != 1 || c.n("ModifyListener") != 1 || c.n("RemoveTags") != 0 {
		t.Errorf("first write: calls %v, want 2 AddTags (the rule, the default rule), 1 ModifyRule, 1 ModifyListener", c.tagCalls)
	}
	if _, _, err := lv.LetGo(ctx, me, lever.OwnKeepOthers); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{a.rule}, {a.dflt}}
	for _, calls := range []struct {
		op   string
		arns [][]string
	}{{"AddTags", c.add}, {"RemoveTags", c.remove}} {
		if !slices.EqualFunc(calls.arns, want, slices.Equal) {
			t.Errorf("%s named %q, want one rule a call: %q", calls.op, calls.arns, want)
		}
	}
}

// ruleName names a rule as the ALB lever's messages do: "rule shop/9683b2d02a6cabee",
// "listener shop/0467ef3c8400ae65".
func ruleName(arn string) string {
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
