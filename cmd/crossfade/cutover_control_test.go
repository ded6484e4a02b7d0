package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/controltest"
)

// controlPlan writes a plan file of the cutover "app".
func controlPlan(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.yaml")
	plan := `apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: app
spec:
  zone: example.com
  records:
    - name: app.example.com
  from: blue
  to: green
  steps: [0, 50, 100]
  pause: 1m
`
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runCLI runs a command line through cli.Execute, as main does, with static AWS credentials:
// nothing looks for others (the instance metadata service is not loopback).
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	code = cli.Execute(t.Context(), root, &errOut)
	return code, out.String(), errOut.String()
}

// startStubRunner starts a cutover "app" in state (blue 100, green 0) and holds it with a
// controltest.Runner that journals each command with answer's detail (nil: never reads them).
func startStubRunner(t *testing.T, state string, answer func(command string) string) *controltest.Runner {
	t.Helper()
	p := cutover.PathsFor(state, "app")
	return controltest.Start(t, controltest.Cutover{Name: "app", Lock: p.Lock, Journal: p.Journal, Control: p.Control}, answer)
}

// TestControlCommandsWaitForTheRunner (H1): the wiring of pause, resume, promote and
// abort to cutover.Control (whose cases are in internal/cutover's TestControl): the flags
// reach it, and what became of the command is the exit status: acted on, 0; ignored or
// not acknowledged in time, 1 naming why on stderr (and status lists the queued command);
// no runner, 0, left for `run --resume`.
func TestControlCommandsWaitForTheRunner(t *testing.T) {
	plan := controlPlan(t)
	for _, tc := range []struct {
		name     string
		command  string
		answer   func(string) string // nil: the runner never reads commands
		timeout  string
		noRunner bool
		wantCode int
		want     []string
	}{
		{"acted on", "pause", func(c string) string { return c }, "30s", false, 0, []string{"pause sent to cutover app; waiting up to 30s", "pause acted on by its runner at"}},
		{"ignored", "promote", func(c string) string { return c + " ignored: rolling back" }, "30s", false, 1, []string{"promote not acted on: rolling back"}},
		{"not acknowledged", "pause", nil, "300ms", false, 1, []string{"pause not acknowledged within 300ms: it stays queued, its runner acts on it at its next check", "crossfade cutover status " + plan}},
		{"no runner", "pause", nil, "30s", true, 0, []string{"pause left for cutover app, which no runner holds now: `crossfade cutover run --resume " + plan + "` acts on it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := t.TempDir()
			r := startStubRunner(t, state, tc.answer)
			if tc.noRunner {
				r.Stop()
			}
			code, out, errOut := runCLI(t, "cutover", tc.command, plan, "--state-dir", state, "--ack-timeout", tc.timeout)
			if code != tc.wantCode {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("output lacks %q:\nstdout:\n%s\nstderr:\n%s", w, out, errOut)
				}
			}
			if tc.name == "not acknowledged" {
				code, out, errOut := runCLI(t, "cutover", "status", plan, "--state-dir", state)
				if code != 0 || !strings.Contains(out, "queued: pause by ") {
					t.Errorf("status (%d) does not list the queued pause:\n%s%s", code, out, errOut)
				}
			}
		})
	}
}

// runCLIRunnerStops runs a command line (runCLI) while a stub runner holds the cutover in
// state and stops (lets go of the lock) a second after the command has landed, without
// reading it: long after the CLI, which looks for a runner right after sending, found this
// one (stopping at once raced that look, and the CLI rightly said no runner held it).
func runCLIRunnerStops(t *testing.T, state string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	startStubRunner(t, state, nil).StopOnceSent(t)
	return runCLI(t, args...)
}

// TestAbortRollsBackHereWhenTheRunnerStops (L2): an abort sent to a runner that stops
// before reading it is not left for a resume: the CLI rolls back itself, as it does for a
// cutover no runner holds (here against an endpoint that refuses, so the rollback's read
// fails and says so). Before, it printed that `run --resume` acts on it and exited 0.
func TestAbortRollsBackHereWhenTheRunnerStops(t *testing.T) {
	plan := controlPlan(t)
	state := t.TempDir()
	code, out, errOut := runCLIRunnerStops(t, state, "cutover", "abort", plan, "--state-dir", state, "--ack-timeout", "1m",
		"--aws-endpoint", "http://127.0.0.1:9", "--aws-region", "us-east-1")
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	if code != 1 || !strings.Contains(out, "abort of cutover app: its runner has stopped; rolling back here") || strings.Contains(out+errOut, "acts on it") {
		t.Errorf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
