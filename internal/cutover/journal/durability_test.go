package journal

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOpenSyncsTheDirectoryOfANewJournal: creating a journal syncs its directory (a crash
// must not lose the new file's name, and with it every entry synced into it); opening one
// that exists does not need to.
func TestOpenSyncsTheDirectoryOfANewJournal(t *testing.T) {
	var synced []string
	old := syncDir
	syncDir = func(dir string) error { synced = append(synced, dir); return old(dir) }
	t.Cleanup(func() { syncDir = old })
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "c.journal")
	j, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append(Entry{Kind: "start"}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if len(synced) != 1 || synced[0] != dir {
		t.Fatalf("directories synced creating the journal: %q, want [%q]", synced, dir)
	}
	synced = nil
	j, _, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	if len(synced) != 0 {
		t.Errorf("reopening an existing journal synced %q", synced)
	}
}

// TestTornTailIsReported: a torn last line is not taken for an entry, and its length is
// reported, by ReadTail and by Open (which cuts it), so that status and run can say so.
func TestTornTailIsReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.journal")
	j, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if j.Cut != 0 {
		t.Errorf("a new journal reports %d torn bytes", j.Cut)
	}
	if _, err := j.Append(Entry{Kind: "start"}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	torn := `{"seq":2,"kind":"inte`
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(torn)
	f.Close()
	es, cut, err := ReadTail(path)
	if err != nil || len(es) != 1 || cut != int64(len(torn)) {
		t.Fatalf("ReadTail: %d entries, %d torn bytes, %v; want 1, %d", len(es), cut, err, len(torn))
	}
	j, es, err = Open(path)
	if err != nil || len(es) != 1 || j.Cut != int64(len(torn)) {
		t.Fatalf("Open: %d entries, Cut %d, %v; want 1, %d", len(es), j.Cut, err, len(torn))
	}
	j.Close()
	if _, cut, _ := ReadTail(path); cut != 0 {
		t.Errorf("after Open cut the tail, ReadTail still finds %d torn bytes", cut)
	}
}

// TestReadTailWhileARunnerAppends: a runner appending a whole entry just after status read
// the journal does not make status report a torn line: the torn length is that of the
// bytes read. Before, ReadTail took the file's size afterwards and reported the new
// entry as torn bytes.
func TestReadTailWhileARunnerAppends(t *testing.T) {
	j, path := openStarted(t)
	old := readFile
	t.Cleanup(func() { readFile = old })
	readFile = func(p string) ([]byte, error) {
		data, err := old(p)
		// The runner appends between the read and whatever follows it.
		if _, aerr := j.Append(Entry{Kind: "intent", Detail: "step 1 of 2"}); aerr != nil {
			t.Fatal(aerr)
		}
		return data, err
	}
	es, torn, err := ReadTail(path)
	if err != nil || len(es) != 1 || torn != 0 {
		t.Fatalf("ReadTail during an append: %d entries, %d torn bytes, %v; want 1 entry, no torn bytes", len(es), torn, err)
	}
}
