package cutover

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// TestPreviewSummary: the summary is one line per step, one per gate, and the rollback
// paths with the steps that share one on one line; the batches are left out.
func TestPreviewSummary(t *testing.T) {
	w := func(from, to int64) map[string]int64 { return map[string]int64{"blue": from, "green": to} }
	start := w(100, 0)
	pv := &Preview{Cutover: "app", From: "blue", To: "green", Zone: provider.Zone{ID: "Z1", Name: "example.com"}, TTL: 60,
		Current: start, LowerTTL: 5, RollbackMode: "gradual", RollbackHold: 5 * time.Second,
		Steps: []PreviewStep{
			{Weights: w(90, 10), Hold: 5 * time.Second, Gates: []string{"answers", "errors"}, Rollback: []map[string]int64{start}},
			{Weights: w(50, 50), Hold: 2 * time.Minute, Gates: []string{"answers", "errors"}, Rollback: []map[string]int64{start}},
			{Weights: w(0, 100), Hold: 5 * time.Second, Rollback: []map[string]int64{w(50, 50), start}},
		},
		Gates:  []gate.Result{{Gate: "answers", Kind: "dns", Pass: true, Detail: "blue 100%"}, {Gate: "errors", Kind: "prometheus", Detail: "0.2 > 0.1"}},
		Writes: []PreviewWrite{{Name: "step 1 of 3", Weights: w(90, 10), Batch: []byte(`{"Changes": []}`), Changes: 4}, {Name: "restore", Changes: 0}},
	}
	var b strings.Builder
	if err := pv.WriteSummary(&b); err != nil {
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

	var fe *FailingGatesError
	if err := pv.FailingGates(); !errors.As(err, &fe) || len(fe.Gates) != 1 ||
		!strings.Contains(err.Error(), "gate errors (prometheus) fails at the current weights blue=100 green=0: 0.2 > 0.1") {
		t.Errorf("FailingGates: %v", err)
	}
	// A gate that could not be checked already failed the preview as not ready.
	pv.Gates[1].Err = "connection refused"
	if err := pv.FailingGates(); err != nil {
		t.Errorf("FailingGates with an unreachable gate: %v", err)
	}
	pv.Gates = pv.Gates[:1]
	if err := pv.FailingGates(); err != nil {
		t.Errorf("FailingGates with every gate passing: %v", err)
	}
}
