package cutover

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/smithy-go"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// The ALB lever's pure logic, on an in-memory stand-in for the six ELBv2 calls it makes.
// The end-to-end ALB cutover runs against the sandbox's ELBv2 API (test/e2e).

const (
	albARN      = "arn:aws:elasticloadbalancing:us-east-1:123456789012:"
	ruleHTTPS   = albARN + "listener-rule/app/shop/50dc6c495c0c9188/f2f7dc8efc522ab2/9683b2d02a6cabee"
	listenerWeb = albARN + "listener/app/shop/50dc6c495c0c9188/0467ef3c8400ae65"
	tgBlue      = albARN + "targetgroup/shop-blue/73e2d6bc24d8a067"
	tgGreen     = albARN + "targetgroup/shop-green/1a2b3c4d5e6f7a8b"
	tgGrey      = albARN + "targetgroup/shop-grey/0f0f0f0f0f0f0f0f"
)

// fakeELB keeps listener rules, listeners, target groups and their health in memory, and
// answers the calls the lever makes as ELBv2 does (its error codes included).
type fakeELB struct {
	mu        sync.Mutex
	rules     map[string]types.Rule
	listeners map[string]types.Listener
	groups    []types.TargetGroup
	health    map[string][]types.TargetHealthStateEnum
	// fail makes the next Modify call on the ARN fail.
	fail map[string]error
	// calls lists the Modify calls made: "ModifyRule <arn>".
	calls []string
	// tags are every rule's tags (a listener's default rule's too), by rule ARN; a
	// listener's default rule is defaultRule(listener).
	tags map[string][]types.Tag
	// tagCalls counts AddTags and RemoveTags calls.
	tagCalls int
}

// defaultRule is the ARN of the fake listener's default rule.
func defaultRule(listener string) string {
	return strings.Replace(listener, ":listener/", ":listener-rule/", 1) + "/defa017defa017de"
}

func apiErr(code, msg string) error { return &smithy.GenericAPIError{Code: code, Message: msg} }

// testRunner is the runner the lever's tests read and write as.
var testRunner = registry.Runner{Token: "7e577e577e577e57", Host: "laptop", PID: 4242}

func forward(stick *types.TargetGroupStickinessConfig, groups ...any) types.Action {
	fc := &types.ForwardActionConfig{TargetGroupStickinessConfig: stick}
	for i := 0; i < len(groups); i += 2 {
		fc.TargetGroups = append(fc.TargetGroups, types.TargetGroupTuple{TargetGroupArn: aws.String(groups[i].(string)), Weight: aws.Int32(int32(groups[i+1].(int)))})
	}
	return types.Action{Type: types.ActionTypeEnumForward, Order: aws.Int32(2), ForwardConfig: fc}
}

// newFakeELB holds the HTTPS rule (authenticate, then forward blue=100 green=0) and the
// HTTP listener's default action (a plain forward to blue).
func newFakeELB() *fakeELB {
	oidc := types.Action{Type: types.ActionTypeEnumAuthenticateOidc, Order: aws.Int32(1), AuthenticateOidcConfig: &types.AuthenticateOidcActionConfig{
		Issuer: aws.String("https://idp.example.com"), ClientId: aws.String("shop"), AuthorizationEndpoint: aws.String("https://idp.example.com/auth"),
		TokenEndpoint: aws.String("https://idp.example.com/token"), UserInfoEndpoint: aws.String("https://idp.example.com/me")}}
	f := &fakeELB{
		rules: map[string]types.Rule{ruleHTTPS: {RuleArn: aws.String(ruleHTTPS), Priority: aws.String("10"),
			Conditions: []types.RuleCondition{{Field: aws.String("host-header"), HostHeaderConfig: &types.HostHeaderConditionConfig{Values: []string{"shop.example.com"}}}},
			Actions:    []types.Action{oidc, forward(&types.TargetGroupStickinessConfig{Enabled: aws.Bool(false)}, tgBlue, 100, tgGreen, 0)}}},
		listeners: map[string]types.Listener{listenerWeb: {ListenerArn: aws.String(listenerWeb), Port: aws.Int32(80), Protocol: types.ProtocolEnumHttp,
			DefaultActions: []types.Action{{Type: types.ActionTypeEnumForward, TargetGroupArn: aws.String(tgBlue)}}}},
		health: map[string][]types.TargetHealthStateEnum{
			tgBlue:  {types.TargetHealthStateEnumHealthy, types.TargetHealthStateEnumHealthy},
			tgGreen: {types.TargetHealthStateEnumHealthy, types.TargetHealthStateEnumInitial},
		},
		fail: map[string]error{},
		tags: map[string][]types.Tag{},
	}
	for _, arn := range []string{tgBlue, tgGreen, tgGrey} {
		f.groups = append(f.groups, types.TargetGroup{TargetGroupArn: aws.String(arn), TargetGroupName: aws.String(spec.TargetGroupName(arn))})
	}
	return f
}

func (f *fakeELB) DescribeRules(_ context.Context, in *elbv2.DescribeRulesInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeRulesOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &elbv2.DescribeRulesOutput{}
	if in.ListenerArn != nil {
		// A listener's rules, one per page (as a marker-paged listing), in ARN order.
		var arns []string
		for arn := range f.rules {
			if parentARN(arn) == *in.ListenerArn {
				arns = append(arns, arn)
			}
		}
		slices.Sort(arns)
		if _, ok := f.listeners[*in.ListenerArn]; ok {
			arns = append(arns, defaultRule(*in.ListenerArn)) // ELBv2 lists it last
		} else if len(arns) == 0 {
			return nil, apiErr("ListenerNotFound", "One or more listeners not found")
		}
		r, next := page(arns, in.Marker)
		switch {
		case r == defaultRule(*in.ListenerArn):
			out.Rules = append(out.Rules, types.Rule{RuleArn: aws.String(r), IsDefault: aws.Bool(true), Priority: aws.String("default"),
				Actions: slices.Clone(f.listeners[*in.ListenerArn].DefaultActions)})
		case r != "":
			out.Rules = append(out.Rules, f.rules[r])
		}
		out.NextMarker = next
		return out, nil
	}
	for _, arn := range in.RuleArns {
		r, ok := f.rules[arn]
		if !ok {
			return nil, apiErr("RuleNotFound", "One or more rules not found")
		}
		r.Actions = slices.Clone(r.Actions)
		out.Rules = append(out.Rules, r)
	}
	return out, nil
}

func (f *fakeELB) DescribeListeners(_ context.Context, in *elbv2.DescribeListenersInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeListenersOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &elbv2.DescribeListenersOutput{}
	if in.LoadBalancerArn != nil {
		var arns []string
		for arn := range f.listeners {
			if parentARN(arn) == *in.LoadBalancerArn {
				arns = append(arns, arn)
			}
		}
		if len(arns) == 0 {
			return nil, apiErr("LoadBalancerNotFound", "One or more load balancers not found")
		}
		slices.Sort(arns)
		l, next := page(arns, in.Marker)
		out.Listeners, out.NextMarker = []types.Listener{f.listeners[l]}, next
		return out, nil
	}
	for _, arn := range in.ListenerArns {
		l, ok := f.listeners[arn]
		if !ok {
			return nil, apiErr("ListenerNotFound", "One or more listeners not found")
		}
		l.DefaultActions = slices.Clone(l.DefaultActions)
		out.Listeners = append(out.Listeners, l)
	}
	return out, nil
}

// parentARN is the listener a rule ARN belongs to, or the load balancer of a listener ARN.
func parentARN(arn string) string {
	prefix, res, _ := strings.Cut(arn, ":listener")
	parts := strings.Split(res, "/")
	if strings.HasPrefix(res, "-rule/") {
		return prefix + ":listener/" + strings.Join(parts[1:len(parts)-1], "/")
	}
	return prefix + ":loadbalancer/" + strings.Join(parts[1:len(parts)-1], "/")
}

// page returns the item at marker (an index; nil is 0) and the marker of the next one,
// nil after the last: a listing one item per page.
func page(arns []string, marker *string) (string, *string) {
	i := 0
	if marker != nil {
		fmt.Sscan(*marker, &i)
	}
	if i >= len(arns) {
		return "", nil
	}
	if i+1 < len(arns) {
		return arns[i], aws.String(fmt.Sprint(i + 1))
	}
	return arns[i], nil
}

func (f *fakeELB) modify(op, arn string) error {
	f.calls = append(f.calls, op+" "+arn)
	if err := f.fail[arn]; err != nil {
		delete(f.fail, arn)
		return err
	}
	return nil
}

func (f *fakeELB) ModifyRule(_ context.Context, in *elbv2.ModifyRuleInput, _ ...func(*elbv2.Options)) (*elbv2.ModifyRuleOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	arn := aws.ToString(in.RuleArn)
	if err := f.modify("ModifyRule", arn); err != nil {
		return nil, err
	}
	r, ok := f.rules[arn]
	if !ok {
		return nil, apiErr("RuleNotFound", "One or more rules not found")
	}
	r.Actions = in.Actions
	f.rules[arn] = r
	return &elbv2.ModifyRuleOutput{Rules: []types.Rule{r}}, nil
}

func (f *fakeELB) ModifyListener(_ context.Context, in *elbv2.ModifyListenerInput, _ ...func(*elbv2.Options)) (*elbv2.ModifyListenerOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	arn := aws.ToString(in.ListenerArn)
	if err := f.modify("ModifyListener", arn); err != nil {
		return nil, err
	}
	l, ok := f.listeners[arn]
	if !ok {
		return nil, apiErr("ListenerNotFound", "One or more listeners not found")
	}
	l.DefaultActions = in.DefaultActions
	f.listeners[arn] = l
	return &elbv2.ModifyListenerOutput{Listeners: []types.Listener{l}}, nil
}

func (f *fakeELB) DescribeTargetGroups(_ context.Context, in *elbv2.DescribeTargetGroupsInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTargetGroupsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &elbv2.DescribeTargetGroupsOutput{}
	for _, g := range f.groups {
		if slices.Contains(in.Names, aws.ToString(g.TargetGroupName)) || slices.Contains(in.TargetGroupArns, aws.ToString(g.TargetGroupArn)) {
			out.TargetGroups = append(out.TargetGroups, g)
		}
	}
	if len(out.TargetGroups) < len(in.Names)+len(in.TargetGroupArns) {
		return nil, apiErr("TargetGroupNotFound", "One or more target groups not found")
	}
	return out, nil
}

func (f *fakeELB) DescribeTargetHealth(_ context.Context, in *elbv2.DescribeTargetHealthInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTargetHealthOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &elbv2.DescribeTargetHealthOutput{}
	for i, st := range f.health[aws.ToString(in.TargetGroupArn)] {
		out.TargetHealthDescriptions = append(out.TargetHealthDescriptions, types.TargetHealthDescription{
			Target: &types.TargetDescription{Id: aws.String(fmt.Sprintf("10.0.0.%d", i+1))}, TargetHealth: &types.TargetHealth{State: st}})
	}
	return out, nil
}

// taggable reports whether arn is a rule the fake holds, a listener's default rule included.
func (f *fakeELB) taggable(arn string) bool {
	if _, ok := f.rules[arn]; ok {
		return true
	}
	for l := range f.listeners {
		if defaultRule(l) == arn {
			return true
		}
	}
	return false
}

// AddTags tags one rule, as ELBv2 does (one resource per call, 50 tags at most).
func (f *fakeELB) AddTags(_ context.Context, in *elbv2.AddTagsInput, _ ...func(*elbv2.Options)) (*elbv2.AddTagsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tagCalls++
	if len(in.ResourceArns) != 1 {
		return nil, apiErr("ValidationError", "Only one resource can be tagged at a time")
	}
	arn := in.ResourceArns[0]
	if !f.taggable(arn) {
		return nil, apiErr("RuleNotFound", "One or more rules not found")
	}
	have := slices.Clone(f.tags[arn])
	for _, t := range in.Tags {
		if i := slices.IndexFunc(have, func(h types.Tag) bool { return aws.ToString(h.Key) == aws.ToString(t.Key) }); i >= 0 {
			have[i] = t
		} else {
			have = append(have, t)
		}
	}
	if len(have) > 50 {
		return nil, apiErr("TooManyTags", "You've reached the limit on the number of tags for this resource")
	}
	f.tags[arn] = have
	return &elbv2.AddTagsOutput{}, nil
}

// RemoveTags removes keys from one rule; a key it lacks is ignored.
func (f *fakeELB) RemoveTags(_ context.Context, in *elbv2.RemoveTagsInput, _ ...func(*elbv2.Options)) (*elbv2.RemoveTagsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tagCalls++
	if len(in.ResourceArns) != 1 {
		return nil, apiErr("ValidationError", "Only one resource can be untagged at a time")
	}
	arn := in.ResourceArns[0]
	if !f.taggable(arn) {
		return nil, apiErr("RuleNotFound", "One or more rules not found")
	}
	f.tags[arn] = slices.DeleteFunc(slices.Clone(f.tags[arn]), func(t types.Tag) bool { return slices.Contains(in.TagKeys, aws.ToString(t.Key)) })
	return &elbv2.RemoveTagsOutput{}, nil
}

// DescribeTags describes up to 20 rules' tags; one that is gone fails the call.
func (f *fakeELB) DescribeTags(_ context.Context, in *elbv2.DescribeTagsInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTagsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(in.ResourceArns) > 20 {
		return nil, apiErr("ValidationError", "too many resources")
	}
	out := &elbv2.DescribeTagsOutput{}
	for _, arn := range in.ResourceArns {
		if !f.taggable(arn) {
			return nil, apiErr("RuleNotFound", "One or more rules not found")
		}
		out.TagDescriptions = append(out.TagDescriptions, types.TagDescription{ResourceArn: aws.String(arn), Tags: slices.Clone(f.tags[arn])})
	}
	return out, nil
}

// setWeights sets a rule's (or listener's) forward weights behind the lever's back.
func (f *fakeELB) setWeights(arn string, groups ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.rules[arn]; ok {
		r.Actions = []types.Action{r.Actions[0], forward(nil, groups...)}
		f.rules[arn] = r
		return
	}
	l := f.listeners[arn]
	l.DefaultActions = []types.Action{forward(nil, groups...)}
	f.listeners[arn] = l
}

// albTestPlan moves the HTTPS rule and the HTTP listener from shop-blue (named by ARN) to
// shop-green (by name): 0 → 10 → 50 → 100 %.
func albTestPlan() *spec.Plan {
	p := &spec.Plan{Name: "shop", ALB: &spec.ALB{ListenerRules: []string{ruleHTTPS, listenerWeb}, From: tgBlue, To: "shop-green"},
		From: "blue", To: "green", Rollback: spec.PlanRollback{Mode: spec.RollbackImmediate}, InSyncTimeout: time.Second, StepTimeout: time.Second}
	for _, pct := range []int64{0, 10, 50, 100} {
		p.Steps = append(p.Steps, spec.PlanStep{Weights: spec.Weights{From: 100 - pct, To: pct}})
	}
	return p
}

// groupsOf renders a rule's forward weights as the fake holds them.
func (f *fakeELB) groupsOf(arn string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	acts := f.listeners[arn].DefaultActions
	if r, ok := f.rules[arn]; ok {
		acts = r.Actions
	}
	var parts []string
	for _, a := range acts {
		if a.Type != types.ActionTypeEnumForward {
			continue
		}
		if a.ForwardConfig == nil {
			return spec.TargetGroupName(aws.ToString(a.TargetGroupArn))
		}
		for _, t := range a.ForwardConfig.TargetGroups {
			parts = append(parts, fmt.Sprintf("%s=%d", spec.TargetGroupName(aws.ToString(t.TargetGroupArn)), aws.ToInt32(t.Weight)))
		}
	}
	return strings.Join(parts, " ")
}

func testEnv() WriteEnv {
	return WriteEnv{What: "step", Log: slog.New(slog.DiscardHandler), BeforeSend: func(Snapshot) error { return nil }}
}

// TestALBWeights: a percent step maps to from=100-p, to=p on every rule; another target
// group keeps its weight; a rule that does not list `to` yet gets it added; the rules are
// written in the plan's order, one call each, and described back until in effect.
func TestALBWeights(t *testing.T) {
	ctx := context.Background()
	f := newFakeELB()
	f.setWeights(ruleHTTPS, tgBlue, 100, tgGreen, 0, tgGrey, 50)
	lv := newALBLever(albTestPlan(), f)
	s, err := lv.Read(ctx, ReadOptions{Runner: testRunner})
	if err != nil {
		t.Fatal(err)
	}
	if got := FormatWeights(s.Weights()); got != "blue=100 green=0" {
		t.Errorf("weights read %s", got)
	}
	if s.TTL() != 0 || s.NoTraffic(nil) != "" {
		t.Errorf("TTL %d, no traffic at %q", s.TTL(), s.NoTraffic(nil))
	}
	// The listener forwards to blue alone, weight 1: the same split as 100/0, but the
	// rule has a third group, whose share a rollback to 100/0 on the listener would not
	// keep alike: refused until they match.
	if p := lv.StartProblems(s); len(p) != 1 || !strings.Contains(p[0], "rule shop/9683b2d02a6cabee weighs shop-blue=100 shop-green=0 but listener shop/0467ef3c8400ae65 weighs shop-blue=1 shop-green=0") {
		t.Errorf("start problems %q", p)
	}
	f.setWeights(ruleHTTPS, tgBlue, 100, tgGreen, 0)
	if s, err = lv.Read(ctx, ReadOptions{Runner: testRunner}); err != nil {
		t.Fatal(err)
	}
	if p := lv.StartProblems(s); len(p) != 0 {
		t.Errorf("start problems with the same split: %q", p)
	}

	for _, tc := range []struct {
		w              map[string]int64
		rule, listener string
		calls          []string
	}{
		// The listener's plain forward to blue is the same split, written as weights (and
		// with green listed) by the first write.
		{map[string]int64{"blue": 100, "green": 0}, "shop-blue=100 shop-green=0", "shop-blue=100 shop-green=0", []string{"ModifyListener " + listenerWeb}},
		{map[string]int64{"blue": 90, "green": 10}, "shop-blue=90 shop-green=10", "shop-blue=90 shop-green=10",
			[]string{"ModifyRule " + ruleHTTPS, "ModifyListener " + listenerWeb}},
		{map[string]int64{"blue": 0, "green": 999}, "shop-blue=0 shop-green=999", "shop-blue=0 shop-green=999",
			[]string{"ModifyRule " + ruleHTTPS, "ModifyListener " + listenerWeb}},
	} {
		f.calls = nil
		s, err := lv.Read(ctx, ReadOptions{Runner: testRunner})
		if err != nil {
			t.Fatal(err)
		}
		w, err := lv.Write(ctx, s, Change{Weights: tc.w}, testEnv())
		if err != nil {
			t.Fatalf("write %v: %v", tc.w, err)
		}
		if ok, err := lv.InEffect(ctx, w); !ok || err != nil {
			t.Errorf("write %v not in effect: %v", tc.w, err)
		}
		if got := f.groupsOf(ruleHTTPS); got != tc.rule {
			t.Errorf("write %v: rule %s, want %s", tc.w, got, tc.rule)
		}
		if got := f.groupsOf(listenerWeb); got != tc.listener {
			t.Errorf("write %v: listener %s, want %s", tc.w, got, tc.listener)
		}
		if !slices.Equal(f.calls, tc.calls) {
			t.Errorf("write %v: calls %q, want %q", tc.w, f.calls, tc.calls)
		}
		if got := FormatWeights(w.After.Weights()); got != FormatWeights(tc.w) {
			t.Errorf("after %s, want %s", got, FormatWeights(tc.w))
		}
	}
	// The authenticate action went back as read, its secret kept by ELBv2.
	oidc := f.rules[ruleHTTPS].Actions[0].AuthenticateOidcConfig
	if f.rules[ruleHTTPS].Actions[0].Type != types.ActionTypeEnumAuthenticateOidc || !aws.ToBool(oidc.UseExistingClientSecret) || oidc.ClientSecret != nil {
		t.Errorf("authenticate action after the writes: %+v", f.rules[ruleHTTPS].Actions[0])
	}
	// A third group keeps its weight through a write.
	f.setWeights(ruleHTTPS, tgBlue, 100, tgGrey, 50, tgGreen, 0)
	s, _ = lv.Read(ctx, ReadOptions{Runner: testRunner})
	if _, err := lv.Write(ctx, s, Change{Weights: map[string]int64{"blue": 50, "green": 50}}, testEnv()); err != nil {
		t.Fatal(err)
	}
	if got := f.groupsOf(ruleHTTPS); got != "shop-blue=50 shop-grey=50 shop-green=50" {
		t.Errorf("with a third group: %s", got)
	}
	// Weights that leave a rule no weighted group are refused; TTLs too.
	if p := lv.Check(s, Change{Weights: map[string]int64{"blue": 0, "green": 0}}); len(p) != 1 || !strings.Contains(p[0], "listener shop/0467ef3c8400ae65 with no target group") {
		t.Errorf("check 0/0: %q", p)
	}
	if p := lv.Check(s, Change{TTLs: map[spec.Record]int64{{Name: "x", Type: "A"}: 5}}); len(p) != 1 {
		t.Errorf("check TTLs: %q", p)
	}
}

// TestALBReadProblems: rules that are gone, that do not forward, that forward to neither
// group, or that have no room for `to` refuse a run, and are skipped by a partial read.
func TestALBReadProblems(t *testing.T) {
	ctx := context.Background()
	full := []any{tgGrey, 1, albARN + "targetgroup/a/1", 1, albARN + "targetgroup/b/1", 1, albARN + "targetgroup/c/1", 1, tgBlue, 1}
	for _, tc := range []struct {
		name  string
		setup func(f *fakeELB)
		want  string
	}{
		{"gone", func(f *fakeELB) { delete(f.rules, ruleHTTPS) }, "rule " + ruleHTTPS + ": not found"},
		{"redirect", func(f *fakeELB) {
			f.rules[ruleHTTPS] = types.Rule{RuleArn: aws.String(ruleHTTPS), Actions: []types.Action{{Type: types.ActionTypeEnumRedirect}}}
		}, "its action is redirect, not forward"},
		{"neither group", func(f *fakeELB) { f.setWeights(ruleHTTPS, tgGrey, 1) }, "forwards to shop-grey=1, neither to from (shop-blue) nor to to (shop-green)"},
		{"five groups", func(f *fakeELB) { f.setWeights(ruleHTTPS, full...) }, "forwards to 5 target groups"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeELB()
			tc.setup(f)
			lv := newALBLever(albTestPlan(), f)
			_, err := lv.Read(ctx, ReadOptions{Runner: testRunner})
			var nr *NotReadyError
			if !errors.As(err, &nr) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "the listener rules are not ready") {
				t.Fatalf("read: %v, want a NotReadyError with %q", err, tc.want)
			}
			s, err := lv.Read(ctx, ReadOptions{Partial: true})
			if err != nil || len(s.Skipped()) != 1 || !strings.Contains(s.Skipped()[0], tc.want) || len(s.(*albLive).rules) != 1 {
				t.Errorf("partial read: %v, skipped %q", err, s.Skipped())
			}
		})
	}
	f := newFakeELB()
	p := albTestPlan()
	p.ALB.To = "shop-purple"
	if _, err := newALBLever(p, f).Read(ctx, ReadOptions{Runner: testRunner}); err == nil || !strings.Contains(err.Error(), "target group shop-purple (spec.alb.to): not found") {
		t.Errorf("unknown target group: %v", err)
	}
}

// TestALBDrift: a weight the cutover did not write, in from, to or another group, is
// drift; a rule put back is not.
func TestALBDrift(t *testing.T) {
	ctx := context.Background()
	f := newFakeELB()
	lv := newALBLever(albTestPlan(), f)
	s, _ := lv.Read(ctx, ReadOptions{Runner: testRunner})
	w, err := lv.Write(ctx, s, Change{Weights: map[string]int64{"blue": 90, "green": 10}}, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	expect := memberWeights(w.After)
	for _, tc := range []struct {
		name   string
		groups []any
		want   []string
	}{
		{"unchanged", []any{tgBlue, 90, tgGreen, 10}, nil},
		{"order only", []any{tgGreen, 10, tgBlue, 90}, nil},
		{"weights moved back", []any{tgBlue, 100, tgGreen, 0}, []string{"rule shop/9683b2d02a6cabee target group shop-blue 100 90", "rule shop/9683b2d02a6cabee target group shop-green 0 10"}},
		{"to dropped", []any{tgBlue, 90}, []string{"rule shop/9683b2d02a6cabee target group shop-green 0 10"}},
		{"a group added", []any{tgBlue, 90, tgGreen, 10, tgGrey, 5}, []string{"rule shop/9683b2d02a6cabee target group shop-grey 5 0"}},
		{"a group added at 0", []any{tgBlue, 90, tgGreen, 10, tgGrey, 0}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.setWeights(ruleHTTPS, tc.groups...)
			now, err := lv.Read(ctx, ReadOptions{Runner: testRunner})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range drift(now, expect) {
				got = append(got, fmt.Sprintf("%s %d %d", d.Member, d.Found, d.Wrote))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("drift %q, want %q", got, tc.want)
			}
		})
	}
	f.setWeights(ruleHTTPS, tgBlue, 100, tgGreen, 0)
	now, _ := lv.Read(ctx, ReadOptions{Runner: testRunner})
	e := &DriftError{Expected: "the cutover wrote", Members: drift(now, expect), Cause: lv.DriftCause()}
	if !strings.Contains(e.Error(), "weights drifted: rule shop/9683b2d02a6cabee target group shop-blue has weight 100, the cutover wrote 90") ||
		!strings.Contains(e.Error(), "ignore_changes = [action]") {
		t.Errorf("drift error: %v", e)
	}
}

// TestALBResumeIsIdempotent: a write that fails after the first rule leaves that rule at
// the new weights and says so; written again (as `run --resume` does), it sends only the
// rules not yet at them, and once everything is, nothing.
func TestALBResumeIsIdempotent(t *testing.T) {
	ctx := context.Background()
	f := newFakeELB()
	lv := newALBLever(albTestPlan(), f)
	step := Change{Weights: map[string]int64{"blue": 50, "green": 50}}
	f.fail[listenerWeb] = apiErr("Throttling", "Rate exceeded")
	s, _ := lv.Read(ctx, ReadOptions{Runner: testRunner})
	_, err := lv.Write(ctx, s, step, testEnv())
	var pw *PartialWriteError
	if !errors.As(err, &pw) || pw.Written != 1 || !strings.Contains(err.Error(), "listener shop/0467ef3c8400ae65 (2 of 2") ||
		!strings.Contains(err.Error(), "Rate exceeded") || !strings.Contains(err.Error(), "run --resume") {
		t.Fatalf("write with the second call failing: %v", err)
	}
	if f.groupsOf(ruleHTTPS) != "shop-blue=50 shop-green=50" || f.groupsOf(listenerWeb) != "shop-blue" {
		t.Fatalf("after the partial write: rule %s, listener %s", f.groupsOf(ruleHTTPS), f.groupsOf(listenerWeb))
	}
	// The resume reads the rules as they stand and writes the step again.
	for i, want := range [][]string{{"ModifyListener " + listenerWeb}, nil} {
		f.calls = nil
		s, err := lv.Read(ctx, ReadOptions{Runner: testRunner})
		if err != nil {
			t.Fatal(err)
		}
		w, err := lv.Write(ctx, s, step, testEnv())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(f.calls, want) {
			t.Errorf("write %d: calls %q, want %q", i+1, f.calls, want)
		}
		if ok, err := lv.InEffect(ctx, w); !ok || err != nil {
			t.Errorf("write %d not in effect: %v", i+1, err)
		}
		if i == 0 && w.Detail != "0 ModifyRule, 1 ModifyListener (1 already at these weights)" {
			t.Errorf("detail %q", w.Detail)
		}
	}
	// A rule moved since the write is not in effect: the runner waits, then fails.
	s, _ = lv.Read(ctx, ReadOptions{Runner: testRunner})
	w, _ := lv.Write(ctx, s, step, testEnv())
	f.setWeights(listenerWeb, tgBlue, 1)
	if ok, err := lv.InEffect(ctx, w); ok || err != nil {
		t.Errorf("in effect after the listener moved: %v %v", ok, err)
	}
}

// TestALBPreview: `cutover plan` shows the rules with their weights, each group's health,
// the warnings (stickiness, a group with no healthy target) and the Terraform note, and
// every call as the AWS CLI takes it.
func TestALBPreview(t *testing.T) {
	f := newFakeELB()
	f.rules[ruleHTTPS].Actions[1].ForwardConfig.TargetGroupStickinessConfig = &types.TargetGroupStickinessConfig{Enabled: aws.Bool(true), DurationSeconds: aws.Int32(3600)}
	f.health[tgGreen] = []types.TargetHealthStateEnum{types.TargetHealthStateEnumUnhealthy}
	p := albTestPlan()
	pv, err := Plan(context.Background(), Config{Plan: p, ELB: f})
	if err != nil {
		t.Fatal(err)
	}
	var sum, full strings.Builder
	if err := pv.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	if err := pv.WriteText(&full); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"cutover shop: blue → green\nALB listener rules: 2, current weights blue=100 green=0 (each applies to the next request: no TTL)\n",
		"  " + ruleHTTPS + " (priority 10; host-header shop.example.com): shop-blue=100 shop-green=0, group stickiness 3600s\n",
		"  " + listenerWeb + " (HTTP:80 default action): shop-blue=1 shop-green=0, group stickiness off\n",
		"  target group shop-blue: 2 healthy of 2 targets\n",
		"  target group shop-green: 0 healthy of 1 targets (1 unhealthy)\n",
		"warning: rule shop/9683b2d02a6cabee: group stickiness is on for 3600s",
		"warning: target group shop-green has no healthy target",
		"note: listener shop/0467ef3c8400ae65 does not forward to shop-green yet",
		"note: a rule Terraform manages needs `lifecycle { ignore_changes = [action] }`",
		"  step 2 of 4  blue=90 green=10  hold 0s       no gates\n",
		"note: the run tags each rule (a listener: its default rule) with its authority, crossfade.io/cutover/shop/TOKEN, before its first write, and removes the tag when the cutover ends",
		"writes: 5 writes (11 ELBv2 calls in all: 9 ModifyRule and ModifyListener, 2 AddTags) for the run and its longest rollback",
	} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum.String())
		}
	}
	stick := `"TargetGroupStickinessConfig":{"DurationSeconds":3600,"Enabled":true}`
	host := authorityValue(previewRunner())[len(previewToken)+1:]
	for _, want := range []string{
		"step 1 of 4: blue=100 green=0, 3 calls, as the AWS CLI takes them:\n" +
			"aws elbv2 add-tags --resource-arns " + ruleHTTPS + ` --tags '[{"Key":"crossfade.io/cutover/shop/TOKEN","Value":"TOKEN@` + host + `"}]'` + "\n" +
			"aws elbv2 add-tags --resource-arns " + defaultRule(listenerWeb) + ` --tags '[{"Key":"crossfade.io/cutover/shop/TOKEN","Value":"TOKEN@` + host + `"}]'` + "\n" +
			"aws elbv2 modify-listener --listener-arn " + listenerWeb +
			` --default-actions '[{"Type":"forward","ForwardConfig":{"TargetGroups":[{"TargetGroupArn":"` + tgBlue + `","Weight":100},{"TargetGroupArn":"` + tgGreen + `","Weight":0}]}}]'` + "\n",
		"step 2 of 4: blue=90 green=10, 2 calls, as the AWS CLI takes them:\naws elbv2 modify-rule --rule-arn " + ruleHTTPS +
			` --actions '[{"Type":"authenticate-oidc","AuthenticateOidcConfig":{"AuthorizationEndpoint":"https://idp.example.com/auth","ClientId":"shop","Issuer":"https://idp.example.com",` +
			`"TokenEndpoint":"https://idp.example.com/token","UserInfoEndpoint":"https://idp.example.com/me","UseExistingClientSecret":true},"Order":1},` +
			`{"Type":"forward","ForwardConfig":{` + stick + `,"TargetGroups":[{"TargetGroupArn":"` + tgBlue + `","Weight":90},{"TargetGroupArn":"` + tgGreen + `","Weight":10}]},"Order":2}]'` + "\n",
		"rollback 1 of 1 (from the last step): blue=100 green=0, 2 calls",
	} {
		if !strings.Contains(full.String(), want) {
			t.Errorf("--batches lacks %q:\n%s", want, full.String())
		}
	}
}

// TestALBReportTerraform: the report of an ALB cutover says when each write was in effect
// and prints the rules' final weights as Terraform's forward blocks.
func TestALBReportTerraform(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f := newFakeELB()
	lv := newALBLever(albTestPlan(), f)
	s, _ := lv.Read(context.Background(), ReadOptions{Runner: testRunner})
	w, err := lv.Write(context.Background(), s, Change{Weights: map[string]int64{"blue": 0, "green": 100}}, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	w100 := map[string]int64{"blue": 0, "green": 100}
	entries := []journal.Entry{
		{Kind: kindStart, Step: stepNone, Time: t0, By: "alice@laptop", Weights: map[string]int64{"blue": 100, "green": 0}, Data: s.StartData()},
		{Kind: kindIntent, Step: 0, Time: t0, Weights: w100, Detail: "step 1 of 1"},
		{Kind: kindWritten, Step: 0, Time: t0, Weights: w100, Detail: w.Detail, Data: w.Data},
		{Kind: kindInSync, Step: 0, Time: t0, Detail: "12ms"},
		{Kind: kindStepPassed, Step: 0, Time: t0},
		{Kind: kindDone, Step: stepNone, Time: t0, Detail: outcomeCompleted},
	}
	rep := BuildReport("shop", entries)
	if rep.Lever != LeverALB || len(rep.Rules) != 2 {
		t.Fatalf("report lever %q, %d rules", rep.Lever, len(rep.Rules))
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `  step 1 of 1      blue=0 green=100       passed   in effect after 12ms
  the listener rules' weights now, as Terraform's forward block (for the module that owns the rules):
    # aws_lb_listener_rule for ` + ruleHTTPS + `
    action {
      type = "forward"
      forward {
        target_group {
          arn    = "` + tgBlue + `" # shop-blue
          weight = 0
        }
        target_group {
          arn    = "` + tgGreen + `" # shop-green
          weight = 100
        }
      }
    }

    # aws_lb_listener for ` + listenerWeb + `
    default_action {
      type = "forward"
      forward {
        target_group {
          arn    = "` + tgBlue + `" # shop-blue
          weight = 0
        }
        target_group {
          arn    = "` + tgGreen + `" # shop-green
          weight = 100
        }
      }
    }
`
	if got := b.String(); !strings.HasSuffix(got, want) {
		t.Errorf("report:\n%s\nwant it to end with:\n%s", got, want)
	}
	stuck := TerraformForward([]RuleWeights{{Rule: ruleHTTPS, TargetGroups: []TargetGroupWeight{{ARN: tgBlue, Name: "shop-blue", Weight: 1}},
		Stickiness: &Stickiness{Enabled: true, DurationSeconds: 300}}})
	if !strings.Contains(stuck, "    stickiness {\n      enabled  = true\n      duration = 300\n    }\n  }\n}\n") {
		t.Errorf("stickiness block:\n%s", stuck)
	}
}
