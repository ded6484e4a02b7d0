package child

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStop: Stop lets a child that heeds SIGTERM exit by itself, and
// kills one that does not once the grace is over, saying so. Real processes: sh and sleep.
func TestStop(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, tc := range []struct {
		name, script string
		grace        time.Duration
		wantErr      bool
	}{
		// The grace is a failure bound here: sleep dies of SIGTERM at once.
		{"heeds SIGTERM", "echo ready; exec sleep 300", time.Minute, false},
		// SIGTERM ignored, and still ignored after exec: only the kill ends it.
		{"ignores SIGTERM", `trap "" TERM; echo ready; exec sleep 300`, 200 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "log")
			p, err := Start(exec.Command("sh", "-c", tc.script), log)
			if err != nil {
				t.Fatal(err)
			}
			// The trap must be in place before the SIGTERM.
			for deadline := time.Now().Add(time.Minute); !strings.Contains(Tail(log, 1), "ready"); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					p.Stop(0)
					t.Fatalf("the script never got ready: %s", Tail(log, 5))
				}
			}
			err = p.Stop(tc.grace)
			if (err != nil) != tc.wantErr {
				t.Errorf("stop = %v, want error %v", err, tc.wantErr)
			}
			select {
			case <-p.Done():
			default:
				t.Fatal("stop returned before the process exited")
			}
			if again := p.Stop(tc.grace); !errors.Is(again, err) && again != err {
				t.Errorf("a second stop = %v, the first said %v", again, err)
			}
		})
	}
}
