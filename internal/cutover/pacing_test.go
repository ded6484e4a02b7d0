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
	err := checkPacing(p, 60, 0)
	if err == nil {
		t.Fatal("a 1s pause under a 60s TTL was accepted")
	}
	msg := err.Error()
	if !strings.Contains(msg, "spec.pause 1s is shorter than the records' TTL 60s (steps 1, 3 take it)") ||
		strings.Count(msg, "spec.pause 1s") != 1 || strings.Contains(msg, "spec.steps[") {
		t.Errorf("err = %s", msg)
	}
}

// TestPacingAliasFloor: where alias members' targets set the TTL (60 s for a load balancer,
// which no write lowers), a short pause is refused with advice to lengthen it, not to lower
// the TTL, and spec.ttl.lower never takes the floor below the aliases'.
func TestPacingAliasFloor(t *testing.T) {
	for _, tc := range []struct {
		name            string
		lower, ttl, ali int64
		pause           time.Duration
		want, not       string
	}{
		{"alias sets the floor", 0, 60, 60, 5 * time.Second,
			"the alias targets answer with a TTL of 60s, which no write lowers", "or lower the TTL for the cutover with spec.ttl.lower"},
		{"lowered, the aliases' TTL still holds", 30, 60, 60, 40 * time.Second,
			"spec.pause 40s is shorter than the TTL the alias targets answer with (60s)", "spec.ttl.lower sets"},
		{"plain members set the floor", 0, 300, 60, 100 * time.Second,
			"or lower the plain members' TTL for the cutover with spec.ttl.lower, not below 60s", ""},
	} {
		p := &spec.Plan{LowerTTL: tc.lower, Steps: []spec.PlanStep{{Pause: tc.pause, PauseField: "spec.pause"}}}
		err := checkPacing(p, tc.ttl, tc.ali)
		if err == nil {
			t.Errorf("%s: a %s pause was accepted", tc.name, tc.pause)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tc.want) || (tc.not != "" && strings.Contains(msg, tc.not)) {
			t.Errorf("%s: %s\nwant it to contain %q and not %q", tc.name, msg, tc.want, tc.not)
		}
	}
}
