package dashboard

import (
	"testing"

	"github.com/crossfade-io/crossfade/internal/cutover"
)

// TestGatesSkippedIsFlagged: once an event says a promote --skip-gates made steps pass
// unmeasured, the state says so, and keeps saying so through the events after it.
func TestGatesSkippedIsFlagged(t *testing.T) {
	r := NewRecorder("app", "blue", "green")
	r.Event(cutover.Event{Phase: cutover.PhaseHolding, Step: 0, Total: 3, Weights: map[string]int64{"blue": 90, "green": 10}})
	if r.State().Current.GatesSkipped {
		t.Fatal("gatesSkipped set before any skip")
	}
	r.Event(cutover.Event{Phase: cutover.PhaseHolding, Step: 2, Total: 3, GatesSkipped: true})
	r.Event(cutover.Event{Phase: cutover.PhaseDone, Message: "cutover completed"})
	if !r.State().Current.GatesSkipped {
		t.Error("gatesSkipped not kept after a step passed with its gates skipped")
	}
}
