package cutover

import (
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
)

// Phases of a cutover, as progress events name them.
const (
	PhaseLoweringTTL = "lowering-ttl"
	PhaseWriting     = "writing"
	PhaseHolding     = "holding"
	PhasePaused      = "paused"
	PhaseRollingBack = "rolling-back"
	// PhaseRestoringTTL writes back the TTL the members had before PhaseLoweringTTL.
	PhaseRestoringTTL = "restoring-ttl"
	PhaseRetiring     = "retiring"
	PhaseDone         = "done"
)

// Event is one moment of a run, for the terminal.
type Event struct {
	Phase string
	// Step is the 0-based step (or, in PhaseRollingBack, rollback stop); Total the number
	// of them, 0 in the TTL phases and the retire check, which are not steps.
	Step, Total int
	Weights     map[string]int64
	Gates       []gate.Result
	// Left is the time the current hold still needs.
	Left    time.Duration
	Message string
	// GatesSkipped is set once a promote --skip-gates made the remaining steps pass
	// without their gates: a live view flags it in red.
	GatesSkipped bool
	// Retrying marks an event of a write that failed transiently and waits to be retried
	// (Message says how and when), within the stage it belongs to: not a new stage, and
	// not a new reason for a rollback.
	Retrying bool
}

// Progress shows a run's events: render.NewProgress draws them on a terminal, the
// dashboard's recorder serves them to the live view.
type Progress interface {
	Event(Event)
}

// discardProgress is the Progress of a run given none.
type discardProgress struct{}

func (discardProgress) Event(Event) {}
