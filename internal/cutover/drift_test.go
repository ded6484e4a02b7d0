package cutover

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsr53 "github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// foreignWeight sets blue's member of app.example.com to weight w the way external-dns
// with an aws-weight annotation does: one UPSERT through the bare API, with no ownership
// check, no look at crossfade's authority record and nothing compared.
func foreignWeight(ctx context.Context, e *env, w int64) error {
	zones, err := e.DNS.Zones(ctx)
	if err != nil {
		return err
	}
	_, err = route53test.Client(e.SB).ChangeResourceRecordSets(ctx, &awsr53.ChangeResourceRecordSetsInput{
		HostedZoneId: aws.String(zones[0].ID),
		ChangeBatch: &types.ChangeBatch{Changes: []types.Change{{Action: types.ChangeActionUpsert, ResourceRecordSet: &types.ResourceRecordSet{
			Name: aws.String("app.example.com"), Type: types.RRTypeA, SetIdentifier: aws.String("blue"), Weight: aws.Int64(w), TTL: aws.Int64(1),
			ResourceRecords: []types.ResourceRecord{{Value: aws.String("127.0.0.10")}},
		}}}},
	})
	return err
}

// foreignWriter is another publisher at work: it sets blue's weight to w again and again,
// as external-dns does at every interval, until stopped.
type foreignWriter struct {
	stop   context.CancelFunc
	wg     sync.WaitGroup
	writes atomic.Int64
}

func startForeignWriter(t *testing.T, e *env, w int64) *foreignWriter {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	fw := &foreignWriter{stop: cancel}
	fw.wg.Add(1)
	go func() {
		defer fw.wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if err := foreignWeight(ctx, e, w); err == nil {
				fw.writes.Add(1)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(fw.halt)
	return fw
}

// halt stops the writer and waits until it has: no write of it lands afterwards.
func (fw *foreignWriter) halt() {
	fw.stop()
	fw.wg.Wait()
}

// driftEntries waits until the cutover's journal holds n drift entries and returns them.
func driftEntries(t *testing.T, e *env, n int) []journal.Entry {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		entries, _ := journal.Read(PathsFor(e.dir, "app").Journal)
		var out []journal.Entry
		for _, en := range entries {
			if en.Kind == kindDrift {
				out = append(out, en)
			}
		}
		if len(out) >= n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %d drift entries in the journal after 30 s: %+v", n, entries)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// driftAction reads what a drift entry says the runner did.
func driftAction(t *testing.T, en journal.Entry) driftData {
	t.Helper()
	var d driftData
	if err := json.Unmarshal(en.Data, &d); err != nil {
		t.Fatalf("drift entry data %s: %v", en.Data, err)
	}
	return d
}

// wantDrift checks that a drift entry's detail holds each of details, and returns what
// it says the runner did.
func wantDrift(t *testing.T, en journal.Entry, details ...string) driftData {
	t.Helper()
	for _, want := range details {
		if !strings.Contains(en.Detail, want) {
			t.Errorf("drift entry %q lacks %q", en.Detail, want)
		}
	}
	return driftAction(t, en)
}

// TestDriftPauses: another publisher keeps writing blue's weight 100 while the cutover
// moves it. At step 2 (90/10) a check finds 100 where the cutover wrote 90: the runner
// journals it, names the member, both weights and the likely cause, and pauses (the
// default) instead of advancing. Resumed while the writer is still at it, the step writes
// 90 again and the next check pauses it again; resumed once the writer stopped, it writes
// 90 again and completes.
func TestDriftPauses(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	cfg := e.config(p)
	paths := PathsFor(e.dir, "app")
	fw := startForeignWriter(t, e, 100)
	_, done := startRun(cfg, false)

	first := driftEntries(t, e, 1)[0]
	if d := wantDrift(t, first,
		"weights drifted: app.example.com A [blue] has weight 100, the cutover wrote 90 (published by owner blue from service/default/app)",
		"written by something other than this cutover while crossfade's authority record held it (which writer is not known; likely: a publisher that ignores the authority record, e.g. external-dns",
	); first.Step != 1 || d.Action != spec.DriftPause || len(d.Members) != 1 || d.Members[0].Found != 100 || d.Members[0].Wrote != 90 {
		t.Errorf("drift entry: step %d, %+v", first.Step, d)
	}
	select {
	case err := <-done:
		t.Fatalf("the run ended on drift instead of pausing: %v", err)
	default: // paused: nothing but resume, promote or abort ends it
	}

	// Resumed with the writer still at work: the step writes 90 again, and a check
	// catches the writer again.
	if err := SendCommand(paths, Command{Command: CommandResume, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	second := driftEntries(t, e, 2)[1]
	if second.Step != 1 || !strings.Contains(second.Detail, "has weight 100, the cutover wrote 90") {
		t.Errorf("second drift entry: step %d, %q", second.Step, second.Detail)
	}

	fw.halt()
	if fw.writes.Load() == 0 {
		t.Fatal("the foreign writer wrote nothing")
	}
	if err := SendCommand(paths, Command{Command: CommandResume, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run after the writer stopped: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("run did not finish after resume")
	}
	if a, _ := e.Weights(t); a["blue"] != 0 || a["green"] != 100 {
		t.Errorf("final weights %v", a)
	}
	entries, _ := journal.Read(paths.Journal)
	for _, en := range entries {
		if en.Kind == kindStepPassed && en.Step == 1 && en.Seq < second.Seq {
			t.Errorf("step 2 passed (seq %d) before the drift was over (seq %d)", en.Seq, second.Seq)
		}
	}
}

// TestDriftRollsBack: with spec.onDrift: rollback, the drift found at step 2 fails the
// step and the cutover rolls back to its start, saying why.
func TestDriftRollsBack(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	p.OnDrift = spec.DriftRollback
	startForeignWriter(t, e, 100)
	_, err := Run(context.Background(), e.config(p), false)
	var rb *RollbackError
	if !errors.As(err, &rb) || rb.Step != 1 || !strings.Contains(rb.Reason, "app.example.com A [blue] has weight 100, the cutover wrote 90") {
		t.Fatalf("run: %v, want a rollback from step 2 naming the drift", err)
	}
	if d := driftAction(t, driftEntries(t, e, 1)[0]); d.Action != spec.DriftRollback {
		t.Errorf("drift entry action %q, want rollback", d.Action)
	}
	if a, _ := e.Weights(t); a["blue"] != 100 || a["green"] != 0 {
		t.Errorf("weights after the rollback %v", a)
	}
}

// listThen lets listings through and, once armed, runs after right after the next one:
// a write that lands after a check's last read.
type listThen struct {
	DNS
	armed atomic.Bool
	after func()
}

func (l *listThen) Records(ctx context.Context, z provider.Zone) ([]*endpoint.Endpoint, error) {
	recs, err := l.DNS.Records(ctx, z)
	if l.armed.CompareAndSwap(true, false) {
		l.after()
	}
	return recs, err
}

// TestDriftBeforeAWrite: a weight moved between two steps (after step 1's last check,
// before step 2's write) is caught by the write, which then sends nothing.
func TestDriftBeforeAWrite(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	p.OnDrift = spec.DriftRollback
	cfg := e.config(p)
	moved := false
	dns := &listThen{DNS: e.DNS, after: func() {
		moved = true
		if err := foreignWeight(context.Background(), e, 70); err != nil {
			t.Errorf("foreign write: %v", err)
		}
	}}
	cfg.Levers = e.Levers(dns)
	cfg.Progress = progressHook(func(ev Event) {
		// Left 0: the next read is step 1's last comparison, before it passes; the
		// foreign write lands right after it.
		if ev.Phase == PhaseHolding && ev.Step == 0 && ev.Left == 0 && !moved {
			dns.armed.Store(true)
		}
	})
	_, err := Run(context.Background(), cfg, false)
	var rb *RollbackError
	if !moved || !errors.As(err, &rb) || rb.Step != 1 || !strings.Contains(rb.Reason, "app.example.com A [blue] has weight 70, the cutover wrote 100") {
		t.Fatalf("run: %v, want step 2 to fail on the drift", err)
	}
	entries, _ := journal.Read(PathsFor(e.dir, "app").Journal)
	for _, en := range entries {
		if en.Step == 1 && (en.Kind == kindIntent || en.Kind == kindWritten) {
			t.Errorf("step 2 was written despite the drift: %+v", en)
		}
	}
}

// TestResumeStaysPausedByDrift: a runner that died while paused by drift is still paused
// when resumed, saying why, until someone says resume.
func TestResumeStaysPausedByDrift(t *testing.T) {
	e := newEnv(t, 100, 0) // blue back at 100 by the other writer; the cutover wrote 90
	paths := PathsFor(e.dir, "app")
	drift := "weights drifted: app.example.com A [blue] has weight 100, the cutover wrote 90 (published by owner blue): " + lever.DriftCause
	data, _ := json.Marshal(driftData{Action: spec.DriftPause, Members: []Drift{{Member: "app.example.com A [blue]", Found: 100, Wrote: 90}}})
	seedJournal(t, paths.Journal, []journal.Entry{
		{Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}},
		{Kind: kindStepPassed, Step: 0},
		{Kind: kindIntent, Step: 1, Weights: map[string]int64{"blue": 90, "green": 10}},
		{Kind: kindDrift, Step: 1, Detail: drift, Data: data},
	})
	cfg := e.config(testPlan(t))
	paused := make(chan string, 1)
	cfg.Progress = progressHook(func(ev Event) {
		if ev.Phase == PhasePaused {
			select {
			case paused <- ev.Message:
			default:
			}
		}
	})
	done := make(chan error, 1)
	go func() { _, err := Run(context.Background(), cfg, true); done <- err }()
	select {
	case msg := <-paused:
		if !strings.Contains(msg, drift) || !strings.Contains(msg, "crossfade cutover resume") {
			t.Errorf("pause message %q", msg)
		}
	case err := <-done:
		t.Fatalf("resumed run ended instead of staying paused: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("resumed run did not pause")
	}
	if a, _ := e.Weights(t); a["blue"] != 100 || a["green"] != 0 {
		t.Errorf("weights while paused %v: a paused cutover writes nothing", a)
	}
	resumeToEnd(t, e, paths, done, 60*time.Second)
}

// TestHoldReadBudget: a hold compares the weights with the zone at its first check, every
// DriftInterval and before the step passes, not at every gate check: reading the weights
// lists the whole zone, and at every 2 s check a large zone alone used up Route 53's
// per-account rate for as long as a step held. The same run comparing at every check
// (the old behaviour) lists the zone several times as often.
func TestHoldReadBudget(t *testing.T) {
	lists := map[string]int{}
	for _, tc := range []struct {
		name  string
		every time.Duration
	}{{"every check", 100 * time.Millisecond}, {"default", 0}} {
		e := newEnv(t, 100, 0)
		p := testPlan(t) // 4 steps, checked every 100 ms
		pauseEach(p, 2*time.Second)
		cfg := e.config(p)
		cfg.DriftInterval = tc.every
		before := sandboxtest.APICalls(t, e.SB)
		if _, err := Run(context.Background(), cfg, false); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		after := sandboxtest.APICalls(t, e.SB)
		lists[tc.name] = after["ListResourceRecordSets ok"] - before["ListResourceRecordSets ok"]
	}
	// 4 holds of 2 s: every check is ≈ 80 listings, the default (15 checks) ≈ 3 per hold,
	// plus each write's own reads either way.
	if lists["default"]*3 > lists["every check"] || lists["default"] > 40 {
		t.Errorf("zone listings in a run: %v; want the default under a third of every check's, and at most 40", lists)
	}
	t.Logf("zone listings in a run: %v", lists)
}
