package alb

// The ALB lever's weight authority: which runner of a cutover may write its listener
// rules. The protocol is package authority's; here it runs over ELBv2 tags on the
// listener rules the lever moves (for a listener's default action, the listener's
// default rule, which ELBv2 tags as a rule of its own): AddTags and RemoveTags, one
// resource per call, and DescribeTags, 20 rules a call. The runner tags the rules before
// its first ModifyRule or ModifyListener, and reads the tags after the rules at every read.
// No publisher honours these tags (an ALB rule has no crossfade publisher), so nothing is
// held after the end. ELBv2 does not document DescribeTags as strongly consistent
// (package authority says what that leaves open).

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/authority"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// ELBv2's tag limits (the quota of tags per resource, and DescribeTags' ResourceArns).
const (
	maxTagsPerRule  = 50
	maxTagResources = 20
)

// albTags is the ELBv2 API as the authority protocol's tagAPI: listener rules' tags.
type albTags struct{ a *albLever }

// authority is the protocol over the listener rules' tags.
func (a *albLever) authority() *authority.Protocol {
	return &authority.Protocol{API: albTags{a}, Lever: lever.ALB, Provider: "ELBv2", Resource: "a rule", MaxTags: maxTagsPerRule, TooManyCode: "TooManyTags",
		What: "the listener rules", Holds: "the rules", State: "the rules' weights"}
}

// ReadTags reads the tags of the rules arns, 20 a call; a rule that is gone is left out.
func (t albTags) ReadTags(ctx context.Context, arns []string) (map[string][]authority.Tag, error) {
	out := map[string][]authority.Tag{}
	for chunk := range slices.Chunk(arns, maxTagResources) {
		if err := describeEach(ctx, chunk, "RuleNotFound", func(ctx context.Context, arns []string) error {
			res, err := t.a.api.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: arns})
			if err != nil {
				return err
			}
			for _, d := range res.TagDescriptions {
				tags := make([]authority.Tag, 0, len(d.Tags))
				for _, tg := range d.Tags {
					tags = append(tags, authority.Tag{Key: aws.ToString(tg.Key), Value: aws.ToString(tg.Value)})
				}
				out[aws.ToString(d.ResourceArn)] = tags
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("describe tags: %w", err)
		}
	}
	return out, nil
}

// AddTag puts tg on the rule arn.
func (t albTags) AddTag(ctx context.Context, arn string, tg authority.Tag) error {
	_, err := t.a.api.AddTags(ctx, &elbv2.AddTagsInput{ResourceArns: []string{arn}, Tags: []types.Tag{{Key: aws.String(tg.Key), Value: aws.String(tg.Value)}}})
	return err
}

// RemoveTags removes keys from the rule arn; a rule that is gone has none.
func (t albTags) RemoveTags(ctx context.Context, arn string, keys []string) error {
	_, err := t.a.api.RemoveTags(ctx, &elbv2.RemoveTagsInput{ResourceArns: []string{arn}, TagKeys: keys})
	if err != nil && !authority.IsAPIError(err, "RuleNotFound") {
		return err
	}
	return nil
}

// tagARN is the listener rule that carries arn's authority tag: a rule's own ARN, a
// listener's default rule (found once per lever; "" with no error when the listener is
// gone).
func (a *albLever) tagARN(ctx context.Context, arn string) (string, error) {
	if !ruleIsListener(arn) {
		return arn, nil
	}
	if d, ok := a.defaults[arn]; ok {
		return d, nil
	}
	rules, err := a.rulesOf(ctx, arn)
	switch {
	case authority.IsAPIError(err, "ListenerNotFound"):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("describe the rules of listener %s: %w", arn, err)
	}
	a.noteDefaults(arn, rules)
	if d := a.defaults[arn]; d != "" {
		return d, nil
	}
	return "", fmt.Errorf("listener %s: ELBv2 lists no default rule for it, which would carry the cutover's authority tag", arn)
}

// noteDefaults remembers the default rule among a listener's rules.
func (a *albLever) noteDefaults(listener string, rules []types.Rule) {
	for _, r := range rules {
		if aws.ToBool(r.IsDefault) {
			if a.defaults == nil {
				a.defaults = map[string]string{}
			}
			a.defaults[listener] = aws.ToString(r.RuleArn)
		}
	}
}

// ruleIsListener reports whether arn is a listener's (its default action's).
func ruleIsListener(arn string) bool { return ruleKind(arn) == "listener" }

// authorityProblems reads the tags of l's rules and records in l which carry this
// runner's key (o.Runner) and which another runner's (authority.Protocol.check says what it
// refuses); as problems, it returns the rules that another cutover's tag holds, or
// (o.Partial: skipped) that vanished since they were read.
func (a *albLever) authorityProblems(ctx context.Context, l *albLive, o lever.ReadOptions) ([]string, error) {
	l.Me, l.Cutover, l.Takeover = o.Runner, a.p.Name, o.Takeover
	arns := make([]string, 0, len(l.rules))
	for i := range l.rules {
		r := &l.rules[i]
		arn, err := a.tagARN(ctx, r.arn)
		if err != nil {
			return nil, &lever.ReadError{Err: err}
		}
		r.ARN, r.Name = arn, ruleName(r.arn)
		if arn != "" {
			arns = append(arns, arn)
		}
	}
	tags, err := albTags{a}.ReadTags(ctx, arns)
	if err != nil {
		return nil, &lever.ReadError{Err: err}
	}
	auth := a.authority()
	var problems []string
	kept := l.rules[:0]
	for _, r := range l.rules {
		ts, ok := tags[r.ARN]
		if !ok || r.ARN == "" {
			problem := fmt.Sprintf("%s %s: not found: it was deleted while the cutover read it", ruleKind(r.arn), r.arn)
			if o.Partial {
				l.skipped = append(l.skipped, problem)
			} else {
				problems = append(problems, problem)
			}
			continue
		}
		problem, err := auth.Check(&l.Hold, &r.Tagged, ts, o)
		if err != nil {
			return nil, err
		}
		if problem != "" {
			problems = append(problems, problem)
			continue
		}
		kept = append(kept, r)
	}
	l.rules = kept
	return problems, nil
}

// tagged are l's rules' authority tags, for the protocol.
func (l *albLive) tagged() []*authority.Tagged {
	out := make([]*authority.Tagged, len(l.rules))
	for i := range l.rules {
		out[i] = &l.rules[i].Tagged
	}
	return out
}

// tagProblems lists the rules that cannot take the cutover's authority tag: those at
// ELBv2's limit of tags per resource.
func (a *albLever) tagProblems(l *albLive) []string {
	return a.authority().TooMany(l.tagged())
}

// hold makes every rule of l carry this runner's authority tag and no other runner's of
// the cutover, before a write sends anything (authority.Protocol.hold).
func (a *albLever) hold(ctx context.Context, l *albLive, env lever.Env[*albLive]) error {
	return a.authority().Hold(ctx, &l.Hold, l.tagged(), l, authority.HoldEnv{BeforeSend: func() error { return env.BeforeSend(l) }, Log: env.Log})
}

// LetGo removes the authority tags of the cutover from the plan's listener rules (the
// selection applied): this runner's, or, with lever.EveryRunner, every runner's, never another
// cutover's. It returns how many rules it untagged and the other runners whose keys it
// removed. A rule or listener that is gone is passed over.
func (a *albLever) LetGo(ctx context.Context, me registry.Runner, mode lever.LetGoMode) (int, []registry.Runner, error) {
	if a.api == nil {
		return 0, nil, fmt.Errorf("cutover %s moves ALB listener rules (spec.alb), and no ELBv2 client is configured", a.p.Name)
	}
	var res []*authority.Tagged
	for _, arn := range a.p.ALB.ListenerRules {
		t, err := a.tagARN(ctx, arn)
		if err != nil {
			return 0, nil, err
		}
		if t != "" && !slices.ContainsFunc(res, func(r *authority.Tagged) bool { return r.ARN == t }) {
			res = append(res, &authority.Tagged{ARN: t, Name: "rule " + t})
		}
	}
	return a.authority().LetGo(ctx, a.p.Name, res, me, mode)
}

// HeldWhat is what the ALB lever's authority tags are on.
func (a *albLever) HeldWhat() string { return "listener rules" }

// Release removes the cutover's authority tags from its listener rules (the runner's
// killed before it could, or with r.Force every runner's): the rules keep the weights
// written.
func (a *albLever) Release(ctx context.Context, r lever.ReleaseRequest) (lever.ReleaseResult, error) {
	return authority.Release(ctx, a, r)
}
