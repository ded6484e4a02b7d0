package cutover

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// Report is the audit trail of one cutover, derived from its journal: per step the
// weights written, the change id, the time to INSYNC, the gate results (the DNS gate's
// measured answer shares among them), and who acted when.
type Report struct {
	Cutover string `json:"cutover"`
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
}

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
}

// BuildReport folds a journal into a report.
func BuildReport(name string, entries []journal.Entry) *Report {
	r := &Report{Cutover: name}
	byStep := map[int]int{} // journal step index → r.Steps index of its latest write
	for _, e := range entries {
		switch e.Kind {
		case kindStart:
			r.Started, r.By, r.StartWeights = e.Time, e.By, e.Weights
		case kindIntent:
			byStep[e.Step] = len(r.Steps)
			r.Steps = append(r.Steps, StepReport{Name: e.Detail, Weights: e.Weights, Outcome: "written"})
		case kindWritten, kindInSync, kindStepPassed, kindStepFailed, kindRollbackHeld:
			i, ok := byStep[e.Step]
			if e.Kind == kindRollbackHeld {
				i, ok = byStep[-2-e.Step]
			}
			if !ok {
				continue
			}
			s := &r.Steps[i]
			switch e.Kind {
			case kindWritten:
				s.ChangeID, s.Written = e.ChangeID, e.Time
			case kindInSync:
				s.InSyncAfter, s.Outcome = e.Detail, "in sync"
			case kindStepPassed:
				s.Outcome = "passed"
				_ = json.Unmarshal(e.Data, &s.Gates)
			case kindStepFailed:
				s.Outcome, s.Detail = "failed", e.Detail
				_ = json.Unmarshal(e.Data, &s.Gates)
			case kindRollbackHeld:
				s.Outcome = "held"
			}
		case kindRollback:
			r.Rollback = e.Detail
		case kindRetire:
			var v retireVerdict
			_ = json.Unmarshal(e.Data, &v)
			r.Retire = &RetireReport{Cluster: v.Cluster, Retirable: v.Retirable, Detail: e.Detail, At: e.Time}
		case kindControl, kindTakeover:
			r.Controls = append(r.Controls, e)
		case kindDone:
			r.Outcome, r.Ended = e.Detail, e.Time
		}
	}
	return r
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

// WriteText writes the report for a change ticket.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	outcome := r.Outcome
	if outcome == "" {
		outcome = "unfinished"
	}
	fmt.Fprintf(&b, "cutover %s: %s\n", r.Cutover, outcome)
	fmt.Fprintf(&b, "  run by %s, started %s", r.By, r.Started.Format(time.RFC3339))
	if !r.Ended.IsZero() {
		fmt.Fprintf(&b, ", ended %s (%s)", r.Ended.Format(time.RFC3339), r.Ended.Sub(r.Started).Round(time.Second))
	}
	fmt.Fprintf(&b, "\n  starting weights: %s\n", FormatWeights(r.StartWeights))
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "  %-16s %-22s %-8s change %s, INSYNC after %s", s.Name, FormatWeights(s.Weights), s.Outcome, s.ChangeID, s.InSyncAfter)
		if s.Detail != "" {
			fmt.Fprintf(&b, "; %s", s.Detail)
		}
		b.WriteString("\n")
		for _, g := range s.Gates {
			mark := "pass"
			if !g.Pass {
				mark = "FAIL"
			}
			fmt.Fprintf(&b, "      %s %s: %s\n", mark, g.Gate, g.Detail)
		}
	}
	for _, c := range r.Controls {
		fmt.Fprintf(&b, "  %s by %s at %s\n", c.Detail, c.By, c.Time.Format(time.RFC3339))
	}
	if r.Rollback != "" {
		fmt.Fprintf(&b, "  rolled back: %s\n", r.Rollback)
	}
	if r.Retire != nil {
		fmt.Fprintf(&b, "  retire: %s\n", r.Retire.Detail)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
