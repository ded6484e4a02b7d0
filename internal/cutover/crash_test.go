package cutover

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// errCrash stands for the runner dying at that moment.
var errCrash = errors.New("runner killed")

// crashPoint is where in a write the runner dies.
type crashPoint int

const (
	// afterSend: the provider accepted the batch, the runner never heard back (nothing
	// after the intent is journaled, and the change id is lost).
	afterSend crashPoint = iota
	// afterInSync: the change is INSYNC, the runner died before journaling it.
	afterInSync
)

func (c crashPoint) String() string { return [...]string{"after send", "after INSYNC"}[c] }

// crashDNS passes every call to the provider, until write n: it dies at the point given,
// cancelling the run's context as a kill would end it.
type crashDNS struct {
	DNS
	n      int
	at     crashPoint
	cancel context.CancelFunc
	writes int
	id     string
}

func (c *crashDNS) ApplyChange(ctx context.Context, z provider.Zone, b changes.Batch, comment string) (string, error) {
	id, err := c.DNS.ApplyChange(ctx, z, b, comment)
	c.writes++
	if c.writes == c.n {
		if c.at == afterSend {
			c.cancel()
			return "", errCrash
		}
		c.id = id
	}
	return id, err
}

func (c *crashDNS) InSync(ctx context.Context, id string) (bool, error) {
	ok, err := c.DNS.InSync(ctx, id)
	if ok && id == c.id {
		c.cancel()
		return false, errCrash
	}
	return ok, err
}

// failAt is a gate that fails once `to` has the weight given.
type failAt int64

func (f failAt) Name() string { return "fails-at" }
func (f failAt) Check(_ context.Context, s gate.Step) gate.Result {
	pass := s.Weights[s.To] != int64(f)
	return gate.Result{Gate: f.Name(), Kind: "test", Pass: pass, Detail: fmt.Sprintf("to weight %d", s.Weights[s.To])}
}

// TestCrashAtEveryWrite kills the runner at each write of a cutover that lowers the TTL
// (2 s → 1 s), right after the provider accepted the batch and right after it went
// INSYNC, then resumes it. Every resumed run must end as an uninterrupted one would:
// weights, ownership records and TTL as they should be, every write followed to INSYNC
// (changes stay PENDING 150 ms here), and the old TTL waited out even when the crash
// came in the middle of lowering it. The rollback scenario fails its last step and
// rolls back through a gradual stop: a resumed rollback goes through the same stops.
func TestCrashAtEveryWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandboxes")
	}
	const changeDelay = 150 * time.Millisecond
	scenarios := []struct {
		name string
		// writes is how many batches an uninterrupted run sends.
		writes   int
		rollback bool
	}{
		// lower TTL, step 1 (50 %), step 2 (100 %), restore TTL
		{"completes", 4, false},
		// lower TTL, step 1, step 2 fails, rollback 50/50, rollback 100/0, restore TTL
		{"rolls back", 6, true},
	}
	for _, sc := range scenarios {
		firstCrash := 1
		if sc.rollback {
			firstCrash = 4 // the forward writes are the first scenario's
		}
		for n := firstCrash; n <= sc.writes; n++ {
			for _, at := range []crashPoint{afterSend, afterInSync} {
				t.Run(fmt.Sprintf("%s/write %d %s", sc.name, n, at), func(t *testing.T) {
					t.Parallel()
					e := newEnvWith(t, sandbox.Config{ChangeDelay: changeDelay}, 100, 0)
					e.setTTL(t, 2)
					p := testPlan(t)
					p.Steps = p.Steps[2:] // 50 %, 100 %
					p.LowerTTL = 1
					if sc.rollback {
						p.Rollback = spec.PlanRollback{Mode: spec.RollbackGradual, Steps: []spec.Weights{{From: 50, To: 50}}}
					}
					newGate := func(spec.Gate) (Gate, error) { return failAt(100), nil }
					if sc.rollback {
						p.Steps[1].Gates = []spec.Gate{{Name: "fails-at"}}
					}

					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					cfg := e.config(p)
					cfg.NewGate = newGate
					cfg.Levers = dnsLevers(&crashDNS{DNS: e.dns, n: n, at: at, cancel: cancel}, e.reg)
					if _, err := Run(ctx, cfg, false); err == nil {
						t.Fatal("the run did not die at its crash point")
					}

					cfg = e.config(p)
					cfg.NewGate = newGate
					rep, err := Run(context.Background(), cfg, true)
					wantStart, wantOutcome := int64(0), outcomeCompleted
					if sc.rollback {
						wantStart, wantOutcome = 100, outcomeRolledBack
						var rb *RollbackError
						if !errors.As(err, &rb) || rb.Step != 1 {
							t.Fatalf("resumed run: %v, want the rollback of step 2", err)
						}
					} else if err != nil {
						t.Fatalf("resumed run: %v", err)
					}
					if rep.Outcome != wantOutcome {
						t.Fatalf("outcome %q, want %q", rep.Outcome, wantOutcome)
					}
					a, txt := e.weights(t)
					if a["blue"] != wantStart || a["green"] != 100-wantStart || txt["blue"] != wantStart || txt["green"] != 100-wantStart {
						t.Errorf("final weights A %v TXT %v, want blue %d", a, txt, wantStart)
					}
					for key, ttl := range e.ttls(t) {
						if ttl != 2 {
							t.Errorf("%s TTL %d, want the original 2 restored", key, ttl)
						}
					}
					entries, err := journal.Read(PathsFor(e.dir, "app").Journal)
					if err != nil {
						t.Fatal(err)
					}
					checkJournal(t, entries, changeDelay)
					// A resumed rollback keeps the stops it began with.
					var names []string
					for _, s := range rep.Steps {
						names = append(names, s.Name)
					}
					if sc.rollback && !strings.Contains(strings.Join(names, ","), "rollback 2 of 2") {
						t.Errorf("writes %v: the rollback lost its gradual stop", names)
					}
				})
			}
		}
	}
}

// checkJournal checks that every write that a later entry builds on was followed to
// INSYNC, after at least the sandbox's change delay, and that the old TTL was waited out
// after the TTL was last written lower.
func checkJournal(t *testing.T, entries []journal.Entry, delay time.Duration) {
	t.Helper()
	type write struct {
		intent  journal.Entry
		written time.Time
		insync  bool
	}
	var cur *write
	var lowered *journal.Entry
	for _, e := range entries {
		switch e.Kind {
		case kindIntent:
			cur = &write{intent: e}
		case kindWritten:
			if cur == nil || cur.intent.Step != e.Step {
				t.Errorf("seq %d: written without its intent", e.Seq)
				continue
			}
			cur.written = e.Time
		case kindInSync:
			if cur == nil || cur.written.IsZero() {
				t.Errorf("seq %d: insync without a write", e.Seq)
				continue
			}
			// From the intent, journaled before the batch was sent: the change cannot be
			// INSYNC sooner than the sandbox's delay after that.
			if took := e.Time.Sub(cur.intent.Time); took < delay {
				t.Errorf("seq %d: INSYNC %s after the intent, before the change could be", e.Seq, took)
			}
			cur.insync = true
			if cur.intent.Step == stepTTLLower {
				l := e
				lowered = &l
			}
		case kindStepPassed, kindStepFailed, kindRollbackHeld, kindTTLLowered, kindDone:
			if cur != nil && !cur.insync && e.Kind != kindStepFailed {
				t.Errorf("seq %d %s: follows write %q that was never confirmed INSYNC", e.Seq, e.Kind, cur.intent.Detail)
			}
			if e.Kind == kindTTLLowered && lowered != nil {
				if waited := e.Time.Sub(lowered.Time); waited < 2*time.Second {
					t.Errorf("seq %d: the old TTL 2s was waited out only %s after the lowered TTL went INSYNC", e.Seq, waited)
				}
			}
		}
	}
}
