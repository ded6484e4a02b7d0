package render

import (
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
)

var (
	t0  = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	w50 = map[string]int64{"blue": 50, "green": 50}
)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// TestResume: a resume names who made it, from which process, and how far the write it
// took up had got, in the words of the lever (INSYNC and a change id for Route 53, "in
// effect" for a lever without change ids).
func TestResume(t *testing.T) {
	last := func(stage, id string) *cutover.ResumedWrite {
		return &cutover.ResumedWrite{Name: "step 3 of 4", Weights: w50, Stage: stage, ChangeID: id}
	}
	prefix := "resumed at 2026-03-01T12:01:04Z by bob@ci-7 (pid 4242 on ci-7): "
	tests := []struct {
		name string
		r    cutover.ResumeReport
		want string
	}{
		{"before any write", cutover.ResumeReport{At: at(64), By: "bob@ci-7", Host: "ci-7", PID: 4242},
			prefix + "the run before it had started but sent nothing yet; starting from the first write"},
		{"host without pid", cutover.ResumeReport{At: at(64), By: "bob@ci-7", Host: "ci-7"},
			"resumed at 2026-03-01T12:01:04Z by bob@ci-7 (on ci-7): the run before it had started but sent nothing yet; starting from the first write"},
		{"neither", cutover.ResumeReport{At: at(64), By: "bob@ci-7", Last: last(cutover.StagePassed, "C7")},
			"resumed at 2026-03-01T12:01:04Z by bob@ci-7: after step 3 of 4 (blue=50 green=50) passed: going on from there"},
		{"intent", cutover.ResumeReport{At: at(64), By: "bob@ci-7", Host: "ci-7", PID: 4242, Last: last(cutover.StageIntent, "")},
			prefix + "redoing the write of step 3 of 4 (blue=50 green=50), which the run before it had begun but not seen sent (it may have landed: weights are absolute, so sending them again is safe)"},
		{"sent", cutover.ResumeReport{At: at(64), By: "bob@ci-7", Host: "ci-7", PID: 4242, Last: last(cutover.StageSent, "C7")},
			prefix + "redoing the write of step 3 of 4 (blue=50 green=50), which the run before it had sent (change C7) but not seen INSYNC"},
		{"sent, no change id", cutover.ResumeReport{At: at(64), By: "bob@ci-7", Host: "ci-7", PID: 4242, Last: last(cutover.StageSent, "")},
			prefix + "redoing the write of step 3 of 4 (blue=50 green=50), which the run before it had sent but not seen in effect"},
		{"in sync", cutover.ResumeReport{At: at(64), By: "bob@ci-7", Host: "ci-7", PID: 4242, Last: last(cutover.StageInSync, "C7")},
			prefix + "redoing the write of step 3 of 4 (blue=50 green=50), which the run before it had seen INSYNC (change C7) but not held to its end; its hold starts again"},
		{"in effect, no change id", cutover.ResumeReport{At: at(64), By: "bob@ci-7", Host: "ci-7", PID: 4242, Last: last(cutover.StageInSync, "")},
			prefix + "redoing the write of step 3 of 4 (blue=50 green=50), which the run before it had seen in effect but not held to its end; its hold starts again"},
		{"failed", cutover.ResumeReport{At: at(64), By: "bob@ci-7", Host: "ci-7", PID: 4242, Last: last(cutover.StageFailed, "C7")},
			prefix + "after step 3 of 4 (blue=50 green=50) failed: going on with its rollback"},
		{"TTL write, no weights", cutover.ResumeReport{At: at(64), By: "bob@ci-7", Host: "ci-7", PID: 4242,
			Last: &cutover.ResumedWrite{Name: "lower TTL to 60s", Stage: cutover.StageHeld}},
			prefix + "after lower TTL to 60s held: going on from there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Resume(tt.r); got != tt.want {
				t.Errorf("Resume:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestReport renders reports whole: a Route 53 run with a resume between the write it
// interrupted and the one it redid, an ALB run with its Terraform block, a run that
// never started, and a rollback under way.
func TestReport(t *testing.T) {
	start := map[string]int64{"blue": 100, "green": 0}
	ignored := journal.Entry{Kind: "control", Time: at(600), By: "carol@desk", Detail: "resume ignored: rolling back",
		Data: []byte(`{"sentAt":"2026-03-01T12:00:30Z"}`)}
	acted := journal.Entry{Kind: "control", Time: at(20), By: "carol@desk", Detail: "pause", Data: []byte(`{"sentAt":"2026-03-01T12:00:15Z"}`)}
	tests := []struct {
		name string
		r    *cutover.Report
		want string
	}{
		{"route53, resumed", &cutover.Report{Cutover: "app", Lever: cutover.LeverRoute53, Outcome: "completed", By: "alice@laptop",
			Started: t0, Ended: at(125), StartWeights: start,
			Steps: []cutover.StepReport{
				{Name: "step 1 of 2", Weights: w50, ChangeID: "C1", InSyncAfter: "40ms", Outcome: "written"},
				{Name: "step 1 of 2", Weights: w50, ChangeID: "C2", InSyncAfter: "30ms", Outcome: "passed", Detail: "held 1m0s",
					Gates: []gate.Result{{Gate: "answers", Pass: true, Detail: "green 50%"}, {Gate: "errors", Pass: true, Pending: true, Detail: "3 requests"}}},
				{Name: "step 2 of 2", Weights: map[string]int64{"blue": 0, "green": 100}, ChangeID: "C3", InSyncAfter: "35ms", Outcome: "passed", GatesSkipped: true},
			},
			GatesSkipped: true,
			Resumes:      []cutover.ResumeReport{{At: at(64), By: "bob@ci-7", WritesBefore: 1, Last: &cutover.ResumedWrite{Name: "step 1 of 2", Weights: w50, Stage: cutover.StageSent, ChangeID: "C1"}}},
			Controls:     []journal.Entry{acted},
			Retire:       &cutover.RetireReport{Cluster: "blue", Retirable: true, Detail: "blue served 0 requests in 5m0s: retirable"},
		}, `cutover app: completed
  WARNING: GATES SKIPPED: steps passed unmeasured (promote --skip-gates); see the steps marked below
  run by alice@laptop, started 2026-03-01T12:00:00Z, ended 2026-03-01T12:02:05Z (2m5s)
  starting weights: blue=100 green=0
  step 1 of 2      blue=50 green=50       written  change C1, INSYNC after 40ms
  resumed at 2026-03-01T12:01:04Z by bob@ci-7: redoing the write of step 1 of 2 (blue=50 green=50), which the run before it had sent (change C1) but not seen INSYNC
  step 1 of 2      blue=50 green=50       passed   change C2, INSYNC after 30ms; held 1m0s
      pass answers: green 50%
      pending errors: 3 requests
  step 2 of 2      blue=0 green=100       passed   change C3, INSYNC after 35ms
      !! GATES SKIPPED: this step was not measured
  pause by carol@desk at 2026-03-01T12:00:20Z
  retire: blue served 0 requests in 5m0s: retirable
`},
		{"alb, rolled back", &cutover.Report{Cutover: "web", Lever: cutover.LeverALB, Outcome: "rolled-back", By: "alice@laptop",
			Started: t0, Ended: at(30), StartWeights: start,
			Steps: []cutover.StepReport{
				{Name: "step 1 of 2", Weights: w50, InSyncAfter: "5ms", Outcome: "failed", Detail: "gate errors: 0.2 > 0.1",
					Gates: []gate.Result{{Gate: "errors", Detail: "0.2 > 0.1"}}},
				{Name: "rollback 1 of 1", Weights: start, Outcome: "written"},
			},
			Rollback: "gate errors: 0.2 > 0.1",
			Controls: []journal.Entry{ignored},
			Rules:    []alb.RuleWeights{{Rule: "arn:rule/1", TargetGroups: []alb.TargetGroupWeight{{ARN: "arn:tg/blue", Weight: 100}, {ARN: "arn:tg/green", Weight: 0}}}},
		}, `cutover web: rolled-back
  run by alice@laptop, started 2026-03-01T12:00:00Z, ended 2026-03-01T12:00:30Z (30s)
  starting weights: blue=100 green=0
  step 1 of 2      blue=50 green=50       failed   in effect after 5ms; gate errors: 0.2 > 0.1
      FAIL errors: 0.2 > 0.1
  rollback 1 of 1  blue=100 green=0       written  not seen in effect
  resume ignored: rolling back by carol@desk, sent at 2026-03-01T12:00:30Z
  rolled back: gate errors: 0.2 > 0.1
  the listener rules' weights now, as Terraform's forward block (for the module that owns the rules):
` + indent(alb.TerraformForward([]alb.RuleWeights{{Rule: "arn:rule/1", TargetGroups: []alb.TargetGroupWeight{{ARN: "arn:tg/blue", Weight: 100}, {ARN: "arn:tg/green", Weight: 0}}}}))},
		{"not started", &cutover.Report{Cutover: "app", NotStarted: true, Controls: []journal.Entry{acted}}, `cutover app: not started
  the journal has no start entry: the run stopped before it moved anything (nothing was written)
  pause by carol@desk at 2026-03-01T12:00:20Z
`},
		{"rolling back", &cutover.Report{Cutover: "app", Lever: cutover.LeverRoute53, By: "alice@laptop", Started: t0, StartWeights: start,
			RollingBack: true, Rollback: "aborted by carol@desk"}, `cutover app: unfinished, rolling back
  run by alice@laptop, started 2026-03-01T12:00:00Z
  starting weights: blue=100 green=0
  rolling back (not finished): aborted by carol@desk; it goes on to the starting weights whatever comes (pause, resume and promote are ignored); if no runner holds it, ` + "`crossfade cutover run --resume`" + ` finishes it
`},
		// A rule without target groups would print an empty forward block: none is printed.
		{"alb, no target groups", &cutover.Report{Cutover: "web", Lever: cutover.LeverALB, Outcome: "completed", By: "alice@laptop",
			Started: t0, Ended: at(30), StartWeights: start, Rules: []alb.RuleWeights{{Rule: "arn:rule/1"}}}, `cutover web: completed
  run by alice@laptop, started 2026-03-01T12:00:00Z, ended 2026-03-01T12:00:30Z (30s)
  starting weights: blue=100 green=0
`},
		{"alb, unfinished", &cutover.Report{Cutover: "web", Lever: cutover.LeverALB, By: "alice@laptop", Started: t0, StartWeights: start, Weights: w50,
			Rules: []alb.RuleWeights{{Rule: "arn:rule/1", TargetGroups: []alb.TargetGroupWeight{{ARN: "arn:tg/blue", Weight: 50}, {ARN: "arn:tg/green", Weight: 50}}}}},
			`cutover web: unfinished at blue=50 green=50
  run by alice@laptop, started 2026-03-01T12:00:00Z
  starting weights: blue=100 green=0
  Terraform forward blocks: none yet: the cutover is unfinished; its report prints them once it ends
`},
		// Unfinished: the header says where traffic was left; a rollback not begun is not
		// "rolled back".
		{"unfinished, paused", &cutover.Report{Cutover: "app", Lever: cutover.LeverRoute53, By: "alice@laptop", Started: t0, StartWeights: start,
			Paused: true, Weights: w50, Rollback: "gate errors: 0.2 > 0.1"}, `cutover app: unfinished, paused at blue=50 green=50
  run by alice@laptop, started 2026-03-01T12:00:00Z
  starting weights: blue=100 green=0
  rollback due, not begun: gate errors: 0.2 > 0.1
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := Report(&b, tt.r); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("report:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// indent is the Terraform block as the report indents it.
func indent(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if line != "" {
			line = "    " + line
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}
