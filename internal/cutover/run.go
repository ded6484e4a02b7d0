package cutover

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// prepare reads the zone, checks the plan against it, builds the gates and, on a first
// run, journals the starting weights.
func (r *runner) prepare(ctx context.Context, st state) error {
	l, err := readLive(ctx, r.cfg.DNS, r.cfg.Registry, r.p)
	if err != nil {
		return err
	}
	r.live = l
	if err := checkPacing(r.p, l.maxTTL); err != nil {
		return err
	}
	for _, s := range r.p.Steps {
		var gs []Gate
		for _, g := range s.Gates {
			built, err := r.cfg.NewGate(g)
			if err != nil {
				return fmt.Errorf("gate %s: %w", g.Name, err)
			}
			gs = append(gs, built)
		}
		r.gates = append(r.gates, gs)
	}
	r.start, r.promoted, r.startedAt, r.paused = st.start, st.promoted, st.startedAt, st.paused
	if !st.started {
		r.start = l.weights()
		e, err := r.j.Append(journal.Entry{Kind: kindStart, Step: -1, Weights: r.start, By: r.cfg.By,
			Detail: fmt.Sprintf("zone %s, %d records, from %s to %s, TTL %ds", l.zone, len(r.p.Records), r.p.From, r.p.To, l.maxTTL)})
		if err != nil {
			return err
		}
		r.startedAt = e.Time
	}
	return nil
}

// checkPacing refuses a plan whose pauses are shorter than the records' TTL (safety rule
// 4): a step would end before every resolver could have seen its weights.
func checkPacing(p *spec.Plan, ttl int64) error {
	floor := time.Duration(ttl) * time.Second
	if p.LowerTTL > 0 {
		floor = time.Duration(p.LowerTTL) * time.Second
	}
	var problems []string
	for i, s := range p.Steps {
		if s.Pause > 0 && s.Pause < floor {
			problems = append(problems, fmt.Sprintf("spec.steps[%d].pause %s: shorter than the records' TTL %s; a step never completes sooner than the TTL (lower it with spec.ttl.lower, or pause at least %s)", i, s.Pause, floor, floor))
		}
	}
	if p.Rollback.Pause > 0 && p.Rollback.Pause < floor {
		problems = append(problems, fmt.Sprintf("spec.rollback.pause %s: shorter than the records' TTL %s", p.Rollback.Pause, floor))
	}
	if len(problems) > 0 {
		return &NotReadyError{Problems: problems}
	}
	return nil
}

// ttl is the hold floor: the lowered TTL once lowered, else the records' TTL.
func (r *runner) ttl() time.Duration {
	if r.p.LowerTTL > 0 {
		return time.Duration(r.p.LowerTTL) * time.Second
	}
	return time.Duration(r.live.maxTTL) * time.Second
}

// drive runs the remaining steps, then the rollback if one is due.
func (r *runner) drive(ctx context.Context, st state) error {
	if st.rollingBack {
		if err := r.rollback(ctx, st.rollbackNext, st.reason); err != nil {
			return err
		}
		return fmt.Errorf("rolled back: %s", st.reason)
	}
	if r.p.LowerTTL > 0 && !st.ttlLowered {
		if err := r.lowerTTL(ctx); err != nil {
			return err
		}
	}
	for i := st.next; i < len(r.p.Steps); i++ {
		if r.promoted && i < len(r.p.Steps)-1 {
			continue
		}
		res, err := r.step(ctx, i)
		if err != nil {
			return err
		}
		switch res.outcome {
		case stepAborted:
			if err := r.rollback(ctx, 0, "aborted by "+res.by); err != nil {
				return err
			}
			return ErrAborted
		case stepFailed:
			if _, err := r.j.Append(journal.Entry{Kind: kindStepFailed, Step: i, Detail: res.reason, Data: res.data}); err != nil {
				return err
			}
			if err := r.rollback(ctx, 0, res.reason); err != nil {
				return err
			}
			return &RollbackError{Step: i, Reason: res.reason}
		}
		if _, err := r.j.Append(journal.Entry{Kind: kindStepPassed, Step: i, Weights: r.stepWeights(i), Data: res.data, Detail: res.reason}); err != nil {
			return err
		}
	}
	_, err := r.j.Append(journal.Entry{Kind: kindDone, Step: -1, Detail: outcomeCompleted})
	r.cfg.Progress.Event(Event{Phase: PhaseDone, Message: "cutover completed", Weights: r.stepWeights(len(r.p.Steps) - 1), Total: len(r.p.Steps)})
	return err
}

func (r *runner) stepWeights(i int) map[string]int64 {
	w := r.p.Steps[i].Weights
	return map[string]int64{r.p.From: w.From, r.p.To: w.To}
}

// write journals the intent, sends the weights in one batch, journals the change and
// waits for INSYNC.
func (r *runner) write(ctx context.Context, step int, w map[string]int64, what string) error {
	if _, err := r.j.Append(journal.Entry{Kind: kindIntent, Step: step, Weights: w, Detail: what}); err != nil {
		return err
	}
	// Read the members afresh: a publisher may have changed their targets since.
	l, err := readLive(ctx, r.cfg.DNS, r.cfg.Registry, r.p)
	if err != nil {
		return err
	}
	r.live = l
	batch := l.weightBatch(w)
	r.cfg.Progress.Event(Event{Phase: PhaseWriting, Step: step, Total: len(r.p.Steps), Weights: w, Message: what})
	id, err := r.cfg.DNS.ApplyChange(ctx, l.zone, batch, fmt.Sprintf("crossfade cutover %s: %s", r.p.Name, what))
	if err != nil {
		return fmt.Errorf("%s: write %s: %w", what, formatWeights(w), err)
	}
	sent := time.Now()
	if _, err := r.j.Append(journal.Entry{Kind: kindWritten, Step: step, Weights: w, ChangeID: id, Detail: fmt.Sprintf("%d changes", len(batch))}); err != nil {
		return err
	}
	r.log.Info("weights written", "zone", l.zone.Name, "step", step+1, "weights", formatWeights(w), "change_id", id, "changes", len(batch))
	if id != "" {
		if err := r.waitInSync(ctx, id); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	_, err = r.j.Append(journal.Entry{Kind: kindInSync, Step: step, ChangeID: id, Detail: time.Since(sent).Round(time.Millisecond).String()})
	return err
}

func (r *runner) waitInSync(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, r.p.InSyncTimeout)
	defer cancel()
	for {
		ok, err := r.cfg.DNS.InSync(ctx, id)
		if err == nil && ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("change %s not INSYNC after %s (last error: %v)", id, r.p.InSyncTimeout, err)
		case <-time.After(r.cfg.PollInterval):
		}
	}
}

type stepOutcome int

const (
	stepPassed stepOutcome = iota
	stepFailed
	stepAborted
)

type stepResult struct {
	outcome stepOutcome
	reason  string
	by      string
	data    json.RawMessage
}

// step writes step i's weights and holds them for max(pause, TTL) with every gate passing
// at every check. A failing gate fails the step at once.
func (r *runner) step(ctx context.Context, i int) (stepResult, error) {
	w := r.stepWeights(i)
	what := fmt.Sprintf("step %d of %d", i+1, len(r.p.Steps))
	if err := r.write(ctx, i, w, what); err != nil {
		return stepResult{}, err
	}
	hold := max(r.p.Steps[i].Pause, r.ttl())
	if r.promoted {
		hold = r.ttl()
	}
	gs := r.gates[i]
	gstep := r.gateStep(i, w)
	var last []gate.Result
	deadline := time.Now().Add(hold + r.p.StepTimeout)
	began := time.Now()
	if r.paused {
		// Paused before a crash: stay paused until told otherwise.
		r.paused = false
		if err := r.waitResume(ctx, i, w); err != nil {
			return stepResult{}, err
		}
		if r.aborted {
			return stepResult{outcome: stepAborted, by: r.abortedBy}, nil
		}
		began = time.Now()
		deadline = began.Add(hold + r.p.StepTimeout)
	}
	for {
		if c := r.control(); c != nil {
			switch c.Command {
			case CommandAbort:
				return stepResult{outcome: stepAborted, by: c.By}, nil
			case CommandPromote:
				r.promoted = true
				hold = r.ttl()
			case CommandPause:
				if err := r.waitResume(ctx, i, w); err != nil {
					return stepResult{}, err
				}
				if r.aborted {
					return stepResult{outcome: stepAborted, by: r.abortedBy}, nil
				}
				if r.promoted {
					hold = r.ttl()
				}
				// Gates must pass for a whole pause; a paused hold starts again.
				began = time.Now()
				deadline = began.Add(hold + r.p.StepTimeout)
			}
		}
		last = last[:0]
		for _, g := range gs {
			res := g.Check(ctx, gstep)
			if ctx.Err() != nil {
				// Interrupted (Ctrl-C, SIGTERM): not a gate verdict. Journal nothing, so
				// that run --resume continues the step rather than rolling back.
				return stepResult{}, ctx.Err()
			}
			last = append(last, res)
			if !res.Pass {
				data, _ := json.Marshal(last)
				return stepResult{outcome: stepFailed, reason: fmt.Sprintf("gate %s: %s%s", res.Gate, res.Detail, errSuffix(res.Err)), data: data}, nil
			}
		}
		held := time.Since(began)
		r.cfg.Progress.Event(Event{Phase: PhaseHolding, Step: i, Total: len(r.p.Steps), Weights: w, Gates: last, Left: max(hold-held, 0)})
		if held >= hold {
			data, _ := json.Marshal(last)
			return stepResult{outcome: stepPassed, data: data}, nil
		}
		if time.Now().After(deadline) {
			return stepResult{outcome: stepFailed, reason: fmt.Sprintf("step over its time limit %s", hold+r.p.StepTimeout)}, nil
		}
		if r.p.TotalTimeout > 0 && time.Since(r.startedAt) > r.p.TotalTimeout {
			return stepResult{outcome: stepFailed, reason: fmt.Sprintf("the cutover is over its total time limit %s", r.p.TotalTimeout)}, nil
		}
		select {
		case <-ctx.Done():
			return stepResult{}, ctx.Err()
		case <-time.After(min(r.cfg.CheckInterval, max(hold-held, time.Millisecond))):
		}
	}
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return " (" + e + ")"
}

// gateStep describes step i to the gates: weights written and each record's members.
func (r *runner) gateStep(i int, w map[string]int64) gate.Step {
	s := gate.Step{Index: i, From: r.p.From, To: r.p.To, Weights: w}
	targets := r.live.targets()
	for _, rec := range r.p.Records {
		s.Records = append(s.Records, gate.Record{Name: rec.Name, Type: rec.Type, Members: targets[rec]})
	}
	return s
}

// rollback returns to the starting weights: at once, or through the gradual stops, each
// held for max(pause, TTL) without gates. It starts at stop from (after a crash).
func (r *runner) rollback(ctx context.Context, from int, reason string) error {
	if from == 0 {
		if _, err := r.j.Append(journal.Entry{Kind: kindRollback, Step: -1, Detail: reason}); err != nil {
			return err
		}
	}
	r.log.Warn("rolling back", "reason", reason)
	stops := []map[string]int64{}
	if r.p.Rollback.Mode == spec.RollbackGradual {
		// Only stops between where the cutover is and where it started: a gradual
		// rollback must never move traffic towards the cluster it is leaving.
		cur := share(r.live.weights(), r.p.From, r.p.To)
		home := share(r.start, r.p.From, r.p.To)
		for _, w := range r.p.Rollback.Steps {
			s := share(map[string]int64{r.p.From: w.From, r.p.To: w.To}, r.p.From, r.p.To)
			if (s < cur && s > home) || (s > cur && s < home) {
				stops = append(stops, map[string]int64{r.p.From: w.From, r.p.To: w.To})
			}
		}
	}
	stops = append(stops, r.start)
	for k := from; k < len(stops); k++ {
		what := fmt.Sprintf("rollback %d of %d", k+1, len(stops))
		if err := r.write(ctx, -2-k, stops[k], what); err != nil {
			return err
		}
		hold := max(r.p.Rollback.Pause, r.ttl())
		r.cfg.Progress.Event(Event{Phase: PhaseRollingBack, Step: k, Total: len(stops), Weights: stops[k], Left: hold, Message: reason})
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(hold):
		}
		if _, err := r.j.Append(journal.Entry{Kind: kindRollbackHeld, Step: k, Weights: stops[k]}); err != nil {
			return err
		}
	}
	_, err := r.j.Append(journal.Entry{Kind: kindDone, Step: -1, Detail: outcomeRolledBack})
	r.cfg.Progress.Event(Event{Phase: PhaseDone, Message: "rolled back: " + reason, Weights: r.start})
	return err
}

// lowerTTL sets the members' TTL to the plan's lower value and waits out the old TTL, so
// that every resolver holds the short TTL before the first weight change.
func (r *runner) lowerTTL(ctx context.Context) error {
	old := time.Duration(r.live.maxTTL) * time.Second
	if r.live.maxTTL > r.p.LowerTTL {
		id, err := r.cfg.DNS.ApplyChange(ctx, r.live.zone, r.live.ttlBatch(r.p.LowerTTL), fmt.Sprintf("crossfade cutover %s: lower TTL", r.p.Name))
		if err != nil {
			return fmt.Errorf("lower TTL to %ds: %w", r.p.LowerTTL, err)
		}
		if err := r.waitInSync(ctx, id); err != nil {
			return err
		}
		r.cfg.Progress.Event(Event{Phase: PhaseLoweringTTL, Left: old, Message: fmt.Sprintf("TTL lowered to %ds; waiting out the old %s", r.p.LowerTTL, old)})
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(old):
		}
	}
	_, err := r.j.Append(journal.Entry{Kind: kindTTLLowered, Step: -1, Detail: fmt.Sprintf("%ds (was %s)", r.p.LowerTTL, old)})
	return err
}

// share is the fraction of traffic weights send to `to` (an even split when both are 0,
// as Route 53 answers).
func share(w map[string]int64, from, to string) float64 {
	if w[from]+w[to] == 0 {
		return 0.5
	}
	return float64(w[to]) / float64(w[from]+w[to])
}
