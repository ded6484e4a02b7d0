package cutover

// The ALB lever's weight authority: which runner of a cutover may write its listener
// rules. The protocol is authority_tags.go's; here it runs over ELBv2 tags on the
// listener rules the lever moves (for a listener's default action, the listener's
// default rule, which ELBv2 tags as a rule of its own): AddTags and RemoveTags, one
// resource per call, and DescribeTags, 20 rules a call. The runner tags the rules before
// its first ModifyRule or ModifyListener, and reads the tags after the rules at every read.
// No publisher honours these tags (an ALB rule has no crossfade publisher), so nothing is
// held after the end. ELBv2 does not document DescribeTags as strongly consistent
// (authority_tags.go says what that leaves open).

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

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
func (a *albLever) authority() *tagAuthority {
	return &tagAuthority{api: albTags{a}, lever: LeverALB, provider: "ELBv2", resource: "a rule", maxTags: maxTagsPerRule, tooManyCode: "TooManyTags",
		tagged: "the listener rules", held: "the rules", state: "the rules' weights"}
}

// readTags reads the tags of the rules arns, 20 a call; a rule that is gone is left out.
func (t albTags) readTags(ctx context.Context, arns []string) (map[string][]resourceTag, error) {
	out := map[string][]resourceTag{}
	for chunk := range slices.Chunk(arns, maxTagResources) {
		if err := describeEach(ctx, chunk, "RuleNotFound", func(ctx context.Context, arns []string) error {
			res, err := t.a.api.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: arns})
			if err != nil {
				return err
			}
			for _, d := range res.TagDescriptions {
				tags := make([]resourceTag, 0, len(d.Tags))
				for _, tg := range d.Tags {
					tags = append(tags, resourceTag{Key: aws.ToString(tg.Key), Value: aws.ToString(tg.Value)})
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

// addTag puts tg on the rule arn.
func (t albTags) addTag(ctx context.Context, arn string, tg resourceTag) error {
	_, err := t.a.api.AddTags(ctx, &elbv2.AddTagsInput{ResourceArns: []string{arn}, Tags: []types.Tag{{Key: aws.String(tg.Key), Value: aws.String(tg.Value)}}})
	return err
}

// removeTags removes keys from the rule arn; a rule that is gone has none.
func (t albTags) removeTags(ctx context.Context, arn string, keys []string) error {
	_, err := t.a.api.RemoveTags(ctx, &elbv2.RemoveTagsInput{ResourceArns: []string{arn}, TagKeys: keys})
	if err != nil && !isAPIError(err, "RuleNotFound") {
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
	case isAPIError(err, "ListenerNotFound"):
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
// runner's key (o.Runner) and which another runner's (tagAuthority.check says what it
// refuses); as problems, it returns the rules that another cutover's tag holds, or
// (o.Partial: skipped) that vanished since they were read.
func (a *albLever) authorityProblems(ctx context.Context, l *albLive, o ReadOptions) ([]string, error) {
	l.me, l.cutover, l.takeover = o.Runner, a.p.Name, o.Takeover
	arns := make([]string, 0, len(l.rules))
	for i := range l.rules {
		r := &l.rules[i]
		arn, err := a.tagARN(ctx, r.arn)
		if err != nil {
			return nil, &ReadError{Err: err}
		}
		r.tagARN, r.tagName = arn, ruleName(r.arn)
		if arn != "" {
			arns = append(arns, arn)
		}
	}
	tags, err := albTags{a}.readTags(ctx, arns)
	if err != nil {
		return nil, &ReadError{Err: err}
	}
	auth := a.authority()
	var problems []string
	kept := l.rules[:0]
	for _, r := range l.rules {
		ts, ok := tags[r.tagARN]
		if !ok || r.tagARN == "" {
			problem := fmt.Sprintf("%s %s: not found: it was deleted while the cutover read it", ruleKind(r.arn), r.arn)
			if o.Partial {
				l.skipped = append(l.skipped, problem)
			} else {
				problems = append(problems, problem)
			}
			continue
		}
		problem, err := auth.check(&l.authorityHold, &r.tagged, ts, o)
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
func (l *albLive) tagged() []*tagged {
	out := make([]*tagged, len(l.rules))
	for i := range l.rules {
		out[i] = &l.rules[i].tagged
	}
	return out
}

// tagProblems lists the rules that cannot take the cutover's authority tag: those at
// ELBv2's limit of tags per resource.
func (a *albLever) tagProblems(l *albLive) []string {
	return a.authority().tooMany(l.tagged())
}

// hold makes every rule of l carry this runner's authority tag and no other runner's of
// the cutover, before a write sends anything (tagAuthority.hold).
func (a *albLever) hold(ctx context.Context, l *albLive, env WriteEnv) error {
	return a.authority().hold(ctx, &l.authorityHold, l.tagged(), l, env)
}

// letGo removes the authority tags of the cutover from the plan's listener rules (the
// selection applied): this runner's, or, with everyRunner, every runner's, never another
// cutover's. It returns how many rules it untagged and the other runners whose keys it
// removed. A rule or listener that is gone is passed over.
func (a *albLever) letGo(ctx context.Context, me registry.Runner, mode letGoMode) (int, []registry.Runner, error) {
	if a.api == nil {
		return 0, nil, fmt.Errorf("cutover %s moves ALB listener rules (spec.alb), and no ELBv2 client is configured", a.p.Name)
	}
	var res []*tagged
	for _, arn := range a.p.ALB.ListenerRules {
		t, err := a.tagARN(ctx, arn)
		if err != nil {
			return 0, nil, err
		}
		if t != "" && !slices.ContainsFunc(res, func(r *tagged) bool { return r.tagARN == t }) {
			res = append(res, &tagged{tagARN: t, tagName: "rule " + t})
		}
	}
	return a.authority().letGo(ctx, a.p.Name, res, me, mode)
}

// heldWhat is what the ALB lever's authority tags are on.
func (a *albLever) heldWhat() string { return "listener rules" }

var _ holdReleaser = (*albLever)(nil)
