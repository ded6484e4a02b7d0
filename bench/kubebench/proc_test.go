package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStopChildFailedExit checks that a controller that exits with a failure after
// SIGTERM is reported with its exit status matchable (errors.As *exec.ExitError), and
// its name; a clean exit is nil.
func TestStopChildFailedExit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		code   int // 0: stopChild returns nil
	}{
		{"fails on SIGTERM", `trap 'exit 3' TERM; echo ready; while :; do sleep 0.05; done`, 3},
		{"exits cleanly on SIGTERM", `trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := startChild("ctl", filepath.Join(t.TempDir(), "ctl.log"), nil, "sh", "-c", tc.script)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Kill() })
			// SIGTERM only once the trap is set, so that sh exits with the trap's status.
			for !strings.Contains(c.Tail(1), "ready") {
				if c.Exited() {
					t.Fatalf("sh exited early: %v", c.ExitError())
				}
				time.Sleep(10 * time.Millisecond)
			}
			err = stopChild(c)
			if tc.code == 0 {
				if err != nil {
					t.Errorf("stopChild = %v, want nil", err)
				}
				return
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("stopChild = %v, want an *exec.ExitError inside", err)
			}
			if got := exit.ExitCode(); got != tc.code {
				t.Errorf("exit code %d, want %d", got, tc.code)
			}
			if !strings.HasPrefix(err.Error(), "ctl exited with ") {
				t.Errorf("err = %q, want it to name the process", err)
			}
		})
	}
}
