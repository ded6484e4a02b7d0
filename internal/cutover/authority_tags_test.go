package cutover

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/authority"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// The authority-tag protocol (authority_tags.go) is one implementation over each lever's
// tag API, so its tests are one table run for every lever it guards, each against the
// sandbox's real API for that lever (through aws-sdk-go-v2): who may write a cutover's
// resources, two runners racing for them, a takeover, letting go, and whole runs through
// the engine. A lever's own test file builds its tagLever (what its resources are, the
// words its errors use, its API's calls); what only one lever does stays there.

// tagLever is one lever the authority tags guard, on a sandbox started for the test, as
// the shared protocol tests drive it.
type tagLever struct {
	// cutover is the cutover the read, write, race and let-go tests name.
	cutover string
	// res are the resources that carry the tags, in the order the lever reads them.
	res []tagRes
	// tagOp, untagOp and readOp are the API's calls that add, remove and read tags;
	// writeOps those that write weights.
	tagOp, untagOp, readOp string
	writeOps               []string
	// notReady begins a read's *NotReadyError ("the listener rules are not ready for this
	// cutover:\n  "); held is what a runner holds, in the error when its key is gone;
	// tooMany follows a resource's name and ARN in the start problem of one at the limit
	// of tags.
	notReady, held, tooMany string
	// denyUntag is the error an API that may not remove tags gives.
	denyUntag error
	// atFrom, atHalf and atTo are state's rendering of the weights at 100:0, 50:50 and
	// 0:100 of from:to, once in effect.
	atFrom, atHalf, atTo string
	// abortStart is the weights (JSON) of the start entry the Run test's abort rolls back
	// to, and abortState state's rendering of them: not the sandbox's state at that point,
	// or the abort would have nothing to write and take nothing over.
	abortStart, abortState string

	// plan moves the lever's resources from blue to green in 50 and 100 % steps.
	plan func(name string) *spec.Plan
	// lever builds the lever of p over the sandbox's API, counted in c (nil: the bare
	// client), polling fast where the lever polls.
	lever func(p *spec.Plan, c *tagCalls) tagGuarded
	// config is a Config for p with the lever's API, counted in c (nil: the bare client).
	config func(p *spec.Plan, c *tagCalls, dir string) Config
	// tag puts key=value on the resource arn; tags lists its tags; untag removes keys.
	tag   func(t *testing.T, arn, key, value string)
	tags  func(t *testing.T, arn string) []authority.Tag
	untag func(t *testing.T, arn string, keys []string)
	// restore, where set, brings the weights back to where the lever's tests start
	// (reset); nil leaves them.
	restore func(t *testing.T)
	// state renders the weights in effect.
	state func(t *testing.T) string
}

// tagRes is a resource that carries authority tags.
type tagRes struct {
	// arn carries the tags; name names it in a read's errors, releaseName in a release's.
	arn, name, releaseName string
	// label begins each of its tags in authority(): "rule ", "default ", "".
	label string
}

// tagGuarded is a lever whose weights authority tags keep: the ALB and Cloud Map levers.
type tagGuarded interface {
	Lever
}

// tagLevers are the levers the shared tests run for; each builds its sandbox.
var tagLevers = []struct {
	name  string
	build func(t *testing.T) *tagLever
}{{"alb", albTagLever}, {"cloudmap", cloudMapTagLever}}

// forEachTagLever runs f as a subtest for each lever of tagLevers.
func forEachTagLever(t *testing.T, f func(t *testing.T, h *tagLever)) {
	for _, l := range tagLevers {
		t.Run(l.name, func(t *testing.T) { f(t, l.build(t)) })
	}
}

// first and last are the first and last resources: the same one for a lever that tags
// one.
func (h *tagLever) first() tagRes { return h.res[0] }
func (h *tagLever) last() tagRes  { return h.res[len(h.res)-1] }

// authority lists the authority tags of the resources, "LABEL KEY=VALUE", sorted.
func (h *tagLever) authority(t *testing.T) []string {
	t.Helper()
	var got []string
	for _, r := range h.res {
		for _, tg := range h.tags(t, r.arn) {
			if strings.HasPrefix(tg.Key, authority.TagPrefix) {
				got = append(got, r.label+tg.Key+"="+tg.Value)
			}
		}
	}
	slices.Sort(got)
	return got
}

// holds reports whether every resource carries runner me's key, as a read that has
// just seen them found.
func (h *tagLever) holds(t *testing.T, me registry.Runner) bool {
	t.Helper()
	key := authority.Key(h.cutover, me.Token)
	for _, r := range h.res {
		if !slices.ContainsFunc(h.tags(t, r.arn), func(tg authority.Tag) bool { return tg.Key == key }) {
			return false
		}
	}
	return true
}

// reset brings the sandbox back to where a test starts: restore, and no tags at all.
func (h *tagLever) reset(t *testing.T) {
	t.Helper()
	if h.restore != nil {
		h.restore(t)
	}
	h.clear(t)
}

// clear removes every tag of the resources.
func (h *tagLever) clear(t *testing.T) {
	t.Helper()
	for _, r := range h.res {
		var keys []string
		for _, tg := range h.tags(t, r.arn) {
			keys = append(keys, tg.Key)
		}
		if len(keys) > 0 {
			h.untag(t, r.arn, keys)
		}
	}
}

// writes is how many weight writes c counted.
func (h *tagLever) writes(c *tagCalls) int {
	n := 0
	for _, op := range h.writeOps {
		n += c.n(op)
	}
	return n
}

// tagCalls is what a lever's counting API double keeps (countingELB, countingSD): the
// calls a runner makes through the real client, counted and in order; hooks that hold its
// first tag call and its first read of the tags after one (to line two runners up); and an
// error for its calls that remove tags.
type tagCalls struct {
	mu    sync.Mutex
	calls map[string]int
	order []string
	// beforeTag, when set, runs once before the first tag call; beforeVerify once before
	// the first read of the tags after a tag call.
	beforeTag, beforeVerify func()
	tagged                  bool
	// failUntag makes the calls that remove tags fail.
	failUntag error
}

func newTagCalls() *tagCalls { return &tagCalls{calls: map[string]int{}} }

func (c *tagCalls) count(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[op]++
	c.order = append(c.order, op)
}

func (c *tagCalls) n(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[op]
}

// first is the index of op's first call, -1 when none.
func (c *tagCalls) first(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Index(c.order, op)
}

// String renders the counts and the order, for failures.
func (c *tagCalls) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%v in order %v", c.calls, c.order)
}

// onTag counts the tag call op, and runs beforeTag the first time.
func (c *tagCalls) onTag(op string) {
	c.count(op)
	c.mu.Lock()
	hook := c.beforeTag
	c.beforeTag, c.tagged = nil, true
	c.mu.Unlock()
	if hook != nil {
		hook()
	}
}

// onUntag counts the untag call op, and returns the error it is to fail with.
func (c *tagCalls) onUntag(op string) error {
	c.count(op)
	return c.failUntag
}

// onVerify counts the tag read op, and runs beforeVerify at the first after a tag call.
func (c *tagCalls) onVerify(op string) {
	c.count(op)
	c.mu.Lock()
	hook := c.beforeVerify
	if c.tagged && hook != nil {
		c.beforeVerify = nil
	} else {
		hook = nil
	}
	c.mu.Unlock()
	if hook != nil {
		hook()
	}
}

// waitGroupTimeout waits for wg, at most d (a runner that never reaches the barrier must
// not hang the test).
func waitGroupTimeout(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// tagPlace says which of a lever's resources a test tags.
type tagPlace int

const (
	onFirst tagPlace = iota
	onLast
	onEvery
	// onAllButLast: none, for a lever that tags one resource.
	onAllButLast
)

// placed is a tag a test puts on resources before it reads.
type placed struct {
	on         tagPlace
	key, value string
}

// put tags the resources p names.
func (h *tagLever) put(t *testing.T, p placed) {
	t.Helper()
	res := map[tagPlace][]tagRes{onFirst: {h.first()}, onLast: {h.last()}, onEvery: h.res, onAllButLast: h.res[:len(h.res)-1]}[p.on]
	for _, r := range res {
		h.tag(t, r.arn, p.key, p.value)
	}
}

// TestAuthorityTagsRead: what a read makes of the tags on a lever's resources: this
// runner's, another runner's of the cutover (refused, or with a takeover noted), another
// cutover's, a key that only looks like one, this runner's gone after it held them, and a
// resource at the provider's limit of 50 tags.
func TestAuthorityTagsRead(t *testing.T) {
	forEachTagLever(t, func(t *testing.T, h *tagLever) {
		me := registry.Runner{Token: "a11ce0a11ce0a11c", Host: "alice-laptop", PID: 11}
		bob := registry.Runner{Token: "b0b0b0b0b0b0b0b0", Host: "bob-desk", PID: 22}
		mine, bobs := authority.Key(h.cutover, me.Token), authority.Key(h.cutover, bob.Token)
		first, last := h.first(), h.last()
		for _, tc := range []struct {
			name      string
			tags      []placed
			many      bool // 50 other tags on the first resource
			o         ReadOptions
			want      string // "" reads fine
			held      bool   // every resource carries this runner's key
			takenOver []registry.Runner
			start     string // a start problem
		}{
			{"no tags", nil, false, ReadOptions{Runner: me}, "", false, nil, ""},
			{"this runner's", []placed{{onEvery, mine, authority.Value(me)}}, false, ReadOptions{Runner: me}, "", true, nil, ""},
			{"another runner's, on the last resource", []placed{{onLast, bobs, authority.Value(bob)}}, false, ReadOptions{Runner: me},
				"cutover " + h.cutover + ": its weights are held by another runner, runner b0b0b0b0b0b0b0b0@bob-desk:22 (tag " + bobs + " on " + last.name + "): a cutover runs from one place at a time", false, nil, ""},
			// Bob's on the first, this runner's on the last: every resource carries this
			// runner's key only where the first is the last.
			{"another runner's, taken over", []placed{{onFirst, bobs, authority.Value(bob)}, {onLast, mine, authority.Value(me)}}, false, ReadOptions{Runner: me, Takeover: true},
				"", len(h.res) == 1, []registry.Runner{bob}, ""},
			{"another runner's value edited by hand: the key's token counts", []placed{{onFirst, bobs, "someone"}}, false, ReadOptions{Runner: me},
				"runner b0b0b0b0b0b0b0b0@ (tag " + bobs, false, nil, ""},
			{"another cutover's", []placed{{onFirst, authority.Key("api", "c0c0c0c0c0c0c0c0"), "c0c0c0c0c0c0c0c0@ci:7"}}, false, ReadOptions{Runner: me, Takeover: true},
				h.notReady + first.name + " (" + first.arn + "): its weights are held by cutover api (tag crossfade.io/cutover/api/c0c0c0c0c0c0c0c0 = c0c0c0c0c0c0c0c0@ci:7): finish or release that cutover first", false, nil, ""},
			{"a key that only looks like one", []placed{{onFirst, "crossfade.io/cutover-" + h.cutover, "x"}, {onLast, "crossfade.io/cutover/" + h.cutover, "y"}}, false, ReadOptions{Runner: me}, "", false, nil, ""},
			{"this runner's, gone after it held them", []placed{{onAllButLast, mine, authority.Value(me)}}, false, ReadOptions{Runner: me, Held: true},
				"cutover " + h.cutover + ": its authority tag " + mine + " is gone from " + last.name + " (" + last.arn + "): while this runner held " + h.held + ", another runner took them over", false, nil, ""},
			{"a resource with 50 tags", nil, true, ReadOptions{Runner: me}, "", false, nil, first.name + " (" + first.arn + ") " + h.tooMany},
		} {
			t.Run(tc.name, func(t *testing.T) {
				h.clear(t)
				for _, p := range tc.tags {
					h.put(t, p)
				}
				if tc.many {
					for i := range 50 {
						h.tag(t, first.arn, fmt.Sprintf("team-%02d", i), "x")
					}
				}
				lv := h.lever(h.plan(h.cutover), nil)
				s, err := lv.Read(context.Background(), tc.o)
				if tc.want != "" {
					if err == nil || !strings.Contains(err.Error(), tc.want) {
						t.Fatalf("read: %v, want %q", err, tc.want)
					}
					var held *HeldError
					if strings.Contains(tc.want, "held by another runner") && (!errors.As(err, &held) || held.Holder.Token != bob.Token) {
						t.Errorf("%v is not a *HeldError naming bob", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := h.holds(t, me); got != tc.held {
					t.Errorf("held %v, want %v", got, tc.held)
				}
				if !slices.Equal(s.TakenOver(), tc.takenOver) {
					t.Errorf("taken over %v, want %v", s.TakenOver(), tc.takenOver)
				}
				problems := strings.Join(lv.StartProblems(s), "\n")
				if (tc.start == "") != (problems == "") || !strings.Contains(problems, tc.start) {
					t.Errorf("start problems %q, want %q", problems, tc.start)
				}
			})
		}
	})
}

// TestAuthorityTagsWrite: the first write tags each resource once, before any weight
// write; later writes tag nothing; a takeover removes the other runner's key, journals it
// (BeforeSend), and holds alone; the runner taken over from is refused at its next read
// naming the new holder, and the takeover's weights stay.
func TestAuthorityTagsWrite(t *testing.T) {
	forEachTagLever(t, func(t *testing.T, h *tagLever) {
		ctx := context.Background()
		me := registry.Runner{Token: "a11ce0a11ce0a11c", Host: "alice-laptop", PID: 11}
		bob := registry.Runner{Token: "b0b0b0b0b0b0b0b0", Host: "bob-desk", PID: 22}
		h.reset(t)
		write := func(c *tagCalls, o ReadOptions, w map[string]int64) ([]registry.Runner, error) {
			lv := h.lever(h.plan(h.cutover), c)
			s, err := lv.Read(ctx, o)
			if err != nil {
				return nil, err
			}
			var noted []registry.Runner
			env := testEnv()
			env.BeforeSend = func(s Snapshot) error { noted = append(noted, s.TakenOver()...); return nil }
			_, err = lv.Write(ctx, s, Change{Weights: w}, env)
			return noted, err
		}
		c := newTagCalls()
		if _, err := write(c, ReadOptions{Runner: me}, map[string]int64{"blue": 50, "green": 50}); err != nil {
			t.Fatal(err)
		}
		if c.n(h.tagOp) != len(h.res) || c.n(h.untagOp) != 0 {
			t.Errorf("first write: calls %v, want %d %s (one a resource) and no %s", c, len(h.res), h.tagOp, h.untagOp)
		}
		for _, op := range h.writeOps {
			if c.first(op) < 0 || c.first(h.tagOp) > c.first(op) {
				t.Errorf("first write: calls %v, want %s before any %s", c, h.tagOp, op)
			}
		}
		var want []string
		for _, r := range h.res {
			want = append(want, r.label+authority.Key(h.cutover, me.Token)+"="+authority.Value(me))
		}
		slices.Sort(want)
		if got := h.authority(t); !slices.Equal(got, want) {
			t.Errorf("tags %q, want %q", got, want)
		}
		c = newTagCalls()
		if _, err := write(c, ReadOptions{Runner: me, Held: true}, map[string]int64{"blue": 0, "green": 100}); err != nil {
			t.Fatal(err)
		}
		if c.n(h.tagOp) != 0 || c.n(h.readOp) != 1 {
			t.Errorf("second write: calls %v, want no %s and the read's one %s", c, h.tagOp, h.readOp)
		}
		// Bob aborts from another machine: he takes the resources over, and Alice's next
		// read is refused naming him.
		c = newTagCalls()
		noted, err := write(c, ReadOptions{Runner: bob, Takeover: true, Partial: true}, map[string]int64{"blue": 100, "green": 0})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(noted, []registry.Runner{me}) || c.n(h.untagOp) != len(h.res) || c.n(h.tagOp) != len(h.res) {
			t.Errorf("takeover: noted %v, calls %v; want alice noted, %d %s and %d %s", noted, c, len(h.res), h.tagOp, len(h.res), h.untagOp)
		}
		if got := h.authority(t); len(got) != len(h.res) || slices.ContainsFunc(got, func(tg string) bool { return !strings.Contains(tg, bob.Token) }) {
			t.Errorf("tags after the takeover %q: want bob's alone", got)
		}
		_, err = write(newTagCalls(), ReadOptions{Runner: me, Held: true}, map[string]int64{"blue": 0, "green": 100})
		var held *HeldError
		if !errors.As(err, &held) || held.Holder.Token != bob.Token {
			t.Fatalf("alice after the takeover: %v, want *HeldError naming bob", err)
		}
		if got := h.state(t); got != h.atFrom {
			t.Errorf("weights %s: want bob's rollback (%s) kept", got, h.atFrom)
		}
	})
}

// TestAuthorityTagsRace: two runners of one cutover write their first step at once, many
// times over: exactly one writes, the other is refused naming it and sends no weight
// write, and only the winner's tags are left. "lockstep" lines the two up twice: neither
// tags before both have read the resources free, and neither reads its tags back before
// both have tagged, so that both see each other and both step back: one of them must
// still win.
func TestAuthorityTagsRace(t *testing.T) {
	forEachTagLever(t, func(t *testing.T, h *tagLever) {
		ctx := context.Background()
		runners := [2]registry.Runner{{Token: "a11ce0a11ce0a11c", Host: "alice", PID: 1}, {Token: "b0b0b0b0b0b0b0b0", Host: "bob", PID: 2}}
		for _, mode := range []string{"free", "lockstep"} {
			t.Run(mode, func(t *testing.T) {
				for round := range 8 {
					h.reset(t)
					var clients [2]*tagCalls
					var read, tagged sync.WaitGroup
					read.Add(2)
					tagged.Add(2)
					for i := range clients {
						clients[i] = newTagCalls()
						if mode == "lockstep" {
							clients[i].beforeTag = func() {
								read.Done()
								waitGroupTimeout(&read, 5*time.Second)
							}
							clients[i].beforeVerify = func() {
								tagged.Done()
								waitGroupTimeout(&tagged, 5*time.Second)
							}
						}
					}
					var errs [2]error
					var wg sync.WaitGroup
					for i := range 2 {
						wg.Go(func() {
							lv := h.lever(h.plan(h.cutover), clients[i])
							s, err := lv.Read(ctx, ReadOptions{Runner: runners[i]})
							if err == nil {
								_, err = lv.Write(ctx, s, Change{Weights: map[string]int64{"blue": 50, "green": 50}}, testEnv())
							}
							errs[i] = err
						})
					}
					wg.Wait()
					winner := -1
					for i, err := range errs {
						if err == nil {
							if winner >= 0 {
								t.Fatalf("round %d: both runners wrote", round)
							}
							winner = i
						}
					}
					if winner < 0 {
						t.Fatalf("round %d: neither runner wrote: %v; %v", round, errs[0], errs[1])
					}
					loser := 1 - winner
					var held *HeldError
					if !errors.As(errs[loser], &held) || held.Holder.Token != runners[winner].Token {
						t.Fatalf("round %d: the loser's error %v, want *HeldError naming %s", round, errs[loser], runners[winner])
					}
					if n := h.writes(clients[loser]); n > 0 {
						t.Errorf("round %d: the loser sent %d weight writes", round, n)
					}
					if got := h.authority(t); len(got) != len(h.res) || slices.ContainsFunc(got, func(tg string) bool { return !strings.Contains(tg, runners[winner].Token) }) {
						t.Errorf("round %d: tags %q, want the winner's alone, one a resource", round, got)
					}
					if mode == "lockstep" && clients[loser].n(h.untagOp) == 0 {
						t.Errorf("round %d: the loser never stepped back (calls %v): the two were not lined up", round, clients[loser])
					}
					t.Logf("round %d: %s won; the loser's calls %v", round, runners[winner].Host, clients[loser])
				}
			})
		}
	})
}

// TestAuthorityTagsLetGo: what each release removes: a run's end its own key only,
// leaving another runner's; `cutover release` refuses another runner's and removes
// nothing; `release --force` every runner's of the cutover; none of them another
// cutover's.
func TestAuthorityTagsLetGo(t *testing.T) {
	forEachTagLever(t, func(t *testing.T, h *tagLever) {
		me := registry.Runner{Token: "a11ce0a11ce0a11c"}
		bob := registry.Runner{Token: "b0b0b0b0b0b0b0b0", Host: "bob", PID: 2}
		api := authority.Key("api", "c0c0c0c0c0c0c0c0")
		bobs := authority.Key(h.cutover, bob.Token)
		first, last := h.first(), h.last()
		runsEnd := []string{last.label + bobs + "=" + authority.Value(bob), first.label + api + "=x"}
		slices.Sort(runsEnd)
		for _, tc := range []struct {
			name   string
			mode   lever.LetGoMode
			n      int
			others []registry.Runner
			err    string
			left   []string
		}{
			{"a run's end", lever.OwnKeepOthers, len(h.res), nil, "", runsEnd},
			{"release", lever.OwnRefuseOthers, 0, nil, "held by another runner, runner b0b0b0b0b0b0b0b0@bob:2 (tag " + bobs + " on " + last.releaseName + ")", nil},
			{"release --force", lever.EveryRunner, len(h.res), []registry.Runner{bob}, "", []string{first.label + api + "=x"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				h.clear(t)
				h.put(t, placed{onEvery, authority.Key(h.cutover, me.Token), authority.Value(me)})
				h.put(t, placed{onLast, bobs, authority.Value(bob)})
				h.put(t, placed{onFirst, api, "x"})
				before := h.authority(t)
				if len(before) != len(h.res)+2 {
					t.Fatalf("tags before: %q, want this runner's on each resource, bob's and api's", before)
				}
				n, others, err := h.lever(h.plan(h.cutover), nil).LetGo(context.Background(), me, tc.mode)
				if tc.err != "" {
					if err == nil || !strings.Contains(err.Error(), tc.err) {
						t.Fatalf("letGo: %v, want %q", err, tc.err)
					}
					if got := h.authority(t); !slices.Equal(got, before) {
						t.Errorf("a refused release removed tags: %q left of %q", got, before)
					}
					return
				}
				if err != nil || n != tc.n || !slices.Equal(others, tc.others) {
					t.Errorf("letGo: %d resources, others %v, %v; want %d, %v", n, others, err, tc.n, tc.others)
				}
				if got := h.authority(t); !slices.Equal(got, tc.left) {
					t.Errorf("left %q, want %q", got, tc.left)
				}
			})
		}
	})
}

// journalKinds are the kinds of the entries of cutover name's journal in dir.
func journalKinds(t *testing.T, dir, name string) []string {
	t.Helper()
	entries, err := journal.Read(PathsFor(dir, name).Journal)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Kind)
	}
	return out
}

// TestAuthorityTagsRun runs cutovers through the engine against the sandbox: the run tags
// the resources at its first write, before any weight write, and removes its tags when it
// ends, journaling it; a second runner (another state directory) is refused naming the
// holder, with nothing written; abort from a third takes the resources over and rolls
// back; a run whose tags could not be removed at its end leaves them to `run --resume` of
// the ended cutover; `release` then finds nothing left, and refuses another runner's tags
// unless --force.
func TestAuthorityTagsRun(t *testing.T) {
	forEachTagLever(t, func(t *testing.T, h *tagLever) {
		ctx := context.Background()
		h.reset(t)

		// A whole run: tagged at the first write, untagged at the end.
		dir := t.TempDir()
		c := newTagCalls()
		if _, err := Run(ctx, h.config(h.plan("whole"), c, dir), false); err != nil {
			t.Fatal(err)
		}
		if got := h.authority(t); len(got) != 0 {
			t.Errorf("tags after the run: %q", got)
		}
		if k := journalKinds(t, dir, "whole"); k[len(k)-2] != kindDone || k[len(k)-1] != kindReleased {
			t.Errorf("journal %v: want done, then released", k)
		}
		if c.n(h.tagOp) != len(h.res) || c.n(h.untagOp) != len(h.res) {
			t.Errorf("calls %v: want %d %s and %d %s", c, len(h.res), h.tagOp, len(h.res), h.untagOp)
		}
		for _, op := range h.writeOps {
			if c.first(op) < 0 || c.first(h.tagOp) > c.first(op) {
				t.Errorf("calls %v: want %s before any %s", c, h.tagOp, op)
			}
		}
		if got := h.state(t); got != h.atTo {
			t.Fatalf("weights after the run: %s, want %s", got, h.atTo)
		}
		h.reset(t)

		// Another machine holds the resources: the run is refused before it writes.
		holder := registry.Runner{Token: "0d0d0d0d0d0d0d0d", Host: "ci-7", PID: 4242}
		h.put(t, placed{onEvery, authority.Key("second", holder.Token), authority.Value(holder)})
		dir = t.TempDir()
		c = newTagCalls()
		_, err := Run(ctx, h.config(h.plan("second"), c, dir), false)
		var held *HeldError
		if !errors.As(err, &held) || held.Holder != holder || !strings.Contains(err.Error(), "held by another runner, runner 0d0d0d0d0d0d0d0d@ci-7:4242 (tag "+authority.Key("second", holder.Token)+" on "+h.first().name+")") {
			t.Fatalf("second runner: %v, want *HeldError naming the holder", err)
		}
		if k := journalKinds(t, dir, "second"); slices.Contains(k, kindWritten) || slices.Contains(k, kindStart) || h.writes(c) > 0 {
			t.Errorf("the refused runner journaled %v, calls %v", k, c)
		}
		// An abort from a machine with a journal of the cutover takes the resources over.
		dir = t.TempDir()
		start := fmt.Sprintf(`{"seq":1,"time":%q,"kind":"start","step":-1,"weights":%s,"token":"b0b0b0b0b0b0b0b0"}`+"\n", time.Now().UTC().Format(time.RFC3339Nano), h.abortStart)
		if err := os.WriteFile(filepath.Join(dir, "second.journal"), []byte(start), 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := Abort(ctx, h.config(h.plan("second"), nil, dir))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(rep.Controls, func(e journal.Entry) bool {
			return e.Kind == kindTakeover && strings.Contains(e.Detail, "took the weights over from runner 0d0d0d0d0d0d0d0d@ci-7:4242")
		}) {
			t.Errorf("abort's report controls %+v: want the takeover", rep.Controls)
		}
		if got := h.state(t); got != h.abortState {
			t.Errorf("weights after the abort: %s, want its start %s", got, h.abortState)
		}
		if got := h.authority(t); len(got) != 0 {
			t.Errorf("tags after the abort ended: %q", got)
		}
		h.reset(t)

		// Tags left by a run that could not remove them: the resume of the ended cutover does.
		dir = t.TempDir()
		c = newTagCalls()
		c.failUntag = h.denyUntag
		if _, err := Run(ctx, h.config(h.plan("left"), c, dir), false); err != nil {
			t.Fatal(err)
		}
		if got := h.authority(t); len(got) != len(h.res) {
			t.Fatalf("tags after a run that could not remove them: %q", got)
		}
		if _, err := Run(ctx, h.config(h.plan("left"), nil, dir), true); err != nil {
			t.Fatal(err)
		}
		if got := h.authority(t); len(got) != 0 {
			t.Errorf("tags after the resume of the ended cutover: %q", got)
		}
		if k := journalKinds(t, dir, "left"); k[len(k)-1] != kindReleased {
			t.Errorf("journal %v: want the resume's released entry last", k)
		}
		if rel, err := Release(ctx, h.config(h.plan("left"), nil, dir), ReleaseOptions{}); err != nil || rel.Records != 0 {
			t.Errorf("release after all: %+v %v, want nothing to remove", rel, err)
		}
		// Release refuses another runner's tag of the cutover, and removes it with force.
		h.put(t, placed{onFirst, authority.Key("left", holder.Token), authority.Value(holder)})
		if _, err := Release(ctx, h.config(h.plan("left"), nil, dir), ReleaseOptions{}); !errors.As(err, &held) {
			t.Errorf("release of another runner's tags: %v, want *HeldError", err)
		}
		rel, err := Release(ctx, h.config(h.plan("left"), nil, dir), ReleaseOptions{Force: true})
		if err != nil || rel.Records != 1 || !slices.Equal(rel.TakenOver, []registry.Runner{holder}) {
			t.Errorf("release --force: %+v %v", rel, err)
		}
		if got := h.authority(t); len(got) != 0 {
			t.Errorf("tags after release --force: %q", got)
		}
	})
}

// TestAuthorityTagsResume: a runner stopped after its first write (a kill, as far as the
// resources know) resumes as the same runner, its token from the journal: the tags it left
// are its own, and the resume completes without a takeover.
func TestAuthorityTagsResume(t *testing.T) {
	forEachTagLever(t, func(t *testing.T, h *tagLever) {
		h.reset(t)
		dir := t.TempDir()
		p := h.plan("resumed")
		p.Steps[0].Pause = time.Hour
		ctx, cancel := context.WithCancel(context.Background())
		cfg := h.config(p, nil, dir)
		done := make(chan error, 1)
		go func() { _, err := Run(ctx, cfg, false); done <- err }()
		deadline := time.Now().Add(10 * time.Second)
		for len(h.authority(t)) < len(h.res) || h.state(t) != h.atHalf {
			if time.Now().After(deadline) {
				cancel()
				<-done
				t.Fatal("the run never wrote its first step")
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		<-done
		tags := h.authority(t)
		p.Steps[0].Pause = 0
		if _, err := Run(context.Background(), cfg, true); err != nil {
			t.Fatalf("resume: %v (tags before: %q)", err, tags)
		}
		entries, err := journal.Read(PathsFor(dir, "resumed").Journal)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Kind == kindTakeover {
				t.Errorf("the resume took the resources over from itself: %+v", e)
			}
		}
		if got := h.state(t); got != h.atTo {
			t.Errorf("weights %s after the resume, want %s", got, h.atTo)
		}
		if got := h.authority(t); len(got) != 0 {
			t.Errorf("tags after the resumed run ended: %q", got)
		}
	})
}

// quietConfig is a Config for the shared run tests: fast checks, no log.
func quietConfig(p *spec.Plan, dir string) Config {
	return Config{Plan: p, StateDir: dir, By: "test@host", CheckInterval: 5 * time.Millisecond, PollInterval: 5 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)}
}
