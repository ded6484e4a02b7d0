package render

import (
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// TestStatus: `status` puts under the report's first line who runs the cutover now, or
// what continues it when nobody does, the torn tail of its journal, the commands queued
// for it and its latest resume; the rest of the report follows unchanged.
func TestStatus(t *testing.T) {
	start := map[string]int64{"blue": 100, "green": 0}
	unfinished := func() *cutover.Report {
		return &cutover.Report{Cutover: "app", Lever: cutover.LeverRoute53, By: "alice@laptop", Started: t0, StartWeights: start,
			Resumes: []cutover.ResumeReport{{At: at(64), By: "bob@ci-7"}, {At: at(90), By: "bob@ci-7", Host: "ci-7", PID: 4242}}}
	}
	rest := "  run by alice@laptop, started 2026-03-01T12:00:00Z\n  starting weights: blue=100 green=0\n"
	lastResume := "  last resumed at 2026-03-01T12:01:30Z by bob@ci-7 (pid 4242 on ci-7): the run before it had started but sent nothing yet; starting from the first write\n"
	// The report lists both resumes after the (no) writes; status names the last above.
	resumes := "  resumed at 2026-03-01T12:01:04Z by bob@ci-7: the run before it had started but sent nothing yet; starting from the first write\n" +
		"  resumed at 2026-03-01T12:01:30Z by bob@ci-7 (pid 4242 on ci-7): the run before it had started but sent nothing yet; starting from the first write\n"
	promote := cutover.Command{ID: "c1", Command: cutover.CommandPromote, SkipGates: true, By: "carol@desk", At: at(100)}
	tests := []struct {
		name string
		st   *cutover.Status
		want string
	}{
		{"held by a runner", &cutover.Status{Report: unfinished(), PlanFile: "app.yaml", Runner: &journal.Holder{By: "bob@ci-7", PID: 4242, Host: "ci-7", Since: at(90)},
			Queued: []cutover.Command{promote}},
			"cutover app: unfinished\n  runner now: " + (&journal.Holder{By: "bob@ci-7", PID: 4242, Host: "ci-7", Since: at(90)}).String() + "\n" +
				"  queued: promote --skip-gates by carol@desk, sent at 2026-03-01T12:01:40Z: not yet read; its runner reads commands at every check, and once it has, the command is listed below with what it did\n" +
				lastResume + rest + resumes},
		{"stopped unfinished, torn journal", &cutover.Status{Report: unfinished(), Journal: "/state/app.journal", TornBytes: 17,
			Queued: []cutover.Command{{ID: "c2", Command: cutover.CommandPause, By: "carol@desk", At: at(100)}}},
			"cutover app: unfinished\n  runner now: none on this machine; the run stopped unfinished: `crossfade cutover run --resume FILE` continues it, `crossfade cutover abort FILE` rolls it back\n" +
				"  the journal /state/app.journal ends in a torn line of 17 bytes (a crash mid-write): not an entry, its action was never taken; the next run cuts it off\n" +
				"  queued: pause by carol@desk, sent at 2026-03-01T12:01:40Z: not yet read; no runner holds the cutover: `crossfade cutover run --resume` reads it when it starts\n" +
				lastResume + rest + resumes},
		{"rolling back", &cutover.Status{Report: &cutover.Report{Cutover: "app", By: "alice@laptop", Started: t0, StartWeights: start, RollingBack: true, Rollback: "aborted"}, PlanFile: "app.yaml"},
			"cutover app: unfinished, rolling back\n  runner now: none on this machine; the rollback stopped unfinished: `crossfade cutover run --resume app.yaml` (or `crossfade cutover abort app.yaml`) finishes it\n" + rest +
				"  rolling back (not finished): aborted; it goes on to the starting weights whatever comes (pause, resume and promote are ignored); if no runner holds it, `crossfade cutover run --resume` finishes it\n"},
		{"not started", &cutover.Status{Report: &cutover.Report{Cutover: "app", NotStarted: true}, PlanFile: "app.yaml"},
			"cutover app: not started\n  runner now: none on this machine; the cutover wrote nothing yet: `crossfade cutover run --resume app.yaml` starts it\n" +
				"  the journal has no start entry: the run stopped before it moved anything (nothing was written)\n"},
		{"ended", &cutover.Status{Report: &cutover.Report{Cutover: "app", Outcome: "completed", By: "alice@laptop", Started: t0, Ended: at(60), StartWeights: start},
			Queued: []cutover.Command{promote}},
			"cutover app: completed\n  runner now: none (the cutover has ended)\n" +
				"  queued: promote --skip-gates by carol@desk, sent at 2026-03-01T12:01:40Z: the cutover has ended: no run will act on it\n" +
				"  run by alice@laptop, started 2026-03-01T12:00:00Z, ended 2026-03-01T12:01:00Z (1m0s)\n  starting weights: blue=100 green=0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := Status(&b, tt.st); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("status:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
