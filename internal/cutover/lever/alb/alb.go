// Package alb is the ALB lever of a cutover: the target-group weights of ALB listener
// rules' forward actions (see the comment below).
package alb

// The ALB lever: the target-group weights of the forward actions of ALB listener rules
// (and of listeners' default actions), moved by ModifyRule and ModifyListener. No DNS
// answer changes, so no resolver cache keeps a client on the old cluster, and a weight
// applies to the next request: a step holds for its pause alone (the lever's TTL is 0).
//
// Network Load Balancers. Since November 2025 an NLB listener's default action forwards to
// several weighted target groups too, and ModifyListener moves them: a plan lists the NLB
// listener's ARN (…:listener/net/…) and the lever moves it exactly as an ALB listener's
// default action. The kind is told by the ARN, nothing else in the plan changes. An NLB
// applies a weight to new connections only (existing ones stay where they are), and
// CloudWatch publishes its flow counts per load balancer only, so an NLB plan gates on
// targetHealth and the clusters' own metrics (albTraffic and retire.cloudWatch are refused).
//
// Weights. A step's weights are the plan's: a percent p writes from=100-p, to=p; an
// explicit step writes its weights (0..999, ELBv2's range). A rule's other target groups
// (a third cluster's) keep the weight they have, so a group of weight W gets
// W/(from+to+W) of the rule's requests, and from and to split the rest as the step says:
// `to` gets to/(from+to) of it. The shares are per rule; every rule gets the same weights.
//
// "Atomically". ELBv2 has no transaction over several rules, nor a conditional write. A
// write is therefore: the step's intent journaled first (by the runner); then one call
// per rule whose forward action differs from the step's, in the plan's order, each
// replacing the rule's actions with those read, the forward action's target-group
// weights alone changed (conditions, other actions, stickiness untouched); then every
// rule described again until each shows the weights written (InEffect). A call that fails
// stops the write and the run, with the rules before it at the new weights and the rest
// at the old: the journal holds the intent without its "written" entry, exactly as after
// a crash between two calls, and `run --resume` writes the whole step again, skipping the
// rules already at it (weights are absolute, so this is idempotent). Between the read the
// write is built on and the calls, another writer is not locked out (there is nothing to
// lock with): what it wrote is found as drift at the next check, like any weight the
// cutover did not write. Another runner of the same cutover is kept out by authority tags
// on the rules (authority.go), taken before the first call.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/authority"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// ELBv2 is the part of the ELBv2 API the ALB lever calls; *elasticloadbalancingv2.Client
// (NewELBv2) implements it.
type ELBv2 interface {
	DescribeListeners(ctx context.Context, in *elbv2.DescribeListenersInput, optFns ...func(*elbv2.Options)) (*elbv2.DescribeListenersOutput, error)
	DescribeRules(ctx context.Context, in *elbv2.DescribeRulesInput, optFns ...func(*elbv2.Options)) (*elbv2.DescribeRulesOutput, error)
	ModifyListener(ctx context.Context, in *elbv2.ModifyListenerInput, optFns ...func(*elbv2.Options)) (*elbv2.ModifyListenerOutput, error)
	ModifyRule(ctx context.Context, in *elbv2.ModifyRuleInput, optFns ...func(*elbv2.Options)) (*elbv2.ModifyRuleOutput, error)
	DescribeTargetGroups(ctx context.Context, in *elbv2.DescribeTargetGroupsInput, optFns ...func(*elbv2.Options)) (*elbv2.DescribeTargetGroupsOutput, error)
	DescribeTargetHealth(ctx context.Context, in *elbv2.DescribeTargetHealthInput, optFns ...func(*elbv2.Options)) (*elbv2.DescribeTargetHealthOutput, error)
	// The authority tags on the rules (authority.go).
	AddTags(ctx context.Context, in *elbv2.AddTagsInput, optFns ...func(*elbv2.Options)) (*elbv2.AddTagsOutput, error)
	RemoveTags(ctx context.Context, in *elbv2.RemoveTagsInput, optFns ...func(*elbv2.Options)) (*elbv2.RemoveTagsOutput, error)
	DescribeTags(ctx context.Context, in *elbv2.DescribeTagsInput, optFns ...func(*elbv2.Options)) (*elbv2.DescribeTagsOutput, error)
}

var _ ELBv2 = (*elbv2.Client)(nil)

// NewELBv2 returns an ELBv2 client for cfg (credentials, region, retries, HTTP client as
// the caller loaded them), sending to endpoint instead of AWS's when it is set: the
// sandbox's URL, as the Route 53 provider's Endpoint.
func NewELBv2(cfg aws.Config, endpoint string) *elbv2.Client {
	return elbv2.NewFromConfig(cfg, func(o *elbv2.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}

// maxForwardGroups is how many target groups an ALB forward action takes (not adjustable).
const maxForwardGroups = 5

// albLever is the ALB lever for one plan.
type albLever struct {
	lever.Base
	p   *spec.Plan
	api ELBv2
	// from and to are the plan's target groups, resolved to ARNs once (a name is looked
	// up; an ARN is checked to exist).
	from, to targetGroup
	// defaults are listeners' default rules, which carry the authority tag of a
	// listener's default action, found once each.
	defaults map[string]string
}

// targetGroup is a target group's ARN and name.
type targetGroup struct {
	arn, name string
}

var (
	_ lever.Typed[*albLive] = (*albLever)(nil)
	_ lever.Snapshot        = (*albLive)(nil)
)

func newALBLever(p *spec.Plan, api ELBv2) *albLever {
	return &albLever{p: p, api: api}
}

// New returns the ALB lever of p: its listener rules' target-group weights, read and
// written with api. It calls nothing until it is pulled.
func New(p *spec.Plan, api ELBv2) lever.Lever { return lever.Wrap[*albLive](newALBLever(p, api)) }

// albLive is the plan's listener rules as read at one moment, or as a write leaves them.
type albLive struct {
	lever.SnapshotBase
	// from and to are the plan's clusters (their names) and target groups.
	fromName, toName string
	from, to         targetGroup
	// rules are in the plan's order; a partial read leaves out those it skipped.
	rules   []albRule
	skipped []string
	// authorityHold is the runner that read the rules, for the cutover, and the other
	// runners whose authority tags the next write removes (package authority).
	authority.Hold
}

// albRule is one listener rule's forward action, or a listener's default one.
type albRule struct {
	arn string
	// listener is set for a listener's default action (ModifyListener), else a rule's
	// (ModifyRule).
	listener bool
	// where says which rule it is for people: "priority 10; host app.example.com".
	where string
	// actions are the rule's actions as read; fwd indexes the forward action among them.
	actions []types.Action
	fwd     int
	// groups are the forward action's target groups and weights, in its order; from and
	// to are always there: one that the action does not list counts with weight 0 (what
	// the ALB sends it), and a write that moves it adds it to the action.
	groups []tgWeight
	// stickiness is the forward action's group stickiness as read, nil for none.
	stickiness *types.TargetGroupStickinessConfig
	// tagged is the cutover's authority tags for this rule: its tagARN is the listener
	// rule that carries them, the rule itself or a listener's default rule (ELBv2 allows
	// 50 tags on it).
	authority.Tagged
}

// tgWeight is one target group of a forward action and its weight. listed is false for a
// from or to group the action does not list (yet).
type tgWeight struct {
	arn    string
	weight int64
	listed bool
}

// Kind is LeverALB.
func (a *albLever) Kind() string { return lever.ALB }

// Read resolves the target groups (once), describes every rule and listener of the plan
// and checks that each forwards to from or to.
func (a *albLever) Read(ctx context.Context, o lever.ReadOptions) (*albLive, error) {
	if err := a.resolve(ctx); err != nil {
		return nil, err
	}
	found, err := a.describe(ctx)
	if err != nil {
		return nil, &lever.ReadError{Err: err}
	}
	l := &albLive{fromName: a.p.From, toName: a.p.To, from: a.from, to: a.to}
	var problems []string
	for _, arn := range a.p.ALB.ListenerRules {
		var rule albRule
		problem := ""
		if raw, ok := found[arn]; ok {
			rule, problem = l.parse(raw)
		} else if (o.Held || o.Started) && !o.Partial {
			return nil, &lever.MemberGoneError{Member: ruleKind(arn) + " " + arn, Where: "its load balancer"}
		} else {
			problem = fmt.Sprintf("%s %s: not found: the plan's listener rules must exist before a cutover moves them", ruleKind(arn), arn)
		}
		if problem != "" {
			if o.Partial {
				l.skipped = append(l.skipped, problem)
			} else {
				problems = append(problems, problem)
			}
			continue
		}
		l.rules = append(l.rules, rule)
	}
	// The tags after the rules: a write by another runner that took the rules over comes
	// after its tags, so a read that finds the new weights finds its tags too.
	held, err := a.authorityProblems(ctx, l, o)
	if err != nil {
		return nil, err
	}
	problems = append(problems, held...)
	if len(problems) > 0 {
		return nil, &lever.NotReadyError{Problems: problems, Lever: lever.ALB}
	}
	return l, nil
}

// resolve finds the ARN of each target group the plan names, and checks that each
// exists; done once per lever.
func (a *albLever) resolve(ctx context.Context) error {
	if a.from.arn != "" && a.to.arn != "" {
		return nil
	}
	if a.api == nil {
		return fmt.Errorf("cutover %s moves ALB listener rules (spec.alb), and no ELBv2 client is configured", a.p.Name)
	}
	var problems []string
	var got [2]targetGroup
	for i, ref := range []string{a.p.ALB.From, a.p.ALB.To} {
		in := &elbv2.DescribeTargetGroupsInput{Names: []string{ref}}
		if strings.HasPrefix(ref, "arn:") {
			in = &elbv2.DescribeTargetGroupsInput{TargetGroupArns: []string{ref}}
		}
		out, err := a.api.DescribeTargetGroups(ctx, in)
		switch {
		case authority.IsAPIError(err, "TargetGroupNotFound"), err == nil && len(out.TargetGroups) == 0:
			problems = append(problems, fmt.Sprintf("target group %s (spec.alb.%s): not found", ref, [2]string{"from", "to"}[i]))
			continue
		case err != nil:
			return &lever.ReadError{Err: fmt.Errorf("describe target group %s: %w", ref, err)}
		}
		tg := out.TargetGroups[0]
		got[i] = targetGroup{arn: aws.ToString(tg.TargetGroupArn), name: aws.ToString(tg.TargetGroupName)}
	}
	if len(problems) > 0 {
		return &lever.NotReadyError{Problems: problems, Lever: lever.ALB}
	}
	if got[0].arn == got[1].arn {
		return &lever.NotReadyError{Problems: []string{fmt.Sprintf("spec.alb.from %s and spec.alb.to %s are the same target group %s", a.p.ALB.From, a.p.ALB.To, got[0].arn)}, Lever: lever.ALB}
	}
	a.from, a.to = got[0], got[1]
	return nil
}

// rawRule is a rule or a listener as described.
type rawRule struct {
	arn      string
	listener bool
	where    string
	actions  []types.Action
}

// describe reads the plan's rules (DescribeRules) and listeners (DescribeListeners), one
// call each; when one of them is gone, each is described alone to tell which. The result
// holds those found, by ARN.
func (a *albLever) describe(ctx context.Context) (map[string]rawRule, error) {
	var rules, listeners []string
	for _, arn := range a.p.ALB.ListenerRules {
		if spec.IsListenerARN(arn) {
			listeners = append(listeners, arn)
		} else {
			rules = append(rules, arn)
		}
	}
	found := map[string]rawRule{}
	if err := describeEach(ctx, rules, "RuleNotFound", func(ctx context.Context, arns []string) error {
		out, err := a.api.DescribeRules(ctx, &elbv2.DescribeRulesInput{RuleArns: arns})
		if err != nil {
			return err
		}
		for _, r := range out.Rules {
			arn := aws.ToString(r.RuleArn)
			found[arn] = rawRule{arn: arn, where: ruleWhere(r), actions: r.Actions}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("describe rules: %w", err)
	}
	if err := describeEach(ctx, listeners, "ListenerNotFound", func(ctx context.Context, arns []string) error {
		out, err := a.api.DescribeListeners(ctx, &elbv2.DescribeListenersInput{ListenerArns: arns})
		if err != nil {
			return err
		}
		for _, l := range out.Listeners {
			arn := aws.ToString(l.ListenerArn)
			found[arn] = rawRule{arn: arn, listener: true, where: fmt.Sprintf("%s:%d default action", l.Protocol, aws.ToInt32(l.Port)), actions: l.DefaultActions}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("describe listeners: %w", err)
	}
	return found, nil
}

// describeEach calls describe with every ARN at once, and, when that fails with
// notFound (one of them is gone, and ELBv2 then answers for none), with each alone,
// leaving out those not found.
func describeEach(ctx context.Context, arns []string, notFound string, describe func(context.Context, []string) error) error {
	if len(arns) == 0 {
		return nil
	}
	err := describe(ctx, arns)
	if !authority.IsAPIError(err, notFound) {
		return err
	}
	for _, arn := range arns {
		if err := describe(ctx, []string{arn}); err != nil && !authority.IsAPIError(err, notFound) {
			return err
		}
	}
	return nil
}

// ruleWhere describes a rule for people: its priority and conditions.
func ruleWhere(r types.Rule) string {
	parts := []string{"priority " + aws.ToString(r.Priority)}
	for _, c := range r.Conditions {
		var vals []string
		switch {
		case c.HostHeaderConfig != nil:
			vals = c.HostHeaderConfig.Values
		case c.PathPatternConfig != nil:
			vals = c.PathPatternConfig.Values
		default:
			vals = c.Values
		}
		parts = append(parts, strings.TrimSpace(aws.ToString(c.Field)+" "+strings.Join(vals, ",")))
	}
	return strings.Join(parts, "; ")
}

// parse reads a rule's forward action, and says why the cutover cannot move it, if so.
func (l *albLive) parse(raw rawRule) (albRule, string) {
	rule := albRule{arn: raw.arn, listener: raw.listener, where: raw.where, actions: raw.actions, fwd: -1}
	var kinds []string
	for i, act := range raw.actions {
		kinds = append(kinds, string(act.Type))
		if act.Type == types.ActionTypeEnumForward {
			rule.fwd = i
		}
	}
	name := ruleName(raw.arn)
	if rule.fwd < 0 {
		return rule, fmt.Sprintf("%s (%s): its action is %s, not forward: it has no target group weights to move", name, raw.arn, strings.Join(kinds, ", "))
	}
	act := raw.actions[rule.fwd]
	if fc := act.ForwardConfig; fc != nil && len(fc.TargetGroups) > 0 {
		for _, t := range fc.TargetGroups {
			// A tuple without a weight is a forward to that group alone, as ELBv2 lists a
			// plain TargetGroupArn: weight 1.
			w := int64(1)
			if t.Weight != nil {
				w = int64(*t.Weight)
			}
			rule.groups = append(rule.groups, tgWeight{arn: aws.ToString(t.TargetGroupArn), weight: w, listed: true})
		}
		rule.stickiness = fc.TargetGroupStickinessConfig
	} else if act.TargetGroupArn != nil {
		rule.groups = append(rule.groups, tgWeight{arn: *act.TargetGroupArn, weight: 1, listed: true})
	}
	hasFrom, hasTo := rule.index(l.from.arn) >= 0, rule.index(l.to.arn) >= 0
	if !hasFrom && !hasTo {
		return rule, fmt.Sprintf("%s (%s) forwards to %s, neither to from (%s) nor to to (%s): not a rule this cutover moves",
			name, raw.arn, rule.groupNames(), l.from.name, l.to.name)
	}
	for _, tg := range []targetGroup{l.from, l.to} {
		if rule.index(tg.arn) >= 0 {
			continue
		}
		if len(rule.groups) >= maxForwardGroups {
			return rule, fmt.Sprintf("%s (%s) forwards to %d target groups (%s), the most an ALB forward action takes: adding %s would be refused (TooManyTargetGroups)",
				name, raw.arn, len(rule.groups), rule.groupNames(), tg.name)
		}
		rule.groups = append(rule.groups, tgWeight{arn: tg.arn})
	}
	return rule, ""
}

// index returns the position of the target group arn among the rule's groups, -1 if none.
func (r *albRule) index(arn string) int {
	return slices.IndexFunc(r.groups, func(g tgWeight) bool { return g.arn == arn })
}

// weight returns the target group's weight in the rule (0 when it is not listed).
func (r *albRule) weight(arn string) int64 {
	if i := r.index(arn); i >= 0 {
		return r.groups[i].weight
	}
	return 0
}

// others sums the weights of the rule's groups that are neither from nor to.
func (r *albRule) others(from, to string) int64 {
	var sum int64
	for _, g := range r.groups {
		if g.arn != from && g.arn != to {
			sum += g.weight
		}
	}
	return sum
}

// groupNames renders the rule's target groups: "shop-blue=100 shop-green=0".
func (r *albRule) groupNames() string {
	var parts []string
	for _, g := range r.groups {
		parts = append(parts, fmt.Sprintf("%s=%d", spec.TargetGroupName(g.arn), g.weight))
	}
	return strings.Join(parts, " ")
}

// sameWeights reports whether r and o give every target group the same weight.
func (r *albRule) sameWeights(o *albRule) bool {
	for _, g := range append(slices.Clone(r.groups), o.groups...) {
		if r.weight(g.arn) != o.weight(g.arn) {
			return false
		}
	}
	return true
}

// ruleName names a rule briefly for messages: "rule shop/9683b2d02a6cabee", "listener
// shop/0467ef3c8400ae65" (the load balancer's name and the rule's or listener's id).
func ruleName(arn string) string {
	kind := ruleKind(arn)
	// listener/app/NAME/LB-ID/LISTENER-ID, listener-rule/app/NAME/LB-ID/LISTENER-ID/RULE-ID
	parts := strings.Split(arn, "/")
	if len(parts) < 5 {
		return kind + " " + arn
	}
	return kind + " " + parts[2] + "/" + parts[len(parts)-1]
}

// ruleKind is "listener" for a listener's ARN, else "rule".
func ruleKind(arn string) string {
	if spec.IsListenerARN(arn) {
		return "listener"
	}
	return "rule"
}

// with returns l with from and to at w's weights (a key w lacks keeps the weight read).
func (l *albLive) with(w map[string]int64) *albLive {
	n := *l
	n.rules = make([]albRule, len(l.rules))
	for i, r := range l.rules {
		r.groups = slices.Clone(r.groups)
		for j := range r.groups {
			g := &r.groups[j]
			switch {
			case g.arn == l.from.arn && hasKey(w, l.fromName):
				g.weight = w[l.fromName]
			case g.arn == l.to.arn && hasKey(w, l.toName):
				g.weight = w[l.toName]
			}
		}
		n.rules[i] = r
	}
	return &n
}

func hasKey(m map[string]int64, k string) bool {
	_, ok := m[k]
	return ok
}

// Weights returns from and to → weight in the first rule: every rule moves together.
func (l *albLive) Weights() map[string]int64 {
	if len(l.rules) == 0 {
		return map[string]int64{}
	}
	r := &l.rules[0]
	return map[string]int64{l.fromName: r.weight(l.from.arn), l.toName: r.weight(l.to.arn)}
}

// Members are every target group of every rule: from and to, whose weights the cutover
// writes, and the others, whose weights it must find unchanged.
func (l *albLive) Members() []lever.Member {
	var out []lever.Member
	for _, r := range l.rules {
		src := r.where
		for _, g := range r.groups {
			out = append(out, lever.Member{Key: r.arn + " " + g.arn, Name: ruleName(r.arn) + " target group " + spec.TargetGroupName(g.arn), Weight: g.weight, Source: src})
		}
	}
	return out
}

// TTL is 0: an ALB weight applies to the next request.
func (l *albLive) TTL() int64 { return 0 }

// GateInput has the rules' target groups (targetGroups), for the ALB gates; the ALB
// lever has no records for a DNS gate.
func (l *albLive) GateInput(w map[string]int64) lever.GateInput {
	return lever.GateInput{TargetGroups: l.targetGroups(w)}
}

// NoTraffic names the first rule whose target groups would all weigh 0 with from and to
// at w: the ALB would forward its requests to no group.
func (l *albLive) NoTraffic(w map[string]int64) string {
	for _, r := range l.with(w).rules {
		var sum int64
		for _, g := range r.groups {
			sum += g.weight
		}
		if sum == 0 {
			return ruleName(r.arn)
		}
	}
	return ""
}

// Skipped says which rules a partial read left out.
func (l *albLive) Skipped() []string { return l.skipped }

// TakenOver are the runners whose authority tags the next write removes (an abort or a
// forced release taking the rules over).
func (l *albLive) TakenOver() []registry.Runner { return l.Hold.TakenOver }

// StartData keeps every rule's forward action as found, for the report.
func (l *albLive) StartData() json.RawMessage {
	// The journal's start data, as the engine reads it back.
	b, _ := json.Marshal(struct {
		Lever string        `json:"lever,omitempty"`
		Rules []RuleWeights `json:"rules,omitempty"`
	}{lever.ALB, l.ruleWeights()})
	return b
}

// LogAttr names the load balancers of the rules.
func (l *albLive) LogAttr() slog.Attr {
	var lbs []string
	for _, r := range l.rules {
		name, _, _ := strings.Cut(strings.TrimPrefix(ruleName(r.arn), ruleKind(r.arn)+" "), "/")
		if !slices.Contains(lbs, name) {
			lbs = append(lbs, name)
		}
	}
	return slog.String("alb", strings.Join(lbs, ","))
}

// RuleWeights is one ALB listener rule's forward action as written: its target groups'
// weights and its group stickiness. The report prints the last ones written as
// Terraform's forward block.
type RuleWeights struct {
	// Rule is the listener rule's ARN, or the listener's for its default action.
	Rule string `json:"rule"`
	// Listener is set for a listener's default action.
	Listener bool `json:"listener,omitempty"`
	// TargetGroups are the forward action's groups in its order.
	TargetGroups []TargetGroupWeight `json:"targetGroups"`
	// Stickiness is the action's group stickiness, nil when it has none.
	Stickiness *Stickiness `json:"stickiness,omitempty"`
}

// TargetGroupWeight is one target group of a forward action.
type TargetGroupWeight struct {
	ARN    string `json:"arn"`
	Name   string `json:"name"`
	Weight int64  `json:"weight"`
}

// Stickiness is a forward action's target group stickiness.
type Stickiness struct {
	Enabled bool `json:"enabled"`
	// DurationSeconds is 0 when ELBv2 listed none.
	DurationSeconds int32 `json:"durationSeconds,omitempty"`
}

// ruleWeights returns every rule's forward action for the journal.
func (l *albLive) ruleWeights() []RuleWeights {
	var out []RuleWeights
	for _, r := range l.rules {
		rw := RuleWeights{Rule: r.arn, Listener: r.listener}
		for _, g := range r.groups {
			rw.TargetGroups = append(rw.TargetGroups, TargetGroupWeight{ARN: g.arn, Name: spec.TargetGroupName(g.arn), Weight: g.weight})
		}
		if s := r.stickiness; s != nil {
			rw.Stickiness = &Stickiness{Enabled: aws.ToBool(s.Enabled), DurationSeconds: aws.ToInt32(s.DurationSeconds)}
		}
		out = append(out, rw)
	}
	return out
}

// sendActions are the actions a write sends for r: those read, the forward action's
// target groups at r's weights (every group listed, from and to included), its
// stickiness as read. An OIDC action is sent with UseExistingClientSecret, as ELBv2 never
// returns the secret.
func (r *albRule) sendActions() []types.Action {
	out := make([]types.Action, len(r.actions))
	for i, act := range r.actions {
		if act.AuthenticateOidcConfig != nil {
			c := *act.AuthenticateOidcConfig
			c.ClientSecret, c.UseExistingClientSecret = nil, aws.Bool(true)
			act.AuthenticateOidcConfig = &c
		}
		if i == r.fwd {
			fc := &types.ForwardActionConfig{TargetGroupStickinessConfig: r.stickiness}
			for _, g := range r.groups {
				fc.TargetGroups = append(fc.TargetGroups, types.TargetGroupTuple{TargetGroupArn: aws.String(g.arn), Weight: aws.Int32(int32(g.weight))})
			}
			// With several groups, ELBv2 wants the ForwardConfig alone.
			act.TargetGroupArn, act.ForwardConfig = nil, fc
		}
		out[i] = act
	}
	return out
}

// StartProblems refuses a start from rules that do not all split from and to alike, or
// that forward nowhere, and steps that would leave a rule with no weighted group.
func (a *albLever) StartProblems(l *albLive) []string {
	var out []string
	if len(l.rules) > 0 {
		first := &l.rules[0]
		f0, t0 := first.weight(l.from.arn), first.weight(l.to.arn)
		for i := 1; i < len(l.rules); i++ {
			r := &l.rules[i]
			f, t := r.weight(l.from.arn), r.weight(l.to.arn)
			if f == f0 && t == t0 {
				continue
			}
			// Without another weighted group, only the split between from and to makes
			// the traffic: 1/0 and 100/0 are the same, and a rollback to either is home.
			alone := first.others(l.from.arn, l.to.arn) == 0 && r.others(l.from.arn, l.to.arn) == 0
			if alone && f+t > 0 && f0+t0 > 0 && f*(f0+t0) == f0*(f+t) {
				continue
			}
			out = append(out, fmt.Sprintf("%s weighs %s=%d %s=%d but %s weighs %s=%d %s=%d: a cutover starts every rule from one split, and rolls them all back to it; make them equal first",
				ruleName(first.arn), l.from.name, f0, l.to.name, t0, ruleName(r.arn), l.from.name, f, l.to.name, t))
		}
	}
	if at := l.NoTraffic(nil); at != "" {
		out = append(out, fmt.Sprintf("%s: every target group of its forward action weighs 0, so it forwards nowhere: a cutover from there would roll back onto it; give %s its traffic first", at, l.from.name))
	}
	out = append(out, a.tagProblems(l)...)
	for i, st := range a.p.Steps {
		w := map[string]int64{l.fromName: st.Weights.From, l.toName: st.Weights.To}
		if at := l.NoTraffic(w); at != "" {
			out = append(out, fmt.Sprintf("spec.steps[%d]: weights from 0, to 0 leave %s with no target group of weight above 0, so the ALB would forward its requests nowhere: to take traffic off %s, write percent: 100", i, at, l.fromName))
		}
	}
	return out
}

// Check refuses TTLs (the ALB has none) and weights that leave a rule forwarding nowhere.
func (a *albLever) Check(l *albLive, c lever.Change) []string {
	var out []string
	if len(c.TTLs) > 0 {
		out = append(out, "the ALB lever has no TTL to set (spec.ttl is for Route 53 records)")
	}
	if c.Weights != nil {
		if at := l.NoTraffic(c.Weights); at != "" {
			out = append(out, fmt.Sprintf("weights %s leave %s with no target group of weight above 0: the ALB would forward its requests nowhere", lever.FormatWeights(c.Weights), at))
		}
	}
	return out
}

// Write sends the step's weights to every rule that does not have them, in the plan's
// order (see the file's comment for what that makes atomic).
func (a *albLever) Write(ctx context.Context, l *albLive, c lever.Change, env lever.Env[*albLive]) (lever.Written, error) {
	if len(c.TTLs) > 0 {
		return lever.Written{}, fmt.Errorf("%s: the ALB lever has no TTL to set", env.What)
	}
	if err := env.BeforeSend(l); err != nil {
		return lever.Written{}, err
	}
	// The authority tags before any weight: a runner that loses them writes nothing.
	if err := a.hold(ctx, l, env); err != nil {
		return lever.Written{}, fmt.Errorf("%s: %w", env.What, err)
	}
	want := l.with(c.Weights)
	var rules, listeners, already int
	for i := range want.rules {
		r := &want.rules[i]
		if r.sameWeights(&l.rules[i]) {
			already++
			continue
		}
		if err := a.send(ctx, r); err != nil {
			err = fmt.Errorf("%s: write %s: %s (%d of %d, %s): %w", env.What, lever.FormatWeights(c.Weights), ruleName(r.arn), i+1, len(want.rules), r.arn, err)
			if rules+listeners > 0 {
				// ELBv2 has no transaction: say where the rules stand.
				err = &PartialWriteError{Err: err, Written: rules + listeners, Of: len(want.rules)}
			}
			return lever.Written{}, err
		}
		if r.listener {
			listeners++
		} else {
			rules++
		}
		env.Log.Debug("listener rule written", "rule", r.arn, "weights", r.groupNames())
	}
	detail := fmt.Sprintf("%d ModifyRule, %d ModifyListener", rules, listeners)
	if already > 0 {
		detail += fmt.Sprintf(" (%d already at these weights)", already)
	}
	data, _ := json.Marshal(want.ruleWeights())
	return lever.Written{Detail: detail, Calls: rules + listeners, Data: data, After: want,
		Pending: "the weights written are not yet described by every listener rule"}, nil
}

// send writes r's actions: ModifyListener for a listener's default action, else ModifyRule.
func (a *albLever) send(ctx context.Context, r *albRule) error {
	if r.listener {
		_, err := a.api.ModifyListener(ctx, &elbv2.ModifyListenerInput{ListenerArn: aws.String(r.arn), DefaultActions: r.sendActions()})
		return err
	}
	_, err := a.api.ModifyRule(ctx, &elbv2.ModifyRuleInput{RuleArn: aws.String(r.arn), Actions: r.sendActions()})
	return err
}

// PartialWriteError is an ALB write that stopped after some rules had the new weights:
// ELBv2 has no transaction over several rules. The journal holds the step's intent, and
// `run --resume` writes the step again, skipping the rules already at it.
type PartialWriteError struct {
	Err error
	// Written rules of Of had the new weights when the write stopped.
	Written, Of int
}

// Error says where the rules stand and what continues.
func (e *PartialWriteError) Error() string {
	return fmt.Sprintf("%v; %d of the %d listener rules have the new weights, the others the old ones (ELBv2 has no transaction over several rules): "+
		"`crossfade cutover run --resume` writes the step again (rules already at it are skipped), `crossfade cutover abort` rolls all of them back",
		e.Err, e.Written, e.Of)
}

// Unwrap gives the call's error.
func (e *PartialWriteError) Unwrap() error { return e.Err }

// InEffect describes every rule again and reports whether each has the weights written.
func (a *albLever) InEffect(ctx context.Context, _ lever.Written, want *albLive) (bool, error) {
	if want == nil {
		return false, errors.New("not an ALB write")
	}
	found, err := a.describe(ctx)
	if err != nil {
		return false, err
	}
	for i := range want.rules {
		r := &want.rules[i]
		raw, ok := found[r.arn]
		if !ok {
			return false, fmt.Errorf("%s %s: not found", ruleKind(r.arn), r.arn)
		}
		now, problem := want.parse(raw)
		if problem != "" {
			return false, errors.New(problem)
		}
		if !now.sameWeights(r) {
			return false, nil
		}
	}
	return true, nil
}

// DryRun renders the ModifyRule and ModifyListener calls of the write, one `aws elbv2`
// command per line, as the AWS CLI takes them.
func (a *albLever) DryRun(_ context.Context, l *albLive, c lever.Change) (lever.Rendered, error) {
	if len(c.TTLs) > 0 {
		return lever.Rendered{}, errors.New("the ALB lever has no TTL to set")
	}
	var lines []string
	// The first write tags every rule with the runner's authority first (see hold).
	held := *l
	held.rules = slices.Clone(l.rules)
	for i := range held.rules {
		r := &held.rules[i]
		if !r.Held {
			lines = append(lines, l.tagCommand(r))
			r.Held = true
		}
	}
	want := held.with(c.Weights)
	for i := range want.rules {
		r := &want.rules[i]
		if !r.sameWeights(&l.rules[i]) {
			lines = append(lines, r.cliCommand())
		}
	}
	return lever.Rendered{Doc: []byte(strings.Join(lines, "\n")), Calls: len(lines), After: want}, nil
}

// tagCommand is the AWS CLI command that tags r with the reader's authority.
func (l *albLive) tagCommand(r *albRule) string {
	tag := []types.Tag{{Key: aws.String(authority.Key(l.Cutover, l.Me.Token)), Value: aws.String(authority.Value(l.Me))}}
	return fmt.Sprintf("aws elbv2 add-tags --resource-arns %s --tags %s", r.ARN, lever.ShellQuote(cliJSON(tag)))
}

// cliCommand is the AWS CLI command that makes r's write.
func (r *albRule) cliCommand() string {
	doc := cliJSON(r.sendActions())
	if r.listener {
		return fmt.Sprintf("aws elbv2 modify-listener --listener-arn %s --default-actions %s", r.arn, lever.ShellQuote(doc))
	}
	return fmt.Sprintf("aws elbv2 modify-rule --rule-arn %s --actions %s", r.arn, lever.ShellQuote(doc))
}

// cliJSON renders an ELBv2 request shape as the AWS CLI's JSON takes it: the SDK's field
// names are the API's member names, in the model's order; unset fields are left out.
func cliJSON(v any) string {
	var b bytes.Buffer
	writeCLI(&b, reflect.ValueOf(v))
	return b.String()
}

// writeCLI writes v; it reports false, writing nothing, for a value that is unset.
func writeCLI(b *bytes.Buffer, v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return false
		}
		elem := v.Elem()
		if elem.Kind() == reflect.String { // a *string set to "" is set
			s, _ := json.Marshal(elem.String())
			b.Write(s)
			return true
		}
		return writeCLI(b, elem)
	case reflect.Struct:
		b.WriteByte('{')
		n := 0
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			var fb bytes.Buffer
			if !writeCLI(&fb, v.Field(i)) {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			name, _ := json.Marshal(f.Name)
			b.Write(name)
			b.WriteByte(':')
			b.Write(fb.Bytes())
			n++
		}
		b.WriteByte('}')
		return true
	case reflect.Slice:
		if v.IsNil() {
			return false
		}
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			if !writeCLI(b, v.Index(i)) {
				b.WriteString("null")
			}
		}
		b.WriteByte(']')
		return true
	case reflect.Map:
		if v.IsNil() {
			return false
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			name, _ := json.Marshal(k.String())
			b.Write(name)
			b.WriteByte(':')
			if !writeCLI(b, v.MapIndex(k)) {
				b.WriteString("null")
			}
		}
		b.WriteByte('}')
		return true
	case reflect.String:
		if v.String() == "" { // an enum left unset
			return false
		}
		s, _ := json.Marshal(v.String())
		b.Write(s)
		return true
	}
	s, err := json.Marshal(v.Interface())
	if err != nil {
		return false
	}
	b.Write(s)
	return true
}

// Describe lists every rule with its weights and stickiness, each target group's health,
// and the ALB lever's warnings and notes.
func (a *albLever) Describe(ctx context.Context, l *albLive, pv *lever.Description) error {
	pv.Lever = lever.ALB
	var groups []string // every group of every rule, once, from and to first
	groups = append(groups, l.from.arn, l.to.arn)
	for _, r := range l.rules {
		line := fmt.Sprintf("%s (%s): %s", r.arn, r.where, r.groupNames())
		switch st := r.stickiness; {
		case st != nil && aws.ToBool(st.Enabled):
			line += fmt.Sprintf(", group stickiness %ds", aws.ToInt32(st.DurationSeconds))
			pv.Warnings = append(pv.Warnings, fmt.Sprintf("%s: group stickiness is on for %ds: a client that has its cookie stays on the group it was sent to for that long, so a step moves new clients only, and a rollback leaves stuck clients on %s until their cookie expires",
				ruleName(r.arn), aws.ToInt32(st.DurationSeconds), l.to.name))
		default:
			line += ", group stickiness off"
		}
		pv.Rules = append(pv.Rules, line)
		for _, g := range r.groups {
			if !g.listed {
				pv.Notes = append(pv.Notes, fmt.Sprintf("%s does not forward to %s yet: the first write that gives it a weight adds it to the forward action", ruleName(r.arn), spec.TargetGroupName(g.arn)))
			}
			if !slices.Contains(groups, g.arn) {
				groups = append(groups, g.arn)
			}
		}
		if o := r.others(l.from.arn, l.to.arn); o > 0 {
			f, t := r.weight(l.from.arn), r.weight(l.to.arn)
			pv.Notes = append(pv.Notes, fmt.Sprintf("%s forwards to other target groups too (weight %d in all): they keep their weights, so their share is %d/(from+to+%d): %s now, and %s at a step of from+to = 100",
				ruleName(r.arn), o, o, o, percentOf(o, f+t+o), percentOf(o, 100+o)))
		}
	}
	for _, arn := range groups {
		healthy, summary, err := a.health(ctx, arn)
		name := spec.TargetGroupName(arn)
		if err != nil {
			pv.Warnings = append(pv.Warnings, fmt.Sprintf("target group %s: cannot read its target health: %v", name, err))
			continue
		}
		pv.Health = append(pv.Health, fmt.Sprintf("target group %s: %s", name, summary))
		if healthy == 0 && (arn == l.to.arn || l.carries(arn)) {
			pv.Warnings = append(pv.Warnings, fmt.Sprintf("target group %s has no healthy target (%s): every request the ALB sends it fails; register healthy targets (its cluster's TargetGroupBinding) before a step gives it weight", name, summary))
		}
	}
	if note := a.cloudWatchNote(); note != "" {
		pv.Notes = append(pv.Notes, note)
	}
	pv.Notes = append(pv.Notes, fmt.Sprintf("the run tags each rule (a listener: its default rule) with its authority, %s%s/TOKEN, before its first write, and removes the tag when the cutover ends: "+
		"a second runner of the cutover (another machine) is refused, `cutover abort` takes the rules over", authority.TagPrefix, a.p.Name))
	pv.Notes = append(pv.Notes, "a rule Terraform manages needs `lifecycle { ignore_changes = [action] }` on its aws_lb_listener_rule (default_action on an aws_lb_listener), "+
		"or the next apply puts its weights back (found as drift); the report prints the final weights as the forward block for the Terraform change")
	return nil
}

// cloudWatchNote says how the plan's CloudWatch readers read (spec.alb.cloudWatch.delay),
// and what that does to the steps' pace; "" when nothing reads CloudWatch.
func (a *albLever) cloudWatchNote() string {
	period := 0
	for _, st := range a.p.Steps {
		for _, g := range st.Gates {
			if g.ALBTraffic != nil {
				period = max(period, g.ALBTraffic.Period)
			}
		}
	}
	retire := a.p.Retire != nil && a.p.Retire.CloudWatch != nil
	switch {
	case period == 0 && !retire:
		return ""
	case a.p.CloudWatchDelay == 0:
		return "CloudWatch is read up to now (spec.alb.cloudWatch.delay 0s), for a CloudWatch that counts every request at once (the sandbox's); " +
			"against AWS, whose ALB metrics arrive minutes late, a period not yet published would read as missing traffic"
	case period == 0:
		return fmt.Sprintf("CloudWatch is read up to the last period it has published whole, %s after its end (spec.alb.cloudWatch.delay)", a.p.CloudWatchDelay)
	}
	return fmt.Sprintf("CloudWatch is read up to the last period it has published whole, %s after its end (spec.alb.cloudWatch.delay): "+
		"an albTraffic gate of period %s first judges a step up to %s after its write, and the step holds until it does",
		a.p.CloudWatchDelay, time.Duration(period)*time.Second, spec.FirstCloudWatchVerdict(period, a.p.CloudWatchDelay))
}

// carries reports whether any rule sends the target group arn traffic now.
func (l *albLive) carries(arn string) bool {
	for i := range l.rules {
		if l.rules[i].weight(arn) > 0 {
			return true
		}
	}
	return false
}

// percentOf renders part/whole as a percent.
func percentOf(part, whole int64) string {
	if whole == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.3g%%", float64(part)*100/float64(whole))
}

// health counts the target group's healthy targets, and says how its targets stand:
// "2 healthy of 3 targets (1 initial)".
func (a *albLever) health(ctx context.Context, arn string) (int, string, error) {
	out, err := a.api.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(arn)})
	if err != nil {
		return 0, "", err
	}
	healthy, summary, _ := gate.HealthSummary(out.TargetHealthDescriptions)
	return healthy, summary, nil
}

// Summary names the rules and the target groups, for the start entry.
func (a *albLever) Summary(l *albLive) string {
	var names []string
	for _, r := range l.rules {
		names = append(names, ruleName(r.arn))
	}
	return fmt.Sprintf("%d listener rules (%s), target groups %s → %s, from %s to %s", len(l.rules), strings.Join(names, ", "), l.from.name, l.to.name, a.p.From, a.p.To)
}

// DriftCause is what usually moves an ALB rule's weights behind the cutover's back.
func (a *albLever) DriftCause() string {
	return "another writer changed the listener rule: a `terraform apply` of the module that owns it (it needs lifecycle { ignore_changes = [action] }), the console, or a controller managing the load balancer"
}

// TerraformForward renders rules' forward actions as the blocks of Terraform's AWS
// provider: an aws_lb_listener_rule's `action` (an aws_lb_listener's `default_action`)
// of type forward, every target group with its weight, and the group stickiness. The
// block's other actions, conditions and the rest of the resource are left to the module;
// each rule is named by a comment.
func TerraformForward(rules []RuleWeights) string {
	var b strings.Builder
	for i, r := range rules {
		if i > 0 {
			b.WriteByte('\n')
		}
		resource, block := "aws_lb_listener_rule", "action"
		if r.Listener {
			resource, block = "aws_lb_listener", "default_action"
		}
		fmt.Fprintf(&b, "# %s for %s\n", resource, r.Rule)
		fmt.Fprintf(&b, "%s {\n  type = \"forward\"\n  forward {\n", block)
		for _, g := range r.TargetGroups {
			fmt.Fprintf(&b, "    target_group {\n      arn    = %q # %s\n      weight = %d\n    }\n", g.ARN, g.Name, g.Weight)
		}
		// Terraform's stickiness block needs a duration; one ELBv2 did not list is left
		// to the module (the provider's default is stickiness off).
		if s := r.Stickiness; s != nil && (s.Enabled || s.DurationSeconds > 0) {
			fmt.Fprintf(&b, "    stickiness {\n      enabled  = %t\n      duration = %d\n    }\n", s.Enabled, max(s.DurationSeconds, 1))
		}
		b.WriteString("  }\n}\n")
	}
	return b.String()
}

// Select selects, on each load balancer of spec.alb.select, every listener whose default
// action and every rule whose action forwards to both from's and to's target group (a
// listener before its rules, rules in priority order as ELBv2 lists them). A rule that
// forwards to one of them only is left out; a listener's default rule is selected as the
// listener (ModifyRule refuses a default rule). A selection that finds nothing is refused.
func (a *albLever) Select(ctx context.Context) (lever.Selection, error) {
	if err := a.resolve(ctx); err != nil {
		return lever.Selection{}, err
	}
	var s lever.Selection
	var problems []string
	for _, lb := range a.p.ALB.Select.LoadBalancers {
		listeners, err := a.listenersOf(ctx, lb)
		if authority.IsAPIError(err, "LoadBalancerNotFound") {
			problems = append(problems, fmt.Sprintf("load balancer %s (spec.alb.select.loadBalancers): not found", lb))
			continue
		}
		if err != nil {
			return lever.Selection{}, &lever.ReadError{Err: fmt.Errorf("describe listeners of %s: %w", lb, err)}
		}
		for _, l := range listeners {
			if a.forwardsToBoth(l.DefaultActions) {
				s.ListenerRules = append(s.ListenerRules, aws.ToString(l.ListenerArn))
			}
			rules, err := a.rulesOf(ctx, aws.ToString(l.ListenerArn))
			if err != nil {
				return lever.Selection{}, &lever.ReadError{Err: fmt.Errorf("describe rules of %s: %w", aws.ToString(l.ListenerArn), err)}
			}
			a.noteDefaults(aws.ToString(l.ListenerArn), rules)
			for _, r := range rules {
				if !aws.ToBool(r.IsDefault) && a.forwardsToBoth(r.Actions) {
					s.ListenerRules = append(s.ListenerRules, aws.ToString(r.RuleArn))
				}
			}
		}
	}
	if len(problems) > 0 {
		return lever.Selection{}, &lever.NotReadyError{Problems: problems, Lever: lever.ALB}
	}
	if len(s.ListenerRules) == 0 {
		return lever.Selection{}, &lever.NotReadyError{Problems: []string{fmt.Sprintf(
			"spec.alb.select: no listener or rule of load balancers %s forwards to both %s and %s: nothing to move",
			strings.Join(a.p.ALB.Select.LoadBalancers, ", "), a.from.name, a.to.name)}, Lever: lever.ALB}
	}
	return s, nil
}

// listenersOf lists every listener of the load balancer lb, page by page.
func (a *albLever) listenersOf(ctx context.Context, lb string) ([]types.Listener, error) {
	var out []types.Listener
	in := &elbv2.DescribeListenersInput{LoadBalancerArn: aws.String(lb)}
	for {
		page, err := a.api.DescribeListeners(ctx, in)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Listeners...)
		if aws.ToString(page.NextMarker) == "" {
			return out, nil
		}
		in.Marker = page.NextMarker
	}
}

// rulesOf lists every rule of the listener, page by page.
func (a *albLever) rulesOf(ctx context.Context, listener string) ([]types.Rule, error) {
	var out []types.Rule
	in := &elbv2.DescribeRulesInput{ListenerArn: aws.String(listener)}
	for {
		page, err := a.api.DescribeRules(ctx, in)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Rules...)
		if aws.ToString(page.NextMarker) == "" {
			return out, nil
		}
		in.Marker = page.NextMarker
	}
}

// forwardsToBoth reports whether actions have a forward action that lists both from's
// and to's target group (at any weight, 0 included).
func (a *albLever) forwardsToBoth(actions []types.Action) bool {
	for _, act := range actions {
		if act.Type != types.ActionTypeEnumForward {
			continue
		}
		var arns []string
		if act.TargetGroupArn != nil {
			arns = append(arns, *act.TargetGroupArn)
		}
		if fc := act.ForwardConfig; fc != nil {
			for _, t := range fc.TargetGroups {
				arns = append(arns, aws.ToString(t.TargetGroupArn))
			}
		}
		if slices.Contains(arns, a.from.arn) && slices.Contains(arns, a.to.arn) {
			return true
		}
	}
	return false
}
