package cutover

// The ALB lever's weight authority: which runner of a cutover may write its listener
// rules. Two runners of one cutover on two machines (two state directories, whose flock
// locks cannot see each other) must not both write; the Route 53 lever keeps them apart
// with an authority record compare-and-swapped inside each change batch. ELBv2 has no
// transaction and no conditional write, so the ALB lever uses ELBv2 tags on the listener
// rules it moves, and a protocol that needs none:
//
//   - Each runner tags every listener rule it moves (for a listener's default action, the
//     listener's default rule, which ELBv2 tags as a rule of its own) with a key of its own,
//     crossfade.io/cutover/NAME/TOKEN = TOKEN@HOST:PID, before its first ModifyRule or
//     ModifyListener. It never writes another runner's key; AddTags and RemoveTags take one
//     resource per call.
//   - It then reads every rule's tags again (DescribeTags). If another runner's key of the
//     cutover is on any of them, the two raced: it removes the keys it has just added, waits
//     a random while, and reads again. A key still there is a runner that holds the rules:
//     it stops with *HeldError naming it. None: it tags again (up to casAttempts times).
//   - Every read before a write (and at every check of a hold) reads the tags after the
//     rules: another runner's key refuses the read (*HeldError); its own key gone, after it
//     held them, stops it (someone released the weights).
//   - An abort, and `cutover release --force`, take the rules over: they add their own key,
//     remove every other runner's key of the cutover, and read again until only theirs is
//     left; the runner they took over from is refused at its next read.
//   - When the cutover ends (completed or rolled back) the runner removes its key, after
//     journaling the outcome; a `run --resume` of the ended cutover, or `cutover release`,
//     removes what a runner killed in between left. No publisher honours these tags (an
//     ALB rule has no crossfade publisher), so nothing is held after the end.
//
// Why this suffices without a compare-and-swap: a runner reads only after its own add, so
// of two runners that both add, the one whose read comes later sees the other's key; one
// can never see the rules free while the other also does. Both may see each other and
// step back: the random wait makes one of them go first on the next attempt.
//
// What it does not cover, said plainly:
//   - ELBv2 does not document DescribeTags as strongly consistent. A read that misses a key
//     another runner has just added (eventual consistency) lets both go on; the later one
//     is stopped at its next read, after at most one write of the same step.
//   - Between a runner's last read and its ModifyRule there is no lock: an abort that takes
//     the rules over in that moment (milliseconds, one call's latency) can have its
//     rollback overwritten once, by the step being written; the abort's own write is
//     described until it is in effect, and the runner stops at its next read.
//   - Anyone with elasticloadbalancing:RemoveTags can remove the keys; ModifyRule does not
//     look at tags at all. The tags keep crossfade runners apart, not other writers: those
//     are found as drift.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/registry"
)

// AuthorityTagPrefix begins the key of every ALB authority tag:
// crossfade.io/cutover/NAME/TOKEN (NAME the cutover, TOKEN the runner's token); its value
// is the runner, TOKEN@HOST:PID.
const AuthorityTagPrefix = "crossfade.io/cutover/"

// ELBv2's tag limits (the model's TagValue, and the quota of tags per resource).
const (
	maxTagValue     = 256
	maxTagsPerRule  = 50
	maxTagResources = 20 // DescribeTags' ResourceArns
)

// authorityKey is runner token's authority tag key for cutover.
func authorityKey(cutover, token string) string {
	return AuthorityTagPrefix + cutover + "/" + token
}

// parseAuthorityKey splits an authority tag key into its cutover and runner token; ok is
// false for any other key.
func parseAuthorityKey(key string) (cutover, token string, ok bool) {
	rest, found := strings.CutPrefix(key, AuthorityTagPrefix)
	if !found {
		return "", "", false
	}
	cutover, token, found = strings.Cut(rest, "/")
	return cutover, token, found && cutover != "" && token != "" && !strings.Contains(token, "/")
}

// authorityValue is the runner as an authority tag's value: TOKEN@HOST:PID, in the
// characters a tag value may hold (a host name's others become '-'), at most maxTagValue.
func authorityValue(r registry.Runner) string {
	host := []rune(strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '_':
			return c
		}
		return '-'
	}, r.Host))
	// The token and pid must survive whole; a host name that long is cut.
	room := maxTagValue - len(registry.Runner{Token: r.Token, PID: r.PID}.String())
	if len(host) > room {
		host = host[:max(room, 0)]
	}
	r.Host = string(host)
	return r.String()
}

// tagHolder is the runner an authority tag names: the token from its key (the value may
// have been edited by hand), host and pid from its value.
func tagHolder(token, value string) registry.Runner {
	r := registry.ParseRunner(value)
	r.Token = token
	return r
}

// ruleTags are the tags of listener rules, by the rule's ARN.
type ruleTags map[string][]types.Tag

// describeTags reads the tags of the rules arns, 20 a call; a rule that is gone is left out.
func (a *albLever) describeTags(ctx context.Context, arns []string) (ruleTags, error) {
	out := ruleTags{}
	for chunk := range slices.Chunk(arns, maxTagResources) {
		if err := describeEach(ctx, chunk, "RuleNotFound", func(ctx context.Context, arns []string) error {
			res, err := a.api.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: arns})
			if err != nil {
				return err
			}
			for _, d := range res.TagDescriptions {
				out[aws.ToString(d.ResourceArn)] = d.Tags
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("describe tags: %w", err)
		}
	}
	return out, nil
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

// ruleAuthority is one rule's authority tags as read.
type ruleAuthority struct {
	// mine is set when the rule carries this runner's key.
	mine bool
	// others are other runners' keys of this cutover, with the runners they name.
	others  []string
	holders []registry.Runner
	// foreign names another cutover's tag on the rule ("" when none).
	foreign string
	// count is how many tags the rule has.
	count int
}

// readAuthority classifies the authority tags tags of a rule for runner me of cutover.
func readAuthority(tags []types.Tag, cutover string, me registry.Runner) ruleAuthority {
	out := ruleAuthority{count: len(tags)}
	for _, t := range tags {
		key := aws.ToString(t.Key)
		name, token, ok := parseAuthorityKey(key)
		switch {
		case !ok:
		case name != cutover:
			out.foreign = fmt.Sprintf("cutover %s (tag %s = %s)", name, key, aws.ToString(t.Value))
		case me.Token != "" && token == me.Token:
			out.mine = true
		default:
			out.others = append(out.others, key)
			out.holders = append(out.holders, tagHolder(token, aws.ToString(t.Value)))
		}
	}
	return out
}

// authorityProblems reads the tags of l's rules and records in l which carry this
// runner's key (o.Runner) and which another runner's. It returns *HeldError for another
// runner's key unless o.Takeover, which notes that runner to be taken over instead; an
// error when, o.Held, this runner's key is gone from a rule with nobody else's there
// (someone released the weights behind its back); and, as problems, the rules that
// another cutover's tag holds, or (o.Partial: skipped) that vanished since they were read.
func (a *albLever) authorityProblems(ctx context.Context, l *albLive, o ReadOptions) ([]string, error) {
	l.me, l.cutover, l.takeover = o.Runner, a.p.Name, o.Takeover
	arns := make([]string, 0, len(l.rules))
	for i := range l.rules {
		r := &l.rules[i]
		arn, err := a.tagARN(ctx, r.arn)
		if err != nil {
			return nil, &ReadError{Err: err}
		}
		r.tagARN = arn
		if arn != "" {
			arns = append(arns, arn)
		}
	}
	tags, err := a.describeTags(ctx, arns)
	if err != nil {
		return nil, &ReadError{Err: err}
	}
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
		auth := readAuthority(ts, a.p.Name, o.Runner)
		r.held, r.rivalKeys, r.holders, r.tags = auth.mine, auth.others, auth.holders, auth.count
		switch {
		case auth.foreign != "":
			// One authority per weight (safety rule 3): never another cutover's rules.
			problems = append(problems, fmt.Sprintf("%s (%s): its weights are held by %s: finish or release that cutover first", ruleName(r.arn), r.arn, auth.foreign))
			continue
		case len(auth.others) > 0 && !o.Takeover:
			return nil, &HeldError{Cutover: a.p.Name, Tag: fmt.Sprintf("tag %s on %s", auth.others[0], ruleName(r.arn)), Holder: auth.holders[0]}
		case len(auth.others) > 0:
			l.noteTakeover(auth.holders...)
		case o.Held && !auth.mine:
			return nil, fmt.Errorf("cutover %s: its authority tag %s is gone from %s (%s): while this runner held the rules, another runner took them over and ended (cutover abort elsewhere) or someone released them (cutover release --force), and it does not take them back on its own: `crossfade cutover run --resume` takes them again (look at the rules' weights first: an abort elsewhere has rolled them back), `crossfade cutover abort` rolls back",
				a.p.Name, authorityKey(a.p.Name, o.Runner.Token), ruleName(r.arn), r.tagARN)
		}
		kept = append(kept, r)
	}
	l.rules = kept
	return problems, nil
}

// noteTakeover adds runners to those the next write takes the rules over from.
func (l *albLive) noteTakeover(rs ...registry.Runner) {
	for _, r := range rs {
		if !slices.Contains(l.takenOver, r) {
			l.takenOver = append(l.takenOver, r)
		}
	}
}

// tagProblems lists the rules that cannot take the cutover's authority tag: those at
// ELBv2's limit of tags per resource.
func (l *albLive) tagProblems() []string {
	var out []string
	for _, r := range l.rules {
		if !r.held && r.tags >= maxTagsPerRule {
			out = append(out, fmt.Sprintf("%s (%s) has %d tags, the most ELBv2 allows on a rule: the cutover's authority tag (%s…) would be refused (TooManyTags); remove one of them first",
				ruleName(r.arn), r.tagARN, r.tags, AuthorityTagPrefix))
		}
	}
	return out
}

// hold makes every rule of l carry this runner's authority tag and no other runner's of
// the cutover, before a write sends anything (the protocol is the file comment's). l is
// updated to what it finds; takeovers are journaled through env.BeforeSend.
func (a *albLever) hold(ctx context.Context, l *albLive, env WriteEnv) error {
	if !slices.ContainsFunc(l.rules, func(r albRule) bool { return !r.held || len(r.rivalKeys) > 0 }) {
		return nil // held: the read this write is built on has just checked it
	}
	if l.me.Token == "" {
		return fmt.Errorf("cutover %s: this runner has no token to tag the listener rules with (its journal's start entry records none)", a.p.Name)
	}
	key, value := authorityKey(l.cutover, l.me.Token), authorityValue(l.me)
	for attempt := 1; ; attempt++ {
		var added []string
		for i := range l.rules {
			r := &l.rules[i]
			if r.held {
				continue
			}
			if err := a.tag(ctx, r, key, value); err != nil {
				return err
			}
			added = append(added, r.tagARN)
		}
		if l.takeover {
			for _, r := range l.rules {
				if err := a.untag(ctx, r.tagARN, r.rivalKeys); err != nil {
					return err
				}
			}
		}
		found, err := a.readHold(ctx, l)
		if err != nil {
			return err
		}
		holders, gone := found.rivals()
		switch {
		case len(holders) == 0 && gone == "":
			return nil
		case len(holders) == 0:
			// Nobody else's key, and ours gone from a rule we had just tagged: someone
			// removed it (cutover release --force) in between.
			return fmt.Errorf("cutover %s: its authority tag %s was removed from %s while this runner tagged the listener rules: someone is releasing the weights (cutover release --force?); not going on",
				a.p.Name, key, gone)
		case attempt == casAttempts:
			return &HeldError{Cutover: a.p.Name, Tag: fmt.Sprintf("tags %s… on the listener rules, after %d attempts to take them", AuthorityTagPrefix+l.cutover+"/", casAttempts), Holder: holders[0]}
		case l.takeover:
			// Another runner tagged the rules meanwhile: an abort takes it over too.
			l.noteTakeover(holders...)
			if err := env.BeforeSend(l); err != nil {
				return err
			}
			env.Log.Warn("another runner tagged the listener rules during the takeover: taking them over too", l.LogAttr(), "attempt", attempt)
			if err := backoff(ctx, attempt); err != nil {
				return err
			}
			continue
		}
		// Another runner of this cutover tagged the rules too: both may have seen each
		// other. Step back, wait, and look again: a key still there holds the rules.
		for _, arn := range added {
			if err := a.untag(ctx, arn, []string{key}); err != nil {
				return err
			}
		}
		env.Log.Warn("another runner of this cutover tagged the listener rules at the same time: stepping back", l.LogAttr(), "other", holders[0].String(), "attempt", attempt)
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
		again, err := a.readHold(ctx, l)
		if err != nil {
			return err
		}
		if holders, _ := again.rivals(); len(holders) > 0 {
			r := again.firstRival()
			return &HeldError{Cutover: a.p.Name, Tag: fmt.Sprintf("tag %s on %s", r.rivalKeys[0], ruleName(r.arn)), Holder: holders[0]}
		}
	}
}

// readHold reads the tags of l's rules again, for hold, and records them in l.
func (a *albLever) readHold(ctx context.Context, l *albLive) (*albLive, error) {
	arns := make([]string, len(l.rules))
	for i, r := range l.rules {
		arns[i] = r.tagARN
	}
	tags, err := a.describeTags(ctx, arns)
	if err != nil {
		return nil, err
	}
	for i := range l.rules {
		r := &l.rules[i]
		ts, ok := tags[r.tagARN]
		if !ok {
			return nil, fmt.Errorf("%s %s: not found: it was deleted while the cutover tagged it", ruleKind(r.arn), r.arn)
		}
		auth := readAuthority(ts, l.cutover, l.me)
		if auth.foreign != "" {
			return nil, &NotReadyError{Problems: []string{fmt.Sprintf("%s (%s): its weights are held by %s: finish or release that cutover first", ruleName(r.arn), r.arn, auth.foreign)}, Lever: LeverALB}
		}
		r.held, r.rivalKeys, r.tags, r.holders = auth.mine, auth.others, auth.count, auth.holders
	}
	return l, nil
}

// rivals are the other runners whose keys l's rules carry, and a rule that lacks this
// runner's key ("" when every one has it).
func (l *albLive) rivals() (holders []registry.Runner, missing string) {
	for _, r := range l.rules {
		for _, h := range r.holders {
			if !slices.Contains(holders, h) {
				holders = append(holders, h)
			}
		}
		if !r.held && missing == "" {
			missing = ruleName(r.arn)
		}
	}
	return holders, missing
}

// firstRival is the first rule that carries another runner's key.
func (l *albLive) firstRival() *albRule {
	for i := range l.rules {
		if len(l.rules[i].rivalKeys) > 0 {
			return &l.rules[i]
		}
	}
	return nil
}

// tag adds the authority tag key=value to r's tag rule.
func (a *albLever) tag(ctx context.Context, r *albRule, key, value string) error {
	_, err := a.api.AddTags(ctx, &elbv2.AddTagsInput{ResourceArns: []string{r.tagARN}, Tags: []types.Tag{{Key: aws.String(key), Value: aws.String(value)}}})
	switch {
	case isAPIError(err, "TooManyTags"):
		return fmt.Errorf("%s (%s): tag it with the cutover's authority %s: it has the most tags ELBv2 allows on a rule (%d): remove one first: %w", ruleName(r.arn), r.tagARN, key, maxTagsPerRule, err)
	case err != nil:
		return fmt.Errorf("%s (%s): tag it with the cutover's authority %s: %w", ruleName(r.arn), r.tagARN, key, err)
	}
	return nil
}

// untag removes keys from the tag rule arn; a rule that is gone has none to remove.
func (a *albLever) untag(ctx context.Context, arn string, keys []string) error {
	if len(keys) == 0 || arn == "" {
		return nil
	}
	_, err := a.api.RemoveTags(ctx, &elbv2.RemoveTagsInput{ResourceArns: []string{arn}, TagKeys: keys})
	if err != nil && !isAPIError(err, "RuleNotFound") {
		return fmt.Errorf("rule %s: remove the authority tags %s: %w", arn, strings.Join(keys, ", "), err)
	}
	return nil
}

// letGoMode says whom a release removes the authority tags of.
type letGoMode int

const (
	// ownKeepOthers removes this runner's keys and leaves others' (a run that ends).
	ownKeepOthers letGoMode = iota
	// ownRefuseOthers removes this runner's keys, and refuses (*HeldError) when another
	// runner's are there (`cutover release`).
	ownRefuseOthers
	// everyRunner removes every runner's keys of the cutover (`cutover release --force`).
	everyRunner
)

// letGo removes the authority tags of the cutover from the plan's listener rules (the
// selection applied): this runner's, or, with everyRunner, every runner's, never another
// cutover's. It returns how many rules it untagged and the other runners whose keys it
// removed. A rule or listener that is gone is passed over.
func (a *albLever) letGo(ctx context.Context, me registry.Runner, mode letGoMode) (int, []registry.Runner, error) {
	if a.api == nil {
		return 0, nil, fmt.Errorf("cutover %s moves ALB listener rules (spec.alb), and no ELBv2 client is configured", a.p.Name)
	}
	var arns []string
	for _, arn := range a.p.ALB.ListenerRules {
		t, err := a.tagARN(ctx, arn)
		if err != nil {
			return 0, nil, err
		}
		if t != "" && !slices.Contains(arns, t) {
			arns = append(arns, t)
		}
	}
	tags, err := a.describeTags(ctx, arns)
	if err != nil {
		return 0, nil, err
	}
	remove := map[string][]string{}
	var others []registry.Runner
	for _, arn := range arns {
		auth := readAuthority(tags[arn], a.p.Name, me)
		if auth.mine {
			remove[arn] = append(remove[arn], authorityKey(a.p.Name, me.Token))
		}
		if len(auth.others) == 0 || mode == ownKeepOthers {
			continue
		}
		if mode == ownRefuseOthers {
			return 0, nil, &HeldError{Cutover: a.p.Name, Tag: fmt.Sprintf("tag %s on rule %s", auth.others[0], arn), Holder: auth.holders[0]}
		}
		remove[arn] = append(remove[arn], auth.others...)
		for _, h := range auth.holders {
			if !slices.Contains(others, h) {
				others = append(others, h)
			}
		}
	}
	n := 0
	for _, arn := range arns {
		if len(remove[arn]) == 0 {
			continue
		}
		if err := a.untag(ctx, arn, remove[arn]); err != nil {
			return n, others, err
		}
		n++
	}
	return n, others, nil
}

// holdReleaser is a lever whose hold on the weights ends with the cutover: the runner
// lets go when it journals the end (the ALB lever's authority tags). The Route 53 lever's
// authority record stays until `cutover release`: its publishers honour it.
type holdReleaser interface {
	letGo(ctx context.Context, me registry.Runner, mode letGoMode) (int, []registry.Runner, error)
}

var _ holdReleaser = (*albLever)(nil)
