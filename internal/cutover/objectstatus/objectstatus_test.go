package objectstatus

import (
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// t0 is when the tests' projections happen.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// object is a Cutover at generation gen, as the API server returns it.
func object(gen int64) *v1alpha1.Cutover {
	return &v1alpha1.Cutover{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: spec.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: cutoverName, Namespace: "shop", Generation: gen},
	}
}

// conditionsOf renders c's conditions "Ready=False/Reason Reconciling=…" in a fixed order.
func conditionsOf(c *v1alpha1.Cutover) string {
	var parts []string
	for _, t := range []string{v1alpha1.ConditionReady, v1alpha1.ConditionReconciling, v1alpha1.ConditionStalled} {
		cd := meta.FindStatusCondition(c.Status.Conditions, t)
		if cd == nil {
			parts = append(parts, t+"=<none>")
			continue
		}
		parts = append(parts, t+"="+string(cd.Status)+"/"+cd.Reason)
	}
	return strings.Join(parts, " ")
}

// readyMessage is the Ready condition's message.
func readyMessage(c *v1alpha1.Cutover) string {
	if cd := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady); cd != nil {
		return cd.Message
	}
	return ""
}

// projected are the statuses the engine-made journals project to, by scenario, with a
// Pending one (no journal yet) besides.
func projected(t *testing.T) map[string]*v1alpha1.Cutover {
	t.Helper()
	js := engineJournals(t)
	out := map[string]*v1alpha1.Cutover{}
	for name, entries := range js.byName {
		c := object(1)
		Project(c, entries, js.plan, t0, nil)
		out[name] = c
	}
	c := object(1)
	Project(c, nil, js.plan, t0, nil)
	out["pending"] = c
	return out
}

// TestProjectEngineJournals: each journal the engine wrote (completed; a gate failed and
// it rolled back; paused by a command and resumed; aborted; paused by drift) projects to
// the phase, progress, weights, steps, last action and conditions a person and a tool
// read.
func TestProjectEngineJournals(t *testing.T) {
	got := projected(t)
	w := func(blue, green int64) map[string]int64 { return map[string]int64{"blue": blue, "green": green} }
	tests := []struct {
		name       string
		phase      v1alpha1.Phase
		progress   string
		weights    map[string]int64
		conditions string
		// results are the steps' results in order ("" while one holds).
		results []v1alpha1.StepResult
		// action is the last action's command and by ("" for none).
		action, by string
		// message is a part of the Ready condition's message.
		message string
	}{
		{"pending", v1alpha1.PhasePending, "0/3", nil,
			"Ready=False/Pending Reconciling=True/Pending Stalled=False/Pending", nil, "", "", "no step taken yet (3 steps planned)"},
		{scCompleted, v1alpha1.PhaseCompleted, "3/3", w(0, 100),
			"Ready=True/Completed Reconciling=False/Completed Stalled=False/Completed",
			[]v1alpha1.StepResult{v1alpha1.StepPassed, v1alpha1.StepPassed, v1alpha1.StepPassed}, "", "", "completed: every step passed; weights blue=0 green=100"},
		{scGateFailed, v1alpha1.PhaseRolledBack, "2/3", w(100, 0),
			"Ready=False/GateFailed Reconciling=False/GateFailed Stalled=True/GateFailed",
			[]v1alpha1.StepResult{v1alpha1.StepPassed, v1alpha1.StepFailed}, "", "", "rolled back: gate green-health: green (to): 0/5 ok"},
		{scProgressing, v1alpha1.PhaseProgressing, "2/3", w(50, 50),
			"Ready=False/Step2Of3 Reconciling=True/Step2Of3 Stalled=False/Step2Of3",
			[]v1alpha1.StepResult{v1alpha1.StepPassed, ""}, "", "", "step 2/3: weights blue=50 green=50"},
		{scPausedByCommand, v1alpha1.PhasePaused, "2/3", w(50, 50),
			"Ready=False/Paused Reconciling=False/Paused Stalled=False/Paused",
			[]v1alpha1.StepResult{v1alpha1.StepPassed, ""}, "pause", "alice@laptop", "paused at step 2/3 by alice@laptop"},
		{scResumedCompleted, v1alpha1.PhaseCompleted, "3/3", w(0, 100),
			"Ready=True/Completed Reconciling=False/Completed Stalled=False/Completed",
			[]v1alpha1.StepResult{v1alpha1.StepPassed, v1alpha1.StepPassed, v1alpha1.StepPassed}, "resume", "bob@laptop", "completed"},
		{scAborted, v1alpha1.PhaseRolledBack, "2/3", w(100, 0),
			"Ready=False/Aborted Reconciling=False/Aborted Stalled=True/Aborted",
			[]v1alpha1.StepResult{v1alpha1.StepPassed, ""}, "abort", "carol@laptop", "rolled back: aborted by carol@laptop"},
		{scDriftPaused, v1alpha1.PhasePaused, "2/3", w(50, 50),
			"Ready=False/DriftPaused Reconciling=False/DriftPaused Stalled=True/DriftPaused",
			[]v1alpha1.StepResult{v1alpha1.StepPassed, ""}, "", "", "paused at step 2/3 by drift: "},
		{scDriftAborted, v1alpha1.PhaseRolledBack, "2/3", w(100, 0),
			"Ready=False/Aborted Reconciling=False/Aborted Stalled=True/Aborted",
			[]v1alpha1.StepResult{v1alpha1.StepPassed, ""}, "abort", "dave@laptop", "rolled back: aborted by dave@laptop"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := got[tc.name]
			st := c.Status
			if st.Phase != tc.phase || st.Progress != tc.progress || !maps.Equal(st.Weights, tc.weights) {
				t.Errorf("phase %s, progress %q, weights %v; want %s, %q, %v", st.Phase, st.Progress, st.Weights, tc.phase, tc.progress, tc.weights)
			}
			if got := conditionsOf(c); got != tc.conditions {
				t.Errorf("conditions %s\nwant       %s", got, tc.conditions)
			}
			if st.ObservedGeneration != 1 {
				t.Errorf("observedGeneration %d, want 1", st.ObservedGeneration)
			}
			for _, cd := range st.Conditions {
				if cd.ObservedGeneration != 1 || !cd.LastTransitionTime.Time.Equal(t0) || cd.Message == "" {
					t.Errorf("condition %s: observedGeneration %d, lastTransitionTime %s, message %q; want 1, %s, a message", cd.Type, cd.ObservedGeneration, cd.LastTransitionTime, cd.Message, t0)
				}
			}
			if msg := readyMessage(c); !strings.Contains(msg, tc.message) {
				t.Errorf("Ready message %q, want it to say %q", msg, tc.message)
			}
			var results []v1alpha1.StepResult
			for i, s := range st.Steps {
				results = append(results, s.Result)
				if s.Index != int32(i) || s.StartedAt == nil || len(s.Weights) == 0 {
					t.Errorf("step %d: index %d, startedAt %v, weights %v; want its index, a start and the weights written", i, s.Index, s.StartedAt, s.Weights)
				}
				if (s.Result == "") != (s.FinishedAt == nil) {
					t.Errorf("step %d: result %q, finishedAt %v: a step has both or neither", i, s.Result, s.FinishedAt)
				}
			}
			if !equalResults(results, tc.results) {
				t.Errorf("step results %v, want %v", results, tc.results)
			}
			switch a := st.LastAction; {
			case tc.action == "" && a != nil:
				t.Errorf("lastAction %+v, want none", a)
			case tc.action != "" && (a == nil || a.Command != tc.action || a.By != tc.by || a.ID == "" || a.At.IsZero()):
				t.Errorf("lastAction %+v, want %s by %s with an id and a time", a, tc.action, tc.by)
			}
		})
	}
}

// equalResults compares step results, nil equal to empty.
func equalResults(a, b []v1alpha1.StepResult) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestProjectGateMeasurements: the failed step of a rolled-back run carries the gate's
// failed verdict with what it measured and when; a passed step its passed verdict.
func TestProjectGateMeasurements(t *testing.T) {
	c := projected(t)[scGateFailed]
	steps := c.Status.Steps
	if len(steps) != 2 {
		t.Fatalf("steps %+v, want 2", steps)
	}
	for i, want := range []v1alpha1.Verdict{v1alpha1.VerdictPassed, v1alpha1.VerdictFailed} {
		gs := steps[i].Gates
		if len(gs) != 1 {
			t.Fatalf("step %d gates %+v, want the one gate", i, gs)
		}
		g := gs[0]
		if g.Name != "green-health" || g.Kind != gate.KindHTTP || g.Verdict != want || g.Detail == "" || len(g.Measurements) == 0 || g.CheckedAt == nil {
			t.Errorf("step %d gate %+v: want green-health (http) %s with its detail, measurements and time", i, g, want)
		}
		if !g.CheckedAt.Equal(steps[i].FinishedAt) {
			t.Errorf("step %d: gate checked at %v, step finished at %v: the verdict is the one the step ended on", i, g.CheckedAt, steps[i].FinishedAt)
		}
	}
	failed := steps[1].Gates[0]
	if ratio, ok := failed.Measurements["to.success_ratio"]; !ok || ratio != 0 || failed.Measurements["from.success_ratio"] != 1 {
		t.Errorf("failed gate measurements %v, want green's success ratio 0 (green answered 500)", failed.Measurements)
	}
	if steps[1].Weights["green"] != 50 {
		t.Errorf("failed step weights %v, want the 50 %% it wrote", steps[1].Weights)
	}
}

// TestProjectEdgeCases: hand-written journals for what the engine runs above do not
// reach: a failure, spec.paused before the start and mid-run, a rollback under way,
// commands not acted on, a person's release, the runner letting go of its tags, a gate
// still pending, gates skipped by promote.
func TestProjectEdgeCases(t *testing.T) {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	plan := &spec.Plan{Steps: make([]spec.PlanStep, 2)}
	start := journal.Entry{Seq: 1, Time: at(1), Kind: kindStart, Step: -1, By: "ci", Weights: map[string]int64{"blue": 100, "green": 0}}
	intent := func(seq, step int, blue, green int64) journal.Entry {
		return journal.Entry{Seq: seq, Time: at(seq), Kind: kindIntent, Step: step, Weights: map[string]int64{"blue": blue, "green": green}, Detail: "step"}
	}
	written := func(seq, step int, blue, green int64) journal.Entry {
		return journal.Entry{Seq: seq, Time: at(seq), Kind: kindWritten, Step: step, Weights: map[string]int64{"blue": blue, "green": green}, ChangeID: "C1"}
	}
	control := func(seq int, detail, by string) journal.Entry {
		return journal.Entry{Seq: seq, Time: at(seq), Kind: kindControl, Step: -1, Detail: detail, By: by, ID: "id-" + detail}
	}
	passed := func(seq, step int, results ...gate.Result) journal.Entry {
		data, _ := json.Marshal(results)
		return journal.Entry{Seq: seq, Time: at(seq), Kind: kindStepPassed, Step: step, Data: data}
	}
	tests := []struct {
		name       string
		paused     bool
		entries    []journal.Entry
		failure    error
		phase      v1alpha1.Phase
		conditions string
		// observed is the observedGeneration wanted (the object is at 2, its status at 1).
		observed int64
		weights  map[string]int64
		// action is the last action, "COMMAND by WHO" ("" for none).
		action  string
		message string
	}{
		{"invalid spec, never started", false, nil, errors.New("spec.steps[0].weights: want 0..255"), v1alpha1.PhaseFailed,
			"Ready=False/Failed Reconciling=False/Failed Stalled=True/Failed", 2, nil, "", "failed before its first step: spec.steps[0].weights"},
		{"failed mid-run names the weights and the unconfirmed write", false,
			[]journal.Entry{start, intent(2, 0, 50, 50), written(3, 0, 50, 50), passed(4, 0), intent(5, 1, 0, 100)},
			errors.New("journal full"), v1alpha1.PhaseFailed,
			"Ready=False/Failed Reconciling=False/Failed Stalled=True/Failed", 2, map[string]int64{"blue": 50, "green": 50}, "",
			"failed: journal full; weights blue=50 green=50 (step was sent and not acknowledged: it may have landed)"},
		{"an ended journal wins over a failure", false,
			[]journal.Entry{start, intent(2, 0, 0, 100), written(3, 0, 0, 100), passed(4, 0), {Seq: 5, Time: at(5), Kind: "done", Step: -1, Detail: outcomeCompleted}},
			errors.New("release failed"), v1alpha1.PhaseCompleted,
			"Ready=True/Completed Reconciling=False/Completed Stalled=False/Completed", 2, map[string]int64{"blue": 0, "green": 100}, "", "completed"},
		{"spec.paused before the start: not reconciling", true, nil, nil, v1alpha1.PhasePending,
			"Ready=False/PausedBeforeStart Reconciling=False/PausedBeforeStart Stalled=False/PausedBeforeStart", 2, nil, "", "spec.paused"},
		{"spec.paused not yet journaled: generation not observed", true,
			[]journal.Entry{start, intent(2, 0, 50, 50), written(3, 0, 50, 50)}, nil, v1alpha1.PhaseProgressing,
			"Ready=False/Step1Of2 Reconciling=True/Step1Of2 Stalled=False/Step1Of2", 1, map[string]int64{"blue": 50, "green": 50}, "", "step 1/2"},
		{"spec.paused journaled: paused, observed", true,
			[]journal.Entry{start, intent(2, 0, 50, 50), written(3, 0, 50, 50), control(4, "pause", "spec.paused by alice")}, nil, v1alpha1.PhasePaused,
			"Ready=False/Paused Reconciling=False/Paused Stalled=False/Paused", 2, map[string]int64{"blue": 50, "green": 50}, "pause by spec.paused by alice", "by spec.paused by alice"},
		{"a rollback under way is progressing", false,
			[]journal.Entry{start, intent(2, 0, 50, 50), written(3, 0, 50, 50),
				{Seq: 4, Time: at(4), Kind: kindStepFailed, Step: 0, Detail: "gate green-health: 0/5 ok"},
				{Seq: 5, Time: at(5), Kind: "rollback", Step: 0, Detail: "gate green-health: 0/5 ok"}}, nil, v1alpha1.PhaseProgressing,
			"Ready=False/RollingBack Reconciling=True/RollingBack Stalled=False/RollingBack", 2, map[string]int64{"blue": 50, "green": 50}, "", "rolling back: gate green-health"},
		{"a command not acted on is not the last action", false,
			[]journal.Entry{start, intent(2, 0, 50, 50), written(3, 0, 50, 50), control(4, "resume", "bob"), control(5, "pause ignored: rolling back", "eve")}, nil, v1alpha1.PhaseProgressing,
			"Ready=False/Step1Of2 Reconciling=True/Step1Of2 Stalled=False/Step1Of2", 2, map[string]int64{"blue": 50, "green": 50}, "resume by bob", "step 1/2"},
		{"a person's release is the last action; the runner letting go is not", false,
			[]journal.Entry{start, intent(2, 0, 0, 100), written(3, 0, 0, 100), passed(4, 0), {Seq: 5, Time: at(5), Kind: "done", Step: -1, Detail: outcomeCompleted},
				{Seq: 6, Time: at(6), Kind: kindReleased, Step: -1, By: "frank", Detail: "taken over from runner x"},
				{Seq: 7, Time: at(7), Kind: kindReleased, Step: -1, By: "ci", Detail: "authority tags of runner T@h:1 removed from 2 rules"}}, nil, v1alpha1.PhaseCompleted,
			"Ready=True/Completed Reconciling=False/Completed Stalled=False/Completed", 2, map[string]int64{"blue": 0, "green": 100}, "release by frank", "completed"},
		{"promote --skip-gates is a promote, and the message says the gates were skipped", false,
			[]journal.Entry{start, control(2, "promote --skip-gates", "grace"), intent(3, 1, 0, 100), written(4, 1, 0, 100),
				{Seq: 5, Time: at(5), Kind: kindStepPassed, Step: 1, Detail: "GATES SKIPPED by grace"},
				{Seq: 6, Time: at(6), Kind: "done", Step: -1, Detail: outcomeCompleted}}, nil, v1alpha1.PhaseCompleted,
			"Ready=True/Completed Reconciling=False/Completed Stalled=False/Completed", 2, map[string]int64{"blue": 0, "green": 100}, "promote by grace", "gates skipped"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := object(2)
			c.Spec.Paused = tc.paused
			c.Status.ObservedGeneration = 1
			Project(c, tc.entries, plan, t0, tc.failure)
			st := c.Status
			if st.Phase != tc.phase || conditionsOf(c) != tc.conditions {
				t.Errorf("phase %s, conditions %s\nwant  %s, conditions %s", st.Phase, conditionsOf(c), tc.phase, tc.conditions)
			}
			if st.ObservedGeneration != tc.observed {
				t.Errorf("observedGeneration %d, want %d", st.ObservedGeneration, tc.observed)
			}
			for _, cd := range st.Conditions {
				if cd.ObservedGeneration != tc.observed {
					t.Errorf("condition %s observedGeneration %d, want %d (the status's)", cd.Type, cd.ObservedGeneration, tc.observed)
				}
			}
			if !maps.Equal(st.Weights, tc.weights) {
				t.Errorf("weights %v, want %v", st.Weights, tc.weights)
			}
			switch a := st.LastAction; {
			case tc.action == "" && a != nil:
				t.Errorf("lastAction %+v, want none", a)
			case tc.action != "" && (a == nil || a.Command+" by "+a.By != tc.action):
				t.Errorf("lastAction %+v, want %s", a, tc.action)
			}
			if msg := readyMessage(c); !strings.Contains(msg, tc.message) {
				t.Errorf("Ready message %q, want it to say %q", msg, tc.message)
			}
		})
	}
}

// TestProjectGateVerdicts: a gate result becomes Passed, Pending (passed, judged
// nothing yet) or Failed (failed, or could not run: never Passed with an error).
func TestProjectGateVerdicts(t *testing.T) {
	results := []gate.Result{
		{Gate: "ok", Kind: gate.KindHTTP, Pass: true, Detail: "5/5", Values: map[string]float64{"public.success_ratio": 1}},
		{Gate: "pending", Kind: gate.KindALBTraffic, Pass: true, Pending: true, Detail: "too few requests"},
		{Gate: "bad", Kind: gate.KindPrometheus, Pass: false, Detail: "0.2 > 0.1"},
		{Gate: "unreachable", Kind: gate.KindPrometheus, Pass: true, Err: "dial tcp: refused"},
	}
	data, _ := json.Marshal(results)
	entries := []journal.Entry{
		{Seq: 1, Time: t0, Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}},
		{Seq: 2, Time: t0, Kind: kindIntent, Step: 0, Weights: map[string]int64{"blue": 50, "green": 50}},
		{Seq: 3, Time: t0.Add(time.Minute), Kind: kindStepFailed, Step: 0, Data: data},
	}
	c := object(1)
	Project(c, entries, &spec.Plan{Steps: make([]spec.PlanStep, 2)}, t0, nil)
	if len(c.Status.Steps) != 1 || len(c.Status.Steps[0].Gates) != 4 {
		t.Fatalf("steps %+v, want one step with 4 gates", c.Status.Steps)
	}
	want := map[string]v1alpha1.Verdict{"ok": v1alpha1.VerdictPassed, "pending": v1alpha1.VerdictPending, "bad": v1alpha1.VerdictFailed, "unreachable": v1alpha1.VerdictFailed}
	for _, g := range c.Status.Steps[0].Gates {
		if g.Verdict != want[g.Name] {
			t.Errorf("gate %s: verdict %s, want %s", g.Name, g.Verdict, want[g.Name])
		}
	}
	if g := c.Status.Steps[0].Gates[0]; g.Measurements["public.success_ratio"] != 1 || g.Kind != gate.KindHTTP {
		t.Errorf("gate ok: %+v, want its kind and measurement", g)
	}
	if g := c.Status.Steps[0].Gates[3]; g.Error != "dial tcp: refused" {
		t.Errorf("gate unreachable: error %q, want the check's", g.Error)
	}
	if s := c.Status.Steps[0]; len(s.Weights) != 0 {
		t.Errorf("step weights %v for a step never acknowledged: status says only what was written", s.Weights)
	}
}

// TestProjectLastTransitionTime: projecting again later keeps a condition's
// LastTransitionTime while its status holds, and moves it when the status changes.
func TestProjectLastTransitionTime(t *testing.T) {
	plan := &spec.Plan{Steps: make([]spec.PlanStep, 1)}
	start := journal.Entry{Seq: 1, Time: t0, Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}}
	c := object(1)
	Project(c, []journal.Entry{start}, plan, t0, nil)
	later := t0.Add(time.Hour)
	entries := []journal.Entry{start,
		{Seq: 2, Time: t0, Kind: kindIntent, Step: 0, Weights: map[string]int64{"blue": 0, "green": 100}},
		{Seq: 3, Time: t0, Kind: kindWritten, Step: 0, Weights: map[string]int64{"blue": 0, "green": 100}}}
	Project(c, entries, plan, later, nil)
	if cd := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReconciling); !cd.LastTransitionTime.Time.Equal(t0) || cd.Reason != "Step1Of1" {
		t.Errorf("Reconciling %+v: still True, its transition time must stay %s; its reason names the step", cd, t0)
	}
	entries = append(entries, journal.Entry{Seq: 4, Time: later, Kind: kindStepPassed, Step: 0}, journal.Entry{Seq: 5, Time: later, Kind: "done", Step: -1, Detail: outcomeCompleted})
	Project(c, entries, plan, later, nil)
	for _, ty := range []string{v1alpha1.ConditionReady, v1alpha1.ConditionReconciling} {
		if cd := meta.FindStatusCondition(c.Status.Conditions, ty); !cd.LastTransitionTime.Time.Equal(later) {
			t.Errorf("%s %+v: changed status, its transition time must be %s", ty, cd, later)
		}
	}
	if cd := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionStalled); !cd.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("Stalled %+v: still False, its transition time must stay %s", cd, t0)
	}
}

// unstructuredOf is c as the API server serves it, decoded as a dynamic client would.
func unstructuredOf(t *testing.T, c *v1alpha1.Cutover) *unstructured.Unstructured {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		t.Fatalf("decode cutover %s: %v", c.Name, err)
	}
	return u
}

// TestProjectWithoutPlan: with no plan (the spec did not validate, and the reconciler
// still reports the journal it has), progress and the reason say the step reached
// without inventing a total.
func TestProjectWithoutPlan(t *testing.T) {
	entries := []journal.Entry{
		{Seq: 1, Time: t0, Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}},
		{Seq: 2, Time: t0, Kind: kindIntent, Step: 0, Weights: map[string]int64{"blue": 90, "green": 10}},
	}
	c := object(1)
	Project(c, entries, nil, t0, nil)
	cd := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReconciling)
	if c.Status.Progress != "1/?" || cd == nil || cd.Reason != "Step1" {
		t.Errorf("progress %q, Reconciling %+v; want 1/? and reason Step1", c.Status.Progress, cd)
	}
}
