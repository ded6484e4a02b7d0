package reconciler

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
)

// TestTransitions: each change of a Cutover's status stands for the Events a person
// reading `kubectl describe` expects, once: a step begun (its weights), passed, failed
// (what the gate measured), a control action (who), the end.
func TestTransitions(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC))
	later := metav1.NewTime(at.Add(time.Minute))
	cond := func(typ string, status metav1.ConditionStatus, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: "R", Message: msg}
	}
	progressing := v1alpha1.CutoverStatus{Phase: v1alpha1.PhaseProgressing, Progress: "1/2",
		Steps: []v1alpha1.StepStatus{{Index: 0, Weights: map[string]int64{"blue": 50, "green": 50}, StartedAt: &at}}}
	passed := progressing
	passed.Steps = []v1alpha1.StepStatus{{Index: 0, Weights: map[string]int64{"blue": 50, "green": 50}, StartedAt: &at, Result: v1alpha1.StepPassed,
		Gates: []v1alpha1.GateVerdict{{Name: "web", Kind: "http", Verdict: v1alpha1.VerdictPassed, Detail: "3/3 ok"}}}}
	failed := progressing
	failed.Steps = []v1alpha1.StepStatus{{Index: 0, Weights: map[string]int64{"blue": 50, "green": 50}, StartedAt: &at, Result: v1alpha1.StepFailed,
		Gates: []v1alpha1.GateVerdict{{Name: "web", Kind: "http", Verdict: v1alpha1.VerdictFailed, Detail: "0/3 ok", Measurements: map[string]float64{"success_ratio": 0}}}}}
	paused := progressing
	paused.Phase = v1alpha1.PhasePaused
	paused.LastAction = &v1alpha1.ControlAction{Command: "pause", By: "dave", At: at, ID: "p1"}
	resumed := progressing
	resumed.LastAction = &v1alpha1.ControlAction{Command: "resume", By: "dave", At: later, ID: "r1"}
	drift := progressing
	drift.Phase = v1alpha1.PhasePaused
	drift.Conditions = []metav1.Condition{cond(v1alpha1.ConditionStalled, metav1.ConditionTrue, "paused by drift"), cond(v1alpha1.ConditionReady, metav1.ConditionFalse, "paused at step 1/2 by drift")}
	completed := passed
	completed.Phase = v1alpha1.PhaseCompleted
	completed.Conditions = []metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionTrue, "completed: every step passed")}
	aborted := progressing
	aborted.LastAction = &v1alpha1.ControlAction{Command: "abort", By: "bob", At: at, ID: "k-abort"}
	rolledBack := aborted
	rolledBack.Phase = v1alpha1.PhaseRolledBack
	rolledBack.Conditions = []metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionFalse, "rolled back: aborted by bob")}
	released := completed
	released.LastAction = &v1alpha1.ControlAction{Command: "release", By: "carol", At: later}
	failedRun := progressing
	failedRun.Phase = v1alpha1.PhaseFailed
	failedRun.Conditions = []metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionFalse, "failed: the journal is full")}

	for _, tc := range []struct {
		name     string
		old, new v1alpha1.CutoverStatus
		want     []string // "Type Reason: message fragment"
	}{
		{"nothing changed", progressing, progressing, nil},
		{"first step written", v1alpha1.CutoverStatus{Phase: v1alpha1.PhasePending}, progressing, []string{"Normal StepStarted: step 1/2 begun: weights blue=50 green=50"}},
		{"intent only: not begun yet", v1alpha1.CutoverStatus{}, v1alpha1.CutoverStatus{Phase: v1alpha1.PhaseProgressing, Steps: []v1alpha1.StepStatus{{Index: 0, StartedAt: &at}}}, nil},
		{"step passed", progressing, passed, []string{"Normal StepPassed: step 1/2 passed: web (http) Passed: 3/3 ok"}},
		{"gate failed with its measurement", progressing, failed, []string{"Warning GateFailed: step 1/2 failed: web (http) Failed: 0/3 ok [success_ratio=0]"}},
		{"paused by a person", progressing, paused, []string{"Normal Paused: pause by dave (id p1)"}},
		{"resumed", paused, resumed, []string{"Normal Resumed: resume by dave (id r1)"}},
		{"drift pause", progressing, drift, []string{"Warning DriftPaused: paused at step 1/2 by drift"}},
		{"completed", passed, completed, []string{"Normal Completed: completed: every step passed"}},
		{"aborted", progressing, aborted, []string{"Warning Aborted: abort by bob (id k-abort)"}},
		{"rolled back", aborted, rolledBack, []string{"Warning RolledBack: rolled back: aborted by bob"}},
		{"released", completed, released, []string{"Normal Released: release by carol"}},
		{"failed", progressing, failedRun, []string{"Warning Failed: failed: the journal is full"}},
		{"same action read again", paused, paused, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := transitions(&tc.old, &tc.new)
			if len(got) != len(tc.want) {
				t.Fatalf("transitions: %+v, want %q", got, tc.want)
			}
			for i, e := range got {
				s := e.Type + " " + e.Reason + ": " + e.Message
				if !strings.HasPrefix(s, tc.want[i]) {
					t.Errorf("event %d: %q, want %q", i, s, tc.want[i])
				}
			}
		})
	}
}

// TestEmitRecordsOnTheObject: the worker records each transition on its Cutover (a
// reference naming its kind, namespace, name and uid), and none without a recorder.
func TestEmitRecordsOnTheObject(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	w := &worker{r: &Reconciler{cfg: Config{Events: rec}}, namespace: "shop", name: "app", uid: "u1", log: slog.New(slog.DiscardHandler)}
	old := v1alpha1.CutoverStatus{Phase: v1alpha1.PhaseProgressing}
	next := old
	next.LastAction = &v1alpha1.ControlAction{Command: "pause", By: "dave"}
	w.emit(&old, &next)
	select {
	case e := <-rec.Events:
		if want := fmt.Sprintf("%s %s pause by dave", corev1.EventTypeNormal, ReasonPaused); e != want {
			t.Errorf("event %q, want %q", e, want)
		}
	default:
		t.Fatal("no event recorded")
	}
	w.r.cfg.Events = nil
	w.emit(&old, &next) // no recorder: nothing, and no panic
}
