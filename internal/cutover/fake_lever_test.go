package cutover

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// fakeLever is an in-memory lever for the runner's pure logic (control commands, holds,
// promote): weights from and to, written at once, in effect at once, TTL 0 (like the ALB).
type fakeLever struct {
	lever.Base
	mu sync.Mutex
	w  map[string]int64
	// writes are the weights written, in order.
	writes []map[string]int64
	// onWrite, when set, is called (outside the lock) with each write's weights.
	onWrite func(map[string]int64)
	// ttl is the TTL of the one record the lever then has (fakeRecord; 0: none, as the
	// ALB); a write of TTLs sets it, and calls onTTL (outside the lock) when set.
	ttl   int64
	onTTL func(map[spec.Record]int64)
	// problems refuse a start (StartProblems) while set.
	problems []string
}

// fakeRecord is the record of a fakeLever with a TTL.
var fakeRecord = spec.Record{Name: "app.example.com", Type: "A"}

func newFakeLever(from, to string, wf, wt int64) *fakeLever {
	return &fakeLever{w: map[string]int64{from: wf, to: wt}}
}

func (f *fakeLever) weights() map[string]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.w)
}

func (f *fakeLever) Kind() string { return "fake" }
func (f *fakeLever) Read(context.Context, ReadOptions) (Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fakeSnap{w: maps.Clone(f.w), ttl: f.ttl}, nil
}
func (f *fakeLever) StartProblems(Snapshot) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.problems
}
func (f *fakeLever) Check(Snapshot, Change) []string { return nil }
func (f *fakeLever) Write(_ context.Context, s Snapshot, c Change, env WriteEnv) (Written, error) {
	if env.BeforeSend != nil {
		if err := env.BeforeSend(s); err != nil {
			return Written{}, err
		}
	}
	f.mu.Lock()
	if c.Weights != nil {
		maps.Copy(f.w, c.Weights)
		f.writes = append(f.writes, maps.Clone(c.Weights))
	}
	if t, ok := c.TTLs[fakeRecord]; ok {
		f.ttl = t
	}
	after := fakeSnap{w: maps.Clone(f.w), ttl: f.ttl}
	hook, ttlHook := f.onWrite, f.onTTL
	f.mu.Unlock()
	if hook != nil && c.Weights != nil {
		hook(c.Weights)
	}
	if ttlHook != nil && c.TTLs != nil {
		ttlHook(c.TTLs)
	}
	return Written{Detail: "fake", Calls: 1, After: after}, nil
}
func (f *fakeLever) InEffect(context.Context, Written) (bool, error) { return true, nil }
func (f *fakeLever) DryRun(_ context.Context, s Snapshot, c Change) (Rendered, error) {
	w := maps.Clone(s.Weights())
	maps.Copy(w, c.Weights)
	return Rendered{Calls: 1, After: fakeSnap{w: w}}, nil
}
func (f *fakeLever) Describe(context.Context, Snapshot, *lever.Description) error { return nil }
func (f *fakeLever) Summary(Snapshot) string                                      { return "fake lever" }
func (f *fakeLever) DriftCause() string                                           { return "a test" }

type fakeSnap struct {
	lever.SnapshotBase
	w   map[string]int64
	ttl int64
}

func (s fakeSnap) Weights() map[string]int64 { return maps.Clone(s.w) }
func (s fakeSnap) Members() []Member {
	var out []Member
	for k, v := range s.w {
		out = append(out, Member{Key: k, Name: k, Weight: v})
	}
	return out
}
func (s fakeSnap) TTL() int64 { return s.ttl }
func (s fakeSnap) RecordTTLs() map[spec.Record]int64 {
	if s.ttl == 0 {
		return nil
	}
	return map[spec.Record]int64{fakeRecord: s.ttl}
}
func (s fakeSnap) GateInput(map[string]int64) lever.GateInput { return lever.GateInput{} }
func (s fakeSnap) NoTraffic(map[string]int64) string          { return "" }
func (s fakeSnap) Skipped() []string                          { return nil }
func (s fakeSnap) TakenOver() []registry.Runner               { return nil }
func (s fakeSnap) StartData() json.RawMessage                 { return nil }
func (s fakeSnap) LogAttr() slog.Attr                         { return slog.String("lever", "fake") }

// scriptGate answers each check with next(step, n), n counting its checks from 0.
type scriptGate struct {
	name string
	next func(s gate.Step, n int) gate.Result
	mu   sync.Mutex
	n    int
}

func (g *scriptGate) Name() string { return g.name }
func (g *scriptGate) Check(_ context.Context, s gate.Step) gate.Result {
	g.mu.Lock()
	n := g.n
	g.n++
	g.mu.Unlock()
	res := g.next(s, n)
	res.Gate = g.name
	return res
}

// fakePlan is a plan of the given weights to `to` (blue → green), each step with one gate
// named "g" and the given pause, for a fakeLever.
func fakePlan(pause time.Duration, to ...int64) *spec.Plan {
	p := &spec.Plan{Name: "app", From: "blue", To: "green", OnDrift: spec.DriftPause,
		InSyncTimeout: time.Minute, StepTimeout: time.Minute}
	for _, t := range to {
		p.Steps = append(p.Steps, spec.PlanStep{Weights: spec.Weights{From: 100 - t, To: t}, Pause: pause, Gates: []spec.Gate{{Name: "g"}}})
	}
	p.Rollback.Mode = spec.RollbackImmediate
	return p
}

// fakeConfig runs p with lv and g as every step's gate, checking every millisecond.
func fakeConfig(t *testing.T, p *spec.Plan, lv Lever, g Gate) Config {
	t.Helper()
	return Config{Plan: p, Lever: lv, StateDir: t.TempDir(), By: "tester@host",
		NewGate:       func(spec.Gate) (Gate, error) { return g, nil },
		CheckInterval: time.Millisecond, PollInterval: time.Millisecond, DriftInterval: time.Millisecond}
}

// passing answers a judged pass.
func passing(gate.Step, int) gate.Result { return gate.Result{Pass: true, Detail: "ok"} }
