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
		floor   []PauseFloor
		want    string
	}{
		{"spec.pause for every step", "spec.pause", time.Second, time.Minute, false, nil, nil,
			"spec.pause 1s is shorter than the records' TTL 60s: a step never completes sooner than the TTL, as resolvers may answer with the weights before it until then; " +
				"set spec.pause to at least 60s, or lower the TTL for the cutover with spec.ttl.lower"},
		{"spec.pause for some steps", "spec.pause", 30 * time.Second, time.Minute, false, []int{1, 2, 4}, nil,
			"spec.pause 30s is shorter than the records' TTL 60s (steps 1, 2, 4 take it): a step never completes sooner than the TTL, as resolvers may answer with the weights before it until then; " +
				"set spec.pause to at least 60s, or lower the TTL for the cutover with spec.ttl.lower"},
		{"a step's own, under a lowered TTL", "spec.steps[2].pause", 5 * time.Second, 30 * time.Second, true, nil, nil,
			"spec.steps[2].pause 5s is shorter than the TTL spec.ttl.lower sets (30s): a step never completes sooner than the TTL, as resolvers may answer with the weights before it until then; " +
				"set spec.steps[2].pause to at least 30s, or a lower spec.ttl.lower"},
		// Alias members answer with their target's TTL, which spec.ttl.lower cannot lower.
		{"the alias targets' TTL", "spec.pause", 5 * time.Second, time.Minute, false, nil, []PauseFloor{{AliasTTL: time.Minute}},
			"spec.pause 5s is shorter than the TTL the alias targets answer with (60s): a step never completes sooner than the TTL, as resolvers may answer with the weights before it until then; " +
				"set spec.pause to at least 60s: the alias targets answer with a TTL of 60s, which no write lowers (spec.ttl.lower applies to the plain members only)"},
		{"the alias targets' TTL, lowered to it", "spec.pause", 5 * time.Second, time.Minute, true, []int{2}, []PauseFloor{{AliasTTL: time.Minute}},
			"spec.pause 5s is shorter than the TTL the alias targets answer with (60s) (steps 2 take it): a step never completes sooner than the TTL, as resolvers may answer with the weights before it until then; " +
				"set spec.pause to at least 60s: the alias targets answer with a TTL of 60s, which no write lowers (spec.ttl.lower applies to the plain members only)"},
		{"plain members' TTL above the aliases'", "spec.rollback.pause", 10 * time.Second, 300 * time.Second, false, nil, []PauseFloor{{AliasTTL: time.Minute}},
			"spec.rollback.pause 10s is shorter than the records' TTL 300s: a step never completes sooner than the TTL, as resolvers may answer with the weights before it until then; " +
				"set spec.rollback.pause to at least 300s, or lower the plain members' TTL for the cutover with spec.ttl.lower, not below 60s: the alias targets answer with a TTL of 60s, which no write lowers"},
		{"a lowered TTL above the aliases'", "spec.pause", 10 * time.Second, 120 * time.Second, true, nil, []PauseFloor{{AliasTTL: time.Minute}},
			"spec.pause 10s is shorter than the TTL spec.ttl.lower sets (120s): a step never completes sooner than the TTL, as resolvers may answer with the weights before it until then; " +
				"set spec.pause to at least 120s, or a lower spec.ttl.lower, not below 60s: the alias targets answer with a TTL of 60s, which no write lowers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PauseTooShort(tt.field, tt.pause, tt.ttl, tt.lowered, tt.steps, tt.floor...); got != tt.want {
				t.Errorf("got\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}
