package lever

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestSleepEndsWithItsContext: Sleep, the wait the engine and its levers share, returns
// the context's error as soon as the context is done (not after d), and nil once d has
// passed on a live context.
func TestSleepEndsWithItsContext(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancelExpired()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{"cancelled, a long wait", done, time.Hour, context.Canceled},
		{"past its deadline", expired, time.Hour, context.DeadlineExceeded},
		{"live, no wait", context.Background(), 0, nil},
		{"live, a short wait", context.Background(), time.Millisecond, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := Sleep(tc.ctx, tc.d); !errors.Is(err, tc.want) {
				t.Errorf("Sleep(%s) = %v, want %v", tc.d, err, tc.want)
			}
		})
	}
}
