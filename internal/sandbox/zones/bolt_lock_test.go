package zones

import (
	"path/filepath"
	"testing"
	"time"
)

// TestSecondOpenOfStateSaysWhoHoldsIt: a second store on a state file another holds (a
// second sandbox given the same --state) is refused with an error naming the file, the
// likely holder and the flag, not bbolt's bare "timeout".
func TestSecondOpenOfStateSaysWhoHoldsIt(t *testing.T) {
	// The wait for the lock is not under test; keep it short.
	old := lockTimeout
	lockTimeout = 50 * time.Millisecond
	t.Cleanup(func() { lockTimeout = old })
	path := filepath.Join(t.TempDir(), "state.db")
	first, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := Open(Options{Path: path})
	if err == nil {
		second.Close()
		t.Fatal("a second store opened a state file the first holds")
	}
	want := "open state " + path + ": another sandbox (or another process) holds this file: stop it, or give this sandbox another --state file"
	if err.Error() != want {
		t.Errorf("second open:\n got %s\nwant %s", err, want)
	}
}
