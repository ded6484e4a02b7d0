package cutover

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// TestPauseActsBeforeTheNextWrite: a pause that arrives as a step passes (sent at its
// last gate check) holds the weights where they are before the next step is written;
// nothing more is written until resume. A pause sent before the cutover started is
// refused: the next fresh run would have acted on it (inverted: this test used to send
// its pause before the run and expect the run to obey it).
func TestPauseActsBeforeTheNextWrite(t *testing.T) {
	p := fakePlan(0, 10, 50, 100)
	lv := newFakeLever("blue", "green", 100, 0)
	var paths Paths
	g := &scriptGate{name: "g", next: func(s gate.Step, n int) gate.Result {
		if s.Index == 0 && n == 0 {
			if err := SendCommand(paths, Command{Command: CommandPause, By: "alice"}); err != nil {
				t.Error(err)
			}
		}
		return gate.Result{Pass: true, Detail: "ok"}
	}}
	cfg := fakeConfig(t, p, lv, g)
	paths = PathsFor(cfg.StateDir, p.Name)
	var refused *CommandRefusedError
	if err := SendCommand(paths, Command{Command: CommandPause, By: "alice"}); !errors.As(err, &refused) {
		t.Fatalf("a pause before the cutover started: %v, want it refused", err)
	}
	phases, done := startRun(cfg, false)
	waitPhase(t, phases, PhasePaused)
	entries, _ := journal.Read(paths.Journal)
	for _, en := range entries {
		if en.Kind == kindIntent && en.Step > 0 {
			t.Errorf("paused after step 1, the runner still wrote: %+v", en)
		}
	}
	if err := SendCommand(paths, Command{Command: CommandResume, By: "bob"}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if w := lv.weights(); w["green"] != 100 {
		t.Errorf("weights %v after resume, want the last step's", w)
	}
	if cmds, _ := readCommands(paths.Control); len(cmds) != 0 {
		t.Errorf("%d commands left after the cutover ended", len(cmds))
	}
}

// TestPausedTimeIsNotCounted: a pause longer than the total time limit does not fail the
// cutover once resumed.
func TestPausedTimeIsNotCounted(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	p.Steps = p.Steps[2:]
	p.TotalTimeout = 3 * time.Second
	paths := PathsFor(e.dir, "app")
	phases, done := startRun(e.config(p), false)
	waitPhase(t, phases, PhaseHolding)
	SendCommand(paths, Command{Command: CommandPause, By: "alice"})
	waitPhase(t, phases, PhasePaused)
	time.Sleep(3 * time.Second)
	SendCommand(paths, Command{Command: CommandResume, By: "alice"})
	if err := <-done; err != nil {
		t.Fatalf("run: %v; 3 s paused counted against the 3 s limit", err)
	}
}

// slowGate passes every check, after taking its time.
type slowGate time.Duration

func (g slowGate) Name() string { return "slow" }
func (g slowGate) Check(ctx context.Context, _ gate.Step) gate.Result {
	select {
	case <-ctx.Done():
	case <-time.After(time.Duration(g)):
	}
	return gate.Result{Gate: g.Name(), Kind: "test", Pass: true}
}

// TestStepOverrunFails: a step whose gate checks run past its hold by more than
// timeouts.step fails and rolls back, although every check passed.
func TestStepOverrunFails(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t, spec.Gate{Name: "slow"})
	p.Steps = p.Steps[2:3] // 50 %, a 1 s hold
	p.StepTimeout = 200 * time.Millisecond
	cfg := e.config(p)
	cfg.NewGate = func(spec.Gate) (Gate, error) { return slowGate(1500 * time.Millisecond), nil }
	_, err := Run(context.Background(), cfg, false)
	var rb *RollbackError
	if !errors.As(err, &rb) || !strings.Contains(rb.Reason, "step over its time limit 1.2s") {
		t.Fatalf("run: %v, want a rollback for the step's time limit", err)
	}
	if a, _ := e.Weights(t); a["blue"] != 100 || a["green"] != 0 {
		t.Errorf("weights after the rollback: %v", a)
	}
}

// TestAnotherCutoversWeights: a cutover never writes over the weights another one holds,
// nor releases them.
func TestAnotherCutoversWeights(t *testing.T) {
	e := newEnv(t, 100, 0)
	zones, _ := e.DNS.Zones(context.Background())
	other := registry.AuthorityRecord("app.example.com", []string{"A"}, "checkout-move")
	if err := e.DNS.Apply(context.Background(), zones[0], changes.Batch{{Action: changes.Create, Endpoint: other}}); err != nil {
		t.Fatal(err)
	}
	cfg := e.config(testPlan(t))
	_, err := Run(context.Background(), cfg, false)
	var nr *NotReadyError
	if !errors.As(err, &nr) || !strings.Contains(err.Error(), "held by cutover checkout-move") {
		t.Fatalf("run: %v", err)
	}
	if _, err := Release(context.Background(), cfg, ReleaseOptions{Force: true}); err == nil {
		t.Error("release --force deleted another cutover's authority record")
	}
	recs, _ := e.DNS.Records(context.Background(), zones[0])
	if registry.Holds(recs)[endpoint.Key{Name: "app.example.com", Type: "A"}].Cutover != "checkout-move" {
		t.Error("the other cutover's authority record is gone")
	}
}

// TestAbortDoesWhatItCan: an interrupted cutover is aborted even when one member is gone,
// its gates cannot be built and its pauses would no longer pass the pacing check; the
// rollback journals who aborted it.
func TestAbortDoesWhatItCan(t *testing.T) {
	e := newEnv(t, 50, 50)
	paths := PathsFor(e.dir, "app")
	if _, err := Abort(context.Background(), e.config(testPlan(t))); err == nil || !strings.Contains(err.Error(), "abort refused: it has not run here: no journal at") {
		t.Errorf("abort before any run: %v", err)
	}
	if _, err := os.Stat(paths.Journal); !os.IsNotExist(err) {
		t.Errorf("abort of a cutover never run created its journal: %v", err)
	}
	seedJournal(t, paths.Journal, []journal.Entry{
		{Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}, TTL: 1},
		{Kind: kindStepPassed, Step: 0}, {Kind: kindStepPassed, Step: 1},
		{Kind: kindIntent, Step: 2, Weights: map[string]int64{"blue": 50, "green": 50}},
	})
	// Green's cluster has gone, and unpublished its member.
	if rep, err := (&controller.Syncer{Provider: e.DNS, Registry: mustRegistry(t, "green"), Policy: changes.Sync}).Sync(context.Background(), nil); err != nil || rep.Err() != nil {
		t.Fatalf("unpublish green: %v", err)
	}
	p := testPlan(t, spec.Gate{Name: "unbuildable"})
	p.Steps[0].Pause = 10 * time.Millisecond
	cfg := e.config(p)
	cfg.NewGate = func(spec.Gate) (Gate, error) { return nil, errors.New("no such gate") }
	rep, err := Abort(context.Background(), cfg)
	if err != nil || rep.Outcome != outcomeRolledBack || !strings.Contains(rep.Rollback, "aborted by test@host") {
		t.Fatalf("abort: %v (%+v)", err, rep)
	}
	if a, _ := e.Weights(t); a["blue"] != 100 {
		t.Errorf("weights after abort %v, want blue back at 100", a)
	}
	if _, err := Abort(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "abort refused: it has ended (rolled-back)") {
		t.Errorf("second abort: %v", err)
	}
}

func mustRegistry(t *testing.T, owner string) *registry.TXT {
	t.Helper()
	reg, err := registry.New(registry.Config{OwnerID: owner})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestReleaseRefuses: release needs a finished cutover's journal, unless forced, and
// creates no journal of its own.
func TestReleaseRefuses(t *testing.T) {
	e := newEnv(t, 100, 0)
	cfg := e.config(testPlan(t))
	paths := PathsFor(e.dir, "app")
	if _, err := Release(context.Background(), cfg, ReleaseOptions{}); err == nil || !strings.Contains(err.Error(), "no journal") {
		t.Errorf("release with no journal: %v", err)
	}
	if _, err := os.Stat(paths.Journal); !os.IsNotExist(err) {
		t.Errorf("release created a journal: %v", err)
	}
	seedJournal(t, paths.Journal, []journal.Entry{{Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}}})
	if _, err := Release(context.Background(), cfg, ReleaseOptions{}); err == nil || !strings.Contains(err.Error(), "unfinished") {
		t.Errorf("release of an unfinished cutover: %v", err)
	}
	if rel, err := Release(context.Background(), cfg, ReleaseOptions{Force: true}); err != nil || rel.Records != 0 {
		t.Errorf("forced release with no authority record: %+v, %v", rel, err)
	}
}

// TestResumeRefusesAnotherPlan: a journal begun with other members or weights is not
// resumed with this plan.
func TestResumeRefusesAnotherPlan(t *testing.T) {
	e := newEnv(t, 100, 0)
	seedJournal(t, PathsFor(e.dir, "app").Journal, []journal.Entry{{Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}, PlanHash: "0123456789abcdef"}})
	if _, err := Run(context.Background(), e.config(testPlan(t)), true); err == nil || !strings.Contains(err.Error(), "changed since it started") {
		t.Errorf("resume with another plan: %v", err)
	}
}

// TestStartRefusesDifferingWeights: records whose members start at different weights are
// not moved as one.
func TestStartRefusesDifferingWeights(t *testing.T) {
	e := newEnv(t, 100, 0)
	for _, m := range []struct {
		owner, ip  string
		app, other int64
	}{{"blue", "127.0.0.10", 100, 70}, {"green", "127.0.0.20", 0, 30}} {
		var eps []*endpoint.Endpoint
		for name, w := range map[string]int64{"app.example.com": m.app, "api.example.com": m.other} {
			eps = append(eps, &endpoint.Endpoint{Name: name, Type: "A", Targets: endpoint.Targets{m.ip}, TTL: 1,
				SetIdentifier: m.owner, Policy: endpoint.WeightedPolicy(w), Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/app"}})
		}
		if rep, err := (&controller.Syncer{Provider: e.DNS, Registry: mustRegistry(t, m.owner), Policy: changes.Sync}).Sync(context.Background(), eps); err != nil || rep.Err() != nil {
			t.Fatalf("publish %s: %v", m.owner, err)
		}
	}
	p := testPlan(t)
	p.Records = append(p.Records, spec.Record{Name: "api.example.com", Type: "A"})
	_, err := Run(context.Background(), e.config(p), false)
	if err == nil || !strings.Contains(err.Error(), "api.example.com A [blue] has weight 70") && !strings.Contains(err.Error(), "app.example.com A [blue] has weight 100") {
		t.Fatalf("run: %v", err)
	}
	if _, err := DryRun(context.Background(), e.config(p)); err == nil || !strings.Contains(err.Error(), "make them equal first") {
		t.Errorf("plan: %v", err)
	}
}

// TestPlanPreviewSimulates: `cutover plan` renders each batch against the zone the batches
// before it leave (so, after lowering the TTL, every step carries the lowered TTL), the
// TTL restore, and the gradual rollback from the last step.
func TestPlanPreviewSimulates(t *testing.T) {
	e := newEnv(t, 100, 0)
	e.SetTTL(t, 2)
	p := testPlan(t)
	p.LowerTTL = 1
	p.Rollback = spec.PlanRollback{Mode: spec.RollbackGradual, Steps: []spec.Weights{{From: 50, To: 50}}}
	pv, err := DryRun(context.Background(), e.config(p))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range pv.Writes {
		names = append(names, w.Name)
	}
	want := "lower TTL to 1s, then wait out the old 2s; step 1 of 4; step 2 of 4; step 3 of 4; step 4 of 4; restore TTL to 2s once completed; " +
		"rollback 1 of 2 (from the last step); rollback 2 of 2 (from the last step); restore TTL to 2s once rolled back"
	if got := strings.Join(names, "; "); got != want {
		t.Fatalf("writes:\n  %s\nwant\n  %s", got, want)
	}
	ttl2 := regexp.MustCompile(`"TTL":\s*2\b`)
	for _, w := range pv.Writes[1:5] {
		if ttl2.Match(w.Batch) {
			t.Errorf("%s writes TTL 2 back, as if the TTL had not been lowered:\n%s", w.Name, w.Batch)
		}
	}
	// Step 1 (0 %) changes no weight: it rewrites the authority record only, which the
	// TTL lowering created (DELETE as written, CREATE).
	if pv.Writes[1].Changes != 2 {
		t.Errorf("step 1: %d changes, want 2:\n%s", pv.Writes[1].Changes, pv.Writes[1].Batch)
	}
	if got := pv.Rollbacks[1]; got != "if step 2 of 4 fails: rollback through blue=100 green=0" {
		t.Errorf("rollback from step 2: %q", got)
	}
	if got := pv.Rollbacks[3]; got != "if step 4 of 4 fails: rollback through blue=50 green=50 → blue=100 green=0" {
		t.Errorf("rollback from step 4: %q", got)
	}
	// Nothing was sent.
	if a, _ := e.Weights(t); a["blue"] != 100 {
		t.Errorf("plan changed the zone: %v", a)
	}
}

// TestRetire: after the last step, the from cluster is declared retirable once its
// request rate has stayed low for the window; a cluster still busy at the timeout is
// declared not retirable, and the cutover still completes.
func TestRetire(t *testing.T) {
	for _, tc := range []struct {
		name      string
		drains    bool
		retirable bool
	}{{"drains", true, true}, {"stays busy", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 100, 0)
			var served atomic.Int64
			var stopped atomic.Int64 // unix nanos when blue stopped serving
			metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				fmt.Fprintf(w, "# TYPE requests_total counter\nrequests_total %d\n", served.Load())
			}))
			defer metrics.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { // blue's traffic: 50 req/s until drained
				for ctx.Err() == nil {
					if stopped.Load() == 0 {
						served.Add(5)
					}
					time.Sleep(100 * time.Millisecond)
				}
			}()
			p := testPlan(t)
			p.Steps = p.Steps[2:]
			p.Retire = &spec.Retire{Metrics: metrics.URL + "/metrics", Counter: "requests_total", MaxRate: 1,
				Window: spec.Duration{Duration: time.Second}, Timeout: spec.Duration{Duration: 2500 * time.Millisecond}}
			cfg := e.config(p)
			cfg.Progress = progressHook(func(ev Event) {
				if tc.drains && ev.Phase == PhaseRetiring && stopped.Load() == 0 {
					stopped.Store(time.Now().UnixNano())
				}
			})
			rep, err := Run(context.Background(), cfg, false)
			if err != nil || rep.Outcome != outcomeCompleted || rep.Retire == nil {
				t.Fatalf("run: %v, outcome %q, retire %+v", err, rep.Outcome, rep.Retire)
			}
			t.Log(rep.Retire.Detail)
			if rep.Retire.Retirable != tc.retirable || rep.Retire.Cluster != "blue" {
				t.Errorf("retire verdict %+v, want retirable %t", rep.Retire, tc.retirable)
			}
			if tc.drains {
				if waited := rep.Retire.At.Sub(time.Unix(0, stopped.Load())); waited < time.Second {
					t.Errorf("declared retirable %s after the traffic stopped, before the 1 s window", waited)
				}
			} else if !strings.Contains(rep.Retire.Detail, "NOT retirable") {
				t.Errorf("detail %q", rep.Retire.Detail)
			}
		})
	}
}

// TestProgressEvents: every write is shown in the phase of its stage, rollback stops with
// their index and count, and a failed check in a holding event before the rollback, so
// that a live view needs no message parsing to tell stages apart.
func TestProgressEvents(t *testing.T) {
	e := newEnv(t, 100, 0)
	e.SetTTL(t, 2)
	p := testPlan(t, spec.Gate{Name: "fails-at"})
	p.Steps = p.Steps[1:3] // 10 %, 50 %
	p.LowerTTL = 1
	p.Rollback = spec.PlanRollback{Mode: spec.RollbackGradual, Steps: []spec.Weights{{From: 90, To: 10}}}
	cfg := e.config(p)
	cfg.NewGate = func(spec.Gate) (Gate, error) { return failAt(50), nil }
	var seen []string
	cfg.Progress = progressHook(func(ev Event) {
		s := fmt.Sprintf("%s %d/%d", ev.Phase, ev.Step, ev.Total)
		for _, g := range ev.Gates {
			if !g.Pass {
				s += " FAIL " + g.Gate
			}
		}
		// Holds repeat every check: keep one line per distinct event.
		if len(seen) == 0 || seen[len(seen)-1] != s {
			seen = append(seen, s)
		}
	})
	_, err := Run(context.Background(), cfg, false)
	var rb *RollbackError
	if !errors.As(err, &rb) {
		t.Fatalf("run: %v, want a rollback", err)
	}
	want := []string{
		"lowering-ttl 0/0", // the TTL write, then its wait
		"writing 0/2", "holding 0/2",
		"writing 1/2", "holding 1/2 FAIL fails-at",
		"rolling-back 0/2", // stop 1 (90/10): its write and its hold
		"rolling-back 1/2", // the starting weights
		"restoring-ttl 0/0",
		"done 0/0",
	}
	if got := strings.Join(seen, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("events\n got:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}
