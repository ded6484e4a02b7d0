package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
)

// Report writes the report for a change ticket (`cutover report`, and after `cutover
// run`): outcome, who ran it and when, every write with its gates, the resumes between
// them, the control commands, the rollback and the retire verdict.
func Report(w io.Writer, r *cutover.Report) error {
	var b strings.Builder
	outcome := r.Outcome
	if outcome == "" {
		outcome = "unfinished"
	}
	switch {
	case r.Outcome == "" && r.NotStarted:
		outcome = "not started"
	case r.Outcome == "" && r.RollingBack:
		outcome = "unfinished, rolling back"
	case r.Outcome == "" && r.Paused:
		outcome = "unfinished, paused"
	}
	if r.Outcome == "" && len(r.Weights) > 0 {
		// Where traffic was left, never what a finished run would say.
		outcome += " at " + cutover.FormatWeights(r.Weights)
		if r.Unconfirmed != "" {
			outcome += " (" + r.Unconfirmed + " was begun and may have landed)"
		}
	}
	fmt.Fprintf(&b, "cutover %s: %s\n", r.Cutover, outcome)
	if r.NotStarted {
		// Never "run by , started 0001-01-01…": there is no run to speak of.
		b.WriteString("  the journal has no start entry: the run stopped before it moved anything (nothing was written)\n")
		for _, c := range r.Controls {
			fmt.Fprintf(&b, "  %s\n", controlLine(c))
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	if r.GatesSkipped {
		b.WriteString("  WARNING: GATES SKIPPED: steps passed unmeasured (promote --skip-gates); see the steps marked below\n")
	}
	fmt.Fprintf(&b, "  run by %s, started %s", r.By, r.Started.Format(time.RFC3339))
	if !r.Ended.IsZero() {
		fmt.Fprintf(&b, ", ended %s (%s)", r.Ended.Format(time.RFC3339), r.Ended.Sub(r.Started).Round(time.Second))
	}
	fmt.Fprintf(&b, "\n  starting weights: %s\n", cutover.FormatWeights(r.StartWeights))
	resumes := r.Resumes
	for i, s := range r.Steps {
		for len(resumes) > 0 && resumes[0].WritesBefore <= i {
			fmt.Fprintf(&b, "  %s\n", Resume(resumes[0]))
			resumes = resumes[1:]
		}
		switch {
		case (r.Lever == cutover.LeverALB || r.Lever == cutover.LeverCloudMap) && s.InSyncAfter == "":
			fmt.Fprintf(&b, "  %-16s %-22s %-8s not seen in effect", s.Name, cutover.FormatWeights(s.Weights), s.Outcome)
		case r.Lever == cutover.LeverALB || r.Lever == cutover.LeverCloudMap:
			fmt.Fprintf(&b, "  %-16s %-22s %-8s in effect after %s", s.Name, cutover.FormatWeights(s.Weights), s.Outcome, s.InSyncAfter)
		default:
			fmt.Fprintf(&b, "  %-16s %-22s %-8s change %s, INSYNC after %s", s.Name, cutover.FormatWeights(s.Weights), s.Outcome, s.ChangeID, s.InSyncAfter)
		}
		if s.Detail != "" {
			fmt.Fprintf(&b, "; %s", s.Detail)
		}
		b.WriteString("\n")
		if s.GatesSkipped {
			b.WriteString("      !! GATES SKIPPED: this step was not measured\n")
		}
		for _, g := range s.Gates {
			fmt.Fprintf(&b, "      %s %s: %s\n", gateMark(g), g.Gate, g.Detail)
		}
	}
	for _, rs := range resumes {
		fmt.Fprintf(&b, "  %s\n", Resume(rs))
	}
	for _, c := range r.Controls {
		fmt.Fprintf(&b, "  %s\n", controlLine(c))
	}
	switch {
	case r.RollingBack:
		fmt.Fprintf(&b, "  rolling back (not finished): %s; it goes on to the starting weights whatever comes (pause, resume and promote are ignored); "+
			"if no runner holds it, `crossfade cutover run --resume` finishes it\n", r.Rollback)
	case r.Rollback != "" && r.Outcome != "":
		fmt.Fprintf(&b, "  rolled back: %s\n", r.Rollback)
	case r.Rollback != "":
		// Unfinished and not rolling back: never "rolled back" for a run that has not.
		fmt.Fprintf(&b, "  rollback due, not begun: %s\n", r.Rollback)
	}
	if r.Retire != nil {
		fmt.Fprintf(&b, "  retire: %s\n", r.Retire.Detail)
	}
	// A forward block with no target group would be empty; it is never printed.
	var rules []alb.RuleWeights
	for _, rw := range r.Rules {
		if len(rw.TargetGroups) > 0 {
			rules = append(rules, rw)
		}
	}
	switch {
	case r.Lever != cutover.LeverALB:
	case r.Outcome == "":
		// Weights copied into Terraform mid-run would fight the cutover when applied.
		b.WriteString("  Terraform forward blocks: none yet: the cutover is unfinished; its report prints them once it ends\n")
	case len(rules) > 0:
		b.WriteString("  the listener rules' weights now, as Terraform's forward block (for the module that owns the rules):\n")
		for _, line := range strings.Split(strings.TrimRight(alb.TerraformForward(rules), "\n"), "\n") {
			if line != "" {
				line = "    " + line
			}
			b.WriteString(line + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Resume says what a resume did, for the report and `status`: "resumed at … by
// alice@ci (pid 4242 on ci): redoing the write of step 2 of 4 (blue=50 green=50), which
// the run before it had sent (change C2) but not seen INSYNC".
func Resume(r cutover.ResumeReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "resumed at %s by %s", r.At.Format(time.RFC3339), r.By)
	switch {
	case r.PID > 0 && r.Host != "":
		fmt.Fprintf(&b, " (pid %d on %s)", r.PID, r.Host)
	case r.Host != "":
		fmt.Fprintf(&b, " (on %s)", r.Host)
	}
	b.WriteString(": ")
	w := r.Last
	if w == nil {
		b.WriteString("the run before it had started but sent nothing yet; starting from the first write")
		return b.String()
	}
	what := w.Name
	if len(w.Weights) > 0 {
		what += " (" + cutover.FormatWeights(w.Weights) + ")"
	}
	// A write without a change id is one whose lever has none (the ALB's): it is in
	// effect once every rule shows it, not INSYNC.
	noID := w.ChangeID == ""
	switch {
	case w.Stage == cutover.StageIntent:
		fmt.Fprintf(&b, "redoing the write of %s, which the run before it had begun but not seen sent (it may have landed: weights are absolute, so sending them again is safe)", what)
	case w.Stage == cutover.StageSent && noID:
		fmt.Fprintf(&b, "redoing the write of %s, which the run before it had sent but not seen in effect", what)
	case w.Stage == cutover.StageSent:
		fmt.Fprintf(&b, "redoing the write of %s, which the run before it had sent (change %s) but not seen INSYNC", what, w.ChangeID)
	case w.Stage == cutover.StageInSync && noID:
		fmt.Fprintf(&b, "redoing the write of %s, which the run before it had seen in effect but not held to its end; its hold starts again", what)
	case w.Stage == cutover.StageInSync:
		fmt.Fprintf(&b, "redoing the write of %s, which the run before it had seen INSYNC (change %s) but not held to its end; its hold starts again", what, w.ChangeID)
	case w.Stage == cutover.StageFailed:
		fmt.Fprintf(&b, "after %s failed: going on with its rollback", what)
	default:
		fmt.Fprintf(&b, "after %s %s: going on from there", what, w.Stage)
	}
	return b.String()
}

// gateMark is how a gate result reads in text: pass, FAIL, or pending (passed without
// judging yet: too little traffic counted).
func gateMark(g gate.Result) string {
	switch {
	case !g.Pass:
		return "FAIL"
	case g.Pending:
		return "pending"
	}
	return "pass"
}

// controlLine renders a control, takeover or drift entry: what, who and when. A command
// not acted on says when it was sent (its journal time is when a runner read it, which
// for one left from an earlier run may be days later).
func controlLine(e journal.Entry) string {
	if at := cutover.IgnoredSentAt(e); !at.IsZero() {
		return fmt.Sprintf("%s by %s, sent at %s", e.Detail, e.By, at.Format(time.RFC3339))
	}
	return fmt.Sprintf("%s by %s at %s", e.Detail, e.By, e.Time.Format(time.RFC3339))
}
