package cutover

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// errCrash stands for the runner dying at that moment.
var errCrash = errors.New("runner killed")

// crashPoint is where in a write the runner dies.
type crashPoint int

const (
	// afterSend: the lever sent the write, the runner never heard back (nothing after the
	// intent is journaled; Route 53's change id is lost).
	afterSend crashPoint = iota
	// afterInEffect: the write is in effect (Route 53's change INSYNC, every ALB rule
	// describing the weights, Cloud Map's statuses applied), the runner died before
	// journaling it.
	afterInEffect
	// landsLate: the runner dies as it sends, and the write lands only after the resumed
	// run has read the lever (a request still on the wire, a change applied late): the
	// resumed run must take it for the killed run's, from the journal's last intent, not
	// for drift.
	landsLate
)

func (c crashPoint) String() string {
	return [...]string{"after send", "after in effect", "landing late"}[c]
}

// crashLever passes every call to the lever it wraps, until write n: the write is sent
// whole, then the runner dies at the point given, cancelling the run's context as a kill
// would end it. It knows nothing of the lever under it, so one trial kills every lever
// the same way.
type crashLever struct {
	lever.Lever
	n      int
	at     crashPoint
	cancel context.CancelFunc
	mu     sync.Mutex
	writes int
	// armed: write n was sent; the first InEffect that finds it in effect kills.
	armed bool
	// late sends write n (landsLate), once; nil when there is none to send.
	late func() error
}

// landLate is what a resumed run pulls when the killed run's write lands late: the lever
// of the resumed run, whose first Read returns the lever as it was, then lands the killed
// run's write before the runner goes on.
type landLate struct {
	lever.Lever
	crash *crashLever
	// err is the late write's error, checked by the test once the run ends.
	err error
}

// Read reads the lever, then lands the killed run's write, once.
func (l *landLate) Read(ctx context.Context, o lever.ReadOptions) (lever.Snapshot, error) {
	s, err := l.Lever.Read(ctx, o)
	l.crash.mu.Lock()
	late := l.crash.late
	l.crash.late = nil
	l.crash.mu.Unlock()
	if late != nil {
		l.err = late()
	}
	return s, err
}

// landLateLevers wraps the lever each build of f returns in l.
func landLateLevers(f lever.Factory, l *landLate) lever.Factory {
	return func(p *spec.Plan) (lever.Lever, lever.GateClients, error) {
		lv, gc, err := f(p)
		if err != nil {
			return nil, gc, err
		}
		l.Lever = lv
		return l, gc, nil
	}
}

// crashLevers wraps the lever each build of f returns in one crashLever, counting the
// writes of every lever built (a run builds one).
func crashLevers(f lever.Factory, c *crashLever) lever.Factory {
	return func(p *spec.Plan) (lever.Lever, lever.GateClients, error) {
		lv, gc, err := f(p)
		if err != nil {
			return nil, gc, err
		}
		c.Lever = lv
		return c, gc, nil
	}
}

// Write sends the write, and dies at write n as c.at says.
func (c *crashLever) Write(ctx context.Context, s lever.Snapshot, ch lever.Change, env lever.WriteEnv) (lever.Written, error) {
	c.mu.Lock()
	if c.at == landsLate && c.writes+1 == c.n {
		c.writes++
		// Sent by no runner: the killed one journals nothing more (its BeforeSend would).
		env.BeforeSend = func(lever.Snapshot) error { return nil }
		c.late = func() error {
			_, err := c.Lever.Write(context.Background(), s, ch, env)
			return err
		}
		c.mu.Unlock()
		c.cancel()
		return lever.Written{}, errCrash
	}
	c.mu.Unlock()
	w, err := c.Lever.Write(ctx, s, ch, env)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	if c.writes == c.n {
		if c.at == afterSend {
			c.cancel()
			return lever.Written{}, errCrash
		}
		c.armed = true
	}
	return w, err
}

// InEffect dies the first time write n (afterInEffect) is found in effect.
func (c *crashLever) InEffect(ctx context.Context, w lever.Written) (bool, error) {
	ok, err := c.Lever.InEffect(ctx, w)
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok && c.armed {
		c.armed = false
		c.cancel()
		return false, errCrash
	}
	return ok, err
}

// failAt is a gate that fails once `to` has the weight given.
type failAt int64

func (f failAt) Name() string { return "fails-at" }
func (f failAt) Check(_ context.Context, s gate.Step) gate.Result {
	pass := s.Weights[s.To] != int64(f)
	return gate.Result{Gate: f.Name(), Kind: "test", Pass: pass, Detail: fmt.Sprintf("to weight %d", s.Weights[s.To])}
}

// crashSubject is one lever the crash trial kills: its sandbox, its plan, how many writes
// an uninterrupted run sends, and how the end state is checked.
type crashSubject struct {
	// name is the lever's.
	name string
	// completes and rollsBack are how many writes an uninterrupted run of each scenario
	// sends; rollbackFirst the first write of the rollback scenario not the completing
	// scenario's too (the forward writes are killed there already).
	completes, rollsBack, rollbackFirst int
	// delay is how long a write takes to be in effect at least (the sandbox's change
	// delay), for checkJournal.
	delay time.Duration
	// ops are the lever's own API's operations: every call the two runs make is one.
	ops []string
	// setup starts the sandbox with the lever's resources at 100:0.
	setup func(t *testing.T) crashBed
}

// crashBed is a lever on a sandbox started for one crash.
type crashBed struct {
	// plan moves from blue to green in 50 and 100 % steps; sb is the sandbox.
	plan *spec.Plan
	sb   *sandbox.Sandbox
	// levers pulls the lever over the sandbox; config is a Config for p pulling f.
	levers lever.Factory
	config func(p *spec.Plan, f lever.Factory, dir string) Config
	// final checks the lever's state once a run ends at weight from for from (100:
	// rolled back, 0: completed).
	final func(t *testing.T, from int64)
}

// crashSubjects are the levers the trial kills: Route 53 (its change INSYNC after 150 ms,
// lowering the TTL 2 s → 1 s around the steps), ALB and Cloud Map.
var crashSubjects = []crashSubject{
	{
		name: lever.Route53,
		// lower TTL, step 1 (50 %), step 2 (100 %), restore TTL; rolling back: lower TTL,
		// step 1, step 2 fails, rollback 50/50, rollback 100/0, restore TTL.
		completes: 4, rollsBack: 6, rollbackFirst: 4,
		delay: 150 * time.Millisecond,
		ops:   []string{"ListHostedZones", "ListHostedZonesByName", "GetHostedZone", "ListResourceRecordSets", "ChangeResourceRecordSets", "GetChange"},
		setup: func(t *testing.T) crashBed {
			z := levertest.NewZone(t, sandbox.Config{ChangeDelay: 150 * time.Millisecond}, 100, 0)
			z.SetTTL(t, 2)
			p := testPlan(t)
			p.Steps = p.Steps[2:] // 50 %, 100 %
			p.LowerTTL = 1
			config := func(p *spec.Plan, f lever.Factory, dir string) Config {
				return Config{Plan: p, Levers: f, StateDir: dir, By: "test@host", DNSServers: []string{z.SB.DNSAddr()},
					CheckInterval: 100 * time.Millisecond, PollInterval: 10 * time.Millisecond}
			}
			final := func(t *testing.T, from int64) {
				a, txt := z.Weights(t)
				if a["blue"] != from || a["green"] != 100-from || txt["blue"] != from || txt["green"] != 100-from {
					t.Errorf("final weights A %v TXT %v, want blue %d", a, txt, from)
				}
				for key, ttl := range z.TTLs(t) {
					if ttl != 2 {
						t.Errorf("%s TTL %d, want the original 2 restored", key, ttl)
					}
				}
			}
			return crashBed{plan: p, sb: z.SB, levers: z.Levers(z.DNS), config: config, final: final}
		},
	},
	tagCrashSubject(lever.ALB, levertest.ALBTagLever,
		"DescribeRules", "DescribeListeners", "DescribeTargetGroups", "DescribeTargetHealth", "DescribeLoadBalancers",
		"DescribeTags", "AddTags", "RemoveTags", "ModifyRule", "ModifyListener"),
	tagCrashSubject(lever.CloudMap, levertest.CloudMapTagLever,
		"ListNamespaces", "GetNamespace", "ListServices", "GetService", "ListInstances", "GetInstance", "GetInstancesHealthStatus",
		"DiscoverInstances", "ListTagsForResource", "TagResource", "UntagResource", "UpdateInstanceCustomHealthStatus"),
}

// tagCrashSubject is a lever the authority tags guard, built by build, for the trial: its
// run ends with its tags removed.
func tagCrashSubject(name string, build func(t *testing.T) *levertest.TagLever, ops ...string) crashSubject {
	return crashSubject{
		name: name,
		// step 1 (50 %), step 2 (100 %); rolling back: step 1, step 2 fails, rollback
		// 50/50, rollback 100/0.
		completes: 2, rollsBack: 4, rollbackFirst: 3,
		ops: ops,
		setup: func(t *testing.T) crashBed {
			h := build(t)
			h.Reset(t)
			final := func(t *testing.T, from int64) {
				want := map[int64]string{0: h.AtTo, 100: h.AtFrom}[from]
				if got := h.State(t); got != want {
					t.Errorf("final weights %s, want %s", got, want)
				}
				if tags := h.Authority(t); len(tags) > 0 {
					t.Errorf("authority tags %q left after the resumed run ended", tags)
				}
			}
			config := func(p *spec.Plan, f lever.Factory, dir string) Config {
				cfg := quietConfig(p, dir)
				cfg.Levers = f
				return cfg
			}
			return crashBed{plan: h.Plan("app"), sb: h.SB, levers: h.Levers(nil), config: config, final: final}
		},
	}
}

// TestCrashAtEveryWrite is the kill-and-resume trial, one run against every lever: it
// kills the runner at each write of a cutover, right after the lever sent it and right
// after it was in effect, through a wrapper of the lever seam that knows no lever, then
// resumes it. Every resumed run must end as an uninterrupted one would: the weights (and
// for Route 53 the ownership records and the TTL, lowered 2 s → 1 s around the steps and
// waited out even when the crash came in the middle of lowering it) as the plan ends;
// every write followed until in effect, each in effect once in the journal and each step
// passed once; the killed run's write, landed, not taken for drift; the sandbox called on
// the lever's own reads and writes only; the authority tags let go. The rollback scenario
// fails its last step and rolls back through a gradual stop: a resumed rollback goes
// through the same stops.
func TestCrashAtEveryWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandboxes")
	}
	for _, sub := range crashSubjects {
		for _, rollback := range []bool{false, true} {
			scenario, writes, firstCrash := "completes", sub.completes, 1
			if rollback {
				scenario, writes, firstCrash = "rolls back", sub.rollsBack, sub.rollbackFirst
			}
			for n := firstCrash; n <= writes; n++ {
				for _, at := range []crashPoint{afterSend, afterInEffect, landsLate} {
					t.Run(fmt.Sprintf("%s/%s/write %d %s", sub.name, scenario, n, at), func(t *testing.T) {
						t.Parallel()
						bed := sub.setup(t)
						p, sb, config, levers, final := bed.plan, bed.sb, bed.config, bed.levers, bed.final
						// Drift taken where there is none ends the run (rolled back) rather
						// than pausing it for good.
						p.OnDrift = spec.DriftRollback
						if rollback {
							p.Rollback = spec.PlanRollback{Mode: spec.RollbackGradual, Steps: []spec.Weights{{From: 50, To: 50}}}
							p.Steps[1].Gates = []spec.Gate{{Name: "fails-at"}}
						}
						newGate := func(spec.Gate) (Gate, error) { return failAt(100), nil }
						dir := t.TempDir()
						before := sandboxtest.APICalls(t, sb)

						ctx, cancel := context.WithCancel(context.Background())
						defer cancel()
						crash := &crashLever{n: n, at: at, cancel: cancel}
						cfg := config(p, crashLevers(levers, crash), dir)
						cfg.NewGate = newGate
						if _, err := Run(ctx, cfg, false); err == nil || crash.writes != n {
							t.Fatalf("the run did not die at its crash point: %v after %d writes", err, crash.writes)
						}

						late := &landLate{crash: crash}
						cfg = config(p, landLateLevers(levers, late), dir)
						cfg.NewGate = newGate
						rep, err := Run(context.Background(), cfg, true)
						if late.err != nil {
							t.Fatalf("the killed run's write, landing late: %v", late.err)
						}
						if at == landsLate && crash.late != nil {
							t.Fatal("the resumed run never read the lever before the killed run's write landed")
						}
						wantStart, wantOutcome := int64(0), outcomeCompleted
						if rollback {
							wantStart, wantOutcome = 100, outcomeRolledBack
							var rb *RollbackError
							if !errors.As(err, &rb) || rb.Step != 1 {
								t.Fatalf("resumed run: %v, want the rollback of step 2", err)
							}
						} else if err != nil {
							t.Fatalf("resumed run: %v", err)
						}
						if rep.Outcome != wantOutcome {
							t.Fatalf("outcome %q, want %q", rep.Outcome, wantOutcome)
						}
						final(t, wantStart)
						entries, err := journal.Read(PathsFor(dir, p.Name).Journal)
						if err != nil {
							t.Fatal(err)
						}
						checkJournal(t, entries, sub.delay)
						checkOnce(t, entries, len(p.Steps)-btoi(rollback))
						// A resumed rollback keeps the stops it began with.
						var names []string
						for _, s := range rep.Steps {
							names = append(names, s.Name)
						}
						if rollback && !strings.Contains(strings.Join(names, ","), "rollback 2 of 2") {
							t.Errorf("writes %v: the rollback lost its gradual stop", names)
						}
						checkOwnCalls(t, before, sandboxtest.APICalls(t, sb), sub.ops)
					})
				}
			}
		}
	}
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkOnce checks that the journal has no drift (the killed run's write, landed, is the
// resumed run's to redo, not a writer's behind its back), that each write intended was in
// effect once (a write redone after a crash is the same write: its intent again, one
// in-effect entry), and that steps 0 … passed-1 passed once each and no other did.
func checkOnce(t *testing.T, entries []journal.Entry, passed int) {
	t.Helper()
	inEffect := map[string]int{}
	stepPassed := map[int]int{}
	var intent string
	for _, e := range entries {
		switch e.Kind {
		case kindDrift:
			t.Errorf("seq %d: drift journaled: %s", e.Seq, e.Detail)
		case kindIntent:
			intent = e.Detail
			inEffect[intent] += 0
		case kindInSync:
			inEffect[intent]++
		case kindStepPassed:
			stepPassed[e.Step]++
		}
	}
	for what, n := range inEffect {
		if n != 1 {
			t.Errorf("write %q in effect %d times in the journal, want once", what, n)
		}
	}
	for i := range passed {
		if stepPassed[i] != 1 {
			t.Errorf("step %d passed %d times in the journal, want once", i+1, stepPassed[i])
		}
	}
	if len(stepPassed) != passed {
		t.Errorf("steps passed %v, want steps 1 to %d once each", stepPassed, passed)
	}
}

// checkOwnCalls checks that every API call the sandbox served between before and after
// (metrics keyed "operation result") is one of ops, the lever's own reads and writes:
// the crash and the resume create and delete nothing, and call no other lever's API.
func checkOwnCalls(t *testing.T, before, after map[string]int, ops []string) {
	t.Helper()
	for key, n := range after {
		if n == before[key] {
			continue
		}
		op, _, _ := strings.Cut(key, " ")
		if !slices.Contains(ops, op) {
			t.Errorf("the runs called %s %d times: not one of the lever's own calls %v", key, n-before[key], ops)
		}
	}
}

// checkJournal checks that every write that a later entry builds on was followed to
// INSYNC, after at least the sandbox's change delay, and that the old TTL was waited out
// after the TTL was last written lower.
func checkJournal(t *testing.T, entries []journal.Entry, delay time.Duration) {
	t.Helper()
	type write struct {
		intent  journal.Entry
		written time.Time
		insync  bool
	}
	var cur *write
	var lowered *journal.Entry
	for _, e := range entries {
		switch e.Kind {
		case kindIntent:
			cur = &write{intent: e}
		case kindWritten:
			if cur == nil || cur.intent.Step != e.Step {
				t.Errorf("seq %d: written without its intent", e.Seq)
				continue
			}
			cur.written = e.Time
		case kindInSync:
			if cur == nil || cur.written.IsZero() {
				t.Errorf("seq %d: insync without a write", e.Seq)
				continue
			}
			// From the intent, journaled before the batch was sent: the change cannot be
			// INSYNC sooner than the sandbox's delay after that.
			if took := e.Time.Sub(cur.intent.Time); took < delay {
				t.Errorf("seq %d: INSYNC %s after the intent, before the change could be", e.Seq, took)
			}
			cur.insync = true
			if cur.intent.Step == stepTTLLower {
				l := e
				lowered = &l
			}
		case kindStepPassed, kindStepFailed, kindRollbackHeld, kindTTLLowered, kindDone:
			if cur != nil && !cur.insync && e.Kind != kindStepFailed {
				t.Errorf("seq %d %s: follows write %q that was never confirmed INSYNC", e.Seq, e.Kind, cur.intent.Detail)
			}
			if e.Kind == kindTTLLowered && lowered != nil {
				if waited := e.Time.Sub(lowered.Time); waited < 2*time.Second {
					t.Errorf("seq %d: the old TTL 2s was waited out only %s after the lowered TTL went INSYNC", e.Seq, waited)
				}
			}
		}
	}
}
