package cutover

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// throttleLists is the sandbox fault that makes every zone listing fail (past the SDK's
// own attempts): the reads a hold compares the weights with.
const throttleLists = `{"throttleRate":1,"operations":["ListResourceRecordSets"]}`

// TestHoldReadsBackOff: while the zone cannot be read, a hold reads it again after a pause
// that doubles up to DriftInterval, not at every check: a throttled API gets a few reads,
// not one per check (each itself retried by the SDK), and the log a few lines, not one
// per check. Once reads work again the step passes and the run completes.
func TestHoldReadsBackOff(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := retryPlan() // checked every 100 ms; DriftInterval 1.5 s
	p.Steps[0].Pause = 4 * time.Second
	log := &logSink{}
	cfg := retryConfig(e, p, log)
	const outage = 3 * time.Second
	var once sync.Once
	faulted := make(chan struct{})
	cfg.Progress = progressHook(func(ev Event) {
		if ev.Phase == PhaseHolding && ev.Step == 0 {
			once.Do(func() {
				before := sandboxtest.APICalls(t, e.SB)["ListResourceRecordSets Throttling"]
				sandboxtest.SetFaults(t, e.SB, throttleLists)
				go func() {
					defer close(faulted)
					time.Sleep(outage)
					throttled := sandboxtest.APICalls(t, e.SB)["ListResourceRecordSets Throttling"] - before
					sandboxtest.SetFaults(t, e.SB, `{}`)
					// At every check: 30 reads of 4 attempts. Paced: reads at 0, .1, .3,
					// .7, 1.5, 3.0 s.
					if throttled > 6*sdkAttempts {
						t.Errorf("%d throttled listings in %s of outage, want at most %d (reads paced, not one per check)", throttled, outage, 6*sdkAttempts)
					}
					t.Logf("%d throttled listings in %s", throttled, outage)
				}()
			})
		}
	})
	rep, err := Run(context.Background(), cfg, false)
	<-faulted
	if err != nil || rep.Outcome != outcomeCompleted {
		t.Fatalf("run: %v (report %+v)\n%s", err, rep, log)
	}
	if n := log.count("could not read the zone"); n == 0 || n > 3 {
		t.Errorf("%d warnings about the failed reads, want 1 to 3 (the first, then one per DriftInterval):\n%s", n, log)
	}
	if log.count("read the zone again after failed reads") != 1 {
		t.Errorf("no line saying the reads recovered:\n%s", log)
	}
	wantZone(t, e, 0, 100)
}

// TestStepDoesNotPassUncompared: a step passes only on weights read at its end; when the
// zone cannot be read, it holds on until its time limit and fails saying why (then rolls
// back, once the zone can be read again), rather than pass on weights nobody compared.
func TestStepDoesNotPassUncompared(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := retryPlan()
	p.StepTimeout = time.Second
	log := &logSink{}
	cfg := retryConfig(e, p, log)
	cfg.WriteRetryFor = 2 * time.Second // a step that passed anyway would fail fast at the next write
	var faultOnce, clearOnce sync.Once
	cfg.Progress = progressHook(func(ev Event) {
		switch ev.Phase {
		case PhaseHolding:
			if ev.Step == 0 {
				faultOnce.Do(func() { sandboxtest.SetFaults(t, e.SB, throttleLists) })
			}
		case PhaseRollingBack:
			clearOnce.Do(func() { sandboxtest.SetFaults(t, e.SB, `{}`) })
		}
	})
	_, err := Run(context.Background(), cfg, false)
	var rb *RollbackError
	if !errors.As(err, &rb) || rb.Step != 0 || !strings.Contains(rb.Reason, "step over its time limit") ||
		!strings.Contains(rb.Reason, "could not be read to compare") {
		t.Fatalf("run: %v, want step 1 failed over its time limit, naming the reads", err)
	}
	wantZone(t, e, 100, 0)
}
