package levertest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	leveralb "github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/authority"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/cloudmap"
	"github.com/crossfade-io/crossfade/internal/cutover/levers"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// TagLever is one lever the authority tags guard, on a sandbox started for the test, as
// the shared protocol tests (lever/authority's, and the engine's runs) drive it.
type TagLever struct {
	// SB is the sandbox the lever's API is on.
	SB *sandbox.Sandbox
	// Cutover is the cutover the read, write, race and let-go tests name.
	Cutover string
	// Res are the resources that carry the tags, in the order the lever reads them.
	Res []TagRes
	// TagOp, UntagOp and ReadOp are the API's calls that add, remove and read tags;
	// WriteOps those that write weights.
	TagOp, UntagOp, ReadOp string
	WriteOps               []string
	// NotReady begins a read's *NotReadyError ("the listener rules are not ready for this
	// cutover:\n  "); Held is what a runner holds, in the error when its key is gone;
	// TooMany follows a resource's name and ARN in the start problem of one at the limit
	// of tags.
	NotReady, Held, TooMany string
	// DenyUntag is the error an API that may not remove tags gives.
	DenyUntag error
	// AtFrom, AtHalf and AtTo are State's rendering of the weights at 100:0, 50:50 and
	// 0:100 of from:to, once in effect.
	AtFrom, AtHalf, AtTo string
	// AbortStart is the weights (JSON) of the start entry the engine's Run test's abort
	// rolls back to, and AbortState State's rendering of them: not the sandbox's state at
	// that point, or the abort would have nothing to write and take nothing over.
	AbortStart, AbortState string

	// Plan moves the lever's resources from blue to green in 50 and 100 % steps.
	Plan func(name string) *spec.Plan
	// Lever builds the lever of p over the sandbox's API, counted in c (nil: the bare
	// client), polling fast where the lever polls.
	Lever func(p *spec.Plan, c *Calls) lever.Lever
	// Levers is the factory that pulls the lever over the sandbox's API, counted in c
	// (nil: the bare client), for the engine's Config.
	Levers func(c *Calls) lever.Factory
	// Tag puts key=value on the resource arn; Tags lists its tags; Untag removes keys.
	Tag   func(t *testing.T, arn, key, value string)
	Tags  func(t *testing.T, arn string) []authority.Tag
	Untag func(t *testing.T, arn string, keys []string)
	// Restore, where set, brings the weights back to where the lever's tests start
	// (Reset); nil leaves them.
	Restore func(t *testing.T)
	// State renders the weights in effect.
	State func(t *testing.T) string
}

// TagRes is a resource that carries authority tags.
type TagRes struct {
	// ARN carries the tags; Name names it in a read's errors, ReleaseName in a release's.
	ARN, Name, ReleaseName string
	// Label begins each of its tags in Authority(): "rule ", "default ", "".
	Label string
}

// TagLevers are the levers the shared tests run for; each builds its sandbox.
var TagLevers = []struct {
	Name  string
	Build func(t *testing.T) *TagLever
}{{"alb", ALBTagLever}, {"cloudmap", CloudMapTagLever}}

// ForEachTagLever runs f as a subtest for each lever of TagLevers.
func ForEachTagLever(t *testing.T, f func(t *testing.T, h *TagLever)) {
	for _, l := range TagLevers {
		t.Run(l.Name, func(t *testing.T) { f(t, l.Build(t)) })
	}
}

// First is the first resource; Last the last: the same one for a lever that tags one.
func (h *TagLever) First() TagRes { return h.Res[0] }

// Last is the last resource.
func (h *TagLever) Last() TagRes { return h.Res[len(h.Res)-1] }

// Authority lists the authority tags of the resources, "LABEL KEY=VALUE", sorted.
func (h *TagLever) Authority(t *testing.T) []string {
	t.Helper()
	var got []string
	for _, r := range h.Res {
		for _, tg := range h.Tags(t, r.ARN) {
			if strings.HasPrefix(tg.Key, authority.TagPrefix) {
				got = append(got, r.Label+tg.Key+"="+tg.Value)
			}
		}
	}
	slices.Sort(got)
	return got
}

// Holds reports whether every resource carries runner me's key, as a read that has just
// seen them found.
func (h *TagLever) Holds(t *testing.T, me registry.Runner) bool {
	t.Helper()
	key := authority.Key(h.Cutover, me.Token)
	for _, r := range h.Res {
		if !slices.ContainsFunc(h.Tags(t, r.ARN), func(tg authority.Tag) bool { return tg.Key == key }) {
			return false
		}
	}
	return true
}

// Reset brings the sandbox back to where a test starts: Restore, and no tags at all.
func (h *TagLever) Reset(t *testing.T) {
	t.Helper()
	if h.Restore != nil {
		h.Restore(t)
	}
	h.Clear(t)
}

// Clear removes every tag of the resources.
func (h *TagLever) Clear(t *testing.T) {
	t.Helper()
	for _, r := range h.Res {
		var keys []string
		for _, tg := range h.Tags(t, r.ARN) {
			keys = append(keys, tg.Key)
		}
		if len(keys) > 0 {
			h.Untag(t, r.ARN, keys)
		}
	}
}

// Writes is how many weight writes c counted.
func (h *TagLever) Writes(c *Calls) int {
	n := 0
	for _, op := range h.WriteOps {
		n += c.N(op)
	}
	return n
}

// TagPlace says which of a lever's resources a test tags.
type TagPlace int

const (
	// OnFirst tags the first resource.
	OnFirst TagPlace = iota
	// OnLast tags the last resource.
	OnLast
	// OnEvery tags every resource.
	OnEvery
	// OnAllButLast tags all but the last: none, for a lever that tags one resource.
	OnAllButLast
)

// Put tags the resources on names with key=value.
func (h *TagLever) Put(t *testing.T, on TagPlace, key, value string) {
	t.Helper()
	res := map[TagPlace][]TagRes{OnFirst: {h.First()}, OnLast: {h.Last()}, OnEvery: h.Res, OnAllButLast: h.Res[:len(h.Res)-1]}[on]
	for _, r := range res {
		h.Tag(t, r.ARN, key, value)
	}
}

// ALBTagLever is the ALB lever for the authority-tag tests: the tags are on the rule and
// on the listener's default rule (a read names it by the listener, a release by the rule).
func ALBTagLever(t *testing.T) *TagLever {
	a := NewALB(t)
	return &TagLever{
		SB:      a.SB,
		Cutover: "shop",
		Res:     []TagRes{{ARN: a.Rule, Name: a.RuleName, ReleaseName: "rule " + a.Rule, Label: "rule "}, {ARN: a.Default, Name: a.ListenerName, ReleaseName: "rule " + a.Default, Label: "default "}},
		TagOp:   "AddTags", UntagOp: "RemoveTags", ReadOp: "DescribeTags", WriteOps: []string{"ModifyRule", "ModifyListener"},
		NotReady:  "the listener rules are not ready for this cutover:\n  ",
		Held:      "the rules",
		TooMany:   "has 50 tags, the most ELBv2 allows on a rule: the cutover's authority tag (crossfade.io/cutover/…) would be refused (TooManyTags)",
		DenyUntag: errors.New("AccessDenied: not authorized to perform elasticloadbalancing:RemoveTags"),
		AtFrom:    "blue=100 green=0 / blue=100 green=0",
		AtHalf:    "blue=50 green=50 / blue=50 green=50",
		AtTo:      "blue=0 green=100 / blue=0 green=100",
		// No Restore: the weights stay between a test's parts, so the Run test's abort rolls
		// back to 100:0 from the 0:100 its whole run left.
		AbortStart: `{"blue":100,"green":0}`, AbortState: "blue=100 green=0 / blue=100 green=0",
		Plan:  a.Plan,
		Lever: func(p *spec.Plan, c *Calls) lever.Lever { return leveralb.New(p, a.Counted(c)) },
		Levers: func(c *Calls) lever.Factory {
			return func(p *spec.Plan) (lever.Lever, lever.GateClients, error) {
				lv, gc := levers.ALB(p, a.Counted(c), nil)
				return lv, gc, nil
			}
		},
		Tag: a.Tag, Tags: a.Tags, Untag: a.Untag,
		State: func(t *testing.T) string {
			rule, listener := a.Weights(t)
			return rule + " / " + listener
		},
	}
}

// CloudMapTagLever is the Cloud Map lever for the authority-tag tests: the tag is on the
// one service it moves, whose instances' health is the weights (2 instances a cluster).
func CloudMapTagLever(t *testing.T) *TagLever {
	m := NewCloudMap(t)
	return &TagLever{
		SB:      m.SB,
		Cutover: "orders",
		Res:     []TagRes{{ARN: m.ARN, Name: m.Name, ReleaseName: m.Name}},
		TagOp:   "TagResource", UntagOp: "UntagResource", ReadOp: "ListTagsForResource", WriteOps: []string{"UpdateInstanceCustomHealthStatus"},
		NotReady:  "the Cloud Map service is not ready for this cutover:\n  ",
		Held:      "the service's instances",
		TooMany:   "has 50 tags, the most Cloud Map allows on a resource: the cutover's authority tag (crossfade.io/cutover/…) would be refused (TooManyTagsException)",
		DenyUntag: errors.New("AccessDeniedException: not authorized to perform servicediscovery:UntagResource"),
		AtFrom:    "blue=2 green=0", AtHalf: "blue=2 green=2", AtTo: "blue=0 green=2",
		// Restore puts the service back at 100:0 between the Run test's parts, so its abort
		// rolls back to 1:1 (both clusters HEALTHY).
		AbortStart: `{"blue":1,"green":1}`, AbortState: "blue=2 green=2",
		Plan: m.Plan,
		Lever: func(p *spec.Plan, c *Calls) lever.Lever {
			return cloudmap.New(p, m.Counted(c), cloudmap.Poll(5*time.Millisecond))
		},
		Levers: func(c *Calls) lever.Factory {
			return func(p *spec.Plan) (lever.Lever, lever.GateClients, error) {
				lv, gc := levers.CloudMap(p, m.Counted(c))
				return lv, gc, nil
			}
		},
		Tag: m.Tag, Tags: m.Tags, Untag: m.Untag, Restore: m.Restore,
		State: m.Healthy,
	}
}
