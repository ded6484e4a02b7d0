package cutover

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// journalStores are the journal stores an engine test runs over: today's files under the
// state directory (Config.Journals nil), and one in memory, as a store kept in an API
// object would be.
var journalStores = []struct {
	name string
	// journals is Config.Journals for the test; the store is what it gives for "app".
	journals func(t *testing.T, dir string) (func(string) journal.Store, journal.Store)
}{
	{"files", func(t *testing.T, dir string) (func(string) journal.Store, journal.Store) {
		return nil, PathsFor(dir, "app").store()
	}},
	{"memory", func(t *testing.T, dir string) (func(string) journal.Store, journal.Store) {
		m := journal.NewMemory()
		return m.Store, m.Store("app")
	}},
}

// seedStore appends entries to s as a runner that died after them would have left them.
func seedStore(t *testing.T, s journal.Store, entries []journal.Entry) {
	t.Helper()
	w, _, _, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, en := range entries {
		if _, err := w.Append(en); err != nil {
			t.Fatal(err)
		}
	}
}

// kinds lists the entries' kinds.
func kinds(entries []journal.Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Kind)
	}
	return out
}

// TestResumeOverEveryJournalStore: a runner that died right after journaling step 3's
// intent is resumed over the journal where it left it, in files or in memory, with the
// same outcome: a run without --resume refuses, the resume completes at green 100, and
// journals the same entries. A store in memory leaves no journal or lock file behind.
func TestResumeOverEveryJournalStore(t *testing.T) {
	var journaled [][]string
	for _, tc := range journalStores {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 100, 0)
			cfg := e.config(testPlan(t))
			var store journal.Store
			cfg.Journals, store = tc.journals(t, e.dir)
			seedStore(t, store, []journal.Entry{
				{Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}, By: "test"},
				{Kind: kindStepPassed, Step: 0}, {Kind: kindStepPassed, Step: 1},
				{Kind: kindIntent, Step: 2, Weights: map[string]int64{"blue": 50, "green": 50}},
			})
			if _, err := Run(context.Background(), cfg, false); err == nil {
				t.Error("run without --resume over an existing journal must refuse")
			}
			rep, err := Run(context.Background(), cfg, true)
			if err != nil || rep == nil || rep.Outcome != outcomeCompleted {
				t.Fatalf("resume: %v, report %+v, want completed", err, rep)
			}
			if a, _ := e.Weights(t); a["green"] != 100 || a["blue"] != 0 {
				t.Errorf("weights %v, want green 100", a)
			}
			entries, _, err := store.Read()
			if err != nil || len(entries) < 5 || entries[4].Kind != kindResumed {
				t.Fatalf("journal after the resume: %v, %v, want the resumed entry after the seeded ones", kinds(entries), err)
			}
			if err := store.Held(); err != nil {
				t.Errorf("lock after the run: %v, want released", err)
			}
			journaled = append(journaled, kinds(entries))
			if cfg.Journals != nil {
				for _, f := range []string{"app.journal", "app.lock"} {
					if _, err := os.Stat(filepath.Join(e.dir, f)); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("%s in the state dir with a journal store in memory: %v", f, err)
					}
				}
			}
		})
	}
	if len(journaled) == 2 && !slices.Equal(journaled[0], journaled[1]) {
		t.Errorf("journals differ by store:\n files  %v\n memory %v", journaled[0], journaled[1])
	}
}

// TestRunAndAbortOverMemoryJournal: a run over a journal in memory is locked by it (a
// second run is refused, naming the holder), and, once interrupted mid-hold, is rolled
// back by Abort reading the same journal: the weights return to blue and the journal
// ends rolled back.
func TestRunAndAbortOverMemoryJournal(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	pauseEach(p, 5*time.Second)
	cfg := e.config(p)
	m := journal.NewMemory()
	cfg.Journals = m.Store
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var second error
	cfg.Progress = progressHook(func(ev Event) {
		if ev.Phase == PhaseHolding && ev.Step == 1 && second == nil {
			// The first run holds the lock in memory: a second is refused.
			_, second = Run(context.Background(), e.config(p).withJournals(m.Store), true)
			cancel()
		}
	})
	if _, err := Run(ctx, cfg, false); !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v, want context.Canceled", err)
	}
	var locked *journal.LockedError
	if !errors.As(second, &locked) || locked.Holder.By != "test@host" {
		t.Errorf("second run while the first held the cutover: %v, want *journal.LockedError naming test@host", second)
	}
	if a, _ := e.Weights(t); a["green"] != 10 {
		t.Fatalf("weights after the interrupt %v, want step 2's 90/10", a)
	}
	cfg.Progress = nil
	rep, err := Abort(context.Background(), cfg)
	if err != nil || rep == nil || rep.Outcome != outcomeRolledBack {
		t.Fatalf("abort: %v, report %+v, want rolled back", err, rep)
	}
	if a, _ := e.Weights(t); a["green"] != 0 || a["blue"] != 100 {
		t.Errorf("weights after the abort %v, want blue 100", a)
	}
	entries, _, err := m.Store("app").Read()
	if err != nil || !slices.Contains(kinds(entries), kindRollback) || entries[len(entries)-1].Kind != kindDone {
		t.Errorf("journal in memory after the abort: %v, %v, want a rollback and the end", kinds(entries), err)
	}
	if _, err := os.Stat(PathsFor(e.dir, "app").Journal); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal file with a journal in memory: %v", err)
	}
}

// TestAbortRefusesWithoutJournalInStore: an abort of a cutover whose store has no journal
// is refused as not run here, even with a journal file in the state directory, and
// creates no journal in the store.
func TestAbortRefusesWithoutJournalInStore(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	// A journal file for the cutover: an abort reading its store in memory must not see it.
	seedJournal(t, PathsFor(e.dir, "app").Journal, []journal.Entry{
		{Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}, By: "test"},
	})
	cfg := e.config(p).withJournals(journal.NewMemory().Store)
	var refused *CommandRefusedError
	if _, err := Abort(context.Background(), cfg); !errors.As(err, &refused) {
		t.Fatalf("abort with no journal in its store: %v, want *CommandRefusedError", err)
	}
	// A refused abort leaves nothing behind: no empty journal a later run would resume.
	if _, _, err := cfg.Journals("app").Read(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal in the store after a refused abort: %v, want none", err)
	}
}

// withJournals is cfg with its journals in the store js gives.
func (cfg Config) withJournals(js func(string) journal.Store) Config {
	cfg.Journals = js
	return cfg
}

// TestReleaseOverMemoryJournal: release reads, locks and journals through the cutover's
// store: refused without a journal there (naming where it looked), refused while a runner
// holds its lock, and, forced after a completed run, journaled in the store.
func TestReleaseOverMemoryJournal(t *testing.T) {
	e := newEnv(t, 100, 0)
	m := journal.NewMemory()
	cfg := e.config(testPlan(t)).withJournals(m.Store)
	if _, err := Release(context.Background(), cfg, ReleaseOptions{}); err == nil || !strings.Contains(err.Error(), "no journal at memory:app") {
		t.Fatalf("release with no journal in the store: %v, want refused naming memory:app", err)
	}
	if rep, err := Run(context.Background(), cfg, false); err != nil || rep.Outcome != outcomeCompleted {
		t.Fatalf("run: %v", err)
	}
	if rep, err := publishAs(e.DNS, "blue", "127.0.0.10", 100, 1); err != nil || rep.Err() != nil {
		t.Fatalf("blue's sync: %v", errors.Join(err, rep.Err()))
	}
	held, err := m.Store("app").Acquire(journal.Holder{By: "other@host", Cutover: "app"})
	if err != nil {
		t.Fatal(err)
	}
	var locked *journal.LockedError
	if _, err := Release(context.Background(), cfg, ReleaseOptions{Force: true}); !errors.As(err, &locked) || locked.Holder.By != "other@host" {
		t.Fatalf("release while another holds the cutover: %v, want *journal.LockedError naming other@host", err)
	}
	held.Release()
	if rel, err := Release(context.Background(), cfg, ReleaseOptions{Force: true}); err != nil || rel.Records != 1 {
		t.Fatalf("release --force: %+v, %v", rel, err)
	}
	entries, _, err := m.Store("app").Read()
	if last := entries[len(entries)-1]; err != nil || last.Kind != kindReleased || last.By != "test@host" || !strings.Contains(last.Detail, "forced: ") {
		t.Errorf("journal in memory after release --force: last %+v, %v, want a released entry saying what was forced", last, err)
	}
}
