package cutover

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// Preview is what `cutover plan` shows: the plan checked against the live zone, every
// batch each step and the rollback would send, and one check of every gate.
type Preview struct {
	Zone provider.Zone
	// TTL is the members' largest TTL in seconds: the floor of every hold.
	TTL     int64
	Current map[string]int64
	// Owners maps "name type [set-id]" to its owner.
	Owners []string
	Writes []PreviewWrite
	// Gates are one check of each distinct gate at the current weights; a gate whose
	// check could not run (Err) makes the preview fail.
	Gates []gate.Result
	// Warnings come from the plan file.
	Warnings []string
	// Rollbacks say, per step, the stops a rollback from it goes through.
	Rollbacks []string
}

// PreviewWrite is one batch as it would be sent.
type PreviewWrite struct {
	Name    string
	Weights map[string]int64
	// Batch is the provider's request document (for Route 53, --change-batch JSON).
	Batch []byte
	// Changes counts the changes in the batch: a set rewritten is a DELETE of it as read
	// and a CREATE (a compare-and-swap), the authority record's first write a CREATE.
	Changes int
}

// previewToken stands, in the batches `cutover plan` renders, for the runner token that
// `run` makes when it starts; the rest of the authority record is as `run` writes it.
const previewToken = "TOKEN"

// previewRunner is the runner the preview renders the authority records with: this host,
// and no pid (the run's own process writes them).
func previewRunner() registry.Runner {
	host, _ := os.Hostname()
	return registry.Runner{Token: previewToken, Host: host}
}

// Plan checks cfg.Plan against the live zone and renders every write without sending it,
// each against the zone as the writes before it leave it: the TTL lowering, every step,
// the TTL restore, and the rollback from the last step (the longest); the rollback path
// from every other step is listed. It returns a *NotReadyError when the zone or the
// plan's pacing would refuse a run.
func Plan(ctx context.Context, cfg Config) (*Preview, error) {
	p := cfg.Plan
	l, err := readLive(ctx, cfg.DNS, cfg.Registry, p, readOpts{runner: previewRunner()})
	if err != nil {
		return nil, err
	}
	if err := checkPacing(p, l.maxTTL); err != nil {
		return nil, err
	}
	problems := l.differingWeights()
	if p.LowerTTL > 0 {
		problems = append(problems, l.untouchable(lowerTTLs(l.groupTTL, p.LowerTTL))...)
	}
	if len(problems) > 0 {
		return nil, &NotReadyError{Problems: problems}
	}
	pv := &Preview{Zone: l.zone, TTL: l.maxTTL, Current: l.weights()}
	for _, w := range p.Warnings {
		pv.Warnings = append(pv.Warnings, w.Error())
	}
	for _, m := range l.members {
		pv.Owners = append(pv.Owners, fmt.Sprintf("%s owned by %s (%s)", m.ep.Key(), m.ep.Owner(), m.ep.Resource()))
	}
	lowers := lowerTTLs(l.groupTTL, p.LowerTTL)
	for _, o := range l.others {
		if _, ok := lowers[o.record]; ok && p.LowerTTL > 0 && !o.ep.IsAlias() {
			pv.Owners = append(pv.Owners, fmt.Sprintf("%s owned by %s (%s): its weight stays, its TTL moves with its group's (Route 53 gives a name and type's weighted sets one TTL)",
				o.ep.Key(), o.ep.Owner(), o.ep.Resource()))
		}
	}
	// add renders the batch that takes cur to w and ttls, and returns the zone after it.
	add := func(cur *live, name string, w map[string]int64, ttls map[spec.Record]int64) (*live, error) {
		b := cur.batch(w, ttls)
		doc, err := cfg.DNS.DryRun(ctx, cur.zone, b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		pv.Writes = append(pv.Writes, PreviewWrite{Name: name, Weights: w, Batch: doc, Changes: len(b)})
		return cur.after(b), nil
	}
	cur := l
	lowered := p.LowerTTL > 0 && l.maxTTL > p.LowerTTL
	if lowered {
		if cur, err = add(cur, fmt.Sprintf("lower TTL to %ds, then wait out the old %ds", p.LowerTTL, l.maxTTL), nil, lowers); err != nil {
			return nil, err
		}
	}
	restore := func(cur *live, when string) error {
		if lowered {
			_, err := add(cur, fmt.Sprintf("restore TTL to %ds %s", l.maxTTL, when), nil, l.groupTTL)
			return err
		}
		return nil
	}
	for i, s := range p.Steps {
		w := map[string]int64{p.From: s.Weights.From, p.To: s.Weights.To}
		if cur, err = add(cur, fmt.Sprintf("step %d of %d", i+1, len(p.Steps)), w, nil); err != nil {
			return nil, err
		}
		stops := rollbackStops(p, w, pv.Current)
		var path []string
		for _, st := range stops {
			path = append(path, FormatWeights(st))
		}
		pv.Rollbacks = append(pv.Rollbacks, fmt.Sprintf("if step %d of %d fails: rollback through %s", i+1, len(p.Steps), strings.Join(path, " → ")))
	}
	if err := restore(cur, "once completed"); err != nil {
		return nil, err
	}
	stops := rollbackStops(p, cur.weights(), pv.Current)
	for k, st := range stops {
		if cur, err = add(cur, fmt.Sprintf("rollback %d of %d (from the last step)", k+1, len(stops)), st, nil); err != nil {
			return nil, err
		}
	}
	if err := restore(cur, "once rolled back"); err != nil {
		return nil, err
	}
	newGate := cfg.NewGate
	if newGate == nil {
		newGate = func(g spec.Gate) (Gate, error) { return NewGate(g, cfg.DNSServers) }
	}
	seen := map[string]bool{}
	var unreachable []string
	for _, s := range p.Steps {
		for _, g := range s.Gates {
			if seen[g.Name] {
				continue
			}
			seen[g.Name] = true
			built, err := newGate(g)
			if err != nil {
				return nil, &NotReadyError{Problems: []string{fmt.Sprintf("gate %s: %v", g.Name, err)}}
			}
			s := gate.Step{Index: -1, From: p.From, To: p.To, Weights: pv.Current}
			for _, rec := range p.Records {
				s.Records = append(s.Records, gate.Record{Name: rec.Name, Type: rec.Type, Members: l.targets()[rec]})
			}
			res := built.Check(ctx, s)
			pv.Gates = append(pv.Gates, res)
			if res.Err != "" {
				unreachable = append(unreachable, fmt.Sprintf("gate %s: cannot check: %s", g.Name, res.Err))
			}
		}
	}
	if rt := p.Retire; rt != nil {
		res, err := gate.NewResidual(*rt)
		if err == nil {
			_, _, err = res.Rate(ctx)
		}
		if err != nil {
			unreachable = append(unreachable, fmt.Sprintf("spec.retire: cannot read the request rate: %v", err))
		}
	}
	if len(unreachable) > 0 {
		return pv, &NotReadyError{Problems: unreachable}
	}
	return pv, nil
}

// WriteText renders the preview.
func (pv *Preview) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "zone %s, TTL %ds, current weights %s\n", pv.Zone, pv.TTL, FormatWeights(pv.Current))
	for _, o := range pv.Owners {
		fmt.Fprintf(&b, "  %s\n", o)
	}
	for _, wr := range pv.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wr)
	}
	for _, g := range pv.Gates {
		mark := "pass"
		if !g.Pass {
			mark = "fail"
		}
		fmt.Fprintf(&b, "gate %s (%s) now: %s: %s%s\n", g.Gate, g.Kind, mark, g.Detail, errSuffix(g.Err))
	}
	for _, rb := range pv.Rollbacks {
		fmt.Fprintf(&b, "%s\n", rb)
	}
	if len(pv.Writes) > 0 {
		fmt.Fprintf(&b, "each batch replaces what it changes as read (DELETE, then CREATE: refused, and read again, if it changed meanwhile); "+
			"the authority record names its runner as crossfade/runner=TOKEN@HOST:PID, and `run` makes the %s\n", previewToken)
	}
	for _, wr := range pv.Writes {
		fmt.Fprintf(&b, "%s: ", wr.Name)
		if len(wr.Weights) > 0 {
			fmt.Fprintf(&b, "%s, ", FormatWeights(wr.Weights))
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
