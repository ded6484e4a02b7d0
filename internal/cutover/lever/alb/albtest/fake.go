// Package albtest is an in-memory stand-in for the ELBv2 calls the ALB lever makes, for
// the lever's pure logic and the engine's tests of it. The end-to-end ALB cutover runs
// against the sandbox's ELBv2 API (test/e2e).
package albtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/smithy-go"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// The shop load balancer's ARNs: its HTTPS rule, its HTTP listener, and three target
// groups (from, to and a third).
const (
	ARN         = "arn:aws:elasticloadbalancing:us-east-1:123456789012:"
	RuleHTTPS   = ARN + "listener-rule/app/shop/50dc6c495c0c9188/f2f7dc8efc522ab2/9683b2d02a6cabee"
	ListenerWeb = ARN + "listener/app/shop/50dc6c495c0c9188/0467ef3c8400ae65"
	TGBlue      = ARN + "targetgroup/shop-blue/73e2d6bc24d8a067"
	TGGreen     = ARN + "targetgroup/shop-green/1a2b3c4d5e6f7a8b"
	TGGrey      = ARN + "targetgroup/shop-grey/0f0f0f0f0f0f0f0f"
)

// FakeELB keeps listener rules, listeners, target groups and their health in memory, and
// answers the calls the lever makes as ELBv2 does (its error codes included).
type FakeELB struct {
	// Mu guards the rest.
	Mu sync.Mutex
	// Rules and Listeners are by ARN; Groups every target group; Health each group's
	// targets' states.
	Rules     map[string]types.Rule
	Listeners map[string]types.Listener
	Groups    []types.TargetGroup
	Health    map[string][]types.TargetHealthStateEnum
	// Fail makes the next Modify call on the ARN fail.
	Fail map[string]error
	// Calls lists the Modify calls made: "ModifyRule <arn>".
	Calls []string
	// Tags are every rule's tags (a listener's default rule's too), by rule ARN; a
	// listener's default rule is DefaultRule(listener).
	Tags map[string][]types.Tag
	// TagCalls counts AddTags and RemoveTags calls.
	TagCalls int
}

// DefaultRule is the ARN of the fake listener's default rule.
func DefaultRule(listener string) string {
	return strings.Replace(listener, ":listener/", ":listener-rule/", 1) + "/defa017defa017de"
}

// APIErr is the ELBv2 error code with msg.
func APIErr(code, msg string) error { return &smithy.GenericAPIError{Code: code, Message: msg} }

// Runner is the runner the lever's tests read and write as.
var Runner = registry.Runner{Token: "7e577e577e577e57", Host: "laptop", PID: 4242}

// Forward is a forward action to groups (ARN, weight, ARN, weight, ...), with stick.
func Forward(stick *types.TargetGroupStickinessConfig, groups ...any) types.Action {
	fc := &types.ForwardActionConfig{TargetGroupStickinessConfig: stick}
	for i := 0; i < len(groups); i += 2 {
		fc.TargetGroups = append(fc.TargetGroups, types.TargetGroupTuple{TargetGroupArn: aws.String(groups[i].(string)), Weight: aws.Int32(int32(groups[i+1].(int)))})
	}
	return types.Action{Type: types.ActionTypeEnumForward, Order: aws.Int32(2), ForwardConfig: fc}
}

// NewFakeELB holds the HTTPS rule (authenticate, then forward blue=100 green=0) and the
// HTTP listener's default action (a plain forward to blue).
func NewFakeELB() *FakeELB {
	oidc := types.Action{Type: types.ActionTypeEnumAuthenticateOidc, Order: aws.Int32(1), AuthenticateOidcConfig: &types.AuthenticateOidcActionConfig{
		Issuer: aws.String("https://idp.example.com"), ClientId: aws.String("shop"), AuthorizationEndpoint: aws.String("https://idp.example.com/auth"),
		TokenEndpoint: aws.String("https://idp.example.com/token"), UserInfoEndpoint: aws.String("https://idp.example.com/me")}}
	f := &FakeELB{
		Rules: map[string]types.Rule{RuleHTTPS: {RuleArn: aws.String(RuleHTTPS), Priority: aws.String("10"),
			Conditions: []types.RuleCondition{{Field: aws.String("host-header"), HostHeaderConfig: &types.HostHeaderConditionConfig{Values: []string{"shop.example.com"}}}},
			Actions:    []types.Action{oidc, Forward(&types.TargetGroupStickinessConfig{Enabled: aws.Bool(false)}, TGBlue, 100, TGGreen, 0)}}},
		Listeners: map[string]types.Listener{ListenerWeb: {ListenerArn: aws.String(ListenerWeb), Port: aws.Int32(80), Protocol: types.ProtocolEnumHttp,
			DefaultActions: []types.Action{{Type: types.ActionTypeEnumForward, TargetGroupArn: aws.String(TGBlue)}}}},
		Health: map[string][]types.TargetHealthStateEnum{
			TGBlue:  {types.TargetHealthStateEnumHealthy, types.TargetHealthStateEnumHealthy},
			TGGreen: {types.TargetHealthStateEnumHealthy, types.TargetHealthStateEnumInitial},
		},
		Fail: map[string]error{},
		Tags: map[string][]types.Tag{},
	}
	for _, arn := range []string{TGBlue, TGGreen, TGGrey} {
		f.Groups = append(f.Groups, types.TargetGroup{TargetGroupArn: aws.String(arn), TargetGroupName: aws.String(spec.TargetGroupName(arn))})
	}
	return f
}

// DescribeRules is ELBv2's, on what the fake holds.
func (f *FakeELB) DescribeRules(_ context.Context, in *elbv2.DescribeRulesInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeRulesOutput, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	out := &elbv2.DescribeRulesOutput{}
	if in.ListenerArn != nil {
		// A listener's rules, one per page (as a marker-paged listing), in ARN order.
		var arns []string
		for arn := range f.Rules {
			if parentARN(arn) == *in.ListenerArn {
				arns = append(arns, arn)
			}
		}
		slices.Sort(arns)
		if _, ok := f.Listeners[*in.ListenerArn]; ok {
			arns = append(arns, DefaultRule(*in.ListenerArn)) // leveralb.ELBv2 lists it last
		} else if len(arns) == 0 {
			return nil, APIErr("ListenerNotFound", "One or more listeners not found")
		}
		r, next := page(arns, in.Marker)
		switch {
		case r == DefaultRule(*in.ListenerArn):
			out.Rules = append(out.Rules, types.Rule{RuleArn: aws.String(r), IsDefault: aws.Bool(true), Priority: aws.String("default"),
				Actions: slices.Clone(f.Listeners[*in.ListenerArn].DefaultActions)})
		case r != "":
			out.Rules = append(out.Rules, f.Rules[r])
		}
		out.NextMarker = next
		return out, nil
	}
	for _, arn := range in.RuleArns {
		r, ok := f.Rules[arn]
		if !ok {
			return nil, APIErr("RuleNotFound", "One or more rules not found")
		}
		r.Actions = slices.Clone(r.Actions)
		out.Rules = append(out.Rules, r)
	}
	return out, nil
}

// DescribeListeners is ELBv2's, on what the fake holds.
func (f *FakeELB) DescribeListeners(_ context.Context, in *elbv2.DescribeListenersInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeListenersOutput, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	out := &elbv2.DescribeListenersOutput{}
	if in.LoadBalancerArn != nil {
		var arns []string
		for arn := range f.Listeners {
			if parentARN(arn) == *in.LoadBalancerArn {
				arns = append(arns, arn)
			}
		}
		if len(arns) == 0 {
			return nil, APIErr("LoadBalancerNotFound", "One or more load balancers not found")
		}
		slices.Sort(arns)
		l, next := page(arns, in.Marker)
		out.Listeners, out.NextMarker = []types.Listener{f.Listeners[l]}, next
		return out, nil
	}
	for _, arn := range in.ListenerArns {
		l, ok := f.Listeners[arn]
		if !ok {
			return nil, APIErr("ListenerNotFound", "One or more listeners not found")
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

func (f *FakeELB) modify(op, arn string) error {
	f.Calls = append(f.Calls, op+" "+arn)
	if err := f.Fail[arn]; err != nil {
		delete(f.Fail, arn)
		return err
	}
	return nil
}

// ModifyRule is ELBv2's, on what the fake holds.
func (f *FakeELB) ModifyRule(_ context.Context, in *elbv2.ModifyRuleInput, _ ...func(*elbv2.Options)) (*elbv2.ModifyRuleOutput, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	arn := aws.ToString(in.RuleArn)
	if err := f.modify("ModifyRule", arn); err != nil {
		return nil, err
	}
	r, ok := f.Rules[arn]
	if !ok {
		return nil, APIErr("RuleNotFound", "One or more rules not found")
	}
	r.Actions = in.Actions
	f.Rules[arn] = r
	return &elbv2.ModifyRuleOutput{Rules: []types.Rule{r}}, nil
}

// ModifyListener is ELBv2's, on what the fake holds.
func (f *FakeELB) ModifyListener(_ context.Context, in *elbv2.ModifyListenerInput, _ ...func(*elbv2.Options)) (*elbv2.ModifyListenerOutput, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	arn := aws.ToString(in.ListenerArn)
	if err := f.modify("ModifyListener", arn); err != nil {
		return nil, err
	}
	l, ok := f.Listeners[arn]
	if !ok {
		return nil, APIErr("ListenerNotFound", "One or more listeners not found")
	}
	l.DefaultActions = in.DefaultActions
	f.Listeners[arn] = l
	return &elbv2.ModifyListenerOutput{Listeners: []types.Listener{l}}, nil
}

// DescribeTargetGroups is ELBv2's, on what the fake holds.
func (f *FakeELB) DescribeTargetGroups(_ context.Context, in *elbv2.DescribeTargetGroupsInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTargetGroupsOutput, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	out := &elbv2.DescribeTargetGroupsOutput{}
	for _, g := range f.Groups {
		if slices.Contains(in.Names, aws.ToString(g.TargetGroupName)) || slices.Contains(in.TargetGroupArns, aws.ToString(g.TargetGroupArn)) {
			out.TargetGroups = append(out.TargetGroups, g)
		}
	}
	if len(out.TargetGroups) < len(in.Names)+len(in.TargetGroupArns) {
		return nil, APIErr("TargetGroupNotFound", "One or more target groups not found")
	}
	return out, nil
}

// DescribeTargetHealth is ELBv2's, on what the fake holds.
func (f *FakeELB) DescribeTargetHealth(_ context.Context, in *elbv2.DescribeTargetHealthInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTargetHealthOutput, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	out := &elbv2.DescribeTargetHealthOutput{}
	for i, st := range f.Health[aws.ToString(in.TargetGroupArn)] {
		out.TargetHealthDescriptions = append(out.TargetHealthDescriptions, types.TargetHealthDescription{
			Target: &types.TargetDescription{Id: aws.String(fmt.Sprintf("10.0.0.%d", i+1))}, TargetHealth: &types.TargetHealth{State: st}})
	}
	return out, nil
}

// taggable reports whether arn is a rule the fake holds, a listener's default rule included.
func (f *FakeELB) taggable(arn string) bool {
	if _, ok := f.Rules[arn]; ok {
		return true
	}
	for l := range f.Listeners {
		if DefaultRule(l) == arn {
			return true
		}
	}
	return false
}

// AddTags tags one rule, as ELBv2 does (one resource per call, 50 tags at most).
func (f *FakeELB) AddTags(_ context.Context, in *elbv2.AddTagsInput, _ ...func(*elbv2.Options)) (*elbv2.AddTagsOutput, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.TagCalls++
	if len(in.ResourceArns) != 1 {
		return nil, APIErr("ValidationError", "Only one resource can be tagged at a time")
	}
	arn := in.ResourceArns[0]
	if !f.taggable(arn) {
		return nil, APIErr("RuleNotFound", "One or more rules not found")
	}
	have := slices.Clone(f.Tags[arn])
	for _, t := range in.Tags {
		if i := slices.IndexFunc(have, func(h types.Tag) bool { return aws.ToString(h.Key) == aws.ToString(t.Key) }); i >= 0 {
			have[i] = t
		} else {
			have = append(have, t)
		}
	}
	if len(have) > 50 {
		return nil, APIErr("TooManyTags", "You've reached the limit on the number of tags for this resource")
	}
	f.Tags[arn] = have
	return &elbv2.AddTagsOutput{}, nil
}

// RemoveTags removes keys from one rule; a key it lacks is ignored.
func (f *FakeELB) RemoveTags(_ context.Context, in *elbv2.RemoveTagsInput, _ ...func(*elbv2.Options)) (*elbv2.RemoveTagsOutput, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.TagCalls++
	if len(in.ResourceArns) != 1 {
		return nil, APIErr("ValidationError", "Only one resource can be untagged at a time")
	}
	arn := in.ResourceArns[0]
	if !f.taggable(arn) {
		return nil, APIErr("RuleNotFound", "One or more rules not found")
	}
	f.Tags[arn] = slices.DeleteFunc(slices.Clone(f.Tags[arn]), func(t types.Tag) bool { return slices.Contains(in.TagKeys, aws.ToString(t.Key)) })
	return &elbv2.RemoveTagsOutput{}, nil
}

// DescribeTags describes up to 20 rules' tags; one that is gone fails the call.
func (f *FakeELB) DescribeTags(_ context.Context, in *elbv2.DescribeTagsInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTagsOutput, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if len(in.ResourceArns) > 20 {
		return nil, APIErr("ValidationError", "too many resources")
	}
	out := &elbv2.DescribeTagsOutput{}
	for _, arn := range in.ResourceArns {
		if !f.taggable(arn) {
			return nil, APIErr("RuleNotFound", "One or more rules not found")
		}
		out.TagDescriptions = append(out.TagDescriptions, types.TagDescription{ResourceArn: aws.String(arn), Tags: slices.Clone(f.Tags[arn])})
	}
	return out, nil
}

// SetWeights sets a rule's (or listener's) forward weights behind the lever's back.
func (f *FakeELB) SetWeights(arn string, groups ...any) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if r, ok := f.Rules[arn]; ok {
		r.Actions = []types.Action{r.Actions[0], Forward(nil, groups...)}
		f.Rules[arn] = r
		return
	}
	l := f.Listeners[arn]
	l.DefaultActions = []types.Action{Forward(nil, groups...)}
	f.Listeners[arn] = l
}

// Plan moves the HTTPS rule and the HTTP listener from shop-blue (named by ARN) to
// shop-green (by name): 0 → 10 → 50 → 100 %.
func Plan() *spec.Plan {
	p := &spec.Plan{Name: "shop", ALB: &spec.ALB{ListenerRules: []string{RuleHTTPS, ListenerWeb}, From: TGBlue, To: "shop-green"},
		From: "blue", To: "green", Rollback: spec.PlanRollback{Mode: spec.RollbackImmediate}, InSyncTimeout: time.Second, StepTimeout: time.Second}
	for _, pct := range []int64{0, 10, 50, 100} {
		p.Steps = append(p.Steps, spec.PlanStep{Weights: spec.Weights{From: 100 - pct, To: pct}})
	}
	return p
}

// GroupsOf renders a rule's forward weights as the fake holds them.
func (f *FakeELB) GroupsOf(arn string) string {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	acts := f.Listeners[arn].DefaultActions
	if r, ok := f.Rules[arn]; ok {
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
