package cutover

import (
	"os"
	"sync"
	"testing"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// TestSendCommandConcurrent: commands sent at once by many processes are all kept, whole,
// in the order sent.
func TestSendCommandConcurrent(t *testing.T) {
	paths := PathsFor(t.TempDir(), "app")
	// Commands are for a cutover that has started (SendCommand refuses any other).
	seedJournal(t, paths.Journal, []journal.Entry{{Kind: kindStart, Step: -1}})
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if err := SendCommand(paths, Command{Command: CommandPause, By: "x"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	cmds, errs := readCommands(paths.Control)
	if len(cmds) != 50 || len(errs) != 0 {
		t.Fatalf("%d commands read, errors %v; want 50", len(cmds), errs)
	}
	for i := 1; i < len(cmds); i++ {
		if cmds[i-1].ID >= cmds[i].ID || cmds[i-1].At.After(cmds[i].At) {
			t.Errorf("commands out of order: %s then %s", cmds[i-1].ID, cmds[i].ID)
		}
	}
	if err := SendCommand(paths, Command{Command: "stop"}); err == nil {
		t.Error("an unknown command was accepted")
	}
}

// TestPollActsOnceAcrossACrash: a runner that journaled a command and died before removing
// its file does not act on it again when resumed; a command file that does not parse is
// left alone.
func TestPollActsOnceAcrossACrash(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Plan: &spec.Plan{Name: "app"}, StateDir: dir, By: "runner@host"}
	paths := PathsFor(dir, "app")
	seedJournal(t, paths.Journal, []journal.Entry{{Kind: kindStart, Step: -1}})
	if err := SendCommand(paths, Command{Command: CommandPause, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	cmds, _ := readCommands(paths.Control)
	// The journal as a runner that died between journaling the pause and removing it left it.
	seedJournal(t, paths.Journal, []journal.Entry{
		{Kind: kindControl, Step: -1, Detail: CommandPause, By: "alice", ID: cmds[0].ID},
		{Kind: kindControl, Step: -1, Detail: CommandResume, By: "bob"},
	})
	if err := os.WriteFile(paths.Control+"/junk.json", []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, entries, err := open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	r.restore(replay(entries))
	if err := r.poll(); err != nil {
		t.Fatal(err)
	}
	if r.paused {
		t.Error("the pause, already journaled and resumed, paused the runner again")
	}
	after, _ := journal.Read(paths.Journal)
	if len(after) != len(entries) {
		t.Errorf("poll journaled %d more entries, want none", len(after)-len(entries))
	}
	if _, err := os.Stat(paths.Control + "/" + cmds[0].ID + ".json"); !os.IsNotExist(err) {
		t.Errorf("the acted-on command's file is still there: %v", err)
	}
	if _, err := os.Stat(paths.Control + "/junk.json"); err != nil {
		t.Errorf("a file that is not a command was removed: %v", err)
	}
}
