package cutoverctl

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
)

// Weights renders weights as "blue=90,green=10", clusters in order, one word for a
// table's column; "-" when there are none.
func Weights(w map[string]int64) string {
	if len(w) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(w))
	for _, k := range slices.Sorted(maps.Keys(w)) {
		parts = append(parts, k+"="+strconv.FormatInt(w[k], 10))
	}
	return strings.Join(parts, ",")
}

// orDash is s, or "-" when it is empty (a table cell is never blank).
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Table writes cutovers as `kubectl get` does: NAME PHASE STEP WEIGHTS AGE, ages as of now.
func Table(w io.Writer, cutovers []v1alpha1.Cutover, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPHASE\tSTEP\tWEIGHTS\tAGE")
	for _, c := range cutovers {
		age := "<unknown>"
		if !c.CreationTimestamp.IsZero() {
			age = duration.HumanDuration(now.Sub(c.CreationTimestamp.Time))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Name, orDash(string(c.Status.Phase)), orDash(c.Status.Progress), Weights(c.Status.Weights), age)
	}
	return tw.Flush()
}

// Print writes v (a Cutover or a CutoverList) as format: "yaml" or "json".
func Print(w io.Writer, v any, format string) error {
	var b []byte
	var err error
	switch format {
	case "json":
		if b, err = json.MarshalIndent(v, "", "    "); err == nil {
			b = append(b, '\n')
		}
	case "yaml":
		b, err = yaml.Marshal(v)
	default:
		return fmt.Errorf("output format %q: want yaml or json", format)
	}
	if err != nil {
		return fmt.Errorf("render as %s: %w", format, err)
	}
	_, err = w.Write(b)
	return err
}

// Status writes what a person wants to know of a Cutover: its phase and step, the
// weights in effect, its conditions' messages, each step with its weights and its gates'
// verdicts and measurements, the last action and who took it, and any command waiting or
// answered in its annotations.
func Status(w io.Writer, c *v1alpha1.Cutover, now time.Time) error {
	st := c.Status
	var b strings.Builder
	phase := string(st.Phase)
	if phase == "" {
		phase = "no status yet (no controller has looked at it)"
	}
	fmt.Fprintf(&b, "Cutover %s/%s: %s", c.Namespace, c.Name, phase)
	if st.Progress != "" {
		fmt.Fprintf(&b, ", step %s", st.Progress)
	}
	if c.Spec.Paused {
		b.WriteString(" (spec.paused)")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "  weights: %s\n", Weights(st.Weights))
	if st.ObservedGeneration != 0 && st.ObservedGeneration < c.Generation {
		fmt.Fprintf(&b, "  status is of generation %d; the spec is at %d: the controller has not acted on it yet\n", st.ObservedGeneration, c.Generation)
	}
	// The conditions, then their messages: the three usually say the same.
	var states, msgs []string
	for _, cd := range st.Conditions {
		states = append(states, fmt.Sprintf("%s=%s (%s)", cd.Type, cd.Status, cd.Reason))
		if !slices.Contains(msgs, cd.Message) {
			msgs = append(msgs, cd.Message)
		}
	}
	if len(states) > 0 {
		fmt.Fprintf(&b, "  conditions: %s\n", strings.Join(states, ", "))
	}
	for _, m := range msgs {
		fmt.Fprintf(&b, "  %s\n", m)
	}
	if len(st.Steps) > 0 {
		b.WriteString("Steps:\n")
	}
	for _, s := range st.Steps {
		result := string(s.Result)
		switch {
		case result != "":
		case st.Phase.Final():
			result = "not passed (the run ended at it)"
		default:
			result = "holding"
		}
		fmt.Fprintf(&b, "  step %d: %s, %s", s.Index+1, Weights(s.Weights), result)
		if s.StartedAt != nil {
			fmt.Fprintf(&b, ", started %s ago", duration.HumanDuration(now.Sub(s.StartedAt.Time)))
		}
		b.WriteString("\n")
		for _, g := range s.Gates {
			fmt.Fprintf(&b, "    gate %s (%s): %s", g.Name, g.Kind, g.Verdict)
			if g.Detail != "" {
				fmt.Fprintf(&b, ": %s", g.Detail)
			}
			if g.Error != "" {
				fmt.Fprintf(&b, " (error: %s)", g.Error)
			}
			b.WriteString("\n")
			if len(g.Measurements) > 0 {
				var ms []string
				for _, k := range slices.Sorted(maps.Keys(g.Measurements)) {
					ms = append(ms, k+"="+strconv.FormatFloat(g.Measurements[k], 'g', -1, 64))
				}
				fmt.Fprintf(&b, "      measured: %s\n", strings.Join(ms, " "))
			}
		}
	}
	if a := st.LastAction; a != nil {
		fmt.Fprintf(&b, "Last action: %s by %s at %s", a.Command, a.By, a.At.UTC().Format(time.RFC3339))
		if a.ID != "" {
			fmt.Fprintf(&b, " (id %s)", a.ID)
		}
		b.WriteString("\n")
	} else {
		b.WriteString("Last action: none\n")
	}
	if by := c.Annotations[v1alpha1.PausedByAnnotation]; by != "" {
		// The controller removes it once it has sent the pause or resume it names
		// someone for: while it is there, that change still waits for the controller.
		fmt.Fprintf(&b, "spec.paused=%t waiting for the controller, set by: %s\n", c.Spec.Paused, by)
	}
	if v, ok := c.Annotations[v1alpha1.CommandAnnotation]; ok {
		fmt.Fprintf(&b, "Command waiting for the controller: %s\n", describeRequest(v))
	}
	if v, ok := c.Annotations[v1alpha1.ResultAnnotation]; ok {
		fmt.Fprintf(&b, "Last command answered: %s\n", describeResult(v))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// describeRequest renders a CommandAnnotation value for people; an invalid one as it is,
// with why.
func describeRequest(v string) string {
	r, err := v1alpha1.ParseCommandRequest(v)
	if err != nil {
		return fmt.Sprintf("%s (invalid: %v)", v, err)
	}
	s := r.Command
	if r.SkipGates {
		s += " --skip-gates"
	}
	if r.Force {
		s += " --force"
	}
	s += fmt.Sprintf(" (id %s) by %s", orDash(r.ID), orDash(r.By))
	if !r.At.IsZero() {
		s += " at " + r.At.UTC().Format(time.RFC3339)
	}
	return s
}

// describeResult renders a ResultAnnotation value for people.
func describeResult(v string) string {
	r, err := v1alpha1.ParseCommandResult(v)
	if err != nil {
		return fmt.Sprintf("%s (invalid: %v)", v, err)
	}
	s := fmt.Sprintf("%s (id %s) by %s", r.Command, orDash(r.ID), orDash(r.By))
	switch {
	case r.Refused != "":
		s += ": refused: " + r.Refused
	case r.Detail != "":
		s += ": " + r.Detail
	}
	return s
}

// Done writes what the controller did with req, as its outcome shows.
func Done(w io.Writer, ref string, req v1alpha1.CommandRequest, o Outcome) error {
	var s string
	switch {
	case o.Result != nil && o.Result.Refused != "":
		s = fmt.Sprintf("%s %s (id %s) refused by the controller: %s", req.Command, ref, req.ID, o.Result.Refused)
	case o.Entry != nil:
		s = fmt.Sprintf("%s %s (id %s): journaled as %q by %s at %s (entry %d)", req.Command, ref, req.ID, o.Entry.Detail, orDash(o.Entry.By),
			o.Entry.Time.UTC().Format(time.RFC3339), o.Entry.Seq)
		if o.Result != nil && o.Result.Detail != "" {
			s += ": " + o.Result.Detail
		}
	case o.Result != nil:
		s = fmt.Sprintf("%s %s (id %s): done by the controller", req.Command, ref, req.ID)
		if o.Result.Detail != "" {
			s += ": " + o.Result.Detail
		}
	}
	_, err := fmt.Fprintln(w, s)
	return err
}
