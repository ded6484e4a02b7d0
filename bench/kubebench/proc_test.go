package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/child"
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
			c := startTrapped(t, tc.script)
			waitReady(t, c)
			err := stopChild(c)
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

// startTrapped starts sh running script as a measured child; it is killed when the test ends.
func startTrapped(t *testing.T, script string) *child.Process {
	t.Helper()
	c, err := startChild("ctl", filepath.Join(t.TempDir(), "ctl.log"), nil, "sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Kill() })
	return c
}

// waitReady returns once the child's script has set its trap and said so: SIGTERM only
// then, so that sh exits with the trap's status.
func waitReady(t *testing.T, c *child.Process) {
	t.Helper()
	for !strings.Contains(c.Tail(1), "ready") {
		if c.Exited() {
			t.Fatalf("sh exited early: %v", c.ExitError())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStopChildInto: what the measurement returns keeps its own error and gains the
// child's failed exit; a clean exit adds nothing.
func TestStopChildInto(t *testing.T) {
	measured := errors.New("no first sync within 5m0s")
	for _, tc := range []struct {
		name   string
		script string
		prior  error
		want   []error // each must be inside the result (errors.Is)
		code   int     // the exit status inside the result; 0: none
	}{
		{"a failed exit joins the measurement's error", `trap 'exit 3' TERM; echo ready; while :; do sleep 0.05; done`, measured, []error{measured}, 3},
		{"a failed exit after a good measurement", `trap 'exit 4' TERM; echo ready; while :; do sleep 0.05; done`, nil, nil, 4},
		{"a clean exit leaves the error as it was", `trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done`, measured, []error{measured}, 0},
		{"a clean exit after a good measurement", `trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done`, nil, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startTrapped(t, tc.script)
			waitReady(t, c)
			err := tc.prior
			stopChildInto(c, &err)
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("err = %v, want %v inside", err, w)
				}
			}
			var exit *exec.ExitError
			switch {
			case tc.code == 0 && tc.prior == nil && err != nil:
				t.Errorf("err = %v, want nil", err)
			case tc.code == 0 && errors.As(err, &exit):
				t.Errorf("err = %v holds an exit status after a clean exit", err)
			case tc.code != 0 && (!errors.As(err, &exit) || exit.ExitCode() != tc.code):
				t.Errorf("err = %v, want exit status %d inside", err, tc.code)
			}
		})
	}
}
