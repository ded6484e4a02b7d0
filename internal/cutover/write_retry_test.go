package cutover

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"

	"github.com/crossfade-io/crossfade/internal/awsconfig"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	leveralb "github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// A write that fails transiently (the SDK retried a throttled or failed call until it ran
// out of attempts) is retried by the engine on a fresh read: a forward write for
// Config.WriteRetryFor, a rollback's until it lands. The faults are the sandbox's, set
// over its HTTP API while the cutover runs; the clients are the real SDK's (backing off
// for a few milliseconds between their own attempts: route53test).

// sdkAttempts is how many calls the SDK makes of a throttled or failed request before it
// gives up.
const sdkAttempts = awsconfig.DefaultMaxRetries + 1

// retryMsg is in every progress event and log line of a retry.
const retryMsg = "write failed transiently"

// logSink collects a run's log lines.
type logSink struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// count returns how many lines contain sub.
func (s *logSink) count(sub string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), sub)
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *logSink) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(s, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// retryPlan is 10 → 50 → 100 % to green, 1 s per step (the records' TTL), with the gates
// given: step 2 (50 %) is the one the tests fault, after step 1 has moved the weights.
func retryPlan(gates ...spec.Gate) *spec.Plan {
	p := &spec.Plan{Name: "app", Zone: "example.com", Records: []spec.Record{{Name: "app.example.com", Type: "A"}},
		From: "blue", To: "green", Rollback: spec.PlanRollback{Mode: spec.RollbackImmediate},
		InSyncTimeout: 10 * time.Second, StepTimeout: 10 * time.Second}
	for _, pct := range []int64{10, 50, 100} {
		p.Steps = append(p.Steps, spec.PlanStep{Weights: spec.Weights{From: 100 - pct, To: pct}, Pause: time.Second, Gates: gates})
	}
	return p
}

// retryConfig is e's config for p with the engine's backoff lowered to keep tests short,
// logging to log.
func retryConfig(e *env, p *spec.Plan, log *logSink) Config {
	cfg := e.config(p)
	cfg.Logger = log.logger()
	cfg.WriteRetryBackoff = 50 * time.Millisecond
	return cfg
}

// wantZone checks both members' A and TXT weights.
func wantZone(t *testing.T, e *env, blue, green int64) {
	t.Helper()
	a, txt := e.Weights(t)
	if a["blue"] != blue || a["green"] != green || txt["blue"] != blue || txt["green"] != green {
		t.Errorf("zone: A %v, TXT %v; want blue=%d green=%d in both", a, txt, blue, green)
	}
}

// stepEntries counts the journal's entries of step by kind.
func stepEntries(t *testing.T, e *env, step int) map[string]int {
	t.Helper()
	entries, err := journal.Read(PathsFor(e.dir, "app").Journal)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, en := range entries {
		if en.Step == step {
			out[en.Kind]++
		}
	}
	return out
}

// TestWriteRetriedThroughTransientFailures: a write that the SDK gave up on after its
// attempts (throttled, 500s, PriorRequestNotComplete) is retried by the engine; once the
// faults clear, the cutover goes on. A step's write: it completes at the final weights. A
// rollback's write: it keeps retrying past the forward writes' bound and the zone ends
// back home. Each retry is one warning and one progress event; the intent is journaled
// once per write.
func TestWriteRetriedThroughTransientFailures(t *testing.T) {
	const (
		throttled = `{"throttleRate":1,"operations":["ChangeResourceRecordSets"]}`
		failed    = `{"serverErrorRate":1,"operations":["ChangeResourceRecordSets"]}`
		prior     = `{"priorRequestRate":1,"operations":["ChangeResourceRecordSets"]}`
	)
	cases := []struct {
		name   string
		faults string
		// result is the sandbox's API-call counter the faults increment.
		result string
		// rollback makes step 2's gate fail, and faults the rollback's write instead.
		rollback bool
		// clearAfter is how many engine retries are seen before the faults are cleared.
		clearAfter int
		// retryFor is Config.WriteRetryFor; 0 keeps the default.
		retryFor time.Duration
	}{
		{name: "step throttled", faults: throttled, result: "ChangeResourceRecordSets Throttling", clearAfter: 1},
		{name: "step answered 500", faults: failed, result: "ChangeResourceRecordSets InternalFailure", clearAfter: 1},
		{name: "step PriorRequestNotComplete", faults: prior, result: "ChangeResourceRecordSets PriorRequestNotComplete", clearAfter: 2},
		// Faults outlast the forward bound (retries at about 50, 100, 200, 400 ms): a rollback
		// never gives up.
		{name: "rollback throttled past the forward bound", faults: throttled, result: "ChangeResourceRecordSets Throttling",
			rollback: true, clearAfter: 4, retryFor: 100 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 100, 0)
			var greenDown atomic.Bool
			var p *spec.Plan
			if tc.rollback {
				p = retryPlan(clusterGate(t, "green-health", &greenDown))
			} else {
				p = retryPlan()
			}
			log := &logSink{}
			cfg := retryConfig(e, p, log)
			cfg.WriteRetryFor = tc.retryFor
			before := sandboxtest.APICalls(t, e.SB)[tc.result]
			var faulted bool
			var retries []Event
			cfg.Progress = progressHook(func(ev Event) {
				switch {
				case strings.Contains(ev.Message, retryMsg):
					retries = append(retries, ev)
					if len(retries) == tc.clearAfter {
						sandboxtest.SetFaults(t, e.SB, `{}`)
					}
				case faulted:
				case !tc.rollback && ev.Phase == PhaseWriting && ev.Step == 1:
					// The write's intent is shown just before the lever sends it.
					faulted = true
					sandboxtest.SetFaults(t, e.SB, tc.faults)
				case tc.rollback && ev.Phase == PhaseWriting && ev.Step == 1:
					greenDown.Store(true) // the gate fails step 2: a rollback follows
				case tc.rollback && ev.Phase == PhaseRollingBack:
					faulted = true
					sandboxtest.SetFaults(t, e.SB, tc.faults)
				}
			})
			began := time.Now()
			rep, err := Run(context.Background(), cfg, false)
			t.Logf("run took %s", time.Since(began).Round(time.Millisecond))
			stage, step, home := PhaseWriting, 1, false
			if tc.rollback {
				stage, step, home = PhaseRollingBack, -2, true
				var rb *RollbackError
				if !errors.As(err, &rb) || rb.Step != 1 || rep == nil || rep.Outcome != outcomeRolledBack {
					t.Fatalf("run: %v (report %+v), want a rollback from step 2\nlog:\n%s", err, rep, log)
				}
				wantZone(t, e, 100, 0)
			} else {
				if err != nil {
					t.Fatalf("run: %v\nlog:\n%s", err, log)
				}
				wantZone(t, e, 0, 100)
			}
			if len(retries) != tc.clearAfter {
				t.Errorf("%d retry events, want %d: %+v", len(retries), tc.clearAfter, retries)
			}
			for _, ev := range retries {
				t.Logf("retry event: %s", Text.EventLine(ev))
				if ev.Phase != stage || (!home && ev.Step != 1) || !strings.Contains(ev.Message, "retrying in") {
					t.Errorf("retry event %+v: want phase %s, step 2, saying when it retries", ev, stage)
				}
				if home != strings.Contains(ev.Message, "a rollback retries until it lands") {
					t.Errorf("retry event %q: rollback %v", ev.Message, home)
				}
			}
			if n := log.count(retryMsg + "; retrying"); n != tc.clearAfter {
				t.Errorf("%d retry warnings in the log, want %d:\n%s", n, tc.clearAfter, log)
			}
			// The SDK made its attempts each time the engine tried, and no more once cleared.
			if n := sandboxtest.APICalls(t, e.SB)[tc.result] - before; n != sdkAttempts*tc.clearAfter {
				t.Errorf("%d %s calls, want %d (%d engine attempts of %d SDK attempts)", n, tc.result, sdkAttempts*tc.clearAfter, tc.clearAfter, sdkAttempts)
			}
			if k := stepEntries(t, e, step); k[kindIntent] != 1 || k[kindWritten] != 1 || k[kindInSync] != 1 {
				t.Errorf("journal of the faulted write: %v, want one intent, written and insync", k)
			}
		})
	}
}

// TestForwardWriteGivesUp: a step's write that keeps failing transiently for longer than
// WriteRetryFor ends the run with the last error, naming the step and how long it tried;
// the zone holds the step before's weights, whole, and the journal the step's intent
// alone. Resumed once the faults clear, the cutover completes.
func TestForwardWriteGivesUp(t *testing.T) {
	e := newEnv(t, 100, 0)
	log := &logSink{}
	cfg := retryConfig(e, retryPlan(), log)
	cfg.WriteRetryFor = time.Second
	var failingSince time.Time
	cfg.Progress = progressHook(func(ev Event) {
		if failingSince.IsZero() && ev.Phase == PhaseWriting && ev.Step == 1 {
			failingSince = time.Now()
			sandboxtest.SetFaults(t, e.SB, `{"throttleRate":1,"operations":["ChangeResourceRecordSets"]}`)
		}
	})
	_, err := Run(context.Background(), cfg, false)
	took := time.Since(failingSince)
	if err == nil {
		t.Fatal("run completed through a write throttled for longer than WriteRetryFor")
	}
	t.Logf("run: %v", err)
	for _, want := range []string{"gave up after ", "of transient failures", "a forward write is retried for 1s", "step 2 of 3", "Throttling"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	var ma *retry.MaxAttemptsError
	if !errors.As(err, &ma) {
		t.Errorf("error %v does not wrap the SDK's *retry.MaxAttemptsError", err)
	}
	// The last attempt is made at the bound, not a backoff past it.
	if took < time.Second || took > 3*time.Second {
		t.Errorf("gave up %s after the faults began, want about WriteRetryFor (1s)", took)
	}
	if n := log.count(retryMsg + "; retrying"); n < 3 {
		t.Errorf("%d retries in 1s at 50 ms doubling, want at least 3:\n%s", n, log)
	}
	wantZone(t, e, 90, 10)
	if k := stepEntries(t, e, 1); k[kindIntent] != 1 || k[kindWritten] != 0 {
		t.Errorf("journal of step 2: %v, want its intent alone", k)
	}

	sandboxtest.SetFaults(t, e.SB, `{}`)
	cfg.Progress = nil
	rep, err := Run(context.Background(), cfg, true)
	if err != nil || rep.Outcome != outcomeCompleted {
		t.Fatalf("resume: %v (report %+v)", err, rep)
	}
	wantZone(t, e, 0, 100)
}

// TestNonTransientWriteNotRetried: a write that AWS refuses (InvalidInput: Route 53
// takes weights 0..255, and a plan built past validation asks for 300) ends the run as it
// did before: one call, no retry, nothing written.
func TestNonTransientWriteNotRetried(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := retryPlan()
	p.Steps[1].Weights = spec.Weights{From: 50, To: 300}
	log := &logSink{}
	cfg := retryConfig(e, p, log)
	var retried atomic.Int32
	cfg.Progress = progressHook(func(ev Event) {
		if strings.Contains(ev.Message, retryMsg) {
			retried.Add(1)
		}
	})
	before := sandboxtest.APICalls(t, e.SB)
	_, err := Run(context.Background(), cfg, false)
	if err == nil || !strings.Contains(err.Error(), "step 2 of 3") || !strings.Contains(err.Error(), "InvalidInput") {
		t.Fatalf("run: %v, want step 2's InvalidInput", err)
	}
	after := sandboxtest.APICalls(t, e.SB)
	if n := after["ChangeResourceRecordSets InvalidInput"] - before["ChangeResourceRecordSets InvalidInput"]; n != 1 {
		t.Errorf("%d refused ChangeResourceRecordSets calls, want 1 (neither the SDK nor the engine retries a refusal)", n)
	}
	if n := retried.Load(); n != 0 || log.count(retryMsg) != 0 {
		t.Errorf("%d retry events, %d retry log lines, want none:\n%s", n, log.count(retryMsg), log)
	}
	wantZone(t, e, 90, 10)
}

// TestRetryWaitEndsWithContext: Ctrl-C while a write waits to be retried ends the run at
// once, not after the wait; the journal keeps the intent for run --resume.
func TestRetryWaitEndsWithContext(t *testing.T) {
	e := newEnv(t, 100, 0)
	log := &logSink{}
	cfg := retryConfig(e, retryPlan(), log)
	cfg.WriteRetryBackoff = 20 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled time.Time
	cfg.Progress = progressHook(func(ev Event) {
		switch {
		case strings.Contains(ev.Message, retryMsg) && cancelled.IsZero():
			cancelled = time.Now()
			cancel()
		case ev.Phase == PhaseWriting && ev.Step == 1:
			sandboxtest.SetFaults(t, e.SB, `{"throttleRate":1,"operations":["ChangeResourceRecordSets"]}`)
		}
	})
	_, err := Run(ctx, cfg, false)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v, want context.Canceled", err)
	}
	if cancelled.IsZero() {
		t.Fatal("no retry was seen")
	}
	if d := time.Since(cancelled); d > time.Second {
		t.Errorf("run ended %s after ctx, want at once (the retry wait is 16 s or more)", d)
	}
	if k := stepEntries(t, e, 1); k[kindIntent] != 1 || k[kindWritten] != 0 {
		t.Errorf("journal of step 2: %v, want its intent alone", k)
	}
}

// TestAbortDuringWriteRetries: an abort sent while a step's write waits to be retried
// rolls back at the next check, not once AWS lets the forward write through (which may be
// minutes): the forward write is never sent again, and the zone goes back home.
func TestAbortDuringWriteRetries(t *testing.T) {
	e := newEnv(t, 100, 0)
	log := &logSink{}
	cfg := retryConfig(e, retryPlan(), log)
	cfg.WriteRetryBackoff = 5 * time.Second // the abort must not wait this out
	var aborted time.Time
	cfg.Progress = progressHook(func(ev Event) {
		switch {
		case strings.Contains(ev.Message, retryMsg) && aborted.IsZero():
			// The faults go with the abort: a forward attempt after it would now land.
			sandboxtest.SetFaults(t, e.SB, `{}`)
			if err := SendCommand(PathsFor(e.dir, "app"), Command{Command: CommandAbort, By: "sre@host"}); err != nil {
				t.Error(err)
			}
			aborted = time.Now()
		case ev.Phase == PhaseWriting && ev.Step == 1 && aborted.IsZero():
			sandboxtest.SetFaults(t, e.SB, `{"throttleRate":1,"operations":["ChangeResourceRecordSets"]}`)
		}
	})
	_, err := Run(context.Background(), cfg, false)
	if !errors.Is(err, ErrAborted) {
		t.Fatalf("run: %v, want ErrAborted", err)
	}
	if aborted.IsZero() {
		t.Fatal("no retry was seen")
	}
	// The rollback holds for the records' TTL (1 s) after its write.
	if d := time.Since(aborted); d > 4*time.Second {
		t.Errorf("run ended %s after the abort, want about the rollback's hold (the retry wait was 4 s or more)", d)
	}
	if k := stepEntries(t, e, 1); k[kindIntent] != 1 || k[kindWritten] != 0 {
		t.Errorf("journal of step 2: %v, want its intent alone (the forward write sent again after the abort)", k)
	}
	wantZone(t, e, 100, 0)
}

// TestALBPartialWriteRetried: an ALB step writes its rules one call each; the listener's
// ModifyListener is throttled after the rule's ModifyRule went through. The engine's retry
// reads the rule at the new weights and takes them for the failed attempt's own, not for
// drift (which would roll back: spec.onDrift), and writes the listener: the cutover
// completes with no drift journaled.
func TestALBPartialWriteRetried(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	sb := sandboxtest.Start(t)
	a := levertest.ALBOn(t, sb, awsconfig.NewRetryer(awsconfig.Options{MaxBackoff: 5 * time.Millisecond}))
	p := &spec.Plan{Name: "shop", ALB: &spec.ALB{ListenerRules: []string{a.Rule, a.Listener}, From: "blue", To: "green"},
		From: "blue", To: "green", Rollback: spec.PlanRollback{Mode: spec.RollbackImmediate}, OnDrift: spec.DriftRollback,
		InSyncTimeout: 5 * time.Second, StepTimeout: 5 * time.Second,
		Steps: []spec.PlanStep{{Weights: spec.Weights{From: 50, To: 50}}, {Weights: spec.Weights{From: 0, To: 100}}}}
	dir := t.TempDir()
	log := &logSink{}
	cfg := Config{Plan: p, Levers: albLevers(a.API, nil), StateDir: dir, By: "test@host", Logger: log.logger(), CheckInterval: 10 * time.Millisecond,
		PollInterval: 10 * time.Millisecond, WriteRetryBackoff: 50 * time.Millisecond}
	var faulted bool
	var retries atomic.Int32
	cfg.Progress = progressHook(func(ev Event) {
		switch {
		case strings.Contains(ev.Message, retryMsg):
			retries.Add(1)
			sandboxtest.SetFaults(t, sb, `{}`)
		case !faulted && ev.Phase == PhaseWriting && ev.Step == 0:
			faulted = true
			sandboxtest.SetFaults(t, sb, `{"throttleRate":1,"operations":["ModifyListener"]}`)
		}
	})
	before := sandboxtest.APICalls(t, sb)
	rep, err := Run(context.Background(), cfg, false)
	if err != nil || rep.Outcome != outcomeCompleted {
		t.Fatalf("run: %v (report %+v)\nlog:\n%s", err, rep, log)
	}
	if n := retries.Load(); n != 1 {
		t.Errorf("%d retries, want 1", n)
	}
	after := sandboxtest.APICalls(t, sb)
	if n := after["ModifyListener Throttling"] - before["ModifyListener Throttling"]; n != sdkAttempts {
		t.Errorf("%d throttled ModifyListener calls, want %d", n, sdkAttempts)
	}
	// Step 1: the rule once (not again on the retry: it already had the weights), step 2 once.
	if n := after["ModifyRule ok"] - before["ModifyRule ok"]; n != 2 {
		t.Errorf("%d ModifyRule calls, want 2", n)
	}
	entries, err := journal.Read(PathsFor(dir, "shop").Journal)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if en.Kind == kindDrift {
			t.Errorf("drift journaled: %s", en.Detail)
		}
	}
	if rule, listener := a.Weights(t); rule != "blue=0 green=100" || listener != "blue=0 green=100" {
		t.Errorf("rule %s, listener %s; want blue=0 green=100", rule, listener)
	}
}

// TestTransient: what the engine retries, as the SDK and the levers wrap it.
func TestTransient(t *testing.T) {
	apiErr := func(code string) error { return &smithy.GenericAPIError{Code: code, Message: code} }
	op := func(err error) error {
		return &smithy.OperationError{ServiceID: "Route 53", OperationName: "ChangeResourceRecordSets", Err: err}
	}
	exhausted := op(&retry.MaxAttemptsError{Attempt: 4, Err: apiErr("Throttling")})
	// The SDK's retry middleware joins the last error with the quota's refusal, which the
	// token bucket returns by value.
	quota := op(errors.Join(apiErr("Throttling"), fmt.Errorf("failed to get rate limit token, %w", ratelimit.QuotaExceededError{Available: 0, Requested: 5})))
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"SDK out of attempts (Route 53 write)", fmt.Errorf("step 2 of 3: write blue=50 green=50: zone example.com: apply 5 changes: %w", exhausted), true},
		{"SDK out of attempts (read)", fmt.Errorf("step 2 of 3: %w", &ReadError{Err: fmt.Errorf("zone example.com: %w", exhausted)}), true},
		{"SDK out of attempts (ALB write stopped part way)", &leveralb.PartialWriteError{Err: fmt.Errorf("step 1 of 2: write: %w", exhausted), Written: 1, Of: 2}, true},
		{"SDK out of attempts (Cloud Map tag)", fmt.Errorf("step 1 of 2: service ns/app: tag it with the cutover's authority: %w", exhausted), true},
		{"retry quota refused", fmt.Errorf("step 2 of 3: %w", quota), true},
		{"retry quota refused (pointer)", fmt.Errorf("x: %w", &ratelimit.QuotaExceededError{}), true},
		{"throttled, not retried by the SDK", op(apiErr("Throttling")), false},
		{"AccessDenied", fmt.Errorf("step 2 of 3: %w", op(apiErr("AccessDenied"))), false},
		{"refused change", fmt.Errorf("step 2 of 3: %w", &provider.RejectedError{Code: "InvalidChangeBatch", Err: op(apiErr("InvalidChangeBatch"))}), false},
		{"held by another runner", &HeldError{Cutover: "app", Record: "app.example.com"}, false},
		{"drift", &DriftError{Expected: "the cutover wrote"}, false},
		{"not ready", fmt.Errorf("step 2 of 3: %w", &NotReadyError{Problems: []string{"gone"}}), false},
		{"interrupted", fmt.Errorf("step 2 of 3: %w", &aws.RequestCanceledError{Err: context.Canceled}), false},
		{"nil", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := transient(tc.err); got != tc.want {
				t.Errorf("transient(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// TestRetryWait: 1 s, 2 s, 4 s … from the default base, capped at 30 s, with ±20 % jitter
// that never passes the cap.
func TestRetryWait(t *testing.T) {
	cases := []struct {
		attempt  int
		min, max time.Duration
	}{
		{1, 800 * time.Millisecond, 1200 * time.Millisecond},
		{2, 1600 * time.Millisecond, 2400 * time.Millisecond},
		{3, 3200 * time.Millisecond, 4800 * time.Millisecond},
		{5, 12800 * time.Millisecond, 19200 * time.Millisecond},
		{6, 24 * time.Second, 30 * time.Second},
		{1000, 24 * time.Second, 30 * time.Second},
	}
	for _, tc := range cases {
		for range 200 {
			if d := retryWait(defaultWriteRetryBackoff, tc.attempt); d < tc.min || d > tc.max {
				t.Fatalf("retryWait(1s, %d) = %s, want %s..%s", tc.attempt, d, tc.min, tc.max)
			}
		}
	}
}
