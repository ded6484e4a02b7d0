package cutover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// restore sets the runner to where the journal left the cutover.
func (r *runner) restore(st state) {
	r.start, r.startTTL, r.startTTLs, r.startedAt = st.start, st.startTTL, st.startTTLs, st.startedAt
	r.promoted, r.paused, r.pausedAt, r.pausedFor, r.pauseWhy = st.promoted, st.paused, st.pausedAt, st.pausedFor, st.pauseWhy
	r.skipGates, r.skipGatesBy = st.skipGates, st.skipGatesBy
	r.seen, r.ttlTouched = st.seen, st.ttlTouched
}

// prepare reads the lever and checks the plan against it; unless rolling back (which only
// returns to the starting weights and does what it can), it checks pacing, builds the
// gates and, on a first run, journals the starting weights and TTL.
func (r *runner) prepare(ctx context.Context, st state, rollingBack bool) error {
	r.rollingBack = rollingBack
	l, err := r.lever.Read(ctx, r.readOpts())
	var gone *MemberGoneError
	if errors.As(err, &gone) && st.started && !rollingBack {
		// A member gone when a started cutover resumes is acted on as a running one acts
		// on it (spec.onDrift: pause or roll back), at the first write or check, which
		// reads it gone again: what is left is read to get there.
		r.log.Warn("a member of the cutover is gone; acting on it as spec.onDrift says at the first write or check", "err", gone)
		o := r.readOpts()
		o.Partial = true
		l, err = r.lever.Read(ctx, o)
	}
	if err != nil {
		return err
	}
	r.live = l
	for _, s := range l.Skipped() {
		r.log.Warn("rollback leaves a member out", l.LogAttr(), "problem", s)
	}
	if rollingBack {
		return nil
	}
	if err := checkPacing(r.p, l.TTL(), l.AliasTTL()); err != nil {
		return err
	}
	// Drift is measured against the weights found now until this run writes its own: on
	// a resume, the step it continues writes them again anyway.
	r.expect, r.expected = memberWeights(l), "the cutover resumed at"
	if !st.started {
		r.expected = "the cutover started from"
	}
	if st.started && st.lastSent != nil {
		r.resumeLanded = r.mayHaveLanded(ctx, l, Change{Weights: st.lastSent}, nil)
	}
	for _, s := range r.p.Steps {
		var gs []Gate
		for _, g := range s.Gates {
			built, err := r.cfg.NewGate(g)
			if err != nil {
				return gateError(g.Name, err)
			}
			gs = append(gs, built)
		}
		r.gates = append(r.gates, gs)
	}
	for _, w := range gatelessWarnings(r.p) {
		r.log.Warn(w)
	}
	if st.started {
		return nil
	}
	if problems := r.lever.StartProblems(l); len(problems) > 0 {
		return &NotReadyError{Problems: problems, Lever: r.lever.Kind()}
	}
	r.start, r.startTTL, r.startTTLs = l.Weights(), l.TTL(), maps.Clone(l.RecordTTLs())
	e, err := r.append(journal.Entry{Kind: kindStart, Step: stepNone, Weights: r.start, TTL: l.TTL(), PlanHash: planHash(r.p),
		Token: r.id.Token, Data: withSelection(l.StartData(), r.selected),
		Detail: fmt.Sprintf("%s, runner %s", r.lever.Summary(l), r.id)})
	if err != nil {
		return err
	}
	r.startedAt = e.Time
	return nil
}

// checkPacing refuses a plan whose pauses are shorter than the records' TTL (safety rule
// 4): a step would end before every resolver could have seen its weights. aliasTTL is the
// alias targets' TTL, which no lowering changes: the floor even with spec.ttl.lower.
func checkPacing(p *spec.Plan, ttl, aliasTTL int64) error {
	floor := time.Duration(ttl) * time.Second
	if p.LowerTTL > 0 {
		floor = time.Duration(max(p.LowerTTL, aliasTTL)) * time.Second
	}
	from := spec.PauseFloor{AliasTTL: time.Duration(aliasTTL) * time.Second}
	// One problem per field the user wrote (spec.pause, or a step's own pause), naming the
	// steps that take it.
	var problems, fields []string
	steps := map[string][]int{}
	pauses := map[string]time.Duration{}
	for i, s := range p.Steps {
		if s.Pause > 0 && s.Pause < floor {
			f := s.PauseField
			if f == "" {
				f = fmt.Sprintf("spec.steps[%d].pause", i)
			}
			if _, ok := steps[f]; !ok {
				fields = append(fields, f)
			}
			steps[f], pauses[f] = append(steps[f], i+1), s.Pause
		}
	}
	for _, f := range fields {
		var which []int
		if f == "spec.pause" && len(steps[f]) < len(p.Steps) {
			which = steps[f]
		}
		problems = append(problems, spec.PauseTooShort(f, pauses[f], floor, p.LowerTTL > 0, which, from))
	}
	if p.Rollback.Pause > 0 && p.Rollback.Pause < floor {
		problems = append(problems, spec.PauseTooShort("spec.rollback.pause", p.Rollback.Pause, floor, p.LowerTTL > 0, nil, from))
	}
	if len(problems) > 0 {
		return &NotReadyError{Problems: problems}
	}
	return nil
}

// ttl is the hold floor: the members' TTL as last read (the lowered one once lowered); 0
// for a lever whose weights apply to the next request.
func (r *runner) ttl() time.Duration {
	t := r.live.TTL()
	if t == 0 {
		t = r.startTTL // a partial read found no member
	}
	return time.Duration(t) * time.Second
}

// elapsed is the time the cutover has run, less the time it spent paused.
func (r *runner) elapsed() time.Duration {
	return time.Since(r.startedAt) - r.pausedFor
}

// drive takes the cutover from where the journal left it to its end: the remaining steps,
// then the rollback if one is or becomes due.
func (r *runner) drive(ctx context.Context, st state) error {
	r.restore(st)
	due := st.rollback
	if err := r.fixSelection(ctx, st); err != nil {
		return err
	}
	if err := r.prepare(ctx, st, due != nil); err != nil {
		return err
	}
	// Commands waiting now are taken once the start entry is written: any left from an
	// earlier run are discarded, journaled.
	if err := r.poll(); err != nil {
		return err
	}
	if due == nil {
		var err error
		if due, err = r.forward(ctx, st); err != nil || due == nil {
			return err
		}
		r.rollingBack = true
	}
	if err := r.rollback(ctx, due); err != nil {
		return err
	}
	return due.err()
}

// forward runs the steps from st.next on, and completes the cutover; it returns the
// rollback that became due instead, if one did.
func (r *runner) forward(ctx context.Context, st state) (*rollbackDue, error) {
	for r.p.LowerTTL > 0 && !st.ttlLowered {
		err := r.lowerTTL(ctx)
		if errors.Is(err, errAbortedWriting) {
			return abortDue(st.next, r.abortedBy), nil
		}
		d := asDrift(err)
		if d == nil {
			if err != nil {
				return nil, err
			}
			break
		}
		// A member gone before the first step (the TTL write reads it gone) is acted on
		// as at a step: the run pauses, or rolls back, never stops with the TTL lowered.
		res, again, err := r.onDrift(ctx, st.next, r.live.Weights(), d)
		switch {
		case err != nil:
			return nil, err
		case res.outcome == stepAborted:
			return abortDue(st.next, r.abortedBy), nil
		case !again:
			return &rollbackDue{step: st.next, reason: res.reason}, nil
		}
	}
	last := len(r.p.Steps) - 1
	for i := st.next; i <= last; i++ {
		// Commands sent between steps act before the next write: a pause holds the
		// weights where they are, an abort writes nothing more forward.
		if due, err := r.heed(ctx, i, r.live.Weights()); due != nil || err != nil {
			return due, err
		}
		if r.promoted && i < last {
			continue
		}
		res, err := r.step(ctx, i)
		if err != nil {
			return nil, err
		}
		switch res.outcome {
		case stepAborted:
			return abortDue(i, r.abortedBy), nil
		case stepFailed:
			if _, err := r.append(journal.Entry{Kind: kindStepFailed, Step: i, Weights: r.stepWeights(i), Detail: res.reason, Data: res.data}); err != nil {
				return nil, err
			}
			return &rollbackDue{step: i, reason: res.reason}, nil
		}
		if _, err := r.append(journal.Entry{Kind: kindStepPassed, Step: i, Weights: r.stepWeights(i), Data: res.data, Detail: res.reason}); err != nil {
			return nil, err
		}
	}
	if r.p.Retire != nil && !st.retireChecked {
		if due, err := r.retire(ctx); due != nil || err != nil {
			return due, err
		}
	}
	if err := r.restoreTTL(ctx); err != nil {
		return nil, err
	}
	// Until its end is journaled the cutover has not ended: a command that came since
	// the last check (during the TTL's restore, whose wait for INSYNC takes tens of
	// seconds on Route 53) is acted on, an abort rolling back, not left to be dropped.
	if due, err := r.heed(ctx, last, r.stepWeights(last)); due != nil || err != nil {
		return due, err
	}
	err := r.end(ctx, outcomeCompleted)
	r.cfg.Progress.Event(Event{Phase: PhaseDone, Message: "cutover completed", Weights: r.stepWeights(last), Total: len(r.p.Steps)})
	return nil, err
}

// end journals the cutover's outcome, then lets go of the weights where the lever's hold
// ends with the cutover (the ALB lever's authority tags). The outcome comes first: a
// runner killed in between leaves tags, which `run --resume` of the ended cutover (or
// `cutover release`) removes, never a finished cutover that looks unfinished.
func (r *runner) end(ctx context.Context, outcome string) error {
	if _, err := r.append(journal.Entry{Kind: kindDone, Step: stepNone, Detail: outcome}); err != nil {
		return err
	}
	r.letGo(ctx)
	return nil
}

// letGo removes this runner's hold on a lever whose hold ends with the cutover, and
// journals it. It does its best: the cutover has ended whatever it finds, so a failure is
// logged, and `cutover release` (or the next `run --resume`) removes what is left.
func (r *runner) letGo(ctx context.Context) {
	h := r.lever
	if r.id.Token == "" {
		return
	}
	// A lever whose hold outlasts the cutover (Route 53's authority record) lets go of
	// nothing here (lever.Base).
	n, _, err := h.LetGo(ctx, r.id, lever.OwnKeepOthers)
	if err != nil {
		r.log.Warn("could not remove the cutover's authority tags from its "+h.HeldWhat()+"; `crossfade cutover release` removes them", "runner", r.id.String(), "err", err)
		return
	}
	if n == 0 {
		return
	}
	detail := fmt.Sprintf("authority tags of runner %s removed from %d %s", r.id, n, h.HeldWhat())
	r.log.Info(detail)
	if _, err := r.append(journal.Entry{Kind: kindReleased, Step: stepNone, Detail: detail}); err != nil {
		r.log.Warn("journal the release of the authority tags", "err", err)
	}
}

// heed acts on the control commands waiting between writes: it holds while paused, and
// returns the rollback an abort asks for.
func (r *runner) heed(ctx context.Context, step int, w map[string]int64) (*rollbackDue, error) {
	if err := r.poll(); err != nil {
		return nil, err
	}
	if err := r.waitResume(ctx, step, w); err != nil {
		return nil, err
	}
	if r.aborted {
		return abortDue(step, r.abortedBy), nil
	}
	return nil, nil
}

func (r *runner) stepWeights(i int) map[string]int64 {
	w := r.p.Steps[i].Weights
	return map[string]int64{r.p.From: w.From, r.p.To: w.To}
}

// readOpts are the reads this runner makes: partial while rolling back, as its runner,
// of a cutover started (its start entry journaled, by this process or one before it: a
// member missing then is gone, not yet to be published).
func (r *runner) readOpts() ReadOptions {
	return ReadOptions{Partial: r.rollingBack, Runner: r.id, Takeover: r.takeover, Held: r.held, Started: !r.startedAt.IsZero()}
}

// read reads the lever for a write of c, refusing one the lever says may not be written
// (a TTL write that would have to rewrite a set nobody owns); a rollback leaves such a set
// out and lets the provider judge the write.
func (r *runner) read(ctx context.Context, c Change) (Snapshot, error) {
	l, err := r.lever.Read(ctx, r.readOpts())
	if err != nil {
		return nil, err
	}
	if bad := r.lever.Check(l, c); len(bad) > 0 {
		if !r.rollingBack {
			return nil, &NotReadyError{Problems: bad, Lever: r.lever.Kind()}
		}
		for _, b := range bad {
			r.log.Warn("the write leaves a set out", l.LogAttr(), "problem", b)
		}
	}
	return l, nil
}

// write journals the intent, has the lever send the weights (and each record's TTL in
// ttls) as one step, journals what it sent and waits until it is in effect. Redone after
// a crash, it sends the step again, whatever already landed: weights are absolute. The
// write is built on a fresh read; the lever retries or refuses as it can (Route 53: a
// compare-and-swap batch, built again on a refusal; see dnsLever.Write, albLever.Write),
// and a failure that outlasted the SDK's own retries is retried here (send).
// Refused because another runner now holds the weights, it fails with *HeldError.
// what names the write in the change's comment, the journal and errors; ev is the
// progress event that shows it (its phase and step say which stage writes; its message
// defaults to what).
func (r *runner) write(ctx context.Context, step int, w map[string]int64, ttls map[spec.Record]int64, what string, ev Event) error {
	var ttl int64
	for _, t := range ttls {
		ttl = max(ttl, t)
	}
	wr, err := r.send(ctx, step, Change{Weights: w, TTLs: ttls}, ttl, what, ev)
	if err != nil {
		return err
	}
	r.held = true
	sent := time.Now()
	if _, err := r.append(journal.Entry{Kind: kindWritten, Step: step, Weights: w, ChangeID: wr.ID, Detail: wr.Detail, Data: wr.Data}); err != nil {
		return err
	}
	r.log.Info("weights written", wr.After.LogAttr(), "step", what, "weights", FormatWeights(w), "change_id", wr.ID, "changes", wr.Calls)
	if err := r.waitInEffect(ctx, wr); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	r.inEffect = time.Now()
	// What the write left is what we know now, so that the hold paces on the TTL just
	// written, and compares the weights just written.
	r.live = wr.After
	if w != nil {
		r.expect, r.expected = memberWeights(r.live), "the cutover wrote"
		r.resumeLanded = nil // this run's own write is in effect: the last run's is over
	}
	_, err = r.append(journal.Entry{Kind: kindInSync, Step: step, ChangeID: wr.ID, Detail: time.Since(sent).Round(time.Millisecond).String()})
	return err
}

// noteTakeover journals, before the write that does it is sent, that this run takes the
// weights over from another runner (an abort may), once per runner.
func (r *runner) noteTakeover(l Snapshot) error {
	for _, from := range l.TakenOver() {
		if r.tookOver[from] {
			continue
		}
		detail := "took the weights over from " + formatRunners([]registry.Runner{from})
		r.log.Warn(detail, l.LogAttr(), "runner", r.id.String())
		if _, err := r.append(journal.Entry{Kind: kindTakeover, Step: stepNone, Detail: detail}); err != nil {
			return err
		}
		r.tookOver[from] = true
	}
	return nil
}

// sleep waits for d, or until ctx ends (its error): lever.Sleep, the one wait the engine
// and its levers share.
func sleep(ctx context.Context, d time.Duration) error { return lever.Sleep(ctx, d) }

// waitInEffect polls the lever until w is in effect (Route 53: INSYNC), for at most the
// plan's inSync timeout.
func (r *runner) waitInEffect(ctx context.Context, w Written) error {
	ctx, cancel := context.WithTimeout(ctx, r.p.InSyncTimeout)
	defer cancel()
	for {
		ok, err := r.lever.InEffect(ctx, w)
		if err == nil && ok {
			return nil
		}
		// Commands are journaled as they come, so that their senders hear of them while
		// Route 53 propagates; they act once the write is in effect (an abort then rolls
		// back from there, a pause holds), as between any two checks.
		if perr := r.poll(); perr != nil {
			return perr
		}
		select {
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				return fmt.Errorf("%s after %s (last error: %v)", w.Pending, r.p.InSyncTimeout, err)
			}
			return ctx.Err()
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
	data    json.RawMessage
}

// step writes step i's weights and holds them for max(pause, TTL) with every gate passing
// at every check. A failing gate fails the step at once. Weights found in the zone that
// the cutover did not write (drift), before the write or at any check of the hold, are
// acted on as spec.onDrift says: the step fails, or it pauses and, once resumed, writes
// its weights again and holds anew.
func (r *runner) step(ctx context.Context, i int) (stepResult, error) {
	w := r.stepWeights(i)
	n := len(r.p.Steps)
	for {
		if res, err := r.precheck(ctx, i, w); err != nil || res.outcome != stepPassed {
			return res, err
		}
		var d drifted
		err := r.write(ctx, i, w, nil, fmt.Sprintf("step %d of %d", i+1, n), Event{Phase: PhaseWriting, Step: i, Total: n})
		switch {
		case errors.Is(err, errAbortedWriting):
			return stepResult{outcome: stepAborted}, nil
		case asDrift(err) != nil:
			d = asDrift(err)
		case err != nil:
			return stepResult{}, err
		default:
			var res stepResult
			if res, d, err = r.hold(ctx, i, w); err != nil || d == nil {
				return res, err
			}
		}
		res, again, err := r.onDrift(ctx, i, w, d)
		if err != nil || !again {
			return res, err
		}
	}
}

// precheck runs, before step i's weights w are written, the gates that judge a step before
// its write (gate.TargetHealth: a step never shifts traffic onto a target group with no
// healthy target). The first that fails fails the step, with nothing written. A step
// never shifts traffic on an unjudged precheck: a gate that has not judged yet (pending)
// holds the write, nothing written, and is checked again every check interval, the
// control commands heeded meanwhile, until it judges or the step's time limit
// (spec.timeouts.step) fails the step, as a hold's pending gate does.
func (r *runner) precheck(ctx context.Context, i int, w map[string]int64) (stepResult, error) {
	began := time.Now()
	logged := false
	for {
		// Under promote --skip-gates too: the pre-write check is what keeps a step from
		// moving traffic onto a target group with no healthy target (an outage, not a
		// measurement a person may choose to skip).
		results, pending, res, err := r.prechecks(ctx, i, w)
		if err != nil || res.outcome == stepFailed {
			return res, err
		}
		if pending == "" {
			return stepResult{}, nil
		}
		n := len(r.p.Steps)
		if waited := time.Since(began); waited > r.p.StepTimeout {
			data, _ := json.Marshal(results)
			return stepResult{outcome: stepFailed, data: data,
				reason: fmt.Sprintf("%s (nothing written; checked again for %s, the step's time limit)", pending, r.p.StepTimeout)}, nil
		}
		if r.p.TotalTimeout > 0 && r.elapsed() > r.p.TotalTimeout {
			return stepResult{outcome: stepFailed, reason: fmt.Sprintf("%s (nothing written); the cutover is over its total time limit %s (time paused not counted)", pending, r.p.TotalTimeout)}, nil
		}
		r.cfg.Progress.Event(Event{Phase: PhaseWriting, Step: i, Total: n, Weights: w, Gates: results,
			Left: max(r.p.StepTimeout-time.Since(began), 0), Message: pending + ": nothing written, checking again"})
		if !logged {
			r.log.Warn("a gate has not judged before the write: the write waits", "step", i+1, "pending", pending, "fails_after", r.p.StepTimeout)
			logged = true
		}
		if err := sleep(ctx, r.cfg.CheckInterval); err != nil {
			return stepResult{}, err
		}
		pausedFor := r.pausedFor
		if due, err := r.heed(ctx, i, r.live.Weights()); err != nil {
			return stepResult{}, err
		} else if due != nil {
			return stepResult{outcome: stepAborted}, nil
		}
		if r.pausedFor != pausedFor {
			// Held by a pause: the gate gets the step's time limit anew, as in a hold.
			began = time.Now()
		}
	}
}

// prechecks runs step i's prechecks once: the step fails (res) at the first that fails;
// pending names those that passed without judging yet ("" when none).
func (r *runner) prechecks(ctx context.Context, i int, w map[string]int64) (results []gate.Result, pending string, res stepResult, err error) {
	s := r.gateStep(i, w)
	s.Since = time.Time{}
	for _, g := range r.gates[i] {
		pc, ok := g.(Prechecker)
		if !ok {
			continue
		}
		got := pc.Precheck(ctx, s)
		if ctx.Err() != nil {
			return nil, "", stepResult{}, ctx.Err() // interrupted: no verdict, as in hold
		}
		results = append(results, got)
		if !got.Pass {
			r.cfg.Progress.Event(Event{Phase: PhaseWriting, Step: i, Total: len(r.p.Steps), Weights: w, Gates: results,
				Message: fmt.Sprintf("gate %s fails before the write: nothing written", got.Gate)})
			data, _ := json.Marshal(results)
			return results, "", stepResult{outcome: stepFailed, data: data,
				reason: fmt.Sprintf("gate %s, checked before the write (nothing written): %s", got.Gate, gate.Explain(got.Detail, got.Err))}, nil
		}
	}
	var out []string
	for _, g := range results {
		if g.Pending {
			out = append(out, fmt.Sprintf("gate %s has not judged before the write: %s", g.Gate, g.Detail))
		}
	}
	return results, strings.Join(out, "; "), stepResult{}, nil
}

// hold holds step i's weights w, just written, for max(pause, TTL) with every gate
// passing at every check; it returns the drift a check found instead of a result. The
// step passes only on measurements: once the hold has lasted, every gate's latest result
// must be a judged pass (pending, or "could not measure" within its grace, holds on until
// the step's time limit), under promote too, which shortens the hold to the TTL but
// skips no gate. Only promote --skip-gates passes it unmeasured, and says so.
func (r *runner) hold(ctx context.Context, i int, w map[string]int64) (stepResult, drifted, error) {
	n := len(r.p.Steps)
	holdFor := func() time.Duration {
		if r.promoted {
			return r.ttl()
		}
		return max(r.p.Steps[i].Pause, r.ttl())
	}
	gs := r.gates[i]
	if r.skipGates {
		gs = nil
	}
	gstep := r.gateStep(i, w)
	var last []gate.Result
	began := time.Now()
	r.compared = time.Time{}
	unmeasured := map[string]int{} // per gate: checks in a row that could not measure
	for {
		checked := time.Now()
		if err := r.poll(); err != nil {
			return stepResult{}, nil, err
		}
		if r.paused {
			if err := r.waitResume(ctx, i, w); err != nil {
				return stepResult{}, nil, err
			}
			// Gates must pass for a whole pause; a paused hold starts again.
			began = time.Now()
		}
		if r.aborted {
			return stepResult{outcome: stepAborted}, nil, nil
		}
		if r.skipGates {
			gs = nil // promote --skip-gates came during the hold
		}
		// Gates judge the weights the step wrote, or nothing: compare them first, then
		// every DriftInterval.
		if r.driftDue() {
			if d, err := r.checkDrift(ctx); d != nil || err != nil {
				return stepResult{}, d, err
			}
		}
		hold := holdFor()
		last = last[:0]
		for _, g := range gs {
			res := g.Check(ctx, gstep)
			if ctx.Err() != nil {
				// Interrupted (Ctrl-C, SIGTERM): not a gate verdict. Journal nothing, so
				// that run --resume continues the step rather than rolling back.
				return stepResult{}, nil, ctx.Err()
			}
			res = r.graceUnmeasured(res, unmeasured)
			last = append(last, res)
			if !res.Pass {
				// Shown before the step ends, so that a live view marks the gate failed.
				r.cfg.Progress.Event(Event{Phase: PhaseHolding, Step: i, Total: n, Weights: w, Gates: last})
				data, _ := json.Marshal(last)
				return stepResult{outcome: stepFailed, reason: fmt.Sprintf("gate %s: %s", res.Gate, gate.Explain(res.Detail, res.Err)), data: data}, nil, nil
			}
		}
		held := time.Since(began)
		r.cfg.Progress.Event(Event{Phase: PhaseHolding, Step: i, Total: n, Weights: w, Gates: last, Left: max(hold-held, 0)})
		// The limit is checked first: checked after the pass, it could never fire, as a
		// hold overrun by slow gate checks is also a hold that has lasted long enough.
		pending := pendingGates(last)
		if held > hold+r.p.StepTimeout {
			reason := fmt.Sprintf("step over its time limit %s", hold+r.p.StepTimeout)
			if pending != "" {
				reason += ": " + pending
			}
			if r.readFails > 0 {
				reason += fmt.Sprintf("; the weights could not be read to compare them for %s", roughly(time.Since(r.failingSince)))
			}
			data, _ := json.Marshal(last)
			return stepResult{outcome: stepFailed, reason: reason, data: data}, nil, nil
		}
		// A gate that has judged nothing yet (too few requests counted, or could not
		// measure) holds the step on, under promote too: a promote skips pauses, never
		// measurement.
		if held >= hold && pending == "" {
			// A step passes only on weights compared at its end, too: one that cannot be
			// read holds on (the step's time limit bounds it), reading again as
			// checkDrift paces it.
			if r.compared.Before(checked) && r.mayRead() {
				if d, err := r.checkDrift(ctx); d != nil || err != nil {
					return stepResult{}, d, err
				}
			}
			if !r.compared.Before(checked) {
				data, _ := json.Marshal(last)
				res := stepResult{outcome: stepPassed, data: data}
				if r.skipGates && len(r.gates[i]) > 0 {
					res.reason = gatesSkipped(r.skipGatesBy)
					r.log.Warn("step passed without its gates: promote --skip-gates", "step", i+1, "by", r.skipGatesBy)
				}
				return res, nil, nil
			}
		}
		if r.p.TotalTimeout > 0 && r.elapsed() > r.p.TotalTimeout {
			return stepResult{outcome: stepFailed, reason: fmt.Sprintf("the cutover is over its total time limit %s (time paused not counted)", r.p.TotalTimeout)}, nil, nil
		}
		wait := r.cfg.CheckInterval
		if held < hold {
			wait = min(wait, hold-held)
		}
		if err := sleep(ctx, wait); err != nil {
			return stepResult{}, nil, err
		}
	}
}

// gatesSkippedPrefix starts the journal detail of a step passed by promote --skip-gates.
const gatesSkippedPrefix = "GATES SKIPPED"

// gatesSkipped is the journal detail of a step passed without its gates.
func gatesSkipped(by string) string {
	return fmt.Sprintf("%s: passed unmeasured, by promote --skip-gates from %s", gatesSkippedPrefix, by)
}

// pendingGates names the results that passed without judging yet, and why; "" when none.
func pendingGates(rs []gate.Result) string {
	var out []string
	for _, g := range rs {
		if g.Pass && g.Pending {
			out = append(out, fmt.Sprintf("gate %s has not judged: %s", g.Gate, g.Detail))
		}
	}
	return strings.Join(out, "; ")
}

// driftIn returns the drift l shows before a write of weights w: members whose weight is
// not the one this run last wrote (or started from). nil when there is none, and when
// nothing is compared: a rollback (which runs to its end whatever it finds), a write of
// TTLs alone, and the first write after a resume from a drift pause, which overwrites
// what it finds as the resume asked. A member at one of its weights in landed (by key:
// what a failed attempt of this write may have left, see mayHaveLanded), or in
// resumeLanded (what the killed run before a resume may still leave), is no drift.
func (r *runner) driftIn(l Snapshot, w map[string]int64, landed map[string][]int64) *DriftError {
	if w == nil || r.rollingBack || r.expect == nil {
		return nil
	}
	if d := drift(l, withLanded(l, withLanded(l, r.expect, r.resumeLanded), landed)); len(d) > 0 {
		return &DriftError{Expected: r.expected, Members: d, Cause: r.lever.DriftCause()}
	}
	return nil
}

// checkDrift reads the zone at a check and compares the members' weights with those this
// run last wrote. A zone that cannot be read now is read again after a pause that doubles
// from one check to DriftInterval: reading a throttled API at every check would only add
// to its load (each read is itself retried by the SDK). The first failure is logged, then
// one line per DriftInterval while they last, and the recovery. One that refuses the
// cutover (another runner took the weights over, someone released them, a member is
// gone) stops the run, as the next write would.
func (r *runner) checkDrift(ctx context.Context) (drifted, error) {
	if r.expect == nil {
		return nil, nil
	}
	l, err := r.lever.Read(ctx, r.readOpts())
	var rerr *ReadError
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(err, &rerr):
		now := time.Now()
		if r.readFails == 0 {
			r.failingSince = now
		}
		r.readFails++
		pause := doubled(r.cfg.CheckInterval, r.readFails, r.cfg.DriftInterval)
		r.nextRead = now.Add(pause)
		if r.readFails == 1 || pause == r.cfg.DriftInterval {
			r.log.Warn("could not read the zone to compare its weights with those written; reading again later",
				"err", err, "failed_reads", r.readFails, "failing_for", roughly(now.Sub(r.failingSince)), "next_read_in", roughly(pause))
		}
		return nil, nil
	case asDrift(err) != nil:
		// A member gone (deleted under the cutover) is acted on as drift: pause or roll
		// back, never a run that stops with traffic split.
		return asDrift(err), nil
	case err != nil:
		return nil, err
	}
	if r.readFails > 0 {
		r.log.Info("read the zone again after failed reads", "failed_reads", r.readFails, "failing_for", roughly(time.Since(r.failingSince)))
		r.readFails = 0
	}
	r.compared = time.Now()
	if d := drift(l, withLanded(l, r.expect, r.resumeLanded)); len(d) > 0 {
		return &DriftError{Expected: r.expected, Members: d, Cause: r.lever.DriftCause()}, nil
	}
	return nil, nil
}

// withLanded returns expect with, for each member of l at one of its weights in landed,
// that weight: what an earlier write may have left is no drift.
func withLanded(l Snapshot, expect map[string]int64, landed map[string][]int64) map[string]int64 {
	if len(landed) == 0 {
		return expect
	}
	out := maps.Clone(expect)
	for _, m := range l.Members() {
		if slices.Contains(landed[m.Key], m.Weight) {
			out[m.Key] = m.Weight
		}
	}
	return out
}

// unmeasuredChecks is how many checks in a row a gate may fail to measure (Result.Err: a
// throttled GetMetricData, an unreachable Prometheus) before it fails the step. Before
// that the step holds, as for a gate that has judged nothing yet: over a hold of hours one
// throttled call is all but certain, and it says nothing about the clusters. The SDK's
// retries come first, within each check.
const unmeasuredChecks = 5

// graceUnmeasured turns res, when its gate could not measure for fewer than
// unmeasuredChecks checks in a row (counted in n), into a pending pass that says so; any
// other result resets the count and is returned as it is.
func (r *runner) graceUnmeasured(res gate.Result, n map[string]int) gate.Result {
	if res.Pass || res.Err == "" {
		n[res.Gate] = 0
		return res
	}
	n[res.Gate]++
	if n[res.Gate] >= unmeasuredChecks {
		return res
	}
	r.log.Warn("gate could not measure; the step holds until it can", "gate", res.Gate, "err", res.Err,
		"checks_in_a_row", n[res.Gate], "fails_at", unmeasuredChecks)
	res.Pass, res.Pending = true, true
	res.Detail = fmt.Sprintf("could not measure (%d of %d checks in a row): %s", n[res.Gate], unmeasuredChecks, res.Err)
	res.Err = ""
	return res
}

// driftDue reports whether the weights are to be compared at this check: at a hold's
// first, every DriftInterval, and after a read that failed once its pause is over.
func (r *runner) driftDue() bool {
	if r.readFails > 0 {
		return r.mayRead()
	}
	return r.compared.IsZero() || time.Since(r.compared) >= r.cfg.DriftInterval
}

// mayRead reports whether the pause after a failed read for a compare is over (true when
// the last one worked).
func (r *runner) mayRead() bool {
	return r.readFails == 0 || !time.Now().Before(r.nextRead)
}

// onDrift journals drift found at step (whose weights are w) and acts as spec.onDrift
// says: with "rollback" it fails the step; with "pause" it holds, the weights left as
// found (a cutover does not fight another writer: safety rule 3), until resume, promote
// or abort. again says to write the step's weights once more: resumed, the operator has
// stopped the other writer, and the write puts back the weights the step holds, from a
// fresh read; a writer still at work is caught again at the next check.
func (r *runner) onDrift(ctx context.Context, step int, w map[string]int64, d drifted) (res stepResult, again bool, err error) {
	action := r.p.OnDrift
	if action != spec.DriftRollback {
		action = spec.DriftPause
	}
	data, _ := json.Marshal(driftData{Action: action, Members: d.Drifts(r.expect)})
	if _, err := r.append(journal.Entry{Kind: kindDrift, Step: step, Detail: d.Error(), Data: data}); err != nil {
		return stepResult{}, false, err
	}
	r.log.Error("weights drifted during the cutover", r.live.LogAttr(), "step", step+1, "on_drift", action, "err", d)
	if action == spec.DriftRollback {
		return stepResult{outcome: stepFailed, reason: d.Error()}, false, nil
	}
	if !r.paused {
		r.paused, r.pausedAt = true, time.Now()
	}
	r.pauseWhy = driftPaused(d.Error())
	if err := r.waitResume(ctx, step, w); err != nil {
		return stepResult{}, false, err
	}
	if r.aborted {
		return stepResult{outcome: stepAborted}, false, nil
	}
	r.expect = nil
	return stepResult{}, true, nil
}

// driftPaused is what a cutover paused by drift says while it waits.
func driftPaused(drift string) string {
	return drift + "; paused (spec.onDrift: pause): stop that writer (re-publish a deleted member), then `crossfade cutover resume` writes the step's weights again " +
		"(compared again at every check), or `crossfade cutover abort` rolls back"
}

// drifted is what a check or a write found changed under the cutover: weights it did not
// write (*DriftError) or a member deleted (*MemberGoneError). Both are acted on as
// spec.onDrift says.
type drifted interface {
	error
	// Drifts lists the members concerned, for the journal (expect: the weights written).
	Drifts(expect map[string]int64) []Drift
}

// asDrift returns err as drift when it is (or wraps) *DriftError or *MemberGoneError.
func asDrift(err error) drifted {
	var d *DriftError
	if errors.As(err, &d) {
		return d
	}
	var g *MemberGoneError
	if errors.As(err, &g) {
		return g
	}
	return nil
}

// gateStep describes step i to the gates: weights written and each record's members.
func (r *runner) gateStep(i int, w map[string]int64) gate.Step {
	in := r.live.GateInput(w)
	s := gate.Step{Index: i, From: r.p.From, To: r.p.To, Weights: w, TargetGroups: in.TargetGroups, Since: r.inEffect}
	targets := in.Targets
	for _, rec := range r.p.Records {
		s.Records = append(s.Records, gate.Record{Name: rec.Name, Type: rec.Type, Members: targets[rec]})
	}
	return s
}

// rollbackStops are the weights a rollback from current goes through: for a gradual
// rollback the plan's stops that lie strictly between current and the starting weights
// (never one that moves traffic towards the cluster being left), then the start.
func rollbackStops(p *spec.Plan, current, start map[string]int64) []map[string]int64 {
	var stops []map[string]int64
	if p.Rollback.Mode == spec.RollbackGradual {
		cur := share(current, p.From, p.To)
		home := share(start, p.From, p.To)
		for _, w := range p.Rollback.Steps {
			stop := map[string]int64{p.From: w.From, p.To: w.To}
			s := share(stop, p.From, p.To)
			if (s < cur && s > home) || (s > cur && s < home) {
				stops = append(stops, stop)
			}
		}
	}
	return append(stops, start)
}

// home is where a rollback returns: the starting weights, unless they split a record
// evenly (every weighted set 0, which Route 53 answers evenly): a start that plan and run
// refuse now, but a cutover started before they did may have journaled it. A rollback
// must not hand half the traffic to the cluster whose step failed, so it returns all of
// it to from then, with the weights a step of percent 0 writes.
func (r *runner) home() map[string]int64 {
	if at := r.live.NoTraffic(r.start); at != "" {
		w := map[string]int64{r.p.From: 100, r.p.To: 0}
		r.log.Warn("the starting weights split the traffic evenly (every weighted set 0): rolling back to all traffic on from instead",
			"record", at, "start", FormatWeights(r.start), "rollback_to", FormatWeights(w))
		return w
	}
	return r.start
}

// rollback returns to the starting weights: at once, or through the gradual stops, each
// held for max(pause, TTL) without gates. The stops are journaled when it begins, so
// that a resumed rollback goes on through the same ones.
func (r *runner) rollback(ctx context.Context, due *rollbackDue) error {
	r.rollingBack = true
	if !due.begun {
		due.stops = rollbackStops(r.p, r.live.Weights(), r.home())
		data, _ := json.Marshal(due.stops)
		if _, err := r.append(journal.Entry{Kind: kindRollback, Step: due.step, Detail: due.reason, Data: data}); err != nil {
			return err
		}
		due.begun = true
	}
	if len(due.stops) == 0 {
		due.stops = []map[string]int64{r.home()}
	}
	r.log.Warn("rolling back", "reason", due.reason, "stops", len(due.stops))
	for k := due.from; k < len(due.stops); k++ {
		what := fmt.Sprintf("rollback %d of %d", k+1, len(due.stops))
		ev := Event{Phase: PhaseRollingBack, Step: k, Total: len(due.stops), Message: due.reason}
		if err := r.write(ctx, -2-k, due.stops[k], nil, what, ev); err != nil {
			return err
		}
		// A member that is gone (deleted under the cutover) cannot be rolled back: the
		// write moved the others, and the journal and report name it.
		var left string
		if sk := r.live.Skipped(); len(sk) > 0 {
			left = "could not restore: " + strings.Join(sk, "; ")
			r.log.Error("the rollback leaves members out", r.live.LogAttr(), "stop", what, "problems", sk)
		}
		hold := max(r.p.Rollback.Pause, r.ttl())
		r.cfg.Progress.Event(Event{Phase: PhaseRollingBack, Step: k, Total: len(due.stops), Weights: due.stops[k], Left: hold, Message: due.reason})
		// Commands that come meanwhile are journaled as ignored at every check, not at the
		// stop's end: a rollback runs to its end, and their senders wait for the answer.
		for until := time.Now().Add(hold); ; {
			if err := r.poll(); err != nil {
				return err
			}
			left := time.Until(until)
			if left <= 0 {
				break
			}
			if err := sleep(ctx, min(left, r.cfg.CheckInterval)); err != nil {
				return err
			}
		}
		if _, err := r.append(journal.Entry{Kind: kindRollbackHeld, Step: k, Weights: due.stops[k], Detail: left}); err != nil {
			return err
		}
	}
	if err := r.restoreTTL(ctx); err != nil {
		return err
	}
	// Commands that came during the TTL's restore are journaled as ignored while the
	// rollback still runs, as any during it.
	if err := r.poll(); err != nil {
		return err
	}
	err := r.end(ctx, outcomeRolledBack)
	r.cfg.Progress.Event(Event{Phase: PhaseDone, Message: "rolled back: " + due.reason, Weights: r.start})
	return err
}

// lowerTTL sets the TTL of every weighted set of the plan's records (a third cluster's
// too: Route 53 gives a name and type's weighted sets one TTL) to the plan's lower value
// where it is higher, and waits out the TTL they had
// (as journaled at the start, so that a runner resumed after a crash mid-way still waits
// it out), so that every resolver holds the short TTL before the first weight change.
func (r *runner) lowerTTL(ctx context.Context) error {
	old := time.Duration(r.startTTL) * time.Second
	if r.startTTL > r.p.LowerTTL {
		r.ttlTouched = true
		ttls := lever.LowerTTLs(r.recordTTLs(), r.p.LowerTTL)
		if err := r.write(ctx, stepTTLLower, nil, ttls, fmt.Sprintf("lower TTL to %ds", r.p.LowerTTL), Event{Phase: PhaseLoweringTTL}); err != nil {
			return err
		}
		r.cfg.Progress.Event(Event{Phase: PhaseLoweringTTL, Left: old, Message: fmt.Sprintf("TTL lowered to %ds; waiting out the old %s", r.p.LowerTTL, old)})
		// Waiting out the old TTL (minutes) heeds an abort at every check, as a write's
		// retries do: nothing forward is written yet, and the rollback restores the TTL.
		if err := r.waitRetry(ctx, old, true); err != nil {
			return err
		}
	}
	_, err := r.append(journal.Entry{Kind: kindTTLLowered, Step: stepNone, TTL: r.p.LowerTTL, Detail: fmt.Sprintf("%ds (was %s)", r.p.LowerTTL, old)})
	return err
}

// restoreTTL gives every weighted set of the plan's records back the TTL it had before the
// cutover lowered it. It raises a TTL, so nothing needs waiting out.
func (r *runner) restoreTTL(ctx context.Context) error {
	if !r.ttlTouched {
		return nil
	}
	return r.write(ctx, stepTTLRestore, nil, r.recordTTLs(), fmt.Sprintf("restore TTL to %ds", r.startTTL), Event{Phase: PhaseRestoringTTL})
}

// recordTTLs are the TTLs each record's weighted sets had when the cutover started; a
// journal from before they were kept gives every record the largest.
func (r *runner) recordTTLs() map[spec.Record]int64 {
	if r.startTTLs != nil {
		return r.startTTLs
	}
	out := map[spec.Record]int64{}
	for _, rec := range r.p.Records {
		out[rec] = r.startTTL
	}
	return out
}

// share is the fraction of traffic weights send to `to` (an even split when both are 0,
// as Route 53 answers).
func share(w map[string]int64, from, to string) float64 {
	if w[from]+w[to] == 0 {
		return 0.5
	}
	return float64(w[to]) / float64(w[from]+w[to])
}

// retireVerdict is what the retire check journals, for the report.
type retireVerdict struct {
	Cluster   string  `json:"cluster"`
	Retirable bool    `json:"retirable"`
	Rate      float64 `json:"rate"`
	HaveRate  bool    `json:"haveRate"`
}

// retire waits, after the last step, until the from cluster's request rate has stayed at
// or below the plan's maximum for its window, and journals the verdict. Past the timeout
// the cutover still completes, with the cluster declared not retirable: the new cluster
// serves, and moving traffic back would not drain the old one. An abort rolls back; a
// promote (now or earlier: it asks to skip every remaining wait) ends it with no verdict.
func (r *runner) retire(ctx context.Context) (*rollbackDue, error) {
	rt := r.p.Retire
	res, err := newResidual(*rt, r.p, r.cloudWatch, r.live)
	if err != nil {
		return nil, err
	}
	from, last := r.p.From, len(r.p.Steps)-1
	w := r.stepWeights(last)
	began := time.Now()
	var below time.Time // since when the rate has stayed low
	v := retireVerdict{Cluster: from}
	var lastErr error
	for {
		if due, err := r.heed(ctx, last, w); due != nil || err != nil {
			return due, err
		}
		// The wait holds the last step's weights like a step: drift is acted on alike,
		// compared as often.
		var d drifted
		var err error
		if r.driftDue() {
			if d, err = r.checkDrift(ctx); err != nil {
				return nil, err
			}
		}
		if d != nil {
			res, again, err := r.onDrift(ctx, last, w, d)
			switch {
			case err != nil:
				return nil, err
			case res.outcome == stepAborted:
				return abortDue(last, r.abortedBy), nil
			case !again:
				return &rollbackDue{step: last, reason: res.reason}, nil
			}
			n := len(r.p.Steps)
			if err := r.write(ctx, last, w, nil, fmt.Sprintf("step %d of %d", n, n), Event{Phase: PhaseWriting, Step: last, Total: n}); err != nil {
				return nil, err
			}
			r.compared = time.Time{} // compare what was just written at the next check
			// Traffic went elsewhere meanwhile: the drain is measured afresh.
			below = time.Time{}
			continue
		}
		if r.promoted {
			_, err := r.append(journal.Entry{Kind: kindRetire, Step: stepNone, Detail: fmt.Sprintf("%s: retire check skipped by promote", from)})
			return nil, err
		}
		rate, ok, err := res.Rate(ctx)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err == nil && ok && (math.IsNaN(rate) || math.IsInf(rate, 0)) {
			// Not a rate (a counter scraped as NaN or ±Inf): no measurement, never a
			// drained cluster.
			err = fmt.Errorf("retire: %s's request rate read %v from %s: not a rate", from, rate, res.Source())
		}
		// The window needs lows measured without a gap: a check with no rate (an error,
		// a counter restarted, scrapes landing on different pods) starts it again, and
		// the rate last measured is no longer shown as current.
		switch {
		case err != nil:
			lastErr, below, v.HaveRate = err, time.Time{}, false
			r.log.Warn("retire check", "cluster", from, "err", err)
		case !ok:
			lastErr, below, v.HaveRate = nil, time.Time{}, false
		case rate <= rt.MaxRate:
			v.Rate, v.HaveRate, lastErr = rate, true, nil
			if below.IsZero() {
				below = time.Now()
			}
		default:
			v.Rate, v.HaveRate, lastErr, below = rate, true, nil, time.Time{}
		}
		left := rt.Window.Duration
		if !below.IsZero() {
			left -= time.Since(below)
		}
		msg := fmt.Sprintf("waiting for %s to drain (≤ %g req/s for %s): %s", from, rt.MaxRate, rt.Window, fmtRate(v, lastErr))
		r.cfg.Progress.Event(Event{Phase: PhaseRetiring, Weights: w, Left: max(left, 0), Message: msg})
		if !below.IsZero() && left <= 0 {
			v.Retirable = true
			data, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("retire: journal the verdict on %s: %w", from, err)
			}
			_, err = r.append(journal.Entry{Kind: kindRetire, Step: stepNone, Data: data,
				Detail: fmt.Sprintf("%s retirable: its request rate stayed ≤ %g req/s for %s (last %s; read from %s)", from, rt.MaxRate, rt.Window, fmtRate(v, nil), res.Source())})
			return nil, err
		}
		if time.Since(began) > rt.Timeout.Duration {
			data, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("retire: journal the verdict on %s: %w", from, err)
			}
			why := "last " + fmtRate(v, nil)
			if lastErr != nil {
				why = "last error: " + lastErr.Error()
			}
			_, err = r.append(journal.Entry{Kind: kindRetire, Step: stepNone, Data: data,
				Detail: fmt.Sprintf("%s NOT retirable: its request rate did not stay ≤ %g req/s for %s within %s (%s)", from, rt.MaxRate, rt.Window, rt.Timeout, why)})
			return nil, err
		}
		if err := sleep(ctx, r.cfg.CheckInterval); err != nil {
			return nil, err
		}
	}
}

// fmtRate says the rate the last check measured; with none (v.HaveRate false), that
// there is no current rate, and why: err, the last read's error, or else a counter's new
// baseline (its first read, or a restart).
func fmtRate(v retireVerdict, err error) string {
	switch {
	case v.HaveRate:
		return fmt.Sprintf("%.2f req/s", v.Rate)
	case err != nil:
		return "no current rate (" + err.Error() + ")"
	}
	return "no current rate (the counter's first read or a restart: a new baseline, rated at the next check)"
}

// gateError names gate name in err once: NewGate's errors name the gate already; an
// embedder's may not.
func gateError(name string, err error) error {
	if strings.HasPrefix(err.Error(), "gate "+name+": ") {
		return err
	}
	return fmt.Errorf("gate %s: %w", name, err)
}
