package journal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stores are the Store implementations every contract test runs over.
func stores(t *testing.T) []struct {
	name string
	s    Store
} {
	dir := t.TempDir()
	return []struct {
		name string
		s    Store
	}{
		{"files", Files(filepath.Join(dir, "c.journal"), filepath.Join(dir, "c.lock"))},
		{"memory", NewMemory().Store("c")},
	}
}

// TestStoreContract: each Store reads a missing journal as fs.ErrNotExist, creates it on
// Open, numbers entries across reopenings, and holds its lock for one holder at a time,
// naming that holder to others.
func TestStoreContract(t *testing.T) {
	for _, tc := range stores(t) {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			if _, _, err := s.Read(); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("Read before Open: %v, want an error wrapping os.ErrNotExist", err)
			}
			if !strings.Contains(s.Where(), "c") {
				t.Errorf("Where %q does not name the cutover", s.Where())
			}
			if err := s.Held(); err != nil {
				t.Fatalf("Held before any Acquire: %v", err)
			}
			lock, err := s.Acquire(Holder{By: "alice@a", Cutover: "c"})
			if err != nil {
				t.Fatal(err)
			}
			var locked *LockedError
			if err := s.Held(); !errors.As(err, &locked) || locked.Holder.By != "alice@a" || locked.Holder.PID != os.Getpid() {
				t.Fatalf("Held while held: %v, want *LockedError naming alice@a and this pid", err)
			}
			if rel, err := s.Acquire(Holder{By: "bob@b", Cutover: "c"}); !errors.As(err, &locked) || locked.Holder.By != "alice@a" || rel != nil {
				t.Fatalf("second Acquire: %v, %v, want *LockedError naming alice@a and no lock", rel, err)
			}

			w, got, cut, err := s.Open()
			if err != nil || len(got) != 0 || cut != 0 {
				t.Fatalf("Open new: %v, %d cut, %v", got, cut, err)
			}
			if got, torn, err := s.Read(); err != nil || len(got) != 0 || torn != 0 {
				t.Fatalf("Read of an opened, empty journal: %v, %d, %v", got, torn, err)
			}
			for _, k := range []string{"start", "intent"} {
				if _, err := w.Append(Entry{Kind: k, Step: 0, Weights: map[string]int64{"green": 10}}); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			w, got, _, err = s.Open()
			if err != nil || len(got) != 2 || got[1].Kind != "intent" || got[1].Seq != 2 || got[1].Weights["green"] != 10 || got[0].Time.IsZero() {
				t.Fatalf("reopen: %+v, %v", got, err)
			}
			e, err := w.Append(Entry{Kind: "written"})
			if err != nil || e.Seq != 3 {
				t.Fatalf("append after reopen: seq %d, %v, want 3", e.Seq, err)
			}
			w.Close()
			if got, torn, err := s.Read(); err != nil || len(got) != 3 || got[2].Kind != "written" || torn != 0 {
				t.Fatalf("Read: %+v, %d, %v", got, torn, err)
			}

			if err := lock.Release(); err != nil {
				t.Fatal(err)
			}
			if err := s.Held(); err != nil {
				t.Fatalf("Held after Release: %v", err)
			}
			again, err := s.Acquire(Holder{By: "bob@b", Cutover: "c"})
			if err != nil {
				t.Fatalf("Acquire after Release: %v", err)
			}
			defer again.Release()
			if err := s.Held(); !errors.As(err, &locked) || locked.Holder.By != "bob@b" {
				t.Fatalf("Held after bob took it: %v", err)
			}
		})
	}
}

// TestMemoryAppendIsCompareAndSwap: a writer that lost a race to another (an object
// updated since its resourceVersion) appends nothing and gets *ConflictError; the journal
// keeps the winner's entry and no gap.
func TestMemoryAppendIsCompareAndSwap(t *testing.T) {
	s := NewMemory().Store("c")
	a, _, _, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	b, _, _, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(Entry{Kind: "start"}); err != nil {
		t.Fatal(err)
	}
	var conflict *ConflictError
	if _, err := b.Append(Entry{Kind: "intent"}); !errors.As(err, &conflict) || conflict.Seq != 0 || conflict.Found != 1 || !strings.Contains(err.Error(), "memory:c") {
		t.Fatalf("stale writer's append: %v, want *ConflictError at seq 0, journal at 1, naming memory:c", err)
	}
	got, _, err := s.Read()
	if err != nil || len(got) != 1 || got[0].Kind != "start" {
		t.Fatalf("journal after the conflict: %+v, %v, want only the start", got, err)
	}
	// The winner goes on from where it is.
	if e, err := a.Append(Entry{Kind: "intent"}); err != nil || e.Seq != 2 {
		t.Fatalf("winner's next append: seq %d, %v", e.Seq, err)
	}
}

// TestMemoryStaleReleaseFreesNothing: releasing a lease twice, after another holder took
// it, leaves the other holder's.
func TestMemoryStaleReleaseFreesNothing(t *testing.T) {
	s := NewMemory().Store("c")
	first, err := s.Acquire(Holder{By: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	first.Release()
	second, err := s.Acquire(Holder{By: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Release()
	first.Release()
	var locked *LockedError
	if err := s.Held(); !errors.As(err, &locked) || locked.Holder.By != "bob" {
		t.Fatalf("Held after alice released twice: %v, want bob's lease", err)
	}
}
