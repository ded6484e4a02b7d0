package cutover

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// Preview is what `cutover plan` shows: the plan checked against the live zone (or
// listener rules), every batch (or call) each step and the rollback would send, and one
// check of every gate.
type Preview struct {
	// Cutover is the plan's name; From and To its clusters (set identifiers).
	Cutover, From, To string
	// Lever is the lever the plan pulls: "" or LeverRoute53 (Zone, Owners), or LeverALB
	// (Rules, Health).
	Lever string
	Zone  provider.Zone
	// TTL is the members' largest TTL in seconds: the floor of every hold (0 for the ALB).
	TTL     int64
	Current map[string]int64
	// Owners maps "name type [set-id]" to its owner.
	Owners []string
	// Rules are the ALB lever's listener rules, one line each with its weights now;
	// Health is each of their target groups' target health.
	Rules, Health []string
	// Selected are, for a plan that selects what it moves (spec.select,
	// spec.alb.select), the records or rules it selects now, one each.
	Selected []string
	// Notes are what the lever wants known that is no warning (e.g. Terraform's
	// ignore_changes for a rule it manages).
	Notes  []string
	Writes []PreviewWrite
	// Gates are one check of each distinct gate at the current weights; a gate whose
	// check could not run (Err) makes the preview fail.
	Gates []gate.Result
	// Warnings come from the plan file.
	Warnings []string
	// Rollbacks say, per step, the stops a rollback from it goes through.
	Rollbacks []string
	// Steps are the plan's steps as a run takes them.
	Steps []PreviewStep
	// LowerTTL is the TTL written before step 1, 0 when the TTL is left as it is.
	LowerTTL int64
	// RollbackMode is the plan's (immediate or gradual); RollbackHold how long a run holds
	// each of its stops.
	RollbackMode string
	RollbackHold time.Duration
}

// PreviewStep is one step of the plan as a run takes it.
type PreviewStep struct {
	Weights map[string]int64
	// Hold is how long the step holds with its gates passing: its pause, never shorter
	// than the records' TTL (the lowered one, if the plan lowers it).
	Hold  time.Duration
	Gates []string
	// Rollback is the stops a rollback from this step goes through, the start last.
	Rollback []map[string]int64
}

// PreviewWrite is one batch as it would be sent.
type PreviewWrite struct {
	Name    string
	Weights map[string]int64
	// Batch is the provider's request document (for Route 53, --change-batch JSON; for
	// the ALB, one `aws elbv2 modify-rule` or `modify-listener` command per line).
	Batch []byte
	// Changes counts the changes in the batch: a set rewritten is a DELETE of it as read
	// and a CREATE (a compare-and-swap), the authority record's first write a CREATE. For
	// the ALB it counts the calls: one per rule whose weights change.
	Changes int
}

// describeLever adds the lever's description of l to pv: where it writes, what it moves, and
// its notes and warnings after the plan's.
func describeLever(ctx context.Context, lv Lever, l Snapshot, pv *Preview) error {
	var d lever.Description
	if err := lv.Describe(ctx, l, &d); err != nil {
		return err
	}
	if d.Lever != "" {
		pv.Lever = d.Lever
	}
	if d.Zone != (provider.Zone{}) {
		pv.Zone, pv.TTL = d.Zone, d.TTL
	}
	pv.Owners = append(pv.Owners, d.Owners...)
	pv.Rules = append(pv.Rules, d.Rules...)
	pv.Health = append(pv.Health, d.Health...)
	pv.Notes = append(pv.Notes, d.Notes...)
	pv.Warnings = append(pv.Warnings, d.Warnings...)
	return nil
}

// PreviewToken stands, in the batches `cutover plan` renders, for the runner token that
// `run` makes when it starts; the rest of the authority record is as `run` writes it.
const PreviewToken = "TOKEN"

// previewRunner is the runner the preview renders the authority records with: this host,
// and no pid (the run's own process writes them).
func previewRunner() registry.Runner {
	host, _ := os.Hostname()
	return registry.Runner{Token: PreviewToken, Host: host}
}

// DryRun is `cutover plan`: it checks cfg.Plan against the live zone and renders every
// write without sending it, each against the zone as the writes before it leave it: the
// TTL lowering, every step, the TTL restore, and the rollback from the last step (the
// longest); the rollback path from every other step is listed. It returns a *NotReadyError when the zone or the
// plan's pacing would refuse a run.
func DryRun(ctx context.Context, cfg Config) (*Preview, error) {
	// A copy: a selecting plan's records or rules are filled in with what it selects.
	p := clonePlan(cfg.Plan)
	cfg.Plan = p
	lv, clients, err := newLever(cfg)
	if err != nil {
		return nil, err
	}
	var selected []string
	if selects(p) {
		s, err := selectNow(ctx, lv, p)
		if err != nil {
			return nil, err
		}
		selected = s.Lines()
	}
	l, err := lv.Read(ctx, ReadOptions{Runner: previewRunner()})
	if err != nil {
		return nil, err
	}
	if err := checkPacing(p, l.TTL(), l.AliasTTL()); err != nil {
		return nil, err
	}
	if problems := lv.StartProblems(l); len(problems) > 0 {
		return nil, &NotReadyError{Problems: problems, Lever: lv.Kind()}
	}
	pv := &Preview{Cutover: p.Name, From: p.From, To: p.To, TTL: l.TTL(), Current: l.Weights(), RollbackMode: p.Rollback.Mode}
	for _, w := range p.Warnings {
		pv.Warnings = append(pv.Warnings, w.Error())
	}
	pv.Warnings = append(pv.Warnings, gatelessWarnings(p)...)
	if selects(p) {
		pv.Selected = selected
		pv.Notes = append(pv.Notes, "the selection is made again when the cutover starts, and then kept in its journal: "+
			"a record or rule added after the start is not moved by it, not even on a resume")
	}
	if err := describeLever(ctx, lv, l, pv); err != nil {
		return nil, err
	}
	// add renders the write that takes cur to w and ttls, and returns the lever after it.
	add := func(cur Snapshot, name string, w map[string]int64, ttls map[spec.Record]int64) (Snapshot, error) {
		rd, err := lv.DryRun(ctx, cur, Change{Weights: w, TTLs: ttls})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		pv.Writes = append(pv.Writes, PreviewWrite{Name: name, Weights: w, Batch: rd.Doc, Changes: rd.Calls})
		return rd.After, nil
	}
	lowers := lever.LowerTTLs(l.RecordTTLs(), p.LowerTTL)
	cur := l
	lowered := p.LowerTTL > 0 && l.TTL() > p.LowerTTL
	// A hold is never shorter than the TTL resolvers hold the weights for: the one the
	// steps are written with.
	floor := time.Duration(l.TTL()) * time.Second
	if lowered {
		pv.LowerTTL = p.LowerTTL
		floor = time.Duration(p.LowerTTL) * time.Second
	}
	pv.RollbackHold = max(p.Rollback.Pause, floor)
	if lowered {
		if cur, err = add(cur, fmt.Sprintf("lower TTL to %ds, then wait out the old %ds", p.LowerTTL, l.TTL()), nil, lowers); err != nil {
			return nil, err
		}
	}
	restore := func(cur Snapshot, when string) error {
		if lowered {
			_, err := add(cur, fmt.Sprintf("restore TTL to %ds %s", l.TTL(), when), nil, l.RecordTTLs())
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
		pv.Rollbacks = append(pv.Rollbacks, fmt.Sprintf("if step %d of %d fails: rollback through %s", i+1, len(p.Steps), FormatPath(stops)))
		ps := PreviewStep{Weights: w, Hold: max(s.Pause, floor), Rollback: stops}
		for _, g := range s.Gates {
			ps.Gates = append(ps.Gates, g.Name)
		}
		pv.Steps = append(pv.Steps, ps)
	}
	if err := restore(cur, "once completed"); err != nil {
		return nil, err
	}
	stops := rollbackStops(p, cur.Weights(), pv.Current)
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
		newGate = func(g spec.Gate) (Gate, error) { return NewGate(g, clients) }
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
				return nil, &NotReadyError{Problems: []string{gateError(g.Name, err).Error()}, Lever: lv.Kind(), Unmeasured: true}
			}
			in := l.GateInput(nil)
			s := gate.Step{Index: -1, From: p.From, To: p.To, Weights: pv.Current, TargetGroups: in.TargetGroups}
			for _, rec := range p.Records {
				s.Records = append(s.Records, gate.Record{Name: rec.Name, Type: rec.Type, Members: in.Targets[rec]})
			}
			res := built.Check(ctx, s)
			pv.Gates = append(pv.Gates, res)
			if res.Err != "" {
				unreachable = append(unreachable, fmt.Sprintf("gate %s: cannot check: %s", g.Name, res.Err))
			}
		}
	}
	if rt := p.Retire; rt != nil {
		res, err := newResidual(*rt, p, clients.CloudWatch, l)
		if err == nil {
			_, _, err = res.Rate(ctx)
		}
		if err != nil {
			unreachable = append(unreachable, fmt.Sprintf("spec.retire: cannot read the request rate: %v", err))
		}
	}
	if len(unreachable) > 0 {
		return pv, &NotReadyError{Problems: unreachable, Lever: lv.Kind(), Unmeasured: true}
	}
	return pv, nil
}

// FormatPath renders rollback stops: "blue=50 green=50 → blue=100 green=0".
func FormatPath(stops []map[string]int64) string {
	var path []string
	for _, st := range stops {
		path = append(path, FormatWeights(st))
	}
	return strings.Join(path, " → ")
}

// FailingGatesError says gates fail at the current weights. Step 1 checks them too, so a
// run would most likely fail it and roll back at once.
type FailingGatesError struct {
	Weights map[string]int64
	Gates   []gate.Result
}

// Error names each failing gate and what it measured.
func (e *FailingGatesError) Error() string {
	var parts []string
	for _, g := range e.Gates {
		parts = append(parts, fmt.Sprintf("gate %s (%s) fails at the current weights %s: %s", g.Gate, g.Kind, FormatWeights(e.Weights), g.Detail))
	}
	return strings.Join(parts, "; ") + "; a run checks it from step 1 on and would fail that step and roll back: " +
		"fix what it measures, or plan with --allow-failing-gates to accept that knowingly"
}

// FailingGates returns a *FailingGatesError naming the gates whose check now failed (a
// check that could not run at all already failed the preview), nil when all passed.
func (pv *Preview) FailingGates() error {
	var failing []gate.Result
	for _, g := range pv.Gates {
		if !g.Pass && g.Err == "" {
			failing = append(failing, g)
		}
	}
	if len(failing) == 0 {
		return nil
	}
	return &FailingGatesError{Weights: pv.Current, Gates: failing}
}

// gatelessWarnings warns of each step with no gates: nothing measures it, so it passes
// once its pause is over, whatever the clusters do. `plan` and `run` say so.
func gatelessWarnings(p *spec.Plan) []string {
	var out []string
	for i, s := range p.Steps {
		if len(s.Gates) == 0 {
			out = append(out, fmt.Sprintf("step %d has no gates: it passes on its pause alone", i+1))
		}
	}
	return out
}
