package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/testenv"
)

func TestJournalAppendReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "c.journal")
	j, got, err := Open(path)
	if err != nil || len(got) != 0 {
		t.Fatalf("Open new: %v, %v", got, err)
	}
	for _, k := range []string{"start", "intent", "written"} {
		if _, err := j.Append(Entry{Kind: k, Step: 0, Weights: map[string]int64{"blue": 90, "green": 10}}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()

	// A crash mid-write leaves a partial line: it is dropped, and the next entry follows
	// the last complete one.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":4,"kind":"insy`)
	f.Close()
	if r, err := Read(path); err != nil || len(r) != 3 {
		t.Fatalf("Read with torn tail: %d entries, %v", len(r), err)
	}
	j, got, err = Open(path)
	if err != nil || len(got) != 3 || got[2].Kind != "written" || got[1].Weights["green"] != 10 {
		t.Fatalf("reopen: %+v, %v", got, err)
	}
	e, err := j.Append(Entry{Kind: "insync"})
	if err != nil || e.Seq != 4 {
		t.Fatalf("append after reopen: seq %d, %v", e.Seq, err)
	}
	j.Close()
	all, err := Read(path)
	if err != nil || len(all) != 4 || all[3].Kind != "insync" {
		t.Fatalf("after append: %+v, %v", all, err)
	}
	for i, e := range all {
		if e.Seq != i+1 || e.Time.IsZero() {
			t.Errorf("entry %d: seq %d time %v", i, e.Seq, e.Time)
		}
	}
}

func TestJournalCorruptMiddle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.journal")
	os.WriteFile(path, []byte("{\"seq\":1,\"kind\":\"start\"}\nnot json\n{\"seq\":3}\n"), 0o644)
	if _, _, err := Open(path); err == nil {
		t.Fatal("a corrupt complete line must be an error, not silently dropped")
	}
}

func TestLockExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.lock")
	l, err := Acquire(path, Holder{By: "alice@laptop", Cutover: "app"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(path, Holder{By: "bob@ci", Cutover: "app"})
	var le *LockedError
	if !errors.As(err, &le) || le.Holder.By != "alice@laptop" || le.Holder.PID != os.Getpid() {
		t.Fatalf("second Acquire: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := Acquire(path, Holder{By: "bob@ci", Cutover: "app"})
	if err != nil {
		t.Fatalf("Acquire after release: %v", err)
	}
	l2.Release()
}

// openStarted opens a new journal in a temporary directory, closed when the test ends, with
// a start entry appended; it returns the journal and its path.
func openStarted(t *testing.T) (*Journal, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.journal")
	j, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	if _, err := j.Append(Entry{Kind: "start"}); err != nil {
		t.Fatal(err)
	}
	return j, path
}

// TestAppendFailureLeavesJournalWhole: an append that fails takes no sequence number and
// leaves nothing behind, so the next one follows the last entry on disk.
func TestAppendFailureLeavesJournalWhole(t *testing.T) {
	j, path := openStarted(t)
	good := j.f
	ro, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	j.f = ro // writes to it fail
	if _, err := j.Append(Entry{Kind: "intent"}); err == nil {
		t.Fatal("append to a read-only file succeeded")
	}
	ro.Close()
	j.f = good
	if e, err := j.Append(Entry{Kind: "intent"}); err != nil || e.Seq != 2 {
		t.Fatalf("append after a failure: seq %d, %v", e.Seq, err)
	}
	all, err := Read(path)
	if err != nil || len(all) != 2 || all[1].Seq != 2 || all[1].Kind != "intent" {
		t.Fatalf("journal after a failed append: %+v, %v", all, err)
	}
}

func TestHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.lock")
	if err := Held(path); err != nil {
		t.Fatalf("no lock file: %v", err)
	}
	l, err := Acquire(path, Holder{By: "alice@laptop", Cutover: "app"})
	if err != nil {
		t.Fatal(err)
	}
	var le *LockedError
	if err := Held(path); !errors.As(err, &le) || le.Holder.By != "alice@laptop" {
		t.Fatalf("Held while held: %v", err)
	}
	l.Release()
	if err := Held(path); err != nil {
		t.Fatalf("Held after release: %v", err)
	}
}

// TestLockNamesItsHost: the lock file says which machine's process holds it, and since
// when, for `cutover status` and a second runner's refusal.
func TestLockNamesItsHost(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		testenv.Missingf(t, "no host name here: %v", err)
	}
	path := filepath.Join(t.TempDir(), "c.lock")
	l, err := Acquire(path, Holder{By: "alice@laptop", Cutover: "app"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	var le *LockedError
	if err := Held(path); !errors.As(err, &le) {
		t.Fatalf("Held while held: %v", err)
	}
	h := le.Holder
	if h.Host != host || h.PID != os.Getpid() || h.Since.IsZero() {
		t.Errorf("holder %+v, want host %s, pid %d and a time", h, host, os.Getpid())
	}
	for _, want := range []string{fmt.Sprintf("pid %d on host %s", os.Getpid(), host), "(alice@laptop)", "since "} {
		if !strings.Contains(le.Error(), want) {
			t.Errorf("error %q lacks %q", le.Error(), want)
		}
	}
}
