package cutover

import (
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// TestPacingNamesTheFieldWritten: a pause shorter than the TTL is reported under the field
// the user wrote (spec.pause, once, not one derived field per step), with its own steps.
func TestPacingNamesTheFieldWritten(t *testing.T) {
	p := &spec.Plan{Steps: []spec.PlanStep{
		{Pause: time.Second, PauseField: "spec.pause"},
		{Pause: time.Minute, PauseField: "spec.steps[1].pause"},
		{Pause: time.Second, PauseField: "spec.pause"},
	}}
	err := checkPacing(p, 60)
	if err == nil {
		t.Fatal("a 1s pause under a 60s TTL was accepted")
	}
	msg := err.Error()
	if !strings.Contains(msg, "spec.pause 1s is shorter than the records' TTL 60s (steps 1, 3 take it)") ||
		strings.Count(msg, "spec.pause 1s") != 1 || strings.Contains(msg, "spec.steps[") {
		t.Errorf("err = %s", msg)
	}
}
