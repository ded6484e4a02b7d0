package cutover

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSendCommandSyncsANewControlDirectory: the command that creates the control
// directory fsyncs the directory holding it, so that the new directory (and the command
// in it) survives a power loss; a command into a directory that exists does not need to.
// Before, the directory was created with os.MkdirAll and its entry never synced.
func TestSendCommandSyncsANewControlDirectory(t *testing.T) {
	var synced []string
	old := syncDir
	syncDir = func(dir string) error { synced = append(synced, dir); return old(dir) }
	t.Cleanup(func() { syncDir = old })
	state := t.TempDir()
	paths := PathsFor(state, "app")
	if err := os.WriteFile(paths.Journal, []byte(`{"seq":1,"kind":"start","step":-1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SendCommand(paths, Command{Command: CommandPause, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(synced, []string{state}) {
		t.Errorf("directories synced creating %s: %q, want [%q]", paths.Control, synced, state)
	}
	synced = nil
	if err := SendCommand(paths, Command{Command: CommandResume, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 0 {
		t.Errorf("a command into the existing %s synced %q", paths.Control, synced)
	}
	if cmds, errs := readCommands(paths.Control); len(cmds) != 2 || len(errs) != 0 {
		t.Errorf("commands waiting: %+v, %v; want the pause and the resume", cmds, errs)
	}
}

// TestMkdirDurableSyncsEveryNewParent: directories created on the way (a state directory
// that did not exist either) are each synced into their parent.
func TestMkdirDurableSyncsEveryNewParent(t *testing.T) {
	var synced []string
	old := syncDir
	syncDir = func(dir string) error { synced = append(synced, dir); return old(dir) }
	t.Cleanup(func() { syncDir = old })
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b", "c")
	if err := mkdirDurable(dir); err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(root, "a", "b"), filepath.Join(root, "a"), root}
	if !slices.Equal(synced, want) {
		t.Errorf("synced %q, want %q", synced, want)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Errorf("%s not created: %v", dir, err)
	}
}
