// Package authority is the authority-tag protocol of the levers whose API has no
// conditional write (ALB, Cloud Map): which runner of a cutover may write (see below).
package authority

// Authority tags: which runner of a cutover may write the resources a lever moves, for the
// levers whose API has no transaction and no conditional write (the ALB lever: ELBv2 tags
// on the listener rules; the Cloud Map lever: Cloud Map tags on the service). Two runners
// of one cutover on two machines (two state directories, whose flock locks cannot see
// each other) must not both write; the Route 53 lever keeps them apart with an authority
// record compare-and-swapped inside each change batch. These levers use tags on "the
// resources they move" and a protocol that needs no compare-and-swap; this file is that
// protocol, once, over a small per-lever interface (API):
//
//   - Each runner tags every resource with a key of its own,
//     crossfade.io/cutover/NAME/TOKEN = TOKEN@HOST:PID, before its first write. It never
//     writes another runner's key; every tag call names one resource.
//   - It then reads every resource's tags again. If another runner's key of the cutover is
//     on any of them, the two raced: it removes the keys it has just added, waits a random
//     while, and reads again. A key still there is a runner that holds the resources: it
//     stops with *HeldError naming it. None: it tags again (up to lever.CASAttempts times).
//   - Every read before a write (and at every check of a hold) reads the tags after the
//     resources: another runner's key refuses the read (*HeldError), unless this runner
//     holds them and its own key is still there (a contender about to step back; the
//     next write's hold waits it out, as above); its own key gone, after it held them,
//     stops it (someone released the weights).
//   - An abort, and `cutover release --force`, take the resources over: they add their own
//     key, remove every other runner's key of the cutover, and read again until only
//     theirs is left; the runner they took over from is refused at its next read.
//   - When the cutover ends (completed or rolled back) the runner removes its key, after
//     journaling the outcome; a `run --resume` of the ended cutover, or `cutover release`,
//     removes what a runner killed in between left. No publisher honours these tags, so
//     nothing is held after the end.
//
// Why this suffices without a compare-and-swap: a runner reads only after its own add, so
// of two runners that both add, the one whose read comes later sees the other's key; one
// can never see the resources free while the other also does. Both may see each other
// and step back: the random wait makes one of them go first on the next attempt.
//
// What it does not cover, said plainly:
//   - Neither ELBv2 nor Cloud Map documents its tag reads as strongly consistent. A read
//     that misses a key another runner has just added lets both go on; the later one is
//     stopped at its next read, after at most one write of the same step.
//   - Between a runner's last read and its write there is no lock: an abort that takes the
//     resources over in that moment (one call's latency) can have its rollback
//     overwritten once, by the step being written; the abort's own write is described
//     until it is in effect, and the runner stops at its next read.
//   - Anyone allowed to remove tags can remove the keys, and the writes (ModifyRule,
//     UpdateInstanceCustomHealthStatus) do not look at tags at all. The tags keep
//     crossfade runners apart, not other writers: those are found as drift.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/aws/smithy-go"

	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// TagPrefix begins the key of every authority tag (ALB listener rules, Cloud Map
// services): crossfade.io/cutover/NAME/TOKEN (NAME the cutover, TOKEN the runner's token);
// its value is the runner, TOKEN@HOST:PID.
const TagPrefix = "crossfade.io/cutover/"

// maxTagValue is the longest tag value ELBv2 and Cloud Map both take.
const maxTagValue = 256

// Key is runner token's authority tag key for cutover.
func Key(cutover, token string) string {
	return TagPrefix + cutover + "/" + token
}

// parseAuthorityKey splits an authority tag key into its cutover and runner token; ok is
// false for any other key.
func parseAuthorityKey(key string) (cutover, token string, ok bool) {
	rest, found := strings.CutPrefix(key, TagPrefix)
	if !found {
		return "", "", false
	}
	cutover, token, found = strings.Cut(rest, "/")
	return cutover, token, found && cutover != "" && token != "" && !strings.Contains(token, "/")
}

// Value is the runner as an authority tag's value: TOKEN@HOST:PID, in the
// characters a tag value may hold (a host name's others become '-'), at most maxTagValue.
func Value(r registry.Runner) string {
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

// Tag is one tag of a resource, as any lever's API spells it.
type Tag struct{ Key, Value string }

// API is what the authority protocol needs of a lever's API: the tags of the resources
// the lever moves, each named by its ARN.
type API interface {
	// ReadTags returns the tags of each resource of arns; a resource that is gone is left
	// out.
	ReadTags(ctx context.Context, arns []string) (map[string][]Tag, error)
	// AddTag puts t on the resource arn.
	AddTag(ctx context.Context, arn string, t Tag) error
	// RemoveTags removes keys from the resource arn; a resource that is gone has none.
	RemoveTags(ctx context.Context, arn string, keys []string) error
}

// tagged is one resource that carries the cutover's authority tags, as last read.
type Tagged struct {
	// ARN is the resource's ARN; Name names it for people ("listener …/abc",
	// "service apps.local/web").
	ARN, Name string
	// Held is set when it carries this runner's key; rivalKeys are other runners' keys of
	// the cutover, holders the runners they name; tags counts its tags.
	Held      bool
	rivalKeys []string
	holders   []registry.Runner
	tags      int
}

// authorityRead is one resource's authority tags as read.
type authorityRead struct {
	// mine is set when the resource carries this runner's key.
	mine bool
	// others are other runners' keys of this cutover, with the runners they name.
	others  []string
	holders []registry.Runner
	// foreign names another cutover's tag on the resource ("" when none).
	foreign string
	// count is how many tags the resource has.
	count int
}

// readAuthority classifies the authority tags tags of a resource for runner me of cutover.
func readAuthority(tags []Tag, cutover string, me registry.Runner) authorityRead {
	out := authorityRead{count: len(tags)}
	for _, t := range tags {
		name, token, ok := parseAuthorityKey(t.Key)
		switch {
		case !ok:
		case name != cutover:
			out.foreign = fmt.Sprintf("cutover %s (tag %s = %s)", name, t.Key, t.Value)
		case me.Token != "" && token == me.Token:
			out.mine = true
		default:
			out.others = append(out.others, t.Key)
			out.holders = append(out.holders, tagHolder(token, t.Value))
		}
	}
	return out
}

// note records a read in t.
func (t *Tagged) note(a authorityRead) {
	t.Held, t.rivalKeys, t.holders, t.tags = a.mine, a.others, a.holders, a.count
}

// Hold is a snapshot's part of the protocol: the runner that read it, for which
// cutover, whether its read takes the resources over (ReadOptions.Takeover), and the other
// runners whose keys the next write removes.
type Hold struct {
	// Me is the runner that read it, for Cutover; Takeover says its read takes the
	// resources over; TakenOver are the runners whose keys the next write removes.
	Me        registry.Runner
	Cutover   string
	Takeover  bool
	TakenOver []registry.Runner
}

// noteTakeover adds runners to those the next write takes the resources over from.
func (h *Hold) noteTakeover(rs ...registry.Runner) {
	for _, r := range rs {
		if !slices.Contains(h.TakenOver, r) {
			h.TakenOver = append(h.TakenOver, r)
		}
	}
}

// Protocol is the protocol over one lever's tags.
type Protocol struct {
	// API reads and writes the lever's tags.
	API API
	// Lever is the lever's kind, for NotReadyError.
	Lever string
	// Provider names the API ("ELBv2"), Resource a resource ("a rule"), MaxTags its limit
	// of tags per resource, and TooManyCode the error code a tag over it gets.
	Provider, Resource string
	MaxTags            int
	TooManyCode        string
	// What names what carries the tags ("the listener rules"); Holds what a runner holds
	// ("the rules"), and State what to look at before taking them again ("the rules'
	// weights").
	What, Holds, State string
}

// check classifies the tags of t, read for o, in h: it returns, as a problem, another
// cutover's tag on it; *HeldError for another runner's key unless o.Takeover, which notes
// that runner to be taken over instead; an error when, o.Held, this runner's key is gone
// with nobody else's there (someone released the weights behind its back).
func (a *Protocol) Check(h *Hold, t *Tagged, tags []Tag, o lever.ReadOptions) (string, error) {
	auth := readAuthority(tags, h.Cutover, h.Me)
	t.note(auth)
	switch {
	case auth.foreign != "":
		// One authority per weight (safety rule 3): never another cutover's resources.
		return a.foreignProblem(t, auth.foreign), nil
	case len(auth.others) > 0 && o.Held && auth.mine && !o.Takeover:
		// This runner holds them and its key is still there: the other key is a runner
		// of the cutover racing for them, which sees this key and steps back, or an
		// abort taking them over, which removes this key next, and the read after that
		// stops this run. Refusing now would stop the holder because of a contender
		// already backing off, and leave the weights mid-cutover with nobody running
		// it. The rival is noted in t: the next write goes through Hold, which writes
		// nothing while another key stays.
	case len(auth.others) > 0 && !o.Takeover:
		return "", &lever.HeldError{Cutover: h.Cutover, Tag: fmt.Sprintf("tag %s on %s", auth.others[0], t.Name), Holder: auth.holders[0]}
	case len(auth.others) > 0:
		h.noteTakeover(auth.holders...)
	case o.Held && !auth.mine:
		return "", fmt.Errorf("cutover %s: its authority tag %s is gone from %s (%s): while this runner held %s, another runner took them over and ended (cutover abort elsewhere) or someone released them (cutover release --force), and it does not take them back on its own: `crossfade cutover run --resume` takes them again (look at %s first: an abort elsewhere has rolled them back), `crossfade cutover abort` rolls back",
			h.Cutover, Key(h.Cutover, o.Runner.Token), t.Name, t.ARN, a.Holds, a.State)
	}
	return "", nil
}

func (a *Protocol) foreignProblem(t *Tagged, foreign string) string {
	return fmt.Sprintf("%s (%s): its weights are held by %s: finish or release that cutover first", t.Name, t.ARN, foreign)
}

// tooMany lists the resources that cannot take the cutover's authority tag: those at the
// provider's limit of tags per resource.
func (a *Protocol) TooMany(res []*Tagged) []string {
	var out []string
	for _, t := range res {
		if !t.Held && t.tags >= a.MaxTags {
			out = append(out, fmt.Sprintf("%s (%s) has %d tags, the most %s allows on %s: the cutover's authority tag (%s…) would be refused (%s); remove one of them first",
				t.Name, t.ARN, t.tags, a.Provider, a.Resource, TagPrefix, a.TooManyCode))
		}
	}
	return out
}

// hold makes every resource of res carry this runner's authority tag and no other
// runner's of the cutover, before a write sends anything (the protocol is the file
// comment's). res are updated to what it finds; takeovers are noted in h and journaled
// through env.BeforeSend, which hands s, the snapshot h and res belong to, to the runner.
func (a *Protocol) Hold(ctx context.Context, h *Hold, res []*Tagged, s lever.Snapshot, env HoldEnv) error {
	if !slices.ContainsFunc(res, func(t *Tagged) bool { return !t.Held || len(t.rivalKeys) > 0 }) {
		return nil // held: the read this write is built on has just checked it
	}
	if h.Me.Token == "" {
		return fmt.Errorf("cutover %s: this runner has no token to tag %s with (its journal's start entry records none)", h.Cutover, a.What)
	}
	key, value := Key(h.Cutover, h.Me.Token), Value(h.Me)
	for attempt := 1; ; attempt++ {
		var added []*Tagged
		for _, t := range res {
			if t.Held {
				continue
			}
			if err := a.tag(ctx, t, key, value); err != nil {
				return err
			}
			added = append(added, t)
		}
		if h.Takeover {
			for _, t := range res {
				if err := a.untag(ctx, t, t.rivalKeys); err != nil {
					return err
				}
			}
		}
		if err := a.reread(ctx, h, res); err != nil {
			return err
		}
		holders, gone := rivals(res)
		switch {
		case len(holders) == 0 && gone == "":
			return nil
		case len(holders) == 0:
			// Nobody else's key, and ours gone from a resource we had just tagged: someone
			// removed it (cutover release --force) in between.
			return fmt.Errorf("cutover %s: its authority tag %s was removed from %s while this runner tagged %s: someone is releasing the weights (cutover release --force?); not going on",
				h.Cutover, key, gone, a.What)
		case attempt == lever.CASAttempts:
			return &lever.HeldError{Cutover: h.Cutover, Tag: fmt.Sprintf("tags %s… on %s, after %d attempts to take them", TagPrefix+h.Cutover+"/", a.What, lever.CASAttempts), Holder: holders[0]}
		case h.Takeover:
			// Another runner tagged the resources meanwhile: an abort takes it over too.
			h.noteTakeover(holders...)
			if err := env.BeforeSend(); err != nil {
				return err
			}
			env.Log.Warn("another runner tagged "+a.What+" during the takeover: taking them over too", s.LogAttr(), "attempt", attempt)
			if err := lever.Backoff(ctx, attempt); err != nil {
				return err
			}
			continue
		}
		// Another runner of this cutover tagged the resources too: both may have seen each
		// other. Step back, wait, and look again: a key still there holds them.
		for _, t := range added {
			if err := a.untag(ctx, t, []string{key}); err != nil {
				return err
			}
		}
		env.Log.Warn("another runner of this cutover tagged "+a.What+" at the same time: stepping back", s.LogAttr(), "other", holders[0].String(), "attempt", attempt)
		if err := lever.Backoff(ctx, attempt); err != nil {
			return err
		}
		if err := a.reread(ctx, h, res); err != nil {
			return err
		}
		if holders, _ := rivals(res); len(holders) > 0 {
			t := firstRival(res)
			return &lever.HeldError{Cutover: h.Cutover, Tag: fmt.Sprintf("tag %s on %s", t.rivalKeys[0], t.Name), Holder: holders[0]}
		}
	}
}

// reread reads the tags of res again, for hold, and records them in res.
func (a *Protocol) reread(ctx context.Context, h *Hold, res []*Tagged) error {
	arns := make([]string, len(res))
	for i, t := range res {
		arns[i] = t.ARN
	}
	tags, err := a.API.ReadTags(ctx, arns)
	if err != nil {
		return err
	}
	for _, t := range res {
		ts, ok := tags[t.ARN]
		if !ok {
			return fmt.Errorf("%s (%s): not found: it was deleted while the cutover tagged it", t.Name, t.ARN)
		}
		auth := readAuthority(ts, h.Cutover, h.Me)
		if auth.foreign != "" {
			return &lever.NotReadyError{Problems: []string{a.foreignProblem(t, auth.foreign)}, Lever: a.Lever}
		}
		t.note(auth)
	}
	return nil
}

// rivals are the other runners whose keys res carry, and a resource that lacks this
// runner's key ("" when every one has it).
func rivals(res []*Tagged) (holders []registry.Runner, missing string) {
	for _, t := range res {
		for _, h := range t.holders {
			if !slices.Contains(holders, h) {
				holders = append(holders, h)
			}
		}
		if !t.Held && missing == "" {
			missing = t.Name
		}
	}
	return holders, missing
}

// firstRival is the first resource that carries another runner's key.
func firstRival(res []*Tagged) *Tagged {
	for _, t := range res {
		if len(t.rivalKeys) > 0 {
			return t
		}
	}
	return nil
}

// tag adds the authority tag key=value to t.
func (a *Protocol) tag(ctx context.Context, t *Tagged, key, value string) error {
	err := a.API.AddTag(ctx, t.ARN, Tag{Key: key, Value: value})
	switch {
	case err != nil && IsAPIError(err, a.TooManyCode):
		return fmt.Errorf("%s (%s): tag it with the cutover's authority %s: it has the most tags %s allows on %s (%d): remove one first: %w", t.Name, t.ARN, key, a.Provider, a.Resource, a.MaxTags, err)
	case err != nil:
		return fmt.Errorf("%s (%s): tag it with the cutover's authority %s: %w", t.Name, t.ARN, key, err)
	}
	return nil
}

// untag removes keys from t; a resource that is gone has none to remove.
func (a *Protocol) untag(ctx context.Context, t *Tagged, keys []string) error {
	if len(keys) == 0 || t.ARN == "" {
		return nil
	}
	if err := a.API.RemoveTags(ctx, t.ARN, keys); err != nil {
		return fmt.Errorf("%s (%s): remove the authority tags %s: %w", t.Name, t.ARN, strings.Join(keys, ", "), err)
	}
	return nil
}

// letGo removes the authority tags of cutover from res: runner me's, or, with
// everyRunner, every runner's, never another cutover's. It returns how many resources it
// untagged and the other runners whose keys it removed. A resource that is gone is passed
// over.
func (a *Protocol) LetGo(ctx context.Context, cutover string, res []*Tagged, me registry.Runner, mode lever.LetGoMode) (int, []registry.Runner, error) {
	arns := make([]string, len(res))
	for i, t := range res {
		arns[i] = t.ARN
	}
	tags, err := a.API.ReadTags(ctx, arns)
	if err != nil {
		return 0, nil, err
	}
	remove := map[*Tagged][]string{}
	var others []registry.Runner
	for _, t := range res {
		auth := readAuthority(tags[t.ARN], cutover, me)
		if auth.mine {
			remove[t] = append(remove[t], Key(cutover, me.Token))
		}
		if len(auth.others) == 0 || mode == lever.OwnKeepOthers {
			continue
		}
		if mode == lever.OwnRefuseOthers {
			return 0, nil, &lever.HeldError{Cutover: cutover, Tag: fmt.Sprintf("tag %s on %s", auth.others[0], t.Name), Holder: auth.holders[0]}
		}
		remove[t] = append(remove[t], auth.others...)
		for _, h := range auth.holders {
			if !slices.Contains(others, h) {
				others = append(others, h)
			}
		}
	}
	n := 0
	for _, t := range res {
		if len(remove[t]) == 0 {
			continue
		}
		if err := a.untag(ctx, t, remove[t]); err != nil {
			return n, others, err
		}
		n++
	}
	return n, others, nil
}

// HoldEnv is what Protocol.hold needs of a lever's Write: beforeSend hands the
// runner the snapshot the tags belong to (it journals a takeover), log the lever's logs.
type HoldEnv struct {
	// BeforeSend hands the runner the snapshot the tags belong to.
	BeforeSend func() error
	// Log receives the lever's logs.
	Log *slog.Logger
}

// Release is a tag lever's Release: l's LetGo of r.Token's tags, or every runner's
// with r.Force.
func Release(ctx context.Context, l interface {
	LetGo(ctx context.Context, me registry.Runner, mode lever.LetGoMode) (int, []registry.Runner, error)
}, r lever.ReleaseRequest) (lever.ReleaseResult, error) {
	mode := lever.OwnRefuseOthers
	if r.Force {
		mode = lever.EveryRunner
	}
	n, others, err := l.LetGo(ctx, registry.Runner{Token: r.Token}, mode)
	if err != nil {
		return lever.ReleaseResult{}, fmt.Errorf("release: %w", err)
	}
	return lever.ReleaseResult{Records: n, TakenOver: others}, nil
}

// IsAPIError reports whether err is the AWS API error code (e.g. "RuleNotFound").
func IsAPIError(err error, code string) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == code
}
