package authority_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/authority"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// The authority-tag protocol (authority.go) is one implementation over each lever's tag
// API, so its tests are one table run for every lever it guards (levertest.TagLevers),
// each against the sandbox's real API for that lever (through aws-sdk-go-v2): who may
// write a cutover's resources, two runners racing for them, a takeover, letting go. Whole
// runs through the engine are the engine's tests (internal/cutover authority_tags_test.go).

// placed is a tag a test puts on resources before it reads.
type placed struct {
	on         levertest.TagPlace
	key, value string
}

// TestAuthorityTagsRead: what a read makes of the tags on a lever's resources: this
// runner's, another runner's of the cutover (refused, or with a takeover noted), another
// cutover's, a key that only looks like one, this runner's gone after it held them, and a
// resource at the provider's limit of 50 tags.
func TestAuthorityTagsRead(t *testing.T) {
	levertest.ForEachTagLever(t, func(t *testing.T, h *levertest.TagLever) {
		me := registry.Runner{Token: "a11ce0a11ce0a11c", Host: "alice-laptop", PID: 11}
		bob := registry.Runner{Token: "b0b0b0b0b0b0b0b0", Host: "bob-desk", PID: 22}
		mine, bobs := authority.Key(h.Cutover, me.Token), authority.Key(h.Cutover, bob.Token)
		first, last := h.First(), h.Last()
		for _, tc := range []struct {
			name      string
			tags      []placed
			many      bool // 50 other tags on the first resource
			o         lever.ReadOptions
			want      string // "" reads fine
			held      bool   // every resource carries this runner's key
			takenOver []registry.Runner
			start     string // a start problem
		}{
			{"no tags", nil, false, lever.ReadOptions{Runner: me}, "", false, nil, ""},
			{"this runner's", []placed{{levertest.OnEvery, mine, authority.Value(me)}}, false, lever.ReadOptions{Runner: me}, "", true, nil, ""},
			{"another runner's, on the last resource", []placed{{levertest.OnLast, bobs, authority.Value(bob)}}, false, lever.ReadOptions{Runner: me},
				"cutover " + h.Cutover + ": its weights are held by another runner, runner b0b0b0b0b0b0b0b0@bob-desk:22 (tag " + bobs + " on " + last.Name + "): a cutover runs from one place at a time", false, nil, ""},
			// Bob's on the first, this runner's on the last: every resource carries this
			// runner's key only where the first is the last.
			{"another runner's, taken over", []placed{{levertest.OnFirst, bobs, authority.Value(bob)}, {levertest.OnLast, mine, authority.Value(me)}}, false, lever.ReadOptions{Runner: me, Takeover: true},
				"", len(h.Res) == 1, []registry.Runner{bob}, ""},
			{"another runner's value edited by hand: the key's token counts", []placed{{levertest.OnFirst, bobs, "someone"}}, false, lever.ReadOptions{Runner: me},
				"runner b0b0b0b0b0b0b0b0@ (tag " + bobs, false, nil, ""},
			{"another cutover's", []placed{{levertest.OnFirst, authority.Key("api", "c0c0c0c0c0c0c0c0"), "c0c0c0c0c0c0c0c0@ci:7"}}, false, lever.ReadOptions{Runner: me, Takeover: true},
				h.NotReady + first.Name + " (" + first.ARN + "): its weights are held by cutover api (tag crossfade.io/cutover/api/c0c0c0c0c0c0c0c0 = c0c0c0c0c0c0c0c0@ci:7): finish or release that cutover first", false, nil, ""},
			{"a key that only looks like one", []placed{{levertest.OnFirst, "crossfade.io/cutover-" + h.Cutover, "x"}, {levertest.OnLast, "crossfade.io/cutover/" + h.Cutover, "y"}}, false, lever.ReadOptions{Runner: me}, "", false, nil, ""},
			// A contender's key beside this runner's, while it holds them: the contender
			// steps back on seeing this key; the holder reads on (its next write waits the
			// key out: TestAuthorityTagsContender).
			{"another runner's beside this runner's, while it holds them", []placed{{levertest.OnEvery, mine, authority.Value(me)}, {levertest.OnLast, bobs, authority.Value(bob)}}, false, lever.ReadOptions{Runner: me, Held: true},
				"", true, nil, ""},
			{"another runner's beside this runner's, before it held them", []placed{{levertest.OnEvery, mine, authority.Value(me)}, {levertest.OnLast, bobs, authority.Value(bob)}}, false, lever.ReadOptions{Runner: me},
				"its weights are held by another runner, runner b0b0b0b0b0b0b0b0@bob-desk:22", false, nil, ""},
			{"this runner's, gone after it held them", []placed{{levertest.OnAllButLast, mine, authority.Value(me)}}, false, lever.ReadOptions{Runner: me, Held: true},
				"cutover " + h.Cutover + ": its authority tag " + mine + " is gone from " + last.Name + " (" + last.ARN + "): while this runner held " + h.Held + ", another runner took them over", false, nil, ""},
			{"a resource with 50 tags", nil, true, lever.ReadOptions{Runner: me}, "", false, nil, first.Name + " (" + first.ARN + ") " + h.TooMany},
		} {
			t.Run(tc.name, func(t *testing.T) {
				h.Clear(t)
				for _, p := range tc.tags {
					h.Put(t, p.on, p.key, p.value)
				}
				if tc.many {
					for i := range 50 {
						h.Tag(t, first.ARN, fmt.Sprintf("team-%02d", i), "x")
					}
				}
				lv := h.Lever(h.Plan(h.Cutover), nil)
				s, err := lv.Read(context.Background(), tc.o)
				if tc.want != "" {
					if err == nil || !strings.Contains(err.Error(), tc.want) {
						t.Fatalf("read: %v, want %q", err, tc.want)
					}
					var held *lever.HeldError
					if strings.Contains(tc.want, "held by another runner") && (!errors.As(err, &held) || held.Holder.Token != bob.Token) {
						t.Errorf("%v is not a *lever.HeldError naming bob", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := h.Holds(t, me); got != tc.held {
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
	levertest.ForEachTagLever(t, func(t *testing.T, h *levertest.TagLever) {
		ctx := context.Background()
		me := registry.Runner{Token: "a11ce0a11ce0a11c", Host: "alice-laptop", PID: 11}
		bob := registry.Runner{Token: "b0b0b0b0b0b0b0b0", Host: "bob-desk", PID: 22}
		h.Reset(t)
		write := func(c *levertest.Calls, o lever.ReadOptions, w map[string]int64) ([]registry.Runner, error) {
			lv := h.Lever(h.Plan(h.Cutover), c)
			s, err := lv.Read(ctx, o)
			if err != nil {
				return nil, err
			}
			var noted []registry.Runner
			env := levertest.Env()
			env.BeforeSend = func(s lever.Snapshot) error { noted = append(noted, s.TakenOver()...); return nil }
			_, err = lv.Write(ctx, s, lever.Change{Weights: w}, env)
			return noted, err
		}
		c := levertest.NewCalls()
		if _, err := write(c, lever.ReadOptions{Runner: me}, map[string]int64{"blue": 50, "green": 50}); err != nil {
			t.Fatal(err)
		}
		if c.N(h.TagOp) != len(h.Res) || c.N(h.UntagOp) != 0 {
			t.Errorf("first write: calls %v, want %d %s (one a resource) and no %s", c, len(h.Res), h.TagOp, h.UntagOp)
		}
		for _, op := range h.WriteOps {
			if c.First(op) < 0 || c.First(h.TagOp) > c.First(op) {
				t.Errorf("first write: calls %v, want %s before any %s", c, h.TagOp, op)
			}
		}
		var want []string
		for _, r := range h.Res {
			want = append(want, r.Label+authority.Key(h.Cutover, me.Token)+"="+authority.Value(me))
		}
		slices.Sort(want)
		if got := h.Authority(t); !slices.Equal(got, want) {
			t.Errorf("tags %q, want %q", got, want)
		}
		c = levertest.NewCalls()
		if _, err := write(c, lever.ReadOptions{Runner: me, Held: true}, map[string]int64{"blue": 0, "green": 100}); err != nil {
			t.Fatal(err)
		}
		if c.N(h.TagOp) != 0 || c.N(h.ReadOp) != 1 {
			t.Errorf("second write: calls %v, want no %s and the read's one %s", c, h.TagOp, h.ReadOp)
		}
		// Bob aborts from another machine: he takes the resources over, and Alice's next
		// read is refused naming him.
		c = levertest.NewCalls()
		noted, err := write(c, lever.ReadOptions{Runner: bob, Takeover: true, Partial: true}, map[string]int64{"blue": 100, "green": 0})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(noted, []registry.Runner{me}) || c.N(h.UntagOp) != len(h.Res) || c.N(h.TagOp) != len(h.Res) {
			t.Errorf("takeover: noted %v, calls %v; want alice noted, %d %s and %d %s", noted, c, len(h.Res), h.TagOp, len(h.Res), h.UntagOp)
		}
		if got := h.Authority(t); len(got) != len(h.Res) || slices.ContainsFunc(got, func(tg string) bool { return !strings.Contains(tg, bob.Token) }) {
			t.Errorf("tags after the takeover %q: want bob's alone", got)
		}
		_, err = write(levertest.NewCalls(), lever.ReadOptions{Runner: me, Held: true}, map[string]int64{"blue": 0, "green": 100})
		var held *lever.HeldError
		if !errors.As(err, &held) || held.Holder.Token != bob.Token {
			t.Fatalf("alice after the takeover: %v, want *lever.HeldError naming bob", err)
		}
		if got := h.State(t); got != h.AtFrom {
			t.Errorf("weights %s: want bob's rollback (%s) kept", got, h.AtFrom)
		}
	})
}

// TestAuthorityTagsContender: a runner that holds the resources reads on past another
// runner's key beside its own (a contender about to step back; refusing the read would
// stop the holder mid-cutover), but its next write sends no weight while that key stays
// (a contender that died before stepping back): it is refused naming the other runner.
func TestAuthorityTagsContender(t *testing.T) {
	levertest.ForEachTagLever(t, func(t *testing.T, h *levertest.TagLever) {
		ctx := context.Background()
		me := registry.Runner{Token: "a11ce0a11ce0a11c", Host: "alice-laptop", PID: 11}
		bob := registry.Runner{Token: "b0b0b0b0b0b0b0b0", Host: "bob-desk", PID: 22}
		h.Reset(t)
		lv := h.Lever(h.Plan(h.Cutover), nil)
		s, err := lv.Read(ctx, lever.ReadOptions{Runner: me})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lv.Write(ctx, s, lever.Change{Weights: map[string]int64{"blue": 50, "green": 50}}, levertest.Env()); err != nil {
			t.Fatal(err)
		}
		h.Put(t, levertest.OnLast, authority.Key(h.Cutover, bob.Token), authority.Value(bob))
		c := levertest.NewCalls()
		lv = h.Lever(h.Plan(h.Cutover), c)
		s, err = lv.Read(ctx, lever.ReadOptions{Runner: me, Held: true})
		if err != nil {
			t.Fatalf("the holder's read with a contender's key beside its own: %v, want it read", err)
		}
		_, err = lv.Write(ctx, s, lever.Change{Weights: map[string]int64{"blue": 0, "green": 100}}, levertest.Env())
		var held *lever.HeldError
		if !errors.As(err, &held) || held.Holder.Token != bob.Token {
			t.Fatalf("the holder's write while the contender's key stays: %v, want *lever.HeldError naming bob", err)
		}
		if n := h.Writes(c); n > 0 {
			t.Errorf("the holder sent %d weight writes while another runner's key stood", n)
		}
		if got := h.State(t); got != h.AtHalf {
			t.Errorf("weights %s, want the holder's step kept (%s): the refused write landed", got, h.AtHalf)
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
	levertest.ForEachTagLever(t, func(t *testing.T, h *levertest.TagLever) {
		ctx := context.Background()
		runners := [2]registry.Runner{{Token: "a11ce0a11ce0a11c", Host: "alice", PID: 1}, {Token: "b0b0b0b0b0b0b0b0", Host: "bob", PID: 2}}
		for _, mode := range []string{"free", "lockstep"} {
			t.Run(mode, func(t *testing.T) {
				for round := range 8 {
					h.Reset(t)
					var clients [2]*levertest.Calls
					var read, tagged sync.WaitGroup
					read.Add(2)
					tagged.Add(2)
					for i := range clients {
						clients[i] = levertest.NewCalls()
						if mode == "lockstep" {
							clients[i].BeforeTag = func() {
								read.Done()
								levertest.WaitGroupTimeout(&read, 5*time.Second)
							}
							clients[i].BeforeVerify = func() {
								tagged.Done()
								levertest.WaitGroupTimeout(&tagged, 5*time.Second)
							}
						}
					}
					var errs [2]error
					var wg sync.WaitGroup
					for i := range 2 {
						wg.Go(func() {
							lv := h.Lever(h.Plan(h.Cutover), clients[i])
							s, err := lv.Read(ctx, lever.ReadOptions{Runner: runners[i]})
							if err == nil {
								_, err = lv.Write(ctx, s, lever.Change{Weights: map[string]int64{"blue": 50, "green": 50}}, levertest.Env())
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
					var held *lever.HeldError
					if !errors.As(errs[loser], &held) || held.Holder.Token != runners[winner].Token {
						t.Fatalf("round %d: the loser's error %v, want *lever.HeldError naming %s", round, errs[loser], runners[winner])
					}
					if n := h.Writes(clients[loser]); n > 0 {
						t.Errorf("round %d: the loser sent %d weight writes", round, n)
					}
					if got := h.Authority(t); len(got) != len(h.Res) || slices.ContainsFunc(got, func(tg string) bool { return !strings.Contains(tg, runners[winner].Token) }) {
						t.Errorf("round %d: tags %q, want the winner's alone, one a resource", round, got)
					}
					if mode == "lockstep" && clients[loser].N(h.UntagOp) == 0 {
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
	levertest.ForEachTagLever(t, func(t *testing.T, h *levertest.TagLever) {
		me := registry.Runner{Token: "a11ce0a11ce0a11c"}
		bob := registry.Runner{Token: "b0b0b0b0b0b0b0b0", Host: "bob", PID: 2}
		api := authority.Key("api", "c0c0c0c0c0c0c0c0")
		bobs := authority.Key(h.Cutover, bob.Token)
		first, last := h.First(), h.Last()
		runsEnd := []string{last.Label + bobs + "=" + authority.Value(bob), first.Label + api + "=x"}
		slices.Sort(runsEnd)
		for _, tc := range []struct {
			name   string
			mode   lever.LetGoMode
			n      int
			others []registry.Runner
			err    string
			left   []string
		}{
			{"a run's end", lever.OwnKeepOthers, len(h.Res), nil, "", runsEnd},
			{"release", lever.OwnRefuseOthers, 0, nil, "held by another runner, runner b0b0b0b0b0b0b0b0@bob:2 (tag " + bobs + " on " + last.ReleaseName + ")", nil},
			{"release --force", lever.EveryRunner, len(h.Res), []registry.Runner{bob}, "", []string{first.Label + api + "=x"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				h.Clear(t)
				h.Put(t, levertest.OnEvery, authority.Key(h.Cutover, me.Token), authority.Value(me))
				h.Put(t, levertest.OnLast, bobs, authority.Value(bob))
				h.Put(t, levertest.OnFirst, api, "x")
				before := h.Authority(t)
				if len(before) != len(h.Res)+2 {
					t.Fatalf("tags before: %q, want this runner's on each resource, bob's and api's", before)
				}
				n, others, err := h.Lever(h.Plan(h.Cutover), nil).LetGo(context.Background(), me, tc.mode)
				if tc.err != "" {
					if err == nil || !strings.Contains(err.Error(), tc.err) {
						t.Fatalf("letGo: %v, want %q", err, tc.err)
					}
					if got := h.Authority(t); !slices.Equal(got, before) {
						t.Errorf("a refused release removed tags: %q left of %q", got, before)
					}
					return
				}
				if err != nil || n != tc.n || !slices.Equal(others, tc.others) {
					t.Errorf("letGo: %d resources, others %v, %v; want %d, %v", n, others, err, tc.n, tc.others)
				}
				if got := h.Authority(t); !slices.Equal(got, tc.left) {
					t.Errorf("left %q, want %q", got, tc.left)
				}
			})
		}
	})
}
