package cutover

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// env is levertest's zone (blue's and green's weighted members of app.example.com, each
// published by its own owner as `crossfade sync` publishes them, TTL 1 s) with the
// cutover's state directory.
type env struct {
	*levertest.Zone
	dir string
}

func newEnv(t *testing.T, blueWeight, greenWeight int64) *env {
	t.Helper()
	return newEnvWith(t, sandbox.Config{}, blueWeight, greenWeight)
}

// newEnvWith is newEnv on a sandbox configured by cfg (e.g. a ChangeDelay).
func newEnvWith(t *testing.T, cfg sandbox.Config, blueWeight, greenWeight int64) *env {
	t.Helper()
	return &env{Zone: levertest.NewZone(t, cfg, blueWeight, greenWeight), dir: t.TempDir()}
}

func (e *env) config(p *spec.Plan) Config {
	return Config{Plan: p, Levers: e.Levers(e.DNS), StateDir: e.dir, By: "test@host",
		DNSServers: []string{e.SB.DNSAddr()}, CheckInterval: 100 * time.Millisecond, PollInterval: 10 * time.Millisecond}
}

// testPlan is 0 → 10 → 50 → 100 % to green, 1 s per step, with the gates given.
func testPlan(t *testing.T, gates ...spec.Gate) *spec.Plan {
	t.Helper()
	p := &spec.Plan{Name: "app", Zone: "example.com", Records: []spec.Record{{Name: "app.example.com", Type: "A"}},
		From: "blue", To: "green", Rollback: spec.PlanRollback{Mode: spec.RollbackImmediate},
		InSyncTimeout: 10 * time.Second, StepTimeout: 10 * time.Second}
	for _, pct := range []int64{0, 10, 50, 100} {
		p.Steps = append(p.Steps, spec.PlanStep{Weights: spec.Weights{From: 100 - pct, To: pct}, Pause: time.Second, Gates: gates})
	}
	return p
}

// pauseEach sets every step of p to hold for pause.
func pauseEach(p *spec.Plan, pause time.Duration) {
	for i := range p.Steps {
		p.Steps[i].Pause = pause
	}
}

// backend serves 200 with X-Crossfade-Cluster, or 500 once failing is set.
func backend(t *testing.T, cluster string, failing *atomic.Bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Crossfade-Cluster", cluster)
		if failing.Load() {
			http.Error(w, "broken", http.StatusInternalServerError)
			return
		}
		w.Write([]byte(cluster))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}

// clusterGate is an HTTP gate probing a healthy blue backend and a green one that fails
// once greenDown is set.
func clusterGate(t *testing.T, name string, greenDown *atomic.Bool) spec.Gate {
	t.Helper()
	one := 1.0
	return spec.Gate{Name: name, HTTP: &spec.HTTPGate{
		Clusters: map[string]string{"blue": backend(t, "blue", new(atomic.Bool)), "green": backend(t, "green", greenDown)},
		Requests: 5, Timeout: spec.Duration{Duration: time.Second}, MinSuccessRatio: &one, ExpectStatus: []int{200}}}
}

// progressHook calls fn on every event.
type progressHook func(Event)

func (h progressHook) Event(e Event) { h(e) }

func TestRunFullShift(t *testing.T) {
	e := newEnv(t, 100, 0)
	var greenDown atomic.Bool
	httpGate := clusterGate(t, "clusters", &greenDown)
	tol := 0.15
	dnsGate := spec.Gate{Name: "answers", DNS: &spec.DNSGate{Samples: 200, Tolerance: &tol}}
	p := testPlan(t, httpGate, dnsGate)

	calls := sandboxtest.APICalls(t, e.SB)["ChangeResourceRecordSets ok"]
	rep, err := Run(context.Background(), e.config(p), false)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var text strings.Builder
	Text.Report(&text, rep)
	t.Log("\n" + text.String())
	if rep.Outcome != outcomeCompleted || len(rep.Steps) != 4 {
		t.Fatalf("report: outcome %q, %d steps", rep.Outcome, len(rep.Steps))
	}
	a, txt := e.Weights(t)
	if a["blue"] != 0 || a["green"] != 100 || txt["blue"] != 0 || txt["green"] != 100 {
		t.Errorf("final weights A %v TXT %v, want blue 0, green 100", a, txt)
	}
	// One batch per step; step 1 (0 %) changes no weight but writes the authority record.
	if n := sandboxtest.APICalls(t, e.SB)["ChangeResourceRecordSets ok"] - calls; n != 4 {
		t.Errorf("%d ChangeResourceRecordSets calls, want 4 (one batch per step)", n)
	}
	for i, s := range rep.Steps {
		if s.Outcome != "passed" || len(s.Gates) != 2 {
			t.Errorf("step %d: %+v", i, s)
		}
	}
	// The DNS gate measured the 50 % step's answers near one half.
	if v := rep.Steps[2].Gates[1].Values; v == nil {
		t.Errorf("step 3 dns gate has no measured values: %+v", rep.Steps[2].Gates[1])
	}
	if _, err := os.Stat(PathsFor(e.dir, "app").Report); err != nil {
		t.Errorf("report file: %v", err)
	}
	// A finished cutover does not run again without moving its journal away.
	if _, err := Run(context.Background(), e.config(p), false); err == nil || !strings.Contains(err.Error(), "move it away") {
		t.Errorf("second run: %v", err)
	}
}

func TestRunGateFailsAt50RollsBack(t *testing.T) {
	e := newEnv(t, 100, 0)
	var greenDown atomic.Bool
	g := clusterGate(t, "green-health", &greenDown)
	cfg := e.config(testPlan(t, g))
	// Green breaks as soon as the 50 % step is written.
	cfg.Progress = progressHook(func(ev Event) {
		if ev.Phase == PhaseWriting && ev.Weights["green"] == 50 {
			greenDown.Store(true)
		}
	})
	rep, err := Run(context.Background(), cfg, false)
	var rb *RollbackError
	if !errors.As(err, &rb) || rb.Step != 2 || !strings.Contains(rb.Reason, "green-health") {
		t.Fatalf("run: %v, want a rollback at step 3 naming the gate", err)
	}
	if rep.Outcome != outcomeRolledBack {
		t.Errorf("outcome %q", rep.Outcome)
	}
	if a, txt := e.Weights(t); a["blue"] != 100 || a["green"] != 0 || txt["blue"] != 100 {
		t.Errorf("weights after rollback A %v TXT %v, want 100/0", a, txt)
	}
	last := rep.Steps[len(rep.Steps)-1]
	if !strings.HasPrefix(last.Name, "rollback") || last.Weights["blue"] != 100 || last.Outcome != "held" {
		t.Errorf("last write %+v, want the rollback to 100/0 held", last)
	}
}

func TestRunRefusesPauseBelowTTL(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	p.Steps[1].Pause = 500 * time.Millisecond // TTL is 1 s
	_, err := Run(context.Background(), e.config(p), false)
	var nr *NotReadyError
	if !errors.As(err, &nr) || !strings.Contains(err.Error(), "spec.steps[1].pause 500ms is shorter than the records' TTL 1s") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunRefusesUnpublishedMember(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	p.To = "purple"
	_, err := Run(context.Background(), e.config(p), false)
	if err == nil || !strings.Contains(err.Error(), "app.example.com A [purple]: no such record set") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunLockAndControl(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	pauseEach(p, 2*time.Second)
	cfg := e.config(p)
	paths := PathsFor(e.dir, "app")
	phases, done := startRun(cfg, false)
	waitPhase(t, phases, PhaseHolding)
	// A second runner is refused while the first holds the lock.
	if _, err := Run(context.Background(), e.config(p), true); !errors.As(err, new(*journal.LockedError)) {
		t.Errorf("second runner: %v, want LockedError", err)
	}
	if err := SendCommand(paths, Command{Command: CommandPause, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, phases, PhasePaused)
	// Resumed, the step holds again with its gates checked; then paused again and aborted.
	if err := SendCommand(paths, Command{Command: CommandResume, By: "bob"}); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, phases, PhaseHolding)
	if err := SendCommand(paths, Command{Command: CommandPause, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, phases, PhasePaused)
	if err := SendCommand(paths, Command{Command: CommandAbort, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrAborted) {
			t.Fatalf("run: %v, want ErrAborted", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not end after abort")
	}
	if a, _ := e.Weights(t); a["blue"] != 100 || a["green"] != 0 {
		t.Errorf("weights after abort %v", a)
	}
	entries, _ := journal.Read(paths.Journal)
	rep := BuildReport("app", entries)
	var got []string
	for _, c := range rep.Controls {
		got = append(got, c.Detail+" by "+c.By)
	}
	if strings.Join(got, ", ") != "pause by alice, resume by bob, pause by alice, abort by alice" || !strings.Contains(rep.Rollback, "aborted by alice") {
		t.Errorf("report controls %+v rollback %q", rep.Controls, rep.Rollback)
	}
}

func waitPhase(t *testing.T, ch <-chan Event, phase string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-ch:
			if ev.Phase == phase {
				return
			}
		case <-deadline:
			t.Fatalf("no %s event", phase)
		}
	}
}

func TestResumeAfterIntent(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	paths := PathsFor(e.dir, "app")
	// A runner that died right after journaling step 3's intent, before sending it.
	seedJournal(t, paths.Journal, []journal.Entry{
		{Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}, By: "test"},
		{Kind: kindStepPassed, Step: 0}, {Kind: kindStepPassed, Step: 1},
		{Kind: kindIntent, Step: 2, Weights: map[string]int64{"blue": 50, "green": 50}},
	})
	if _, err := Run(context.Background(), e.config(p), false); err == nil {
		t.Error("run without --resume over an existing journal must refuse")
	}
	rep, err := Run(context.Background(), e.config(p), true)
	if err != nil || rep.Outcome != outcomeCompleted {
		t.Fatalf("resume: %v, outcome %q", err, rep.Outcome)
	}
	if a, _ := e.Weights(t); a["green"] != 100 || a["blue"] != 0 {
		t.Errorf("weights %v", a)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "app.lock")); err != nil {
		t.Errorf("lock file: %v", err)
	}
	// The journal says the cutover was resumed, and who ran every entry after.
	entries, _ := journal.Read(paths.Journal)
	if entries[4].Kind != kindResumed {
		t.Errorf("entry after the seeded ones: %q, want %q", entries[4].Kind, kindResumed)
	}
	for _, en := range entries[4:] {
		if en.By != "test@host" {
			t.Errorf("seq %d %s: by %q", en.Seq, en.Kind, en.By)
		}
	}
}

// TestSyncDuringStepKeepsWeights is the race of safety rule 3: both publishers re-sync in
// the middle of the 50 % step, their sources still asking for the weights they had
// before the cutover (blue 100, green 0). The cutover's weights stay; each publisher
// reports the conflict; the cutover completes.
func TestSyncDuringStepKeepsWeights(t *testing.T) {
	e := newEnv(t, 100, 0)
	cfg := e.config(testPlan(t))
	type syncResult struct {
		owner     string
		conflicts []changes.Conflict
		changes   int
		err       error
	}
	var results []syncResult
	cfg.Progress = progressHook(func(ev Event) {
		if ev.Phase != PhaseHolding || ev.Weights["green"] != 50 || len(results) > 0 {
			return
		}
		for _, m := range []struct {
			owner, ip string
			w         int64
		}{{"blue", "127.0.0.10", 100}, {"green", "127.0.0.20", 0}} {
			rep, err := levertest.Publish(e.DNS, m.owner, m.ip, m.w)
			r := syncResult{owner: m.owner, err: err}
			if err == nil {
				r.conflicts = rep.Conflicts()
				for _, b := range rep.Zones[0].Changes.Batches {
					r.changes += len(b)
				}
			}
			results = append(results, r)
		}
		if a, _ := e.Weights(t); a["blue"] != 50 || a["green"] != 50 {
			t.Errorf("weights right after the publishers synced: %v, want 50/50", a)
		}
	})
	rep, err := Run(context.Background(), cfg, false)
	if err != nil || rep.Outcome != outcomeCompleted {
		t.Fatalf("run: %v (%q)", err, rep.Outcome)
	}
	if len(results) != 2 {
		t.Fatalf("the publishers did not run during the step: %+v", results)
	}
	for _, r := range results {
		// The only changes are each member's ownership record, which now says what its
		// source asks for (for release to compare); no weight.
		if r.err != nil || r.changes != 2 || len(r.conflicts) != 1 || !strings.Contains(r.conflicts[0].Reason, "held by cutover app") {
			t.Errorf("%s's sync: err %v, %d changes, conflicts %v", r.owner, r.err, r.changes, r.conflicts)
		}
	}
	if a, _ := e.Weights(t); a["blue"] != 0 || a["green"] != 100 {
		t.Errorf("final weights %v", a)
	}
	// The sources still ask for 100/0: releasing now would undo the cutover at the next
	// sync, so release refuses until they ask for what the zone holds.
	var refused *ReleaseRefusedError
	if _, err := Release(context.Background(), cfg, ReleaseOptions{}); !errors.As(err, &refused) || len(refused.Sets) != 2 {
		t.Fatalf("release while the sources ask for 100/0: %v", err)
	}
	for _, m := range []struct {
		owner, ip string
		w         int64
	}{{"blue", "127.0.0.10", 0}, {"green", "127.0.0.20", 100}} {
		if rep, err := levertest.Publish(e.DNS, m.owner, m.ip, m.w); err != nil || rep.Err() != nil || len(rep.Conflicts()) != 0 {
			t.Fatalf("sync %s with the zone's weight: %v", m.owner, err)
		}
	}
	// Released, the weights are the publishers' again: blue's sync writes its 100.
	if rel, err := Release(context.Background(), cfg, ReleaseOptions{}); err != nil || rel.Records != 1 || len(rel.TakenOver) != 0 || len(rel.Changes) != 0 {
		t.Fatalf("release: %+v, %v", rel, err)
	}
	if rep, err := levertest.Publish(e.DNS, "blue", "127.0.0.10", 100); err != nil || rep.Err() != nil || len(rep.Conflicts()) != 0 {
		t.Fatalf("sync after release: %v", err)
	}
	if a, _ := e.Weights(t); a["blue"] != 100 {
		t.Errorf("blue after release and sync: %v", a)
	}
}

// TestRunLowersTTL: with spec.ttl.lower, the members' TTL drops before step 1 and the old
// TTL is waited out; the steps then pace on the lower TTL.
func TestRunLowersTTL(t *testing.T) {
	e := newEnv(t, 100, 0)
	e.SetTTL(t, 2)
	p := testPlan(t)
	p.LowerTTL = 1
	cfg := e.config(p)
	holdTTLs := map[int64]bool{}
	cfg.Progress = progressHook(func(ev Event) {
		if ev.Phase == PhaseHolding {
			for _, ttl := range e.TTLs(t) {
				holdTTLs[ttl] = true
			}
		}
	})
	began := time.Now()
	rep, err := Run(context.Background(), cfg, false)
	if err != nil || rep.Outcome != outcomeCompleted {
		t.Fatalf("run: %v", err)
	}
	// 2 s waiting out the old TTL, then four 1 s holds.
	if took := time.Since(began); took < 6*time.Second {
		t.Errorf("run took %s; the old TTL was not waited out", took)
	}
	if len(holdTTLs) != 1 || !holdTTLs[1] {
		t.Errorf("TTLs seen while steps held: %v, want only the lowered 1", holdTTLs)
	}
	// Completed, the members have their TTL back.
	for key, ttl := range e.TTLs(t) {
		if ttl != 2 {
			t.Errorf("%s TTL %d after the cutover, want the original 2 restored", key, ttl)
		}
	}
	var kinds []string
	for _, s := range rep.Steps {
		kinds = append(kinds, s.Name)
	}
	if got := strings.Join(kinds, ", "); got != "lower TTL to 1s, step 1 of 4, step 2 of 4, step 3 of 4, step 4 of 4, restore TTL to 2s" {
		t.Errorf("writes: %s", got)
	}
}

// TestRunTotalTimeoutRollsBack: a cutover over its total time limit rolls back.
func TestRunTotalTimeoutRollsBack(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	p.TotalTimeout = 1500 * time.Millisecond
	_, err := Run(context.Background(), e.config(p), false)
	var rb *RollbackError
	if !errors.As(err, &rb) || !strings.Contains(rb.Reason, "total time limit 1.5s") {
		t.Fatalf("run: %v", err)
	}
	if a, _ := e.Weights(t); a["blue"] != 100 || a["green"] != 0 {
		t.Errorf("weights after rollback %v", a)
	}
}

// TestResumeStaysPaused: a cutover paused when its runner died is still paused when it is
// resumed, until someone says resume.
func TestResumeStaysPaused(t *testing.T) {
	e := newEnv(t, 100, 0)
	paths := PathsFor(e.dir, "app")
	seedJournal(t, paths.Journal, []journal.Entry{
		{Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}},
		{Kind: kindStepPassed, Step: 0},
		{Kind: kindControl, Step: -1, Detail: CommandPause, By: "alice"},
	})
	cfg := e.config(testPlan(t))
	phases, done := startRun(cfg, true)
	waitPhase(t, phases, PhasePaused)
	if a, _ := e.Weights(t); a["green"] != 0 || a["blue"] != 100 {
		t.Errorf("weights while paused %v: paused before step 2, the weights stay as step 1 left them", a)
	}
	select {
	case err := <-done:
		t.Fatalf("run ended while paused: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	resumeToEnd(t, e, paths, done, 30*time.Second)
}

// resumeToEnd resumes a paused run and requires it to complete, all traffic on green.
func resumeToEnd(t *testing.T, e *env, paths Paths, done <-chan error, wait time.Duration) {
	t.Helper()
	if err := SendCommand(paths, Command{Command: CommandResume, By: "bob"}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(wait):
		t.Fatal("run did not finish after resume")
	}
	if a, _ := e.Weights(t); a["green"] != 100 {
		t.Errorf("final weights %v", a)
	}
}

// TestResumeFinishesRollback: a runner that died right after a step failed, before its
// rollback began, rolls back when resumed; it does not run the failed step again.
func TestResumeFinishesRollback(t *testing.T) {
	e := newEnv(t, 50, 50) // the zone as the failed 50 % step left it
	paths := PathsFor(e.dir, "app")
	seedJournal(t, paths.Journal, []journal.Entry{
		{Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}},
		{Kind: kindStepPassed, Step: 0}, {Kind: kindStepPassed, Step: 1},
		{Kind: kindIntent, Step: 2, Weights: map[string]int64{"blue": 50, "green": 50}},
		{Kind: kindStepFailed, Step: 2, Detail: "gate green-health: 0/5 ok"},
	})
	rep, err := Run(context.Background(), e.config(testPlan(t)), true)
	var rb *RollbackError
	if !errors.As(err, &rb) || rb.Step != 2 || !strings.Contains(rb.Reason, "gate green-health") || rep.Outcome != outcomeRolledBack {
		t.Fatalf("resume: %v (%q)", err, rep.Outcome)
	}
	// Resumed again, the ended cutover says how it ended, and writes nothing.
	if _, err := Run(context.Background(), e.config(testPlan(t)), true); !errors.As(err, &rb) || rb.Step != 2 {
		t.Errorf("resume of a rolled-back cutover: %v, want its RollbackError", err)
	}
	if a, _ := e.Weights(t); a["blue"] != 100 || a["green"] != 0 {
		t.Errorf("weights %v, want the starting 100/0", a)
	}
}

// TestGradualRollbackNeverMovesForward: aborting at 10 % with gradual stops [50] goes
// straight back to 100/0; the 50 % stop lies beyond where the cutover is.
func TestGradualRollbackNeverMovesForward(t *testing.T) {
	e := newEnv(t, 100, 0)
	var greenDown atomic.Bool
	p := testPlan(t, clusterGate(t, "green-health", &greenDown))
	p.Rollback = spec.PlanRollback{Mode: spec.RollbackGradual, Steps: []spec.Weights{{From: 50, To: 50}}}
	cfg := e.config(p)
	var rollbackWeights []int64
	cfg.Progress = progressHook(func(ev Event) {
		if ev.Phase == PhaseWriting && ev.Weights["green"] == 10 {
			greenDown.Store(true)
		}
		// A stop shows twice, written and held: note each stop once.
		if ev.Phase == PhaseRollingBack && ev.Step == len(rollbackWeights) {
			rollbackWeights = append(rollbackWeights, ev.Weights["green"])
		}
	})
	if _, err := Run(context.Background(), cfg, false); !errors.As(err, new(*RollbackError)) {
		t.Fatalf("run: %v", err)
	}
	if len(rollbackWeights) != 1 || rollbackWeights[0] != 0 {
		t.Errorf("rollback stops (green weight) %v, want only [0]", rollbackWeights)
	}
}

// TestInterruptIsNotAGateFailure: cancelling a run mid-hold journals no failure and no
// rollback; the weights stay where the step put them.
func TestInterruptIsNotAGateFailure(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	pauseEach(p, 5*time.Second)
	cfg := e.config(p)
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Progress = progressHook(func(ev Event) {
		if ev.Phase == PhaseHolding && ev.Step == 1 {
			cancel()
		}
	})
	if _, err := Run(ctx, cfg, false); !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v, want context.Canceled", err)
	}
	entries, _ := journal.Read(PathsFor(e.dir, "app").Journal)
	for _, en := range entries {
		if en.Kind == kindStepFailed || en.Kind == kindRollback {
			t.Errorf("journal has %s after an interrupt: %+v", en.Kind, en)
		}
	}
	if a, _ := e.Weights(t); a["green"] != 10 {
		t.Errorf("weights %v, want step 2's 90/10 kept", a)
	}
}

// startRun runs cfg in the background and returns its progress events and its result.
func startRun(cfg Config, resume bool) (<-chan Event, <-chan error) {
	phases := make(chan Event, 100)
	cfg.Progress = progressHook(func(ev Event) {
		select {
		case phases <- ev:
		default:
		}
	})
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), cfg, resume)
		done <- err
	}()
	return phases, done
}

// seedJournal writes entries as a runner that died after them would have left them.
func seedJournal(t *testing.T, path string, entries []journal.Entry) {
	t.Helper()
	j, _, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for _, en := range entries {
		if _, err := j.Append(en); err != nil {
			t.Fatal(err)
		}
	}
}
