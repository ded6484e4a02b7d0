package render

import (
	"bytes"
	"fmt"
	"io"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// Released says on w what release did for plan p: the runners it took the weights over
// from, the records (or tags) it removed, and what it released with --force that the
// publishers will change.
func Released(w io.Writer, p *spec.Plan, rel cutover.Released) error {
	// Built whole, then written once: one error to check, and no half message.
	var b bytes.Buffer
	for _, r := range rel.TakenOver {
		fmt.Fprintf(&b, "cutover %s: took the weights over from runner %s (another runner's record, deleted with --force); that runner, if still running, stops at its next write\n", p.Name, r)
	}
	switch {
	case p.ALB != nil:
		fmt.Fprintf(&b, "cutover %s: authority tags removed from %d listener rules; their weights are anyone's to change again\n", p.Name, rel.Records)
	case p.CloudMap != nil:
		fmt.Fprintf(&b, "cutover %s: authority tags removed from %d Cloud Map services; their instances' health is anyone's to change again\n", p.Name, rel.Records)
	default:
		fmt.Fprintf(&b, "cutover %s: %d authority records deleted; publishers own the weights again\n", p.Name, rel.Records)
	}
	for _, c := range rel.Changes {
		fmt.Fprintf(&b, "cutover %s: released with --force although its source asks for another weight: %s\n", p.Name, c.Effect())
	}
	for _, d := range rel.Gone {
		fmt.Fprintf(&b, "cutover %s: released with --force although no source asks for it any more: %s\n", p.Name, d.Effect())
	}
	for _, u := range rel.Unconfirmed {
		fmt.Fprintf(&b, "cutover %s: released with --force without its publisher's confirmation: %s; it writes whatever its source asks for at its next sync\n", p.Name, u)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("cutover %s: write the release summary: %w", p.Name, err)
	}
	return nil
}
