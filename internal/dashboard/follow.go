package dashboard

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// The journal entry kinds a Follower reads: the engine's (internal/cutover/engine.go),
// spelled here because the engine keeps them unexported, as objectstatus spells them.
// TestFollowerMatchesLive runs the engine and fails when these stop matching what it
// journals.
const (
	entryStart      = "start"
	entryIntent     = "intent"
	entryInSync     = "insync"
	entryStepPassed = "step-passed"
	entryStepFailed = "step-failed"
	entryControl    = "control"
	entryDrift      = "drift"
	entryRollback   = "rollback"
	entryRetire     = "retire"
	entryDone       = "done"
	doneCompleted   = "completed"
	doneRolledBack  = "rolled-back"
	// The engine's step numbers of the writes that are not steps: a rollback's stop k
	// is -2-k; the TTL's lowering and restoring have their own.
	stepTTLLower   = -100
	stepTTLRestore = -101
	// gatesSkippedPrefix starts the detail of a step passed by promote --skip-gates.
	gatesSkippedPrefix = "GATES SKIPPED"
	// pausedMessage is what the engine shows while a person's pause holds the run.
	pausedMessage = "paused: crossfade cutover resume to go on"
)

// Follower turns a cutover's journal, as another process writes it (the controller
// running a Cutover object writes it to the object's status), into the progress events
// the run showed live, and feeds them to a Recorder (at the entries' times) and to
// Also: the page then shows the steps, weights and gate verdicts a live `cutover run
// --ui` shows. What the journal does not keep is not shown: each gate's checks during a
// hold (the journal keeps the last, when the step passed or failed), hold countdowns and
// the retire check's waiting.
//
// Feed may be called with the whole journal each time: entries already fed (by Seq)
// are skipped. It is safe for concurrent use.
type Follower struct {
	rec *Recorder
	// also gets every event too (a terminal's progress); nil for none.
	also cutover.Progress
	// total is the plan's number of steps; retire its retire check, nil for none.
	total  int
	from   string
	retire *spec.Retire

	mu  sync.Mutex
	seq int // the last entry fed
	// start are the weights before the first step; weights the last step's written.
	start, weights map[string]int64
	// step is the step being written or held, -1 before the first.
	step int
	// reason is why the run rolls back; stops the number of its stops.
	reason string
	stops  int
	// skipped is set once a step passed without its gates.
	skipped bool
}

// NewFollower returns a Follower feeding rec (and also, if not nil) the events of the
// cutover of plan p.
func NewFollower(rec *Recorder, p *spec.Plan, also cutover.Progress) *Follower {
	return &Follower{rec: rec, also: also, total: len(p.Steps), from: p.From, retire: p.Retire, step: -1}
}

// Feed feeds the entries of entries not yet fed, in Seq order as the journal keeps
// them. An entry without a Seq (0) is fed once its predecessors are.
func (f *Follower) Feed(entries []journal.Entry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range entries {
		if e.Seq <= f.seq {
			continue
		}
		f.seq = e.Seq
		for _, ev := range f.events(e) {
			f.rec.EventAt(e.Time, ev)
			if f.also != nil {
				f.also.Event(ev)
			}
		}
	}
}

// Fed is the Seq of the last entry fed.
func (f *Follower) Fed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq
}

// events are the progress events the engine showed around journaling e, as far as e
// tells them.
func (f *Follower) events(e journal.Entry) []cutover.Event {
	skipped := func(ev cutover.Event) cutover.Event { ev.GatesSkipped = f.skipped; return ev }
	switch e.Kind {
	case entryStart:
		f.start, f.weights = maps.Clone(e.Weights), maps.Clone(e.Weights)
	case entryIntent:
		switch {
		case e.Step >= 0:
			f.step, f.weights = e.Step, maps.Clone(e.Weights)
			return []cutover.Event{skipped(cutover.Event{Phase: cutover.PhaseWriting, Step: e.Step, Total: f.total, Weights: e.Weights, Message: e.Detail})}
		case e.Step == stepTTLLower:
			return []cutover.Event{{Phase: cutover.PhaseLoweringTTL, Message: e.Detail}}
		case e.Step == stepTTLRestore:
			return []cutover.Event{{Phase: cutover.PhaseRestoringTTL, Message: e.Detail}}
		case e.Step <= -2:
			return []cutover.Event{{Phase: cutover.PhaseRollingBack, Step: -2 - e.Step, Total: max(f.stops, 1), Weights: e.Weights, Message: f.reason}}
		}
	case entryInSync:
		if e.Step >= 0 {
			return []cutover.Event{skipped(cutover.Event{Phase: cutover.PhaseHolding, Step: e.Step, Total: f.total, Weights: f.weights})}
		}
	case entryStepPassed, entryStepFailed:
		if strings.HasPrefix(e.Detail, gatesSkippedPrefix) {
			f.skipped = true
		}
		phase := cutover.PhaseHolding
		if e.Step != f.step {
			// Failed before its write (a gate checked before it): shown as the write's.
			phase = cutover.PhaseWriting
		}
		evs := []cutover.Event{skipped(cutover.Event{Phase: phase, Step: e.Step, Total: f.total, Weights: e.Weights, Gates: gates(e.Data)})}
		switch {
		case e.Kind == entryStepFailed:
			f.reason = e.Detail
		case e.Step == f.total-1 && f.retire != nil:
			// The retire check starts as the last step passes; the journal keeps only its
			// verdict, so the hold is shown ending here, as it does live.
			rt := f.retire
			evs = append(evs, cutover.Event{Phase: cutover.PhaseRetiring, Weights: e.Weights,
				Message: fmt.Sprintf("waiting for %s to drain (≤ %g req/s for %s)", f.from, rt.MaxRate, rt.Window)})
		}
		return evs
	case entryRollback:
		f.reason = e.Detail
		var stops []map[string]int64
		if json.Unmarshal(e.Data, &stops) == nil {
			f.stops = len(stops)
		}
	case entryControl:
		switch e.Detail {
		case cutover.CommandPause:
			return []cutover.Event{skipped(cutover.Event{Phase: cutover.PhasePaused, Step: max(f.step, 0), Total: f.total, Weights: f.weights, Message: pausedMessage})}
		case cutover.CommandResume:
			if f.step >= 0 {
				return []cutover.Event{skipped(cutover.Event{Phase: cutover.PhaseHolding, Step: f.step, Total: f.total, Weights: f.weights})}
			}
		}
	case entryDrift:
		var d struct {
			Action string `json:"action"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.Action == "pause" {
			return []cutover.Event{skipped(cutover.Event{Phase: cutover.PhasePaused, Step: max(f.step, 0), Total: f.total, Weights: f.weights, Message: e.Detail})}
		}
	case entryRetire:
		return []cutover.Event{{Phase: cutover.PhaseRetiring, Weights: f.weights, Message: e.Detail}}
	case entryDone:
		switch e.Detail {
		case doneCompleted:
			return []cutover.Event{skipped(cutover.Event{Phase: cutover.PhaseDone, Message: "cutover completed", Weights: f.weights, Total: f.total})}
		case doneRolledBack:
			return []cutover.Event{skipped(cutover.Event{Phase: cutover.PhaseDone, Message: "rolled back: " + f.reason, Weights: f.start})}
		default:
			return []cutover.Event{skipped(cutover.Event{Phase: cutover.PhaseDone, Message: e.Detail})}
		}
	}
	return nil
}

// gates reads the gate results a step-passed or step-failed entry keeps.
func gates(data json.RawMessage) []gate.Result {
	var out []gate.Result
	if len(data) > 0 && json.Unmarshal(data, &out) != nil {
		return nil
	}
	return out
}
