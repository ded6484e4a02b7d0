package apicalls

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestSharedAcrossAPIs: every API of one sandbox registers in one registry and counts in
// the same series.
func TestSharedAcrossAPIs(t *testing.T) {
	reg := prometheus.NewRegistry()
	r53, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	elb, err := New(reg)
	if err != nil {
		t.Fatalf("second API: %v", err)
	}
	r53.Observe("ListHostedZones", "ok", time.Millisecond)
	elb.Observe("DescribeRules", "ok", time.Millisecond)
	elb.Observe("DescribeRules", "RuleNotFound", time.Millisecond)
	if n := testutil.CollectAndCount(reg, "crossfade_sandbox_api_calls_total"); n != 3 {
		t.Errorf("%d call series, want 3", n)
	}
	if v := r53.Count("DescribeRules", "ok"); v != 1 {
		t.Errorf("DescribeRules ok = %v through the first API's handle, want 1 (one shared counter)", v)
	}
	if _, err := New(nil); err != nil {
		t.Errorf("unregistered: %v", err)
	}
}
