package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
)

// PreviewSummary renders the preview in a screenful (`cutover plan`): where the weights
// stand, one line per step (weights, hold, gates), one per gate with its check now, the
// rollback path, and how many batches Preview would print.
func PreviewSummary(w io.Writer, pv *cutover.Preview) error {
	var b strings.Builder
	writeHead(&b, pv)
	if pv.LowerTTL > 0 {
		fmt.Fprintf(&b, "TTL: lowered to %ds before step 1, then the old %ds is waited out; restored to %ds at the end (completed or rolled back)\n",
			pv.LowerTTL, pv.TTL, pv.TTL)
	}
	switch pv.Lever {
	case cutover.LeverALB:
		fmt.Fprintf(&b, "steps (each holds with every gate passing at every check, for its pause: an ALB weight applies to the next request):\n")
	case cutover.LeverCloudMap:
		fmt.Fprintf(&b, "steps (each holds with every gate passing at every check, for its pause, once Cloud Map shows the statuses written):\n")
	default:
		fmt.Fprintf(&b, "steps (each holds with every gate passing at every check, never shorter than the TTL):\n")
	}
	wcol := 0
	for _, s := range pv.Steps {
		wcol = max(wcol, len(cutover.FormatWeights(s.Weights)))
	}
	for i, s := range pv.Steps {
		gates := "no gates"
		if len(s.Gates) > 0 {
			gates = "gates " + strings.Join(s.Gates, ", ")
		}
		fmt.Fprintf(&b, "  step %d of %d  %-*s  hold %-8s %s\n", i+1, len(pv.Steps), wcol, cutover.FormatWeights(s.Weights), s.Hold, gates)
	}
	writeGates(&b, pv)
	fmt.Fprintf(&b, "rollback (%s, each stop held %s):\n", pv.RollbackMode, pv.RollbackHold)
	// Steps that roll back the same way share a line: an immediate rollback is one line.
	for i := 0; i < len(pv.Steps); {
		j := i + 1
		path := cutover.FormatPath(pv.Steps[i].Rollback)
		for j < len(pv.Steps) && cutover.FormatPath(pv.Steps[j].Rollback) == path {
			j++
		}
		switch {
		case i == 0 && j == len(pv.Steps):
			fmt.Fprintf(&b, "  from any step: %s\n", path)
		case j == i+1:
			fmt.Fprintf(&b, "  from step %d: %s\n", i+1, path)
		default:
			fmt.Fprintf(&b, "  from steps %d-%d: %s\n", i+1, j, path)
		}
		i = j
	}
	batches, changes, tags := 0, 0, 0
	for _, wr := range pv.Writes {
		if wr.Changes > 0 {
			batches, changes = batches+1, changes+wr.Changes
		}
		tags += bytes.Count(wr.Batch, []byte("aws elbv2 add-tags "))
	}
	switch pv.Lever {
	case cutover.LeverALB:
		fmt.Fprintf(&b, "writes: %s (%s in all: %d ModifyRule and ModifyListener, %d AddTags) for the run and its longest rollback; "+
			"`cutover plan --batches` prints each call as the AWS CLI takes it (`aws elbv2 add-tags`, `modify-rule`, `modify-listener`)\n",
			plural(batches, "write", "writes"), plural(changes, "ELBv2 call", "ELBv2 calls"), changes-tags, tags)
	case cutover.LeverCloudMap:
		fmt.Fprintf(&b, "writes: %s (%s in all) for the run and its longest rollback; "+
			"`cutover plan --batches` prints each call as `aws servicediscovery update-instance-custom-health-status` takes it\n",
			plural(batches, "write", "writes"), plural(changes, "UpdateInstanceCustomHealthStatus call", "UpdateInstanceCustomHealthStatus calls"))
	default:
		fmt.Fprintf(&b, "writes: %s (%s in all) for the run and its longest rollback; `cutover plan --batches` prints each one as `aws route53 change-resource-record-sets` takes it\n",
			plural(batches, "batch", "batches"), plural(changes, "change", "changes"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// writeHead writes where the cutover starts from: zone, TTL, weights, the members'
// owners (or the listener rules and their target groups' health) and the warnings.
func writeHead(b *strings.Builder, pv *cutover.Preview) {
	if pv.Cutover != "" {
		fmt.Fprintf(b, "cutover %s: %s → %s\n", pv.Cutover, pv.From, pv.To)
	}
	switch pv.Lever {
	case cutover.LeverALB:
		fmt.Fprintf(b, "ALB listener rules: %d, current weights %s (each applies to the next request: no TTL)\n", len(pv.Rules), cutover.FormatWeights(pv.Current))
	case cutover.LeverCloudMap:
		fmt.Fprintf(b, "Cloud Map: current weights (HEALTHY instances) %s\n", cutover.FormatWeights(pv.Current))
	default:
		fmt.Fprintf(b, "zone %s, TTL %ds, current weights %s\n", pv.Zone, pv.TTL, cutover.FormatWeights(pv.Current))
	}
	if len(pv.Selected) > 0 {
		what := "weighted record sets with members " + pv.From + " and " + pv.To
		if pv.Lever == cutover.LeverALB {
			what = "listeners and rules forwarding to both target groups"
		}
		fmt.Fprintf(b, "selected %d %s:\n", len(pv.Selected), what)
		for _, s := range pv.Selected {
			fmt.Fprintf(b, "  %s\n", s)
		}
	}
	for _, o := range pv.Owners {
		fmt.Fprintf(b, "  %s\n", o)
	}
	for _, r := range pv.Rules {
		fmt.Fprintf(b, "  %s\n", r)
	}
	for _, h := range pv.Health {
		fmt.Fprintf(b, "  %s\n", h)
	}
	for _, wr := range pv.Warnings {
		fmt.Fprintf(b, "warning: %s\n", wr)
	}
	for _, n := range pv.Notes {
		fmt.Fprintf(b, "note: %s\n", n)
	}
}

// writeGates writes one line per gate with its check at the current weights.
func writeGates(b *strings.Builder, pv *cutover.Preview) {
	for _, g := range pv.Gates {
		fmt.Fprintf(b, "gate %s (%s) now: %s: %s\n", g.Gate, g.Kind, gateMark(g), gate.Explain(g.Detail, g.Err))
	}
}

// Preview renders the whole preview: the checks, every rollback path, and every batch as
// it would be sent (`cutover plan --batches`).
func Preview(w io.Writer, pv *cutover.Preview) error {
	var b strings.Builder
	writeHead(&b, pv)
	writeGates(&b, pv)
	for _, rb := range pv.Rollbacks {
		fmt.Fprintf(&b, "%s\n", rb)
	}
	switch {
	case len(pv.Writes) > 0 && pv.Lever == cutover.LeverCloudMap:
		b.WriteString("each call sets one instance's custom health status; a write sends the HEALTHY ones first and, when some instances also go UNHEALTHY, waits until Cloud Map shows the HEALTHY ones in effect before sending those; " +
			"a write interrupted half way is written again by `run --resume` (Cloud Map has no transaction); a run's first write (a resume's too) also sends the statuses already right, " +
			"which cancels any status an interrupted run left on its way\n")
	case len(pv.Writes) > 0 && pv.Lever == cutover.LeverALB:
		b.WriteString("each call replaces the rule's actions with those read, only the forward action's target-group weights changed; " +
			"the calls of a write go in the plan's order after the run journals it, and a write interrupted half way is written again by `run --resume`, " +
			"rules already at its weights skipped (ELBv2 has no transaction over several rules); " +
			"the first write tags each rule with the runner's authority first (add-tags), and `run` makes the " + cutover.PreviewToken + "\n")
	case len(pv.Writes) > 0:
		fmt.Fprintf(&b, "each batch replaces what it changes as read (DELETE, then CREATE: refused, and read again, if it changed meanwhile); "+
			"the authority record names its runner as crossfade/runner=TOKEN@HOST:PID, and `run` makes the %s\n", cutover.PreviewToken)
	}
	for _, wr := range pv.Writes {
		fmt.Fprintf(&b, "%s: ", wr.Name)
		if len(wr.Weights) > 0 {
			fmt.Fprintf(&b, "%s, ", cutover.FormatWeights(wr.Weights))
		}
		if pv.Lever == cutover.LeverALB || pv.Lever == cutover.LeverCloudMap {
			fmt.Fprintf(&b, "%d calls", wr.Changes)
			if wr.Changes == 0 {
				if pv.Lever == cutover.LeverALB {
					b.WriteString(" (every rule is at these weights already: nothing to send)\n")
				} else {
					b.WriteString(" (every instance has its status already: nothing to send)\n")
				}
				continue
			}
			fmt.Fprintf(&b, ", as the AWS CLI takes them:\n%s\n", wr.Batch)
			continue
		}
		fmt.Fprintf(&b, "%d changes", wr.Changes)
		if wr.Changes == 0 {
			b.WriteString(" (nothing to send)\n")
			continue
		}
		fmt.Fprintf(&b, ", as `aws route53 change-resource-record-sets --hosted-zone-id %s --change-batch file://BATCH.json` takes it:\n%s\n", pv.Zone.ID, wr.Batch)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
