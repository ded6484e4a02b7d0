// Package objectstatus derives what a Cutover object's status says from the cutover's
// journal: the phase, the progress ("2/4"), the weights in effect, each step with its
// gate verdicts and their measurements, the last control action, and the kstatus
// conditions (Ready, Reconciling, Stalled) with observedGeneration. It is pure: the
// reconciler reads the journal, calls Project, and writes the status it fills.
//
// What tools make of each phase (the conditions Project sets, and what
// sigs.k8s.io/cli-utils kstatus, and so Flux's health checks, compute from them;
// `kubectl wait --for=condition=Ready` returns only for Completed):
//
//	phase        Ready  Reconciling  Stalled  kstatus     Argo CD (deploy/argocd)
//	Pending      False  True         False    InProgress  Progressing
//	Progressing  False  True         False    InProgress  Progressing
//	Paused       False  False        False    InProgress  Suspended   (a person: pause, spec.paused)
//	Paused       False  False        True     Failed      Suspended   (drift: weights nobody here wrote)
//	Completed    True   False        False    Current     Healthy
//	RolledBack   False  False        True     Failed      Degraded
//	Failed       False  False        True     Failed      Degraded
//
// A pause a person asked for is not Stalled: the run holds because someone meant it to,
// and goes on when they resume it, so a waiting tool keeps waiting (Flux until its
// timeout). A drift pause is: the zone holds weights the cutover did not write, and only
// a person can say whether to resume or abort. A Pending cutover with spec.paused is not
// Reconciling: nothing will happen until spec.paused is cleared.
package objectstatus

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// The journal entry kinds Project reads: the engine's (internal/cutover/engine.go),
// spelled here because the engine keeps them unexported. The tests run the engine and
// fail when these stop matching what it writes.
const (
	kindStart      = "start"
	kindIntent     = "intent"
	kindWritten    = "written"
	kindStepPassed = "step-passed"
	kindStepFailed = "step-failed"
	kindControl    = "control"
	kindDrift      = "drift"
	kindReleased   = "released"
	// outcomeCompleted and outcomeRolledBack are a done entry's details (Report.Outcome).
	outcomeCompleted  = "completed"
	outcomeRolledBack = "rolled-back"
	// runnerLetGo starts the detail of the released entry a runner writes itself at the
	// end of a run (letting go of its authority tags): not a person's release.
	runnerLetGo = "authority tags of runner "
	// commandRelease is the ControlAction command of a `cutover release`.
	commandRelease = "release"
)

// Condition reasons Project sets. A reason is CamelCase, as metav1.Condition requires;
// a Progressing cutover's Reconciling reason names its step ("Step2Of4").
const (
	// ReasonPending: accepted, no step taken yet.
	ReasonPending = "Pending"
	// ReasonPausedBeforeStart: Pending with spec.paused: nothing happens until it is
	// cleared.
	ReasonPausedBeforeStart = "PausedBeforeStart"
	// ReasonStarting: started, no step written yet (lowering the TTL, first write).
	ReasonStarting = "Starting"
	// ReasonRollingBack: a gate failed or the run was aborted; the rollback is under way.
	ReasonRollingBack = "RollingBack"
	// ReasonPaused: held by a person (a pause command or spec.paused).
	ReasonPaused = "Paused"
	// ReasonDriftPaused: held because the weights in the zone are not those the cutover
	// wrote; a person decides (resume or abort).
	ReasonDriftPaused = "DriftPaused"
	// ReasonCompleted: every step passed.
	ReasonCompleted = "Completed"
	// ReasonGateFailed: a step failed (a gate, or its time limit) and the run rolled back.
	ReasonGateFailed = "GateFailed"
	// ReasonAborted: a person aborted the run and it rolled back.
	ReasonAborted = "Aborted"
	// ReasonFailed: the run stopped without reaching either end.
	ReasonFailed = "Failed"
)

// Project fills c.Status from the cutover's journal entries (as the journal store read
// them), the plan c.Spec validated into (nil when it did not: then failure says why),
// and failure, which is non-nil when the run stopped and cannot go on by itself (an
// invalid spec, a journal that would outgrow status; the engine's error when the
// reconciler gives up on it). now stamps the conditions that change
// (meta.SetStatusCondition keeps LastTransitionTime when a condition's status does not
// change). It leaves c.Status.Journal, which is the journal store's, alone.
//
// A journal that has ended (completed or rolled back) decides the phase whatever
// failure says: it is the record of where the traffic is. ObservedGeneration becomes
// c.Generation, except while spec.paused asks for a pause the journal does not show
// yet: the status then still describes the generation before (the reconciler has not
// acted on this spec), so that no tool takes the old phase for the new spec's.
func Project(c *v1alpha1.Cutover, entries []journal.Entry, plan *spec.Plan, now time.Time, failure error) {
	st := &c.Status
	rep := cutover.BuildReport(c.Name, entries)
	f := fold(entries)
	total := 0
	if plan != nil {
		total = len(plan.Steps)
	}

	st.Steps = f.steps
	st.Weights = f.weights
	if st.Weights == nil {
		st.Weights = maps.Clone(rep.StartWeights)
	}
	st.LastAction = f.lastAction
	st.Progress = progress(f.reached, total)

	observed := true
	var phase v1alpha1.Phase
	var ready, reconciling, stalled metav1.Condition
	switch {
	case rep.Outcome == outcomeCompleted:
		phase = v1alpha1.PhaseCompleted
		msg := fmt.Sprintf("completed: every step passed; %s", weightsMsg(st.Weights))
		if rep.GatesSkipped {
			msg = fmt.Sprintf("completed with gates skipped (promote --skip-gates): traffic moved unmeasured; %s", weightsMsg(st.Weights))
		}
		ready = cond(v1alpha1.ConditionReady, true, ReasonCompleted, msg)
		reconciling = cond(v1alpha1.ConditionReconciling, false, ReasonCompleted, msg)
		stalled = cond(v1alpha1.ConditionStalled, false, ReasonCompleted, msg)
	case rep.Outcome == outcomeRolledBack:
		phase = v1alpha1.PhaseRolledBack
		reason := ReasonGateFailed
		if f.aborted {
			reason = ReasonAborted
		}
		msg := fmt.Sprintf("rolled back: %s; %s", rep.Rollback, weightsMsg(st.Weights))
		ready = cond(v1alpha1.ConditionReady, false, reason, msg)
		reconciling = cond(v1alpha1.ConditionReconciling, false, reason, msg)
		stalled = cond(v1alpha1.ConditionStalled, true, reason, msg)
	case failure != nil:
		phase = v1alpha1.PhaseFailed
		msg := fmt.Sprintf("failed: %v; %s", failure, weightsMsg(st.Weights))
		if rep.NotStarted {
			msg = fmt.Sprintf("failed before its first step: %v; no weight was written", failure)
		}
		if rep.Unconfirmed != "" {
			msg += fmt.Sprintf(" (%s was sent and not acknowledged: it may have landed)", rep.Unconfirmed)
		}
		ready = cond(v1alpha1.ConditionReady, false, ReasonFailed, msg)
		reconciling = cond(v1alpha1.ConditionReconciling, false, ReasonFailed, msg)
		stalled = cond(v1alpha1.ConditionStalled, true, ReasonFailed, msg)
	case rep.NotStarted:
		phase = v1alpha1.PhasePending
		msg := fmt.Sprintf("pending: no step taken yet (%d steps planned)", total)
		reason, moving := ReasonPending, true
		if c.Spec.Paused {
			reason, moving = ReasonPausedBeforeStart, false
			msg = "paused before its first step (spec.paused): set spec.paused to false to start it"
		}
		ready = cond(v1alpha1.ConditionReady, false, reason, msg)
		reconciling = cond(v1alpha1.ConditionReconciling, moving, reason, msg)
		stalled = cond(v1alpha1.ConditionStalled, false, reason, msg)
	case rep.Paused:
		phase = v1alpha1.PhasePaused
		reason := ReasonPaused
		who := f.pausedBy
		if who == "" {
			who = "a pause command"
		}
		msg := fmt.Sprintf("paused at step %s by %s; %s", st.Progress, who, weightsMsg(st.Weights))
		if f.drift != "" {
			reason = ReasonDriftPaused
			msg = fmt.Sprintf("paused at step %s by drift: %s; resume or abort it; %s", st.Progress, f.drift, weightsMsg(st.Weights))
		}
		ready = cond(v1alpha1.ConditionReady, false, reason, msg)
		reconciling = cond(v1alpha1.ConditionReconciling, false, reason, msg)
		stalled = cond(v1alpha1.ConditionStalled, f.drift != "", reason, msg)
	default:
		phase = v1alpha1.PhaseProgressing
		// spec.paused asks for a pause the engine has not journaled yet.
		observed = !c.Spec.Paused || rep.RollingBack
		reason := ReasonStarting
		msg := fmt.Sprintf("started: no step written yet; %s", weightsMsg(st.Weights))
		switch {
		case rep.RollingBack:
			reason = ReasonRollingBack
			msg = fmt.Sprintf("rolling back: %s; %s", rep.Rollback, weightsMsg(st.Weights))
		case f.reached > 0:
			reason = stepReason(f.reached, total)
			msg = fmt.Sprintf("step %s: %s", st.Progress, weightsMsg(st.Weights))
		}
		if rep.Unconfirmed != "" {
			msg += fmt.Sprintf(" (%s sent, not yet acknowledged)", rep.Unconfirmed)
		}
		ready = cond(v1alpha1.ConditionReady, false, reason, msg)
		reconciling = cond(v1alpha1.ConditionReconciling, true, reason, msg)
		stalled = cond(v1alpha1.ConditionStalled, false, reason, msg)
	}
	st.Phase = phase
	if observed {
		st.ObservedGeneration = c.Generation
	}
	for _, cd := range []metav1.Condition{ready, reconciling, stalled} {
		cd.ObservedGeneration = st.ObservedGeneration
		cd.LastTransitionTime = metav1.NewTime(now)
		meta.SetStatusCondition(&st.Conditions, cd)
	}
}

// cond is a condition of type t, True when status is.
func cond(t string, status bool, reason, msg string) metav1.Condition {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg}
}

// progress renders the step reached of total: "2/4"; "2/?" when the plan is unknown.
func progress(reached, total int) string {
	if total == 0 {
		return fmt.Sprintf("%d/?", reached)
	}
	return fmt.Sprintf("%d/%d", reached, total)
}

// stepReason names the step reached for a condition's reason: "Step2Of4", "Step2" when
// the plan is unknown.
func stepReason(reached, total int) string {
	if total == 0 {
		return fmt.Sprintf("Step%d", reached)
	}
	return fmt.Sprintf("Step%dOf%d", reached, total)
}

// weightsMsg says where the traffic is, for a condition's message.
func weightsMsg(w map[string]int64) string {
	if len(w) == 0 {
		return "no weights recorded"
	}
	return "weights " + lever.FormatWeights(w)
}

// folded is what Project reads from the journal beyond the engine's report.
type folded struct {
	steps []v1alpha1.StepStatus
	// reached is the number of the last step begun (its index + 1), 0 before any.
	reached int
	// weights are those of the last acknowledged write (nil before any).
	weights map[string]int64
	// lastAction is the last control command acted on, or a person's release.
	lastAction *v1alpha1.ControlAction
	// aborted is set once an abort was acted on.
	aborted bool
	// pausedBy is who paused the run last; drift is the drift's detail when the last
	// pause was the engine's, on drift ("" otherwise).
	pausedBy, drift string
}

// actedOn are the details of control entries whose command was acted on, and the
// command each is (a command not acted on has a suffix: "pause ignored: rolling back").
var actedOn = map[string]string{
	cutover.CommandPause: cutover.CommandPause, cutover.CommandResume: cutover.CommandResume,
	cutover.CommandPromote: cutover.CommandPromote, cutover.CommandPromote + " --skip-gates": cutover.CommandPromote,
	cutover.CommandAbort: cutover.CommandAbort,
}

// fold reads the steps, the weights in effect, the last action and the cause of the
// last pause from entries.
func fold(entries []journal.Entry) folded {
	var f folded
	byIndex := map[int]int{} // step index → f.steps index
	step := func(e journal.Entry) *v1alpha1.StepStatus {
		i, ok := byIndex[e.Step]
		if !ok {
			i = len(f.steps)
			byIndex[e.Step] = i
			f.steps = append(f.steps, v1alpha1.StepStatus{Index: int32(e.Step)})
		}
		return &f.steps[i]
	}
	for _, e := range entries {
		at := metav1.NewTime(e.Time)
		switch e.Kind {
		case kindIntent:
			// Rollback stops (step -2-k) and TTL writes are not steps.
			if e.Step < 0 {
				continue
			}
			s := step(e)
			if s.StartedAt == nil {
				s.StartedAt = &at
			}
			f.reached = max(f.reached, e.Step+1)
		case kindWritten:
			if len(e.Weights) > 0 {
				f.weights = maps.Clone(e.Weights)
			}
			if e.Step >= 0 {
				step(e).Weights = maps.Clone(e.Weights)
			}
		case kindStepPassed, kindStepFailed:
			if e.Step < 0 {
				continue
			}
			s := step(e)
			s.Result, s.FinishedAt = v1alpha1.StepPassed, &at
			if e.Kind == kindStepFailed {
				s.Result = v1alpha1.StepFailed
			}
			s.Gates = verdicts(e, at)
			f.reached = max(f.reached, e.Step+1)
		case kindDrift:
			var d struct {
				Action string `json:"action"`
			}
			_ = json.Unmarshal(e.Data, &d)
			if d.Action == spec.DriftPause {
				f.drift = e.Detail
			}
		case kindControl:
			cmd, ok := actedOn[e.Detail]
			if !ok {
				continue
			}
			f.lastAction = &v1alpha1.ControlAction{Command: cmd, By: by(e), At: at, ID: e.ID}
			switch cmd {
			case cutover.CommandPause:
				// A pause over a drift pause keeps the drift's cause: the zone is still
				// not as written.
				if f.drift == "" {
					f.pausedBy = by(e)
				}
			case cutover.CommandAbort:
				f.aborted = true
				fallthrough
			default:
				f.drift, f.pausedBy = "", ""
			}
		case kindReleased:
			if strings.HasPrefix(e.Detail, runnerLetGo) {
				continue
			}
			f.lastAction = &v1alpha1.ControlAction{Command: commandRelease, By: by(e), At: at, ID: e.ID}
		}
	}
	return f
}

// by is who acted in e; the engine fills it on every entry, and ControlAction.By must
// not be empty.
func by(e journal.Entry) string {
	if e.By == "" {
		return "unknown"
	}
	return e.By
}

// verdicts are the gate results a step-passed or step-failed entry carries (its Data)
// as status keeps them.
func verdicts(e journal.Entry, at metav1.Time) []v1alpha1.GateVerdict {
	var results []gate.Result
	if len(e.Data) == 0 || json.Unmarshal(e.Data, &results) != nil {
		return nil
	}
	out := make([]v1alpha1.GateVerdict, 0, len(results))
	for _, r := range results {
		v := v1alpha1.VerdictFailed
		switch {
		case r.Pass && r.Err == "" && r.Pending:
			v = v1alpha1.VerdictPending
		case r.Pass && r.Err == "":
			v = v1alpha1.VerdictPassed
		}
		out = append(out, v1alpha1.GateVerdict{Name: r.Gate, Kind: r.Kind, Verdict: v, Detail: r.Detail,
			Measurements: maps.Clone(r.Values), Error: r.Err, CheckedAt: &at})
	}
	return out
}
