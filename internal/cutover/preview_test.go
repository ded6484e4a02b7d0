package cutover

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// TestPreviewFailingGates: a gate whose check now fails is named with what it measured;
// one that could not be checked is not (it already failed the preview as not ready).
func TestPreviewFailingGates(t *testing.T) {
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
