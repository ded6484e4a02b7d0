package cutover

import (
	"context"
	"errors"
	"testing"

	"github.com/crossfade-io/crossfade/internal/cutover/lever/alb/albtest"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// TestPreviewNamesAGateOnce: a gate that cannot be built fails the preview with its
// error as NewGate words it, which names the gate already: "gate dns-1: …" once, not
// "gate dns-1: gate dns-1: …".
func TestPreviewNamesAGateOnce(t *testing.T) {
	p := albtest.Plan()
	// The ALB lever gives no name servers: a DNS gate without servers cannot be built.
	p.Steps[0].Gates = []spec.Gate{{Name: "dns-1", DNS: &spec.DNSGate{}}}
	_, err := DryRun(context.Background(), Config{Plan: p, Levers: albLevers(albtest.NewFakeELB(), &endTimes{})})
	var nr *NotReadyError
	if !errors.As(err, &nr) {
		t.Fatalf("DryRun: %v, want a NotReadyError", err)
	}
	want := []string{"gate dns-1: dns gate without servers: list them in the plan (servers) or give --dns-server"}
	if len(nr.Problems) != 1 || nr.Problems[0] != want[0] {
		t.Errorf("problems:\n got %q\nwant %q", nr.Problems, want)
	}
}
