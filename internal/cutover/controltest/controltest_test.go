package controltest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// cutoverIn names the files of cutover "app" under dir, as cutover.PathsFor lays them out.
func cutoverIn(dir string) Cutover {
	base := filepath.Join(dir, "app")
	return Cutover{Name: "app", Lock: base + ".lock", Journal: base + ".journal", Control: base + ".control.d"}
}

// send writes command file id.json into c's control directory, as cutover.SendCommand does.
func send(t *testing.T, c Cutover, id, command string) {
	t.Helper()
	if err := os.MkdirAll(c.Control, 0o755); err != nil {
		t.Fatal(err)
	}
	data := []byte(`{"id":"` + id + `","command":"` + command + `","by":"tester@host"}`)
	if err := os.WriteFile(filepath.Join(c.Control, id+".json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// until polls cond until it holds; it fails naming what after a bound far past any
// wait (a liveness bound, not a timing: a broken Runner otherwise hangs to the binary's timeout).
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("never %s", what)
		case <-time.After(poll):
		}
	}
}

// controlEntries returns the control entries of c's journal.
func controlEntries(t *testing.T, c Cutover) []journal.Entry {
	t.Helper()
	entries, err := journal.Read(c.Journal)
	if err != nil {
		t.Fatal(err)
	}
	var out []journal.Entry
	for _, e := range entries {
		if e.Kind == KindControl {
			out = append(out, e)
		}
	}
	return out
}

// TestRunner: a Runner holds the lock from Start (with a start entry) until Stop; with an
// answer it journals each command sent with that detail, naming its sender and id, and
// removes its file; without one it leaves commands where they are; StopOnceSent lets go of
// the lock once a command lands, leaving it unread.
func TestRunner(t *testing.T) {
	for _, tc := range []struct {
		name       string
		answer     func(string) string
		stopOnSend bool
		// wantDetail: the control entry's detail; "" none (the command stays queued).
		wantDetail string
	}{
		{name: "answers", answer: func(c string) string { return c + " ignored: rolling back" }, wantDetail: "pause ignored: rolling back"},
		{name: "never reads"},
		{name: "stops once sent", stopOnSend: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cutoverIn(t.TempDir())
			r := Start(t, c, tc.answer)
			var locked *journal.LockedError
			if err := journal.Held(c.Lock); !errors.As(err, &locked) || locked.Holder.By != By || locked.Holder.Cutover != "app" {
				t.Fatalf("lock after Start: %v, want held by %s for app", err, By)
			}
			entries, err := journal.Read(c.Journal)
			if err != nil || len(entries) != 1 || entries[0].Kind != KindStart || entries[0].Step != StepNone {
				t.Fatalf("journal after Start: %+v (%v), want one start entry", entries, err)
			}
			if tc.stopOnSend {
				r.StopOnceSent(t)
			}
			send(t, c, "c1", "pause")
			switch {
			case tc.wantDetail != "":
				until(t, "journaled the command", func() bool { return len(controlEntries(t, c)) > 0 })
				e := controlEntries(t, c)[0]
				if e.Detail != tc.wantDetail || e.ID != "c1" || e.By != "tester@host" || e.Step != StepNone {
					t.Errorf("control entry %+v, want detail %q, id c1, by tester@host", e, tc.wantDetail)
				}
				until(t, "removed the command file", func() bool {
					_, err := os.Stat(filepath.Join(c.Control, "c1.json"))
					return errors.Is(err, os.ErrNotExist)
				})
			case tc.stopOnSend:
				until(t, "let go of the lock", func() bool { return journal.Held(c.Lock) == nil })
			}
			r.Stop()
			if err := journal.Held(c.Lock); err != nil {
				t.Errorf("lock after Stop: %v, want free", err)
			}
			if tc.wantDetail == "" {
				if es := controlEntries(t, c); len(es) != 0 {
					t.Errorf("control entries %+v, want none: the command was not read", es)
				}
				if _, err := os.Stat(filepath.Join(c.Control, "c1.json")); err != nil {
					t.Errorf("command file: %v, want it still queued", err)
				}
			}
			r.Stop() // twice is fine, as t.Cleanup calls it again
		})
	}
}
