package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/test/internal/cutovertest"
)

// kill9Lever is one lever's part of TestCutoverKill9: how many trials it runs by default,
// how long after its start a run may be killed, and the target its trials move.
type kill9Lever struct {
	name string
	// trials is the number of trials unless CROSSFADE_CUTOVER_TRIALS says more.
	trials int
	// killWithin bounds the random kill delay: a little over a whole run, so that most
	// kills land in it and now and then one after its end.
	killWithin time.Duration
	// seed tells the levers' random kill delays apart.
	seed  uint64
	setup func(t *testing.T) *kill9Target
}

// kill9Target is a lever's cutover target on its own sandbox, with its traffic flowing.
type kill9Target struct {
	sb *sandbox.Sandbox
	// held names what the lever holds, for messages: "the rules".
	held string
	// steps is the number of steps the plans have.
	steps int
	// plan writes trial name's plan moving from → to and returns its path.
	plan func(name, from, to string) string
	// ended checks what the lever holds once a trial's resumed run has ended: fully moved
	// to to, and no more held than the lever holds after an end.
	ended func(from, to string) error
	// next, if set, readies the target for the next trial once trial i, run from the
	// state directory state, has ended.
	next func(i int, state, planFile, from, to string)
	// traffic stops the traffic and returns what failed of it and how much there was.
	traffic func() (failures []string, total int64)
	// what names the traffic for messages: "queries", "requests", "DiscoverInstances calls".
	what string
}

// kill9Levers are the levers TestCutoverKill9 runs against, one subtest each.
var kill9Levers = []kill9Lever{
	// A full Route 53 run takes about 4.5 s (four 1 s holds plus writes).
	{name: "route53", trials: 20, killWithin: 5 * time.Second, seed: 1, setup: kill9Route53},
	// A full ALB run takes about 9 s (four 1 s holds, each passing at its second gate
	// check, 2 s after its write, once CloudWatch has counted its traffic).
	{name: "alb", trials: 5, killWithin: 10 * time.Second, seed: 2, setup: kill9ALB},
	// A full Cloud Map run takes about 5 s (three 1 s holds, 200 ms for health to apply).
	{name: "cloudmap", trials: 3, killWithin: 6 * time.Second, seed: 3, setup: kill9CloudMap},
}

// TestCutoverKill9 kills `crossfade cutover run` with SIGKILL against every lever (Route
// 53 weights, ALB listener-rule weights, Cloud Map health), at random moments and right
// after a write intent is journaled, resumes it with `run --resume` each time, and
// requires every trial to end with the lever fully moved and the journal completed:
// every step passed exactly once, one start, no drift (the killed run's landed write is
// the runner's own), no rollback, and no takeover (the resume is the killed runner, by
// the journal's token). The traffic of each lever flows
// throughout and never once fails: a resolver querying the name never gets an empty
// answer, no request through the listener fails, no DiscoverInstances call is answered
// empty. Trials alternate the direction. CROSSFADE_CUTOVER_TRIALS raises the number of
// trials of each lever (make soak).
func TestCutoverKill9(t *testing.T) {
	soak := 0
	if v, err := strconv.Atoi(os.Getenv("CROSSFADE_CUTOVER_TRIALS")); err == nil && v > 0 {
		soak = v
	}
	for _, lv := range kill9Levers {
		t.Run(lv.name, func(t *testing.T) {
			trials := lv.trials
			if soak > 0 {
				trials = soak
			}
			kill9Trials(t, lv, trials)
		})
	}
}

// kill9Trials runs trials killed-and-resumed cutovers of lv's target and checks each.
func kill9Trials(t *testing.T, lv kill9Lever, trials int) {
	tg := lv.setup(t)
	state := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), lv.seed))
	for i := range trials {
		from, to := "blue", "green"
		if i%2 == 1 {
			from, to = to, from
		}
		name := fmt.Sprintf("%s-trial-%02d", lv.name, i)
		planFile := tg.plan(name, from, to)
		cmd, out := cutoverCmd(t, tg.sb, state, "run", planFile)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Half the trials are killed at a random moment; the others (trials 2 and 3 of
		// every 4) right after the run journals its write intent of a random step, when
		// the write is being sent: the resume then finds that write landed or landing, and
		// must take it for its own, not for drift.
		var delay time.Duration
		if (i/2)%2 == 0 {
			delay = time.Duration(rng.Int64N(int64(lv.killWithin/time.Millisecond))) * time.Millisecond
			time.Sleep(delay)
		} else {
			n := 1 + rng.IntN(tg.steps)
			start := time.Now()
			waitIntents(t, state, name, n)
			delay = time.Since(start)
			t.Logf("trial %d: killing at the write intent of step %d", i, n-1)
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		resumed, code := runCutover(t, tg.sb, state, "run", planFile, "--resume")
		if code != 0 {
			t.Fatalf("trial %d (killed after %s): resume exited %d:\n%s\nbefore the kill:\n%s", i, delay, code, resumed, out)
		}
		if err := tg.ended(from, to); err != nil {
			t.Fatalf("trial %d (killed after %s): %v\n%s", i, delay, err, resumed)
		}
		if !strings.Contains(resumed, "cutover "+name+": completed") {
			t.Fatalf("trial %d: resume did not report completion:\n%s", i, resumed)
		}
		if err := kill9Journal(journalEntries(t, state, name), tg.steps, tg.held); err != nil {
			t.Fatalf("trial %d (killed after %s): journal: %v\nbefore the kill:\n%s\nresumed:\n%s", i, delay, err, out, resumed)
		}
		t.Logf("trial %d: %s → %s, killed after %s, resumed to completion", i, from, to, delay)
		if tg.next != nil {
			tg.next(i, state, planFile, from, to)
		}
	}
	failures, total := tg.traffic()
	if len(failures) > 0 {
		t.Fatalf("%d of %d %s failed or got an empty answer during %d killed cutovers; first: %s", len(failures), total, tg.what, trials, failures[0])
	}
	t.Logf("%d %s over %d trials, not one failed", total, tg.what, trials)
}

// waitIntents waits until cutover name's journal in state has n write intents. It reads
// the file as the run appends to it, so it counts entries by their kind's text rather
// than decoding a line that may be half written.
func waitIntents(t *testing.T, state, name string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(filepath.Join(state, name+".journal"))
		if strings.Count(string(data), `"kind":"intent"`) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("journal of %s: fewer than %d write intents after 30 s:\n%s", name, n, data)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// kill9Journal checks a completed cutover's journal, written by a killed run and its
// resume: one start, every step of steps passed exactly once and in order, the cutover
// completed, and no takeover (the resume holds what it holds as the same runner), no
// drift (the killed run's write that landed is not another's) and no rollback or failed
// step.
func kill9Journal(entries []map[string]any, steps int, held string) error {
	var starts, passed []int
	done := ""
	for _, e := range entries {
		step := -1
		if s, ok := e["step"].(float64); ok {
			step = int(s)
		}
		switch e["kind"] {
		case "start":
			starts = append(starts, step)
		case "step-passed":
			passed = append(passed, step)
		case "done":
			done, _ = e["detail"].(string)
		case "takeover":
			return fmt.Errorf("the resume took %s over from the killed runner: %v", held, e)
		case "drift":
			return fmt.Errorf("the resume took a write as drift: %v", e)
		case "rollback", "step-failed":
			return fmt.Errorf("%s entry in a trial that should complete: %v", e["kind"], e)
		}
	}
	if len(starts) != 1 {
		return fmt.Errorf("%d start entries, want 1", len(starts))
	}
	want := make([]int, steps)
	for i := range want {
		want[i] = i
	}
	if fmt.Sprint(passed) != fmt.Sprint(want) {
		return fmt.Errorf("steps passed %v, want each of %v once, in order", passed, want)
	}
	if done != "completed" {
		return fmt.Errorf("done entry %q, want completed", done)
	}
	return nil
}

// kill9Route53 is app.example.com's blue and green weighted members, published by
// `crossfade sync` (blue=100 green=0), a resolver querying the name throughout, and plans
// of 0/10/50/100 % gated on the authoritative answers.
func kill9Route53(t *testing.T) *kill9Target {
	sb, aws, zone := cutoverZone(t, 100, 0)
	loop := startResolverLoop(t, sb, "app.example.com")
	loop.waitQueries(t, 20)
	return &kill9Target{
		sb: sb, held: "the records", steps: 4, what: "queries",
		plan: func(name, from, to string) string { return cutoverPlan(t, sb, name, from, to) },
		ended: func(from, to string) error {
			if w := aws.weightsOf(zone); w[from] != 0 || w[to] != 100 {
				return fmt.Errorf("weights %v, want %s=0 %s=100", w, from, to)
			}
			return nil
		},
		// The next trial moves the other way: the same cutover authority is taken over by
		// the next plan, so release this one's first, as an operator would: each
		// publisher's source set to the weight the zone now holds and synced (which
		// confirms the hold), then a plain release.
		next: func(i int, state, planFile, from, to string) {
			syncMember(t, sb, from, 0)
			syncMember(t, sb, to, 100)
			if out, code := runCutover(t, sb, state, "release", planFile); code != 0 {
				t.Fatalf("trial %d: release: %s", i, out)
			}
		},
		traffic: func() ([]string, int64) {
			loop.halt()
			t.Logf("resolver: %d queries, %d asked again after a UDP timeout", loop.queries, loop.retried)
			return loop.misses, int64(loop.queries)
		},
	}
}

// kill9ALB is the ALB of newCutALB (rule and listener forwarding blue=99 green=1) with a
// request loop through its listener, and plans of 1/10/50/100 % gated on target health and
// CloudWatch traffic. A kill between the rule's ModifyRule and the listener's
// ModifyListener leaves them at different weights; the resume writes the step again,
// skipping what is already at it. No authority tag is left once a trial has ended, also
// when the kill came between the end and their removal.
func kill9ALB(t *testing.T) *kill9Target {
	a := newCutALB(t)
	load := cutovertest.StartLoad(t, a.addr, cutBackendHeader, 4, 3*time.Millisecond)
	load.WaitRequests(t, 100)
	return &kill9Target{
		sb: a.sb, held: "the rules", steps: 4, what: "requests through the listener",
		plan: func(name, from, to string) string { return a.plan(name, from, to, "1s", "") },
		ended: func(from, to string) error {
			want := fmt.Sprintf("%s=0 %s=100", from, to)
			if from == "green" {
				want = fmt.Sprintf("%s=100 %s=0", to, from)
			}
			if rule, listener := a.weights(); rule != want || listener != want {
				return fmt.Errorf("rule %s, listener %s; want %s", rule, listener, want)
			}
			if tags := a.authority(); len(tags) > 0 {
				return fmt.Errorf("authority tags left: %q", tags)
			}
			return nil
		},
		traffic: func() ([]string, int64) {
			load.Halt()
			return load.Failures(), load.Total()
		},
	}
}

// kill9CloudMap is the Cloud Map service of newCutCloudMap (custom health applied after
// 200 ms), clients calling DiscoverInstances throughout, and plans of 10/50/100 % gated on
// what DiscoverInstances answers. The resume is the killed runner (the journal's token):
// its tag was its own, and the end removed it.
func kill9CloudMap(t *testing.T) *kill9Target {
	m := newCutCloudMap(t, 200*time.Millisecond)
	load := startCMClients(t, m.sb, 4)
	// halt may be called once only; the trials call it at their end, a failed trial's end
	// here.
	var halted sync.Once
	halt := func() { halted.Do(load.halt) }
	t.Cleanup(halt)
	load.waitAnswers(t, 50)
	return &kill9Target{
		sb: m.sb, held: "the service", steps: 3, what: "DiscoverInstances calls",
		plan: func(name, from, to string) string { return m.plan(name, from, to, "[10, 50, 100]", "1s", "") },
		ended: func(from, to string) error {
			if got := m.healthy(); got[from] != 0 || got[to] != cmPerCluster {
				return fmt.Errorf("healthy %v, want %s 0 and %s %d", got, from, to, cmPerCluster)
			}
			if tags := m.authority(); len(tags) > 0 {
				return fmt.Errorf("authority tags left after the resumed run ended: %q", tags)
			}
			return nil
		},
		traffic: func() ([]string, int64) {
			halt()
			return load.failures, load.total.Load()
		},
	}
}
