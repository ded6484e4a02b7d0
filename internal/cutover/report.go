package cutover

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// Report is the audit trail of one cutover, derived from its journal: per step the
// weights written, the change id, the time to INSYNC, the gate results (the DNS gate's
// measured answer shares among them), and who acted when.
type Report struct {
	Cutover string `json:"cutover"`
	// Lever is the lever the cutover pulled: LeverRoute53 or LeverALB ("" before it
	// started).
	Lever string `json:"lever,omitempty"`
	// Outcome is "completed", "rolled-back", or "" while unfinished.
	Outcome string    `json:"outcome"`
	By      string    `json:"by"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
	// StartWeights are the weights found before the first step.
	StartWeights map[string]int64 `json:"startWeights"`
	Steps        []StepReport     `json:"steps"`
	// Rollback is why the cutover rolled back, if it did.
	Rollback string `json:"rollback,omitempty"`
	// Retire is the verdict of the residual-traffic check after the last step, if the
	// plan has one: whether the from cluster can be retired, and why.
	Retire *RetireReport `json:"retire,omitempty"`
	// Controls are the pause/resume/promote/abort commands, with who and when, and the
	// takeovers of the weights from another runner (an abort's).
	Controls []journal.Entry `json:"controls,omitempty"`
	// Resumes are the times an interrupted run was continued (`run --resume`), each with
	// the write it took up.
	Resumes []ResumeReport `json:"resumes,omitempty"`
	// GatesSkipped is set when a step passed without its gates (promote --skip-gates):
	// traffic moved unmeasured, on a person's word.
	GatesSkipped bool `json:"gatesSkipped,omitempty"`
	// NotStarted is set for a journal with no start entry: the run stopped before it
	// moved anything (Started and By are then empty).
	NotStarted bool `json:"notStarted,omitempty"`
	// RollingBack is set while a rollback is due or under way and the cutover has not
	// ended: it runs to its end, which only its runner (or `run --resume`) brings.
	RollingBack bool `json:"rollingBack,omitempty"`
	// Paused is set while an unfinished cutover is paused (a pause command, or drift).
	Paused bool `json:"paused,omitempty"`
	// Weights are, for an unfinished cutover, the weights its last acknowledged write set
	// (StartWeights before any): where traffic was left. Nil once it ended.
	Weights map[string]int64 `json:"weights,omitempty"`
	// Unconfirmed names, for an unfinished cutover, a write begun after the last
	// acknowledged one (e.g. "step 2 of 2"): it may have landed, so Weights may be stale.
	Unconfirmed string `json:"unconfirmed,omitempty"`
	// Rules are, for the ALB lever, every listener rule's forward action as last written
	// (as found at the start, before the first write): the weights the rules hold, which
	// render.Report prints as Terraform's forward block for the module that owns the rules.
	Rules []alb.RuleWeights `json:"rules,omitempty"`
}

// ResumeReport is one `run --resume` of an interrupted cutover: when, by whom, and where
// the run before it had stopped.
type ResumeReport struct {
	At time.Time `json:"at"`
	// By is who resumed it (user@host).
	By string `json:"by"`
	// Host and PID are the resuming process, as its authority records name it.
	Host string `json:"host,omitempty"`
	PID  int    `json:"pid,omitempty"`
	// WritesBefore is the number of Steps written before the resume: the report lists
	// the resume between them and the writes after it.
	WritesBefore int `json:"writesBefore"`
	// Last is the last write the interrupted run began, nil when it began none; the
	// resumed run redoes it unless it had ended (Stage passed, held or failed).
	Last *ResumedWrite `json:"last,omitempty"`
}

// ResumedWrite is the write an interrupted run was at, and how far it had got.
type ResumedWrite struct {
	// Name is the write's name, e.g. "step 2 of 4", "rollback 1 of 2", "lower TTL to 60s".
	Name    string           `json:"name"`
	Weights map[string]int64 `json:"weights,omitempty"`
	// Stage is one of the Stage constants.
	Stage string `json:"stage"`
	// ChangeID is the change it had sent, if it had.
	ChangeID string `json:"changeID,omitempty"`
}

// How far an interrupted write had got, as a ResumedWrite says.
const (
	// StageIntent: journaled, not known to have been sent (it may have landed).
	StageIntent = "intent"
	// StageSent: sent and acknowledged, not yet seen INSYNC.
	StageSent = "sent"
	// StageInSync: INSYNC; its hold (or the wait after it) had not ended.
	StageInSync = "insync"
	// StagePassed, StageHeld, StageFailed: ended; the resume goes on after it.
	StagePassed = "passed"
	StageHeld   = "held"
	StageFailed = "failed"
)

// RetireReport is the retire check's verdict.
type RetireReport struct {
	Cluster   string    `json:"cluster"`
	Retirable bool      `json:"retirable"`
	Detail    string    `json:"detail"`
	At        time.Time `json:"at"`
}

// StepReport is one write: a step or a rollback stop.
type StepReport struct {
	// Name is "step 2 of 4" or "rollback 1 of 1".
	Name     string           `json:"name"`
	Weights  map[string]int64 `json:"weights"`
	ChangeID string           `json:"changeID,omitempty"`
	Written  time.Time        `json:"written,omitzero"`
	// InSyncAfter is the time from the write to INSYNC.
	InSyncAfter string        `json:"inSyncAfter,omitempty"`
	Outcome     string        `json:"outcome"`
	Detail      string        `json:"detail,omitempty"`
	Gates       []gate.Result `json:"gates,omitempty"`
	// GatesSkipped marks a step passed without its gates (promote --skip-gates).
	GatesSkipped bool `json:"gatesSkipped,omitempty"`
}

// BuildReport folds a journal into a report.
func BuildReport(name string, entries []journal.Entry) *Report {
	r := &Report{Cutover: name}
	byStep := map[int]int{} // journal step index → r.Steps index of its latest write
	for _, e := range entries {
		switch e.Kind {
		case kindStart:
			r.Started, r.By, r.StartWeights = e.Time, e.By, e.Weights
			d := readStartData(e.Data)
			r.Lever, r.Rules = d.Lever, d.Rules
			if r.Lever == "" {
				r.Lever = LeverRoute53
			}
		case kindIntent:
			byStep[e.Step] = len(r.Steps)
			r.Steps = append(r.Steps, StepReport{Name: e.Detail, Weights: e.Weights, Outcome: "written"})
		case kindWritten, kindInSync, kindStepPassed, kindStepFailed, kindRollbackHeld:
			i, ok := byStep[e.Step]
			if e.Kind == kindRollbackHeld {
				i, ok = byStep[-2-e.Step]
			}
			if !ok && e.Kind == kindStepFailed {
				// Failed before its write (a gate checked before it): listed, unwritten.
				byStep[e.Step] = len(r.Steps)
				i, ok = len(r.Steps), true
				r.Steps = append(r.Steps, StepReport{Name: fmt.Sprintf("step %d (not written)", e.Step+1), Weights: e.Weights})
			}
			if !ok {
				continue
			}
			s := &r.Steps[i]
			switch e.Kind {
			case kindWritten:
				s.ChangeID, s.Written = e.ChangeID, e.Time
				if r.Lever == LeverALB && len(e.Data) > 0 {
					var rules []alb.RuleWeights
					if json.Unmarshal(e.Data, &rules) == nil {
						r.Rules = rules
					}
				}
			case kindInSync:
				s.InSyncAfter, s.Outcome = e.Detail, "in sync"
			case kindStepPassed:
				s.Outcome, s.Detail = "passed", e.Detail
				_ = json.Unmarshal(e.Data, &s.Gates)
				if strings.HasPrefix(e.Detail, gatesSkippedPrefix) {
					s.GatesSkipped, r.GatesSkipped = true, true
				}
			case kindStepFailed:
				s.Outcome, s.Detail = "failed", e.Detail
				_ = json.Unmarshal(e.Data, &s.Gates)
			case kindRollbackHeld:
				s.Outcome, s.Detail = "held", e.Detail
			}
		case kindRollback:
			r.Rollback = e.Detail
			r.RollingBack = true
		case kindRetire:
			var v retireVerdict
			_ = json.Unmarshal(e.Data, &v)
			r.Retire = &RetireReport{Cluster: v.Cluster, Retirable: v.Retirable, Detail: e.Detail, At: e.Time}
		case kindControl, kindTakeover, kindDrift:
			// A drift is listed with the controls: it paused or rolled back the run.
			r.Controls = append(r.Controls, e)
		case kindResumed:
			r.Resumes = append(r.Resumes, r.resumed(e))
		case kindDone:
			r.Outcome, r.Ended = e.Detail, e.Time
		}
	}
	r.NotStarted = r.Started.IsZero()
	st := replay(entries)
	r.RollingBack = r.Outcome == "" && st.rollback != nil
	if r.RollingBack && r.Rollback == "" {
		r.Rollback = st.rollback.reason
	}
	if r.Outcome == "" && !r.NotStarted {
		r.Paused = st.paused
		r.Weights, r.Unconfirmed = r.leftAt()
	}
	return r
}

// leftAt is where an unfinished cutover left the weights: those of its last acknowledged
// write (the starting weights before any), and the name of a write begun after it, which
// may have landed too.
func (r *Report) leftAt() (map[string]int64, string) {
	w, unconfirmed := r.StartWeights, ""
	for _, s := range r.Steps {
		switch {
		case len(s.Weights) == 0:
			// A TTL write moves no weight.
		case !s.Written.IsZero() || s.ChangeID != "":
			w, unconfirmed = s.Weights, ""
		case s.Outcome == "written":
			// Journaled, not acknowledged: it may or may not have landed.
			unconfirmed = s.Name
		}
	}
	return w, unconfirmed
}

// resumed describes the resume entry e against the writes folded so far: the last of
// them is where the interrupted run stopped.
func (r *Report) resumed(e journal.Entry) ResumeReport {
	// The engine journals "runner TOKEN@HOST:PID"; the token is for the records, not people.
	who := registry.ParseRunner(strings.TrimPrefix(e.Detail, "runner "))
	rr := ResumeReport{At: e.Time, By: e.By, Host: who.Host, PID: who.PID, WritesBefore: len(r.Steps)}
	if len(r.Steps) == 0 {
		return rr
	}
	s := r.Steps[len(r.Steps)-1]
	w := &ResumedWrite{Name: s.Name, Weights: s.Weights, ChangeID: s.ChangeID}
	switch s.Outcome {
	case "written": // the intent's outcome until the write is acknowledged
		w.Stage = StageIntent
		if s.ChangeID != "" || !s.Written.IsZero() {
			w.Stage = StageSent
		}
	case "in sync":
		w.Stage = StageInSync
	default:
		w.Stage = s.Outcome
	}
	rr.Last = w
	return rr
}

func (r *Report) save(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(path+".tmp", path, append(b, '\n')); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// IgnoredSentAt is, for a control entry whose command was not acted on (ignored, or
// discarded as sent before its run), when that command was sent: its journal time is when
// a runner read it, which for one left from an earlier run may be days later. It is zero
// for every other entry, and when the entry does not say.
func IgnoredSentAt(e journal.Entry) time.Time {
	if e.Kind != kindControl || !notActedOn(e.Detail) {
		return time.Time{}
	}
	return sentAt(e)
}
