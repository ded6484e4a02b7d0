package spec

import (
	"testing"
	"time"
)

// TestPauseTooShort: the error names the field the plan file wrote, its value and the TTL,
// and says what to change.
func TestPauseTooShort(t *testing.T) {
	tests := []struct {
		name    string
		field   string
		pause   time.Duration
		ttl     time.Duration
		lowered bool
		steps   []int
		want    string
	}{
		{"spec.pause for every step", "spec.pause", time.Second, time.Minute, false, nil,
			"spec.pause 1s is shorter than the records' TTL 60s: a step never completes sooner than the TTL, as resolvers may answer with the weights before it until then; " +
				"set spec.pause to at least 60s, or lower the TTL for the cutover with spec.ttl.lower"},
		{"spec.pause for some steps", "spec.pause", 30 * time.Second, time.Minute, false, []int{1, 2, 4},
			"spec.pause 30s is shorter than the records' TTL 60s (steps 1, 2, 4 take it): a step never completes sooner than the TTL, as resolvers may answer with the weights before it until then; " +
				"set spec.pause to at least 60s, or lower the TTL for the cutover with spec.ttl.lower"},
		{"a step's own, under a lowered TTL", "spec.steps[2].pause", 5 * time.Second, 30 * time.Second, true, nil,
			"spec.steps[2].pause 5s is shorter than the TTL spec.ttl.lower sets (30s): a step never completes sooner than the TTL, as resolvers may answer with the weights before it until then; " +
				"set spec.steps[2].pause to at least 30s, or a lower spec.ttl.lower"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PauseTooShort(tt.field, tt.pause, tt.ttl, tt.lowered, tt.steps); got != tt.want {
				t.Errorf("got\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}
