package objectstatus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsr53 "github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// The journals here are made by running the engine (cutover.Run) in-process on a sandbox
// zone through the real Route 53 lever, with its journal in a journal.Memory (as a store
// kept in the Cutover object would be) and control commands sent as `crossfade cutover
// pause|resume|abort` leave them: what Project reads is what the engine writes.

// engineRun is one cutover run by the engine over a sandbox zone.
type engineRun struct {
	t    *testing.T
	zone *levertest.Zone
	dir  string
	mem  *journal.Memory
	plan *spec.Plan
	// snaps are the journal as read at moments of the run, by label.
	mu    sync.Mutex
	snaps map[string][]journal.Entry
}

// cutoverName is the name of every test cutover.
const cutoverName = "shop"

// newEngineRun sets up a zone at blue 100, green 0 and a plan moving it to green in 0,
// 50, 100 % steps, each held briefly, checked by an HTTP gate probing a healthy blue and
// a green that fails once greenDown is set.
func newEngineRun(t *testing.T, greenDown *atomic.Bool) *engineRun {
	t.Helper()
	z := levertest.NewZone(t, sandbox.Config{}, 100, 0)
	one := 1.0
	g := spec.Gate{Name: "green-health", HTTP: &spec.HTTPGate{
		Clusters: map[string]string{"blue": backend(t, "blue", new(atomic.Bool)), "green": backend(t, "green", greenDown)},
		Requests: 5, Timeout: spec.Duration{Duration: time.Second}, MinSuccessRatio: &one, ExpectStatus: []int{200}}}
	p := &spec.Plan{Name: cutoverName, Zone: "example.com", Records: []spec.Record{{Name: "app.example.com", Type: "A"}},
		From: "blue", To: "green", Rollback: spec.PlanRollback{Mode: spec.RollbackImmediate}, OnDrift: spec.DriftPause,
		InSyncTimeout: 10 * time.Second, StepTimeout: 10 * time.Second}
	for _, pct := range []int64{0, 50, 100} {
		p.Steps = append(p.Steps, spec.PlanStep{Weights: spec.Weights{From: 100 - pct, To: pct}, Pause: time.Second, Gates: []spec.Gate{g}})
	}
	return &engineRun{t: t, zone: z, dir: t.TempDir(), mem: journal.NewMemory(), plan: p, snaps: map[string][]journal.Entry{}}
}

// backend serves 200 naming cluster, or 500 once failing is set; on loopback.
func backend(t *testing.T, cluster string, failing *atomic.Bool) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Crossfade-Cluster", cluster)
		if failing.Load() {
			http.Error(w, "broken", http.StatusInternalServerError)
			return
		}
		w.Write([]byte(cluster))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// hook is a cutover.Progress calling fn on each event.
type hook func(cutover.Event)

// Event calls the hook.
func (h hook) Event(e cutover.Event) { h(e) }

// run runs the cutover to its end with on called on every progress event, and returns
// the engine's error and the journal it left.
func (r *engineRun) run(on func(cutover.Event)) ([]journal.Entry, error) {
	r.t.Helper()
	cfg := cutover.Config{Plan: r.plan, Levers: r.zone.Levers(r.zone.DNS), StateDir: r.dir, Journals: r.mem.Store, By: "ci@runner",
		DNSServers: []string{r.zone.SB.DNSAddr()}, CheckInterval: 50 * time.Millisecond, PollInterval: 10 * time.Millisecond,
		Progress: hook(on)}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := cutover.Run(ctx, cfg, false)
	return r.entries(), err
}

// entries reads the journal from the memory store.
func (r *engineRun) entries() []journal.Entry {
	r.t.Helper()
	entries, _, err := r.mem.Store(cutoverName).Read()
	if err != nil {
		r.t.Fatalf("read journal of cutover %s: %v", cutoverName, err)
	}
	return entries
}

// snap keeps the journal as it is now under label, once.
func (r *engineRun) snap(label string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.snaps[label]; !ok {
		r.snaps[label] = r.entries()
	}
}

// send leaves command for the running cutover as `crossfade cutover COMMAND` does
// (cutover.Send): a command file in its control directory, stamped with the run it is
// for (the start entry's time). cutover.Send itself reads a file journal, and this one is
// in memory.
func (r *engineRun) send(command, by string) {
	r.t.Helper()
	entries := r.entries()
	if len(entries) == 0 {
		r.t.Fatalf("send %s to cutover %s: not started", command, cutoverName)
	}
	now := time.Now().UTC()
	c := cutover.Command{ID: fmt.Sprintf("%020d-%s", now.UnixNano(), command), Command: command, By: by, At: now, Started: entries[0].Time}
	data, err := json.Marshal(c)
	if err != nil {
		r.t.Fatal(err)
	}
	dir := cutover.PathsFor(r.dir, cutoverName).Control
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.t.Fatal(err)
	}
	tmp := filepath.Join(dir, ".tmp-"+c.ID)
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, c.ID+".json")); err != nil {
		r.t.Fatal(err)
	}
}

// foreignWeight sets blue's weight to w as another writer would (a person in the
// console): a plain UPSERT through the real Route 53 API.
func (r *engineRun) foreignWeight(w int64) error {
	ctx := context.Background()
	zones, err := r.zone.DNS.Zones(ctx)
	if err != nil {
		return err
	}
	_, err = route53test.Client(r.zone.SB).ChangeResourceRecordSets(ctx, &awsr53.ChangeResourceRecordSetsInput{
		HostedZoneId: aws.String(zones[0].ID),
		ChangeBatch: &types.ChangeBatch{Changes: []types.Change{{Action: types.ChangeActionUpsert, ResourceRecordSet: &types.ResourceRecordSet{
			Name: aws.String("app.example.com"), Type: types.RRTypeA, SetIdentifier: aws.String("blue"), Weight: aws.Int64(w), TTL: aws.Int64(1),
			ResourceRecords: []types.ResourceRecord{{Value: aws.String("127.0.0.10")}},
		}}}},
	})
	return err
}

// journals are the engine-made journals the tests project, by scenario, with the plan
// they ran. They are made once per test binary: each runs a cutover for a few seconds.
type journals struct {
	plan *spec.Plan
	// byName holds each scenario's journal, final or as snapped mid-run.
	byName map[string][]journal.Entry
}

// Scenario names of engineJournals.
const (
	scCompleted        = "completed"
	scGateFailed       = "gate fails: rolled back"
	scProgressing      = "progressing at step 2"
	scPausedByCommand  = "paused by command"
	scResumedCompleted = "paused, resumed, completed"
	scAborted          = "aborted"
	scDriftPaused      = "paused by drift"
	scDriftAborted     = "drift paused, then aborted"
)

var (
	engineOnce sync.Once
	engineJ    journals
	engineErr  error
)

// engineJournals runs the scenarios (once) and returns their journals; it skips in
// -short (the runs start sandboxes).
func engineJournals(t *testing.T) journals {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the engine on a sandbox")
	}
	engineOnce.Do(func() {
		// Subtests of the first caller own the sandboxes: a failure is reported there.
		engineJ, engineErr = makeJournals(t)
	})
	if engineErr != nil {
		t.Fatalf("engine journals: %v", engineErr)
	}
	return engineJ
}

// makeJournals runs each scenario.
func makeJournals(t *testing.T) (journals, error) {
	out := journals{byName: map[string][]journal.Entry{}}

	// Completed: every step passes.
	r := newEngineRun(t, new(atomic.Bool))
	out.plan = r.plan
	entries, err := r.run(func(cutover.Event) {})
	if err != nil {
		return out, fmt.Errorf("%s: run: %w", scCompleted, err)
	}
	out.byName[scCompleted] = entries

	// A gate fails at the 50 % step: rolled back.
	var greenDown atomic.Bool
	r = newEngineRun(t, &greenDown)
	entries, err = r.run(func(ev cutover.Event) {
		if ev.Phase == cutover.PhaseWriting && ev.Weights["green"] == 50 {
			greenDown.Store(true)
		}
	})
	var rb *cutover.RollbackError
	if !errors.As(err, &rb) {
		return out, fmt.Errorf("%s: run: %v, want a rollback", scGateFailed, err)
	}
	out.byName[scGateFailed] = entries

	// Paused by a command at step 2, resumed, completed; snapped while holding and
	// while paused.
	r = newEngineRun(t, new(atomic.Bool))
	var paused, resumed atomic.Bool
	entries, err = r.run(func(ev cutover.Event) {
		switch {
		case ev.Phase == cutover.PhaseHolding && ev.Step == 1 && !paused.Load():
			r.snap(scProgressing)
			paused.Store(true)
			r.send(cutover.CommandPause, "alice@laptop")
		case ev.Phase == cutover.PhasePaused && !resumed.Load():
			r.snap(scPausedByCommand)
			resumed.Store(true)
			r.send(cutover.CommandResume, "bob@laptop")
		}
	})
	if err != nil {
		return out, fmt.Errorf("%s: run: %w", scResumedCompleted, err)
	}
	out.byName[scResumedCompleted] = entries
	out.byName[scProgressing] = r.snaps[scProgressing]
	out.byName[scPausedByCommand] = r.snaps[scPausedByCommand]

	// Aborted at step 2.
	r = newEngineRun(t, new(atomic.Bool))
	var aborted atomic.Bool
	entries, err = r.run(func(ev cutover.Event) {
		if ev.Phase == cutover.PhaseHolding && ev.Step == 1 && !aborted.Load() {
			aborted.Store(true)
			r.send(cutover.CommandAbort, "carol@laptop")
		}
	})
	if !errors.Is(err, cutover.ErrAborted) {
		return out, fmt.Errorf("%s: run: %v, want aborted", scAborted, err)
	}
	out.byName[scAborted] = entries

	// Another writer moves the weights while step 2 holds: the engine pauses on the
	// drift (spec.onDrift pause); snapped, then aborted.
	r = newEngineRun(t, new(atomic.Bool))
	var moved, driftAborted atomic.Bool
	entries, err = r.run(func(ev cutover.Event) {
		switch {
		case ev.Phase == cutover.PhaseHolding && ev.Step == 1 && !moved.Load():
			moved.Store(true)
			if err := r.foreignWeight(70); err != nil {
				t.Errorf("foreign write: %v", err)
			}
		case ev.Phase == cutover.PhasePaused && !driftAborted.Load():
			r.snap(scDriftPaused)
			driftAborted.Store(true)
			r.send(cutover.CommandAbort, "dave@laptop")
		}
	})
	if !errors.Is(err, cutover.ErrAborted) {
		return out, fmt.Errorf("%s: run: %v, want aborted", scDriftAborted, err)
	}
	out.byName[scDriftAborted] = entries
	out.byName[scDriftPaused] = r.snaps[scDriftPaused]
	for name, e := range out.byName {
		if len(e) == 0 {
			return out, fmt.Errorf("%s: no journal snapped", name)
		}
	}
	return out, nil
}
