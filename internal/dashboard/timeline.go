package dashboard

import (
	"fmt"
	"maps"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
)

// Kinds of timeline stage, as Stage.Kind names them.
const (
	kindStep     = "step"
	kindRollback = "rollback"
	kindTTL      = "ttl"
	kindRetire   = "retire"
	kindOther    = "other"
)

// Outcomes of an ended stage; a running stage's outcome is its phase.
const (
	outcomePassed     = "passed"
	outcomeRolledBack = "rolled back"
	outcomeHeld       = "held"
	outcomeDone       = "done"
)

// stage keeps the timeline: a new entry whenever the step, rollback stop or other stage
// changes; the one before it ends then, with an outcome read from what follows.
func (r *Recorder) stage(now time.Time, e cutover.Event) {
	tl := r.state.Timeline
	last := len(tl) - 1
	if e.Phase == cutover.PhaseDone {
		if last >= 0 && tl[last].Ended.IsZero() {
			end(&tl[last], now, rolledBack(e))
		}
		return
	}
	name, kind := stageOf(e)
	if last >= 0 && tl[last].Name == name && tl[last].Ended.IsZero() {
		// The same stage goes on: writing → holding → paused → holding …
		tl[last].Phase, tl[last].Outcome = e.Phase, e.Phase
		if len(e.Weights) > 0 {
			tl[last].Weights = maps.Clone(e.Weights)
		}
		return
	}
	if last >= 0 && tl[last].Ended.IsZero() {
		end(&tl[last], now, kind == kindRollback)
	}
	r.state.Timeline = append(tl, Stage{Name: name, Kind: kind, Phase: e.Phase, Weights: maps.Clone(e.Weights),
		Started: now, Outcome: e.Phase})
}

// end closes st at now; rollingBack says whether a rollback follows it.
func end(st *Stage, now time.Time, rollingBack bool) {
	st.Ended = now
	switch {
	case st.Kind == kindRollback:
		st.Outcome = outcomeHeld
	case st.Kind == kindTTL:
		st.Outcome = outcomeDone
	case rollingBack:
		st.Outcome = outcomeRolledBack
	default:
		st.Outcome = outcomePassed
	}
}

// stageOf names an event's stage as the terminal does ("step 2/4", "rollback 1/2") and
// tells its kind.
func stageOf(e cutover.Event) (name, kind string) {
	switch {
	case e.Phase == cutover.PhaseLoweringTTL:
		return "lower TTL", kindTTL
	case e.Phase == cutover.PhaseRestoringTTL:
		return "restore TTL", kindTTL
	case e.Phase == cutover.PhaseRetiring:
		return "retire", kindRetire
	case e.Phase == cutover.PhaseRollingBack:
		return fmt.Sprintf("rollback %d/%d", e.Step+1, e.Total), kindRollback
	case e.Total > 0:
		return fmt.Sprintf("step %d/%d", e.Step+1, e.Total), kindStep
	case e.Message != "":
		return e.Message, kindOther
	}
	return e.Phase, kindOther
}
