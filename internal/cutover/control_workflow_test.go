package cutover

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/controltest"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// startStubRunner starts a cutover "app" in state (blue 100, green 0) and holds it with a
// controltest.Runner that journals each command with answer's detail (nil: never reads them).
func startStubRunner(t *testing.T, state string, answer func(command string) string) *controltest.Runner {
	t.Helper()
	p := PathsFor(state, "app")
	return controltest.Start(t, controltest.Cutover{Name: "app", Lock: p.Lock, Journal: p.Journal, Control: p.Control}, answer)
}

// TestControlStubRunnerSpeaksTheJournal: the entries controltest's runner stand-in
// journals are the ones a runner writes and Control reads (it spells them, as it cannot
// import this package).
func TestControlStubRunnerSpeaksTheJournal(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"start kind", controltest.KindStart, kindStart},
		{"control kind", controltest.KindControl, kindControl},
		{"no step", controltest.StepNone, stepNone},
	} {
		if tc.got != tc.want {
			t.Errorf("controltest %s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// TestControl: Control sends a command to the cutover's runner and waits for the runner
// to journal what it did with it: acted on, nil; ignored, *ControlError naming why (an
// abort that finds the cutover rolling back counts as acted on); not acknowledged in
// time, *ControlError saying it stays queued; no runner, nil, left for `run --resume`; a
// runner that stops before reading it, *ControlError, except for an abort, which then
// rolls back here, as it does at once for a cutover no runner holds.
func TestControl(t *testing.T) {
	const planFile = "plans/app.yaml"
	ignored := func(why string) func(string) string {
		return func(c string) string { return c + " ignored: " + why }
	}
	for _, tc := range []struct {
		name      string
		command   string
		skipGates bool
		answer    func(string) string // nil: the runner never reads commands
		timeout   time.Duration
		runner    string // "holds", "stops" (once the command lands), "none"
		wantState AckState
		wantErr   bool // a *ControlError with wantState
		want      []string
		// rolledBack: Control rolled back here, returning the report.
		rolledBack bool
	}{
		{name: "acted on", command: CommandPause, answer: func(c string) string { return c }, timeout: 30 * time.Second, runner: "holds",
			want: []string{"pause sent to cutover app; waiting up to 30s for its runner (runner@test, pid ", "cutover app: pause acted on by its runner at "}},
		{name: "ignored", command: CommandPromote, answer: ignored("rolling back"), timeout: 30 * time.Second, runner: "holds",
			wantErr: true, wantState: AckIgnored, want: []string{"cutover app: promote not acted on: rolling back"}},
		{name: "ended", command: CommandResume, answer: ignored("the cutover had ended (completed)"), timeout: 30 * time.Second, runner: "holds",
			wantErr: true, wantState: AckIgnored, want: []string{"resume not acted on: the cutover had ended (completed)"}},
		{name: "abort during a rollback", command: CommandAbort, answer: ignored("rolling back"), timeout: 30 * time.Second, runner: "holds",
			want: []string{"cutover app: abort: the cutover was already rolling back"}},
		{name: "promote --skip-gates", command: CommandPromote, skipGates: true, answer: func(c string) string { return c }, timeout: 30 * time.Second, runner: "holds",
			want: []string{"WARNING: promote --skip-gates: the remaining steps of cutover app pass without their gates (unmeasured)", "promote --skip-gates sent to cutover app", "cutover app: promote --skip-gates acted on by its runner at "}},
		{name: "not acknowledged", command: CommandPause, timeout: 300 * time.Millisecond, runner: "holds",
			wantErr: true, wantState: AckTimedOut, want: []string{"cutover app: pause not acknowledged within 300ms: it stays queued, its runner acts on it at its next check, and `crossfade cutover status plans/app.yaml` shows when"}},
		{name: "not waiting", command: CommandPause, timeout: 0, runner: "holds",
			want: []string{"pause sent to cutover app; its runner (runner@test, pid ", "not waiting (--ack-timeout 0): `crossfade cutover status plans/app.yaml` shows when"}},
		{name: "no runner", command: CommandPause, timeout: 30 * time.Second, runner: "none",
			want: []string{"pause left for cutover app, which no runner holds now: `crossfade cutover run --resume plans/app.yaml` acts on it when it starts"}},
		{name: "runner stops", command: CommandPause, timeout: time.Minute, runner: "stops",
			wantErr: true, wantState: AckNoRunner, want: []string{"cutover app: its runner stopped before it read the pause: the command stays queued, and `crossfade cutover run --resume plans/app.yaml` acts on it when it starts"}},
		{name: "abort, runner stops", command: CommandAbort, timeout: time.Minute, runner: "stops", rolledBack: true,
			want: []string{"abort sent to cutover app; waiting up to 1m0s", "abort of cutover app: its runner has stopped; rolling back here"}},
		{name: "abort, no runner", command: CommandAbort, timeout: time.Minute, runner: "none", rolledBack: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fakePlan(time.Minute, 50, 100)
			// Mid-cutover: a rollback has weights to write.
			lv := newFakeLever("blue", "green", 50, 50)
			eng := fakeConfig(t, p, lv, &scriptGate{name: "g", next: passing})
			r := startStubRunner(t, eng.StateDir, tc.answer)
			switch tc.runner {
			case "none":
				r.Stop()
			case "stops":
				r.StopOnceSent(t)
			}
			var out bytes.Buffer
			rep, err := Control(t.Context(), ControlConfig{Command: tc.command, Plan: p, PlanFile: planFile, StateDir: eng.StateDir,
				By: "tester@host", SkipGates: tc.skipGates, AckTimeout: tc.timeout, Engine: eng, Out: &out})
			var ce *ControlError
			switch {
			case tc.wantErr && (!errors.As(err, &ce) || ce.Ack.State != tc.wantState):
				t.Errorf("err = %v, want a *ControlError with state %d", err, tc.wantState)
			case !tc.wantErr && err != nil:
				t.Errorf("err = %v, want nil", err)
			}
			got := out.String()
			if err != nil {
				got += err.Error()
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			if tc.rolledBack {
				// Traffic went back here: the report says so, and the lever holds the
				// starting weights.
				if rep == nil || rep.Outcome != outcomeRolledBack {
					t.Errorf("report = %+v, want one of a rollback done here", rep)
				}
				if strings.Contains(got, "acts on it") {
					t.Errorf("an abort rolled back here says a later run acts on it:\n%s", got)
				}
				if w := lv.weights(); w["blue"] != 100 || w["green"] != 0 {
					t.Errorf("weights after a rollback here: %v, want blue 100, green 0", w)
				}
				return
			}
			if rep != nil {
				t.Errorf("report = %+v, want none: nothing was rolled back here", rep)
			}
			// Only a runner moves traffic on a command it was sent.
			lv.mu.Lock()
			defer lv.mu.Unlock()
			if len(lv.writes) != 0 {
				t.Errorf("Control wrote weights %v itself", lv.writes)
			}
		})
	}
}

// TestControlRefuses: a command for a cutover no run can act on (never started here) is
// refused, with the refusal's type, and nothing is left for a later run; a config that
// lacks what its command needs, or asks a pause to skip gates, is refused naming the field.
func TestControlRefuses(t *testing.T) {
	state := t.TempDir()
	p := &spec.Plan{Name: "app", From: "blue", To: "green"}
	_, err := Control(t.Context(), ControlConfig{Command: CommandPause, Plan: p, PlanFile: "app.yaml", StateDir: state, AckTimeout: time.Second})
	var refused *CommandRefusedError
	if !errors.As(err, &refused) {
		t.Errorf("pause of a cutover never started: err = %v, want *CommandRefusedError", err)
	}
	if des, _ := os.ReadDir(PathsFor(state, "app").Control); len(des) > 0 {
		t.Errorf("a refused command was left in the control directory: %v", des)
	}
	for _, tc := range []struct {
		name string
		cfg  ControlConfig
		want string
	}{
		{"no plan", ControlConfig{Command: CommandPause, StateDir: state}, "ControlConfig.Plan"},
		{"abort without the engine's configuration", ControlConfig{Command: CommandAbort, Plan: p, StateDir: state}, "ControlConfig.Engine.Plan"},
		{"skip-gates on a pause", ControlConfig{Command: CommandPause, Plan: p, StateDir: state, SkipGates: true}, "ControlConfig.SkipGates is for promote only"},
	} {
		if _, err := Control(t.Context(), tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one naming %s", tc.name, err, tc.want)
		}
	}
}
