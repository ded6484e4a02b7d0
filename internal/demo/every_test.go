package demo

import (
	"context"
	"testing"
	"time"
)

// TestEvery: every never calls f on a context already done, and returns once f's context
// ends, having called f first after its first delay and then each interval until then.
func TestEvery(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cancelled bool // the context is done before every starts
		stopAfter int  // f cancels the context on this call
		first     time.Duration
		interval  time.Duration
		exact     bool // no tick can race the cancel
	}{
		// An hour: no tick can come, so no call may either, not even one at once.
		{"done before it starts", true, 0, time.Hour, time.Hour, true},
		{"done on the first call", false, 1, 0, time.Hour, true},
		{"done on the first call, ticking", false, 1, time.Millisecond, time.Millisecond, false},
		{"done on the third call", false, 3, 0, time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelled {
				cancel()
			}
			calls := 0
			every(ctx, tc.first, tc.interval, func() {
				calls++
				if calls == tc.stopAfter {
					cancel()
				}
			})
			// The ticker may have fired while f cancelled: select then picks either.
			if calls < tc.stopAfter || calls > tc.stopAfter+1 || tc.exact && calls != tc.stopAfter {
				t.Errorf("every called f %d times, want %d (or one more, a tick racing the cancel)", calls, tc.stopAfter)
			}
		})
	}
}
