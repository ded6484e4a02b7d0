package reconciler

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
)

// The reasons of the Events the reconciler records on a Cutover (kubectl describe,
// kubectl get events). Each is CamelCase, as Event reasons are.
const (
	// ReasonStepStarted: a step's weights were sent (Normal).
	ReasonStepStarted = "StepStarted"
	// ReasonStepPassed: every gate of a step passed for its hold (Normal).
	ReasonStepPassed = "StepPassed"
	// ReasonGateFailed: a step failed, with what its gates measured (Warning).
	ReasonGateFailed = "GateFailed"
	// ReasonPaused: a person paused the run, named (Normal).
	ReasonPaused = "Paused"
	// ReasonResumed: a person resumed the run, named (Normal).
	ReasonResumed = "Resumed"
	// ReasonPromoted: a person promoted the run, named (Normal; Warning with gates
	// skipped is the completion's).
	ReasonPromoted = "Promoted"
	// ReasonAborted: a person aborted the run, named (Warning: traffic goes back).
	ReasonAborted = "Aborted"
	// ReasonReleased: the weights were handed back to the publishers (Normal).
	ReasonReleased = "Released"
	// ReasonDriftPaused: the run paused on its own, the zone holding weights it did not
	// write (Warning).
	ReasonDriftPaused = "DriftPaused"
	// ReasonCompleted: every step passed (Normal).
	ReasonCompleted = "Completed"
	// ReasonRolledBack: the weights are back at the start after a gate failure or an
	// abort (Warning).
	ReasonRolledBack = "RolledBack"
	// ReasonFailed: the run stopped without reaching either end (Warning).
	ReasonFailed = "Failed"
	// ReasonStartRefused: the run could not start (the zone refused it); it is retried
	// or, stuck, waits for a person (Warning).
	ReasonStartRefused = "StartRefused"
	// ReasonCommandTaken: a command of crossfade.io/command was taken and acted on
	// (Normal).
	ReasonCommandTaken = "CommandTaken"
	// ReasonCommandRefused: a command of crossfade.io/command was refused; the why is in
	// crossfade.io/command-result too (Warning).
	ReasonCommandRefused = "CommandRefused"
	// ReasonFinalizerAborting: the Cutover was deleted mid-run; the run is aborted before
	// the object goes (Warning).
	ReasonFinalizerAborting = "DeleteAborting"
	// ReasonFinalizerRemoved: the finalizer was removed; the object goes (Normal).
	ReasonFinalizerRemoved = "FinalizerRemoved"
	// ReasonFinalizerStuck: the Cutover was deleted mid-run and its abort cannot run; the
	// finalizer stays until a person removes it (Warning).
	ReasonFinalizerStuck = "DeleteBlocked"
)

// event is one Event to record on a Cutover.
type event struct {
	// Type is corev1.EventTypeNormal or corev1.EventTypeWarning.
	Type, Reason, Message string
}

// transitions are the Events that the change of a Cutover's status from old to new
// stands for: each step begun, passed or failed, each control action taken (who), and
// the phase reached when it ends the run or is a drift pause. It is pure: the replica
// that writes new emits them, so two replicas never record one change twice.
func transitions(old, new *v1alpha1.CutoverStatus) []event {
	var out []event
	before := map[int32]v1alpha1.StepStatus{}
	for _, s := range old.Steps {
		before[s.Index] = s
	}
	total := "?"
	if _, t, ok := strings.Cut(new.Progress, "/"); ok {
		total = t
	}
	for _, s := range new.Steps {
		was := before[s.Index]
		if len(was.Weights) == 0 && len(s.Weights) > 0 {
			// Begun once its weights are written: what the zone now holds.
			out = append(out, event{corev1.EventTypeNormal, ReasonStepStarted, fmt.Sprintf("step %d/%s begun: weights %s", s.Index+1, total, lever.FormatWeights(s.Weights))})
		}
		if was.Result == s.Result {
			continue
		}
		switch s.Result {
		case v1alpha1.StepPassed:
			out = append(out, event{corev1.EventTypeNormal, ReasonStepPassed, fmt.Sprintf("step %d/%s passed%s", s.Index+1, total, gatesMsg(s.Gates, false))})
		case v1alpha1.StepFailed:
			out = append(out, event{corev1.EventTypeWarning, ReasonGateFailed, fmt.Sprintf("step %d/%s failed%s", s.Index+1, total, gatesMsg(s.Gates, true))})
		}
	}
	if a, o := new.LastAction, old.LastAction; a != nil && (o == nil || a.Command != o.Command || a.By != o.By || a.ID != o.ID || !a.At.Equal(&o.At)) {
		reason, typ := ReasonCommandTaken, corev1.EventTypeNormal
		switch a.Command {
		case "pause":
			reason = ReasonPaused
		case "resume":
			reason = ReasonResumed
		case "promote":
			reason = ReasonPromoted
		case "abort":
			reason, typ = ReasonAborted, corev1.EventTypeWarning
		case "release":
			reason = ReasonReleased
		}
		msg := a.Command + " by " + a.By
		if a.ID != "" {
			msg += " (id " + a.ID + ")"
		}
		out = append(out, event{typ, reason, msg})
	}
	if new.Phase != old.Phase || driftPaused(new) && !driftPaused(old) {
		msg := phaseMessage(new)
		switch {
		case new.Phase == v1alpha1.PhaseCompleted:
			out = append(out, event{corev1.EventTypeNormal, ReasonCompleted, msg})
		case new.Phase == v1alpha1.PhaseRolledBack:
			out = append(out, event{corev1.EventTypeWarning, ReasonRolledBack, msg})
		case new.Phase == v1alpha1.PhaseFailed:
			out = append(out, event{corev1.EventTypeWarning, ReasonFailed, msg})
		case driftPaused(new):
			out = append(out, event{corev1.EventTypeWarning, ReasonDriftPaused, msg})
		}
	}
	return out
}

// driftPaused reports whether st is a pause of the engine's own, on drift (Paused and
// Stalled).
func driftPaused(st *v1alpha1.CutoverStatus) bool {
	return st.Phase == v1alpha1.PhasePaused && meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionStalled)
}

// phaseMessage is what st's conditions say of it: the Ready condition's message, which
// Project fills for every phase.
func phaseMessage(st *v1alpha1.CutoverStatus) string {
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady); c != nil && c.Message != "" {
		return c.Message
	}
	return string(st.Phase)
}

// gatesMsg renders a step's gate verdicts for an Event: with failedOnly, those that did
// not pass, with what they measured.
func gatesMsg(gates []v1alpha1.GateVerdict, failedOnly bool) string {
	var parts []string
	for _, g := range gates {
		if failedOnly && g.Verdict == v1alpha1.VerdictPassed {
			continue
		}
		p := fmt.Sprintf("%s (%s) %s", g.Name, g.Kind, g.Verdict)
		if g.Detail != "" {
			p += ": " + g.Detail
		}
		if g.Error != "" {
			p += ": " + g.Error
		}
		if len(g.Measurements) > 0 {
			var ms []string
			for _, k := range slices.Sorted(maps.Keys(g.Measurements)) {
				ms = append(ms, fmt.Sprintf("%s=%g", k, g.Measurements[k]))
			}
			p += " [" + strings.Join(ms, " ") + "]"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

// record records e on the worker's Cutover when the reconciler has a recorder.
func (w *worker) record(e event) {
	rec := w.r.cfg.Events
	if rec == nil {
		return
	}
	ref := &corev1.ObjectReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Cutover", Namespace: w.namespace, Name: w.name, UID: w.uid}
	rec.Event(ref, e.Type, e.Reason, e.Message)
}

// emit records the transitions from old to new: called by the replica that has just
// written new (or, through the status hook, is writing it).
func (w *worker) emit(old, new *v1alpha1.CutoverStatus) {
	for _, e := range transitions(old, new) {
		w.record(e)
	}
}
