package cutover

import (
	"context"
	"errors"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// landingLever is a fakeLever whose write of step 2's weights is sent but not yet in effect
// when the run is killed (a Cloud Map status takes effect seconds after it is sent): the
// weights land only after the next run's first read.
type landingLever struct {
	*fakeLever
	mu      sync.Mutex
	kill    context.CancelFunc
	pending map[string]int64 // sent by the killed run, not yet in effect
	resumed bool             // set before the resume: its reads count
	reads   int
}

func (l *landingLever) Write(ctx context.Context, s Snapshot, c Change, env WriteEnv) (Written, error) {
	l.mu.Lock()
	if kill := l.kill; kill != nil && c.Weights != nil && c.Weights["green"] == 100 {
		l.pending, l.kill = maps.Clone(c.Weights), nil
		l.mu.Unlock()
		kill() // killed as the call went out
		return Written{}, ctx.Err()
	}
	l.mu.Unlock()
	return l.fakeLever.Write(ctx, s, c, env)
}

func (l *landingLever) Read(ctx context.Context, o ReadOptions) (Snapshot, error) {
	l.mu.Lock()
	if l.resumed {
		if l.reads++; l.pending != nil && l.reads > 1 {
			// The killed run's write takes effect under its successor, after its first read.
			l.fakeLever.mu.Lock()
			maps.Copy(l.fakeLever.w, l.pending)
			l.fakeLever.mu.Unlock()
			l.pending = nil
		}
	}
	l.mu.Unlock()
	return l.fakeLever.Read(ctx, o)
}

// TestResumeIsNotDriftedByTheKilledRunsWrite: a run killed just after sending step 2's
// weights is resumed; those weights land after the resumed run read the lever. They are
// what the killed run wrote, not another writer's: the resume must not call them drift
// (here spec.onDrift rolls back), and finishes the cutover.
func TestResumeIsNotDriftedByTheKilledRunsWrite(t *testing.T) {
	p := fakePlan(0, 50, 100)
	p.OnDrift = spec.DriftRollback
	fake := newFakeLever("blue", "green", 100, 0)
	lv := &landingLever{fakeLever: fake}
	cfg := fakeConfig(t, p, lv, &scriptGate{name: "g", next: passing})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lv.kill = cancel
	if _, err := Run(ctx, cfg, false); err == nil {
		t.Fatal("the first run ended without being killed")
	}
	if lv.pending == nil {
		t.Fatal("the first run was not killed as it sent step 2")
	}
	lv.resumed = true
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer rcancel()
	rep, err := Run(rctx, cfg, true)
	if err != nil {
		var d *DriftError
		if errors.As(err, &d) {
			t.Fatalf("the resume took the killed run's own write for drift: %v", err)
		}
		t.Fatalf("resume: %v", err)
	}
	if w := fake.weights(); w["blue"] != 0 || w["green"] != 100 {
		t.Errorf("after the resume: weights %v, want blue 0, green 100 (report %+v)", w, rep)
	}
}
