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

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// TestSendCommandRefusedWithoutARun: a control command is refused, naming why, for a
// cutover with no journal, an empty journal (a run that failed before its start entry),
// a journal of a torn line only, and one that has ended; accepted once started.
func TestSendCommandRefusedWithoutARun(t *testing.T) {
	for _, tc := range []struct {
		name    string
		journal *string // nil: no journal file
		want    string  // in the error; "" accepts
	}{
		{"no journal", nil, "no journal at"},
		{"empty journal", ptr(""), "no start entry"},
		{"torn line only", ptr(`{"seq":1,"kind":"sta`), "torn line of 20 bytes"},
		{"ended", ptr(`{"seq":1,"kind":"start","step":-1}` + "\n" + `{"seq":2,"kind":"done","step":-1,"detail":"completed"}` + "\n"), "it has ended (completed)"},
		{"started", ptr(`{"seq":1,"kind":"start","step":-1}` + "\n"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			paths := PathsFor(t.TempDir(), "app")
			if tc.journal != nil {
				if err := os.WriteFile(paths.Journal, []byte(*tc.journal), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range []string{CommandPause, CommandResume, CommandPromote, CommandAbort} {
				err := SendCommand(paths, Command{Command: c, By: "alice"})
				var refused *CommandRefusedError
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("%s refused: %v", c, err)
				case tc.want == "":
				case !errors.As(err, &refused) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "cutover app: "+c+" refused"):
					t.Errorf("%s: error %v, want a refusal naming %q", c, err, tc.want)
				}
			}
			cmds, _ := readCommands(paths.Control)
			if tc.want != "" && len(cmds) != 0 {
				t.Errorf("%d commands left although refused", len(cmds))
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestFreshRunDiscardsStaleCommands: a promote left from before (sent as the last run
// ended, written straight into the control directory as SendCommand no longer would) is
// discarded by the next fresh run, journaled as such: that run writes every step, as it
// was told nothing. So is a command sent before its start entry that lands after the run
// cleared the directory.
func TestFreshRunDiscardsStaleCommands(t *testing.T) {
	p := fakePlan(0, 10, 50, 100)
	lv := newFakeLever("blue", "green", 100, 0)
	cfg := fakeConfig(t, p, lv, &scriptGate{name: "g", next: passing})
	paths := PathsFor(cfg.StateDir, p.Name)
	old := Command{Command: CommandPromote, By: "alice", At: time.Now().Add(-time.Hour).UTC()}
	writeCommand(t, paths, old)
	// One older than the start entry that arrives once the run holds the weights: poll
	// must discard it by its time.
	late := Command{Command: CommandPromote, By: "bob", At: time.Now().Add(-time.Minute).UTC()}
	lv.onWrite = func(w map[string]int64) {
		if w["green"] == 10 {
			writeCommand(t, paths, late)
		}
	}
	if _, err := Run(context.Background(), cfg, false); err != nil {
		t.Fatal(err)
	}
	var wrote []int64
	for _, w := range lv.writes {
		wrote = append(wrote, w["green"])
	}
	if !slices.Equal(wrote, []int64{10, 50, 100}) {
		t.Errorf("green weights written %v, want every step [10 50 100]: a stale promote skipped steps", wrote)
	}
	entries, _ := journal.Read(paths.Journal)
	var discarded []string
	for _, e := range entries {
		if e.Kind == kindControl {
			if !strings.HasSuffix(e.Detail, discardedSuffix) {
				t.Errorf("control entry %q acted on", e.Detail)
			}
			discarded = append(discarded, e.By)
		}
	}
	if !slices.Equal(discarded, []string{"alice", "bob"}) {
		t.Errorf("commands journaled as discarded: %v, want [alice bob]", discarded)
	}
}

// writeCommand leaves c in the control directory as a sender would have.
func writeCommand(t *testing.T, paths Paths, c Command) {
	t.Helper()
	c.ID = c.At.Format("20060102150405.000000000") + "-" + c.By
	data := []byte(`{"id":"` + c.ID + `","command":"` + c.Command + `","by":"` + c.By + `","at":"` + c.At.Format(time.RFC3339Nano) + `"}`)
	if err := os.MkdirAll(paths.Control, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(paths.Control, c.ID+".json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStatusOfAJournalWithoutARun: an empty journal, or one of a torn line only, reads as
// "not started", never as a run by nobody at the zero time; a torn tail is named.
func TestStatusOfAJournalWithoutARun(t *testing.T) {
	for _, tc := range []struct {
		name, journal string
		want          []string
	}{
		{"empty", "", []string{"cutover app: not started", "no start entry"}},
		{"torn", `{"seq":1,"kind":"st`, []string{"cutover app: not started", "no start entry", "torn line of 19 bytes"}},
		{"torn after start", `{"seq":1,"kind":"start","step":-1,"by":"alice","time":"2026-01-02T03:04:05Z"}` + "\n" + `{"seq":2,"ki`,
			[]string{"cutover app: unfinished", "run by alice", "torn line of 12 bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(PathsFor(dir, "app").Journal, []byte(tc.journal), 0o644); err != nil {
				t.Fatal(err)
			}
			st, err := ReadStatus(dir, "app")
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := Text.Status(&b, st); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("status lacks %q:\n%s", w, out)
				}
			}
			for _, bad := range []string{"run by ,", "0001-01-01"} {
				if strings.Contains(out, bad) {
					t.Errorf("status shows %q:\n%s", bad, out)
				}
			}
		})
	}
}

// TestAbortThenPauseRollsBack: an abort and a pause read in one poll (abort first) roll
// back at once: the pause neither undoes nor delays the abort, and is journaled as ignored.
// Before, the pause held the weights until someone sent resume.
func TestAbortThenPauseRollsBack(t *testing.T) {
	p := fakePlan(time.Hour, 20, 80, 100)
	lv := newFakeLever("blue", "green", 100, 0)
	cfg := fakeConfig(t, p, lv, &scriptGate{name: "g", next: passing})
	paths := PathsFor(cfg.StateDir, p.Name)
	lv.onWrite = func(w map[string]int64) {
		if w["green"] == 20 {
			for _, c := range []string{CommandAbort, CommandPause} {
				if err := SendCommand(paths, Command{Command: c, By: "alice"}); err != nil {
					t.Error(err)
				}
			}
		}
	}
	sawPause := make(chan struct{}, 1)
	cfg.Progress = progressHook(func(e Event) {
		if e.Phase == PhasePaused {
			select {
			case sawPause <- struct{}{}:
			default:
			}
		}
	})
	// A bound on a hang, not on speed: the old code waits for a resume forever.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Run(ctx, cfg, false)
	if !errors.Is(err, ErrAborted) {
		t.Fatalf("run: %v, want rolled back on the abort", err)
	}
	select {
	case <-sawPause:
		t.Error("the runner paused after the abort")
	default:
	}
	if w := lv.weights(); w["blue"] != 100 || w["green"] != 0 {
		t.Errorf("weights %v after the abort, want the start blue=100 green=0", w)
	}
	entries, _ := journal.Read(paths.Journal)
	var details []string
	for _, e := range entries {
		if e.Kind == kindControl {
			details = append(details, e.Detail)
		}
	}
	if !slices.Equal(details, []string{CommandAbort, CommandPause + abortedSuffix}) {
		t.Errorf("control entries %q, want the abort, then the pause ignored", details)
	}
	if st := replay(entries); st.paused || st.done != outcomeRolledBack {
		t.Errorf("replay: paused=%t done=%q, want not paused, rolled back", st.paused, st.done)
	}
}

// TestReplayAbortThenPauseRollsBack: a runner resumed after a crash with an abort and a
// later pause journaled rolls back, and is not paused.
func TestReplayAbortThenPauseRollsBack(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := replay([]journal.Entry{
		{Kind: kindStart, Step: -1, Time: at},
		{Kind: kindControl, Step: -1, Detail: CommandAbort, By: "alice", Time: at.Add(time.Second)},
		{Kind: kindControl, Step: -1, Detail: CommandPause, By: "bob", Time: at.Add(2 * time.Second)},
		{Kind: kindControl, Step: -1, Detail: CommandPromote, By: "bob", Time: at.Add(3 * time.Second)},
	})
	if st.rollback == nil || !st.rollback.aborted || st.paused || st.promoted {
		t.Errorf("replay: rollback %+v paused=%t promoted=%t; want aborted, not paused, not promoted", st.rollback, st.paused, st.promoted)
	}
}

var _ = gate.Result{}
