package statusstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	lr53 "github.com/crossfade-io/crossfade/internal/cutover/lever/route53"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// progressFunc is a cutover.Progress from a function.
type progressFunc func(cutover.Event)

// Event calls f.
func (f progressFunc) Event(ev cutover.Event) { f(ev) }

// enginePlan is 0 → 10 → 50 → 100 % from blue to green on app.example.com, holding each
// step for pause, without gates: the cutover.Run the Cutover object named app would run.
func enginePlan(pause time.Duration) *spec.Plan {
	p := &spec.Plan{Name: "app", Zone: "example.com", Records: []spec.Record{{Name: "app.example.com", Type: "A"}},
		From: "blue", To: "green", Rollback: spec.PlanRollback{Mode: spec.RollbackImmediate},
		InSyncTimeout: 10 * time.Second, StepTimeout: 30 * time.Second}
	for _, pct := range []int64{0, 10, 50, 100} {
		p.Steps = append(p.Steps, spec.PlanStep{Weights: spec.Weights{From: 100 - pct, To: pct}, Pause: pause})
	}
	return p
}

// engineConfig runs p on zone z through dns, with its journal where journals says (nil:
// files under a temporary state directory).
func engineConfig(t *testing.T, z *levertest.Zone, dns lr53.DNS, p *spec.Plan, journals func(string) journal.Store) cutover.Config {
	return cutover.Config{Plan: p, Levers: z.Levers(dns), StateDir: t.TempDir(), Journals: journals, By: "test@host",
		DNSServers: []string{z.SB.DNSAddr()}, CheckInterval: 100 * time.Millisecond, PollInterval: 10 * time.Millisecond}
}

// shape is what an entry says, without its time: kind, step and weights.
func shape(entries []journal.Entry) []string {
	var out []string
	for _, e := range entries {
		w := ""
		for _, k := range slices.Sorted(maps.Keys(e.Weights)) {
			w += fmt.Sprintf(" %s=%d", k, e.Weights[k])
		}
		out = append(out, fmt.Sprintf("%s/%d%s", e.Kind, e.Step, w))
	}
	return out
}

// TestEngineOverStatus: the cutover engine runs over a journal kept in a Cutover's status
// and its Lease: a run journals in status.journal the entries a journal file gets from
// the same run; and a run stopped mid-hold is resumed by another runner on a new store
// over the same object, from status, to the end, with no step written twice (each
// ChangeResourceRecordSets call journaled once, each step written once).
func TestEngineOverStatus(t *testing.T) {
	e := start(t)

	t.Run("same journal as files", func(t *testing.T) {
		// The reference: the same run journaled to files, on a zone of its own.
		fz := levertest.NewZone(t, sandbox.Config{}, 100, 0)
		fcfg := engineConfig(t, fz, fz.DNS, enginePlan(time.Second), nil)
		if rep, err := cutover.Run(context.Background(), fcfg, false); err != nil || rep.Outcome != "completed" {
			t.Fatalf("run over files: %v, %+v", err, rep)
		}
		want, _, err := journal.Files(cutover.PathsFor(fcfg.StateDir, "app").Journal, cutover.PathsFor(fcfg.StateDir, "app").Lock).Read()
		if err != nil {
			t.Fatal(err)
		}

		e.create(t, "app")
		z := levertest.NewZone(t, sandbox.Config{}, 100, 0)
		cfg := engineConfig(t, z, z.DNS, enginePlan(time.Second), func(name string) journal.Store { return New(e.c, namespace, name) })
		rep, err := cutover.Run(context.Background(), cfg, false)
		if err != nil || rep.Outcome != "completed" {
			t.Fatalf("run over status: %v, %+v", err, rep)
		}
		if a, _ := z.Weights(t); a["green"] != 100 || a["blue"] != 0 {
			t.Errorf("weights after the run over status: %v, want green 100", a)
		}
		got := e.get(t, "app")
		var entries []journal.Entry
		for i, je := range got.Status.Journal {
			if je.Seq != i+1 {
				t.Errorf("status.journal[%d] has seq %d, want %d", i, je.Seq, i+1)
			}
			entries = append(entries, je.Entry())
		}
		if g, w := shape(entries), shape(want); !slices.Equal(g, w) {
			t.Errorf("status.journal differs from the journal file of the same run:\n status %v\n files  %v", g, w)
		}
		if err := New(e.c, namespace, "app").Held(); err != nil {
			t.Errorf("lease after the run: %v, want released", err)
		}
	})

	t.Run("killed and resumed from status", func(t *testing.T) {
		// The reference: the same kill and resume over a journal file.
		fdir := t.TempDir()
		want, _ := killAndResume(t, "app", func(int) func(string) journal.Store { return nil }, fdir,
			func() []journal.Entry {
				en, _, err := journal.Files(cutover.PathsFor(fdir, "app").Journal, cutover.PathsFor(fdir, "app").Lock).Read()
				if err != nil {
					t.Fatal(err)
				}
				return en
			})

		e.create(t, "app2")
		storeCtx, die := context.WithCancel(context.Background())
		defer die()
		replica := func(n int) func(string) journal.Store {
			return func(name string) journal.Store {
				if n == 0 {
					return New(e.c, namespace, name, WithContext(storeCtx), WithIdentity("replica-0"))
				}
				return New(e.c, namespace, name, WithIdentity("replica-1"))
			}
		}
		var before int
		entries, sent := killAndResume(t, "app2", replica, t.TempDir(), func() []journal.Entry {
			var out []journal.Entry
			for i, je := range e.get(t, "app2").Status.Journal {
				if je.Seq != i+1 {
					t.Errorf("status.journal[%d] has seq %d, want %d", i, je.Seq, i+1)
				}
				out = append(out, je.Entry())
			}
			if before == 0 {
				before = len(out)
			}
			return out
		})
		if g, w := shape(entries), shape(want); !slices.Equal(g, w) {
			t.Errorf("resumed journal in status differs from a journal file's, killed and resumed alike:\n status %v\n files  %v", g, w)
		}
		if len(entries) <= before || entries[before].Kind != "resumed" {
			t.Fatalf("the second runner did not continue the first's journal (%d entries before): %v", before, shape(entries))
		}
		passed := map[int]int{}
		written := map[int]int{}
		total := 0
		for _, en := range entries {
			switch en.Kind {
			case "step-passed":
				passed[en.Step]++
			case "written":
				written[en.Step]++
				total++
			}
		}
		for step := range 4 {
			if passed[step] != 1 {
				t.Errorf("step %d passed %d times, want once: %v", step, passed[step], shape(entries))
			}
		}
		// The steps the first runner had passed are not written again; the one it held
		// when it stopped is redone once by the engine, as from a file (its hold starts
		// again), with the same weights.
		for step, n := range map[int]int{0: 1, 1: 1, 2: 2, 3: 1} {
			if written[step] != n {
				t.Errorf("step %d written %d times, want %d: %v", step, written[step], n, shape(entries))
			}
		}
		if sent != total {
			t.Errorf("%d change batches sent to Route 53, %d journaled as written: a write was sent without its entry", sent, total)
		}
	})
}

// killAndResume runs the cutover name (0 → 10 → 50 → 100, 2 s holds) on a zone of its own
// with its journal in the store replica(0) gives, stops it (cancelled) while it holds
// step 3 (50/50), and resumes it with a runner over replica(1)'s store to the end. It
// returns the journal (read by read) and the number of change batches sent to Route 53.
func killAndResume(t *testing.T, name string, replica func(n int) func(string) journal.Store, dir string, read func() []journal.Entry) ([]journal.Entry, int) {
	t.Helper()
	z := levertest.NewZone(t, sandbox.Config{}, 100, 0)
	dns := &levertest.CountingDNS{DNS: z.DNS}
	p := enginePlan(2 * time.Second)
	p.Name = name
	ctx, kill := context.WithCancel(context.Background())
	defer kill()
	cfg := engineConfig(t, z, dns, p, replica(0))
	cfg.StateDir = dir
	cfg.Progress = progressFunc(func(ev cutover.Event) {
		if ev.Phase == cutover.PhaseHolding && ev.Step == 2 {
			kill()
		}
	})
	if _, err := cutover.Run(ctx, cfg, false); !errors.Is(err, context.Canceled) {
		t.Fatalf("first runner of %s: %v, want stopped by context.Canceled", name, err)
	}
	if a, _ := z.Weights(t); a["green"] != 50 {
		t.Fatalf("weights when the first runner of %s stopped: %v, want step 3's 50/50", name, a)
	}
	read() // what the first runner left

	// Another replica: another store over the same journal.
	cfg2 := engineConfig(t, z, dns, p, replica(1))
	cfg2.StateDir = dir
	if _, err := cutover.Run(context.Background(), cfg2, false); err == nil {
		t.Errorf("a run of %s without resume over a started journal must refuse", name)
	}
	rep, err := cutover.Run(context.Background(), cfg2, true)
	if err != nil || rep.Outcome != "completed" {
		t.Fatalf("resume of %s: %v, %+v", name, err, rep)
	}
	if a, _ := z.Weights(t); a["green"] != 100 || a["blue"] != 0 {
		t.Errorf("weights after the resume of %s: %v, want green 100", name, a)
	}
	return read(), dns.Count()
}
