package render

import (
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// TestPreviewSummary: the summary is one line per step, one per gate, and the rollback
// paths with the steps that share one on one line; the batches are left out.
func TestPreviewSummary(t *testing.T) {
	w := func(from, to int64) map[string]int64 { return map[string]int64{"blue": from, "green": to} }
	start := w(100, 0)
	pv := &cutover.Preview{Cutover: "app", From: "blue", To: "green", Zone: provider.Zone{ID: "Z1", Name: "example.com"}, TTL: 60,
		Current: start, LowerTTL: 5, RollbackMode: "gradual", RollbackHold: 5 * time.Second,
		Steps: []cutover.PreviewStep{
			{Weights: w(90, 10), Hold: 5 * time.Second, Gates: []string{"answers", "errors"}, Rollback: []map[string]int64{start}},
			{Weights: w(50, 50), Hold: 2 * time.Minute, Gates: []string{"answers", "errors"}, Rollback: []map[string]int64{start}},
			{Weights: w(0, 100), Hold: 5 * time.Second, Rollback: []map[string]int64{w(50, 50), start}},
		},
		Gates:  []gate.Result{{Gate: "answers", Kind: "dns", Pass: true, Detail: "blue 100%"}, {Gate: "errors", Kind: "prometheus", Detail: "0.2 > 0.1"}},
		Writes: []cutover.PreviewWrite{{Name: "step 1 of 3", Weights: w(90, 10), Batch: []byte(`{"Changes": []}`), Changes: 4}, {Name: "restore", Changes: 0}},
	}
	var b strings.Builder
	if err := PreviewSummary(&b, pv); err != nil {
		t.Fatal(err)
	}
	want := `cutover app: blue → green
zone example.com (Z1), TTL 60s, current weights blue=100 green=0
TTL: lowered to 5s before step 1, then the old 60s is waited out; restored to 60s at the end (completed or rolled back)
steps (each holds with every gate passing at every check, never shorter than the TTL):
  step 1 of 3  blue=90 green=10  hold 5s       gates answers, errors
  step 2 of 3  blue=50 green=50  hold 2m0s     gates answers, errors
  step 3 of 3  blue=0 green=100  hold 5s       no gates
gate answers (dns) now: pass: blue 100%
gate errors (prometheus) now: FAIL: 0.2 > 0.1
rollback (gradual, each stop held 5s):
  from steps 1-2: blue=100 green=0
  from step 3: blue=50 green=50 → blue=100 green=0
writes: 1 batch (4 changes in all) for the run and its longest rollback; ` + "`cutover plan --batches`" + ` prints each one as ` + "`aws route53 change-resource-record-sets`" + ` takes it
`
	if got := b.String(); got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}

	b.Reset()
	if err := Preview(&b, pv); err != nil {
		t.Fatal(err)
	}
	// --batches: every batch as sent, with the zone it goes to; one with nothing to send
	// says so rather than printing an empty document.
	for _, want := range []string{
		"gate errors (prometheus) now: FAIL: 0.2 > 0.1\n",
		"step 1 of 3: blue=90 green=10, 4 changes, as `aws route53 change-resource-record-sets --hosted-zone-id Z1 --change-batch file://BATCH.json` takes it:\n{\"Changes\": []}\n",
		"restore: 0 changes (nothing to send)\n",
		"and `run` makes the TOKEN\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("--batches lacks %q:\n%s", want, b.String())
		}
	}
}

// leverPreviews are an ALB and a Cloud Map preview: rules, health, a selection, notes, a
// warning, a gate pending and one that could not be checked, and a write with nothing to
// send.
func leverPreviews() []*cutover.Preview {
	w := func(from, to int64) map[string]int64 { return map[string]int64{"blue": from, "green": to} }
	start := w(100, 0)
	steps := []cutover.PreviewStep{
		{Weights: w(50, 50), Hold: 30 * time.Second, Gates: []string{"healthy"}, Rollback: []map[string]int64{start}},
		{Weights: w(0, 100), Hold: 30 * time.Second, Gates: []string{"healthy"}, Rollback: []map[string]int64{start}},
	}
	gates := []gate.Result{{Gate: "healthy", Kind: "targets", Pass: true, Pending: true, Detail: "query: refused", Err: "query: refused"}, {Gate: "h2", Kind: "targets", Detail: "no", Err: "timeout"}}
	return []*cutover.Preview{
		{Cutover: "web", From: "blue", To: "green", Lever: cutover.LeverALB, Current: start, RollbackMode: "immediate", RollbackHold: 10 * time.Second,
			Rules: []string{"rule arn:r/1: blue=100 green=0"}, Health: []string{"tg blue: 2 healthy"}, Selected: []string{"listener arn:l/1"},
			Notes: []string{"lifecycle ignore_changes"}, Warnings: []string{"step 2 has no gates"}, Steps: steps, Gates: gates,
			Rollbacks: []string{"if step 1 of 2 fails: rollback through blue=100 green=0"},
			Writes: []cutover.PreviewWrite{{Name: "step 1 of 2", Weights: w(50, 50), Batch: []byte("aws elbv2 add-tags --resource-arns arn:r/1\naws elbv2 modify-rule --rule-arn arn:r/1"), Changes: 2},
				{Name: "step 2 of 2", Weights: w(0, 100), Batch: []byte("aws elbv2 modify-rule --rule-arn arn:r/1"), Changes: 1},
				{Name: "rollback 1 of 1 (from the last step)", Weights: start, Changes: 0}}},
		{Cutover: "orders", From: "blue", To: "green", Lever: cutover.LeverCloudMap, Current: start, RollbackMode: "gradual", RollbackHold: 10 * time.Second,
			Selected: []string{"svc orders"}, Steps: steps[:1], Gates: gates[:1],
			Writes: []cutover.PreviewWrite{{Name: "step 1 of 1", Weights: w(50, 50), Batch: []byte("aws servicediscovery update-instance-custom-health-status --instance-id g1"), Changes: 1},
				{Name: "rollback 1 of 1 (from the last step)", Weights: start, Changes: 0}}},
	}
}

// TestPreviewLevers: the ALB and Cloud Map previews speak of calls, not batches, each in
// the lever's own words, in the summary and with --batches.
func TestPreviewLevers(t *testing.T) {
	wants := []struct{ summary, full string }{
		{"cutover web: blue → green\nALB listener rules: 1, current weights blue=100 green=0 (each applies to the next request: no TTL)\nselected 1 listeners and rules forwarding to both target groups:\n  listener arn:l/1\n  rule arn:r/1: blue=100 green=0\n  tg blue: 2 healthy\nwarning: step 2 has no gates\nnote: lifecycle ignore_changes\nsteps (each holds with every gate passing at every check, for its pause: an ALB weight applies to the next request):\n  step 1 of 2  blue=50 green=50  hold 30s      gates healthy\n  step 2 of 2  blue=0 green=100  hold 30s      gates healthy\ngate healthy (targets) now: pending: query: refused\ngate h2 (targets) now: FAIL: no (timeout)\nrollback (immediate, each stop held 10s):\n  from any step: blue=100 green=0\nwrites: 2 writes (3 ELBv2 calls in all: 2 ModifyRule and ModifyListener, 1 AddTags) for the run and its longest rollback; `cutover plan --batches` prints each call as the AWS CLI takes it (`aws elbv2 add-tags`, `modify-rule`, `modify-listener`)\n",
			"cutover web: blue → green\nALB listener rules: 1, current weights blue=100 green=0 (each applies to the next request: no TTL)\nselected 1 listeners and rules forwarding to both target groups:\n  listener arn:l/1\n  rule arn:r/1: blue=100 green=0\n  tg blue: 2 healthy\nwarning: step 2 has no gates\nnote: lifecycle ignore_changes\ngate healthy (targets) now: pending: query: refused\ngate h2 (targets) now: FAIL: no (timeout)\nif step 1 of 2 fails: rollback through blue=100 green=0\neach call replaces the rule's actions with those read, only the forward action's target-group weights changed; the calls of a write go in the plan's order after the run journals it, and a write interrupted half way is written again by `run --resume`, rules already at its weights skipped (ELBv2 has no transaction over several rules); the first write tags each rule with the runner's authority first (add-tags), and `run` makes the TOKEN\nstep 1 of 2: blue=50 green=50, 2 calls, as the AWS CLI takes them:\naws elbv2 add-tags --resource-arns arn:r/1\naws elbv2 modify-rule --rule-arn arn:r/1\nstep 2 of 2: blue=0 green=100, 1 calls, as the AWS CLI takes them:\naws elbv2 modify-rule --rule-arn arn:r/1\nrollback 1 of 1 (from the last step): blue=100 green=0, 0 calls (every rule is at these weights already: nothing to send)\n"},
		{"cutover orders: blue → green\nCloud Map: current weights (HEALTHY instances) blue=100 green=0\nselected 1 weighted record sets with members blue and green:\n  svc orders\nsteps (each holds with every gate passing at every check, for its pause, once Cloud Map shows the statuses written):\n  step 1 of 1  blue=50 green=50  hold 30s      gates healthy\ngate healthy (targets) now: pending: query: refused\nrollback (gradual, each stop held 10s):\n  from any step: blue=100 green=0\nwrites: 1 write (1 UpdateInstanceCustomHealthStatus call in all) for the run and its longest rollback; `cutover plan --batches` prints each call as `aws servicediscovery update-instance-custom-health-status` takes it\n",
			"cutover orders: blue → green\nCloud Map: current weights (HEALTHY instances) blue=100 green=0\nselected 1 weighted record sets with members blue and green:\n  svc orders\ngate healthy (targets) now: pending: query: refused\neach call sets one instance's custom health status; a write sends the HEALTHY ones first and, when some instances also go UNHEALTHY, waits until Cloud Map shows the HEALTHY ones in effect before sending those; a write interrupted half way is written again by `run --resume` (Cloud Map has no transaction); a run's first write (a resume's too) also sends the statuses already right, which cancels any status an interrupted run left on its way\nstep 1 of 1: blue=50 green=50, 1 calls, as the AWS CLI takes them:\naws servicediscovery update-instance-custom-health-status --instance-id g1\nrollback 1 of 1 (from the last step): blue=100 green=0, 0 calls (every instance has its status already: nothing to send)\n"},
	}
	for i, pv := range leverPreviews() {
		t.Run(pv.Lever, func(t *testing.T) {
			var sum, full strings.Builder
			if err := PreviewSummary(&sum, pv); err != nil {
				t.Fatal(err)
			}
			if err := Preview(&full, pv); err != nil {
				t.Fatal(err)
			}
			if got := sum.String(); got != wants[i].summary {
				t.Errorf("summary:\n%s\nwant:\n%s", got, wants[i].summary)
			}
			if got := full.String(); got != wants[i].full {
				t.Errorf("--batches:\n%s\nwant:\n%s", got, wants[i].full)
			}
		})
	}
}
