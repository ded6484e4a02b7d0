package gate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// The ALB's CloudWatch readers over a Network Load Balancer's listener: AWS/NetworkELB
// publishes flow counts per load balancer only (TargetGroup is a dimension of the host
// counts alone), so a query for a group's flows answers no datapoints. Read as 0, that
// would stall every step's share or declare a cluster holding connections drained: the
// readers refuse an NLB instead.

const lbNLB = "net/db/50dc6c495c0c9188"

// nlbStep is a step of blue → green at weights from, to behind the NLB.
func nlbStep(from, to int64) Step {
	s := albStep(from, to, 0)
	s.TargetGroups = s.TargetGroups[:2]
	for i := range s.TargetGroups {
		s.TargetGroups[i].LoadBalancers = []string{lbNLB}
	}
	return s
}

// TestNLBTrafficRefused: the traffic gate fails on an NLB's groups, judged or not yet,
// whatever the fake CloudWatch would answer (here: per-group flows AWS never publishes),
// and reads nothing.
func TestNLBTrafficRefused(t *testing.T) {
	blueTG, greenTG := "targetgroup/shop-blue/73e2d6bc24d8a067", "targetgroup/shop-green/1a2b3c4d5e6f7a8b"
	rate := 0.01
	for _, tc := range []struct {
		name  string
		g     spec.ALBTrafficGate
		since time.Duration // before now; 0: the window has not begun
	}{
		{"shares", spec.ALBTrafficGate{Period: 1, MinRequests: 100}, time.Minute},
		{"shares before the first period", spec.ALBTrafficGate{Period: 60}, 0},
		{"HTTP bounds", spec.ALBTrafficGate{Period: 1, MaxErrorRate: &rate, MaxResponseTime: &spec.Duration{Duration: time.Second}}, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeMetrics{values: map[series][]float64{
				{blueTG, lbNLB, "NewFlowCount", "Sum"}:  {450},
				{greenTG, lbNLB, "NewFlowCount", "Sum"}: {50},
			}}
			g, err := NewALBTraffic("traffic", tc.g, api, 0)
			if err != nil {
				t.Fatal(err)
			}
			s := nlbStep(90, 10)
			s.Since = time.Now().Add(-tc.since)
			r := g.Check(context.Background(), s)
			if r.Pass || r.Pending || !strings.Contains(r.Err, "behind a Network Load Balancer") || !strings.Contains(r.Err, "not per target group") {
				t.Errorf("check %+v: want a failure naming the NLB and why", r)
			}
			if len(api.ins) != 0 {
				t.Errorf("%d GetMetricData calls: want none", len(api.ins))
			}
		})
	}
}

// TestNLBMetricsReadRefused: the reader under both the gate and the retire check errors on
// an NLB dimension rather than return 0 for the series AWS does not publish.
func TestNLBMetricsReadRefused(t *testing.T) {
	api := &fakeMetrics{}
	now := time.Now()
	counts, err := readALBMetrics(context.Background(), api, nlbStep(0, 100).TargetGroups[:1], now.Add(-time.Minute), now, time.Second, false)
	if err == nil || !strings.Contains(err.Error(), "load balancer "+lbNLB+" is a Network Load Balancer") {
		t.Fatalf("counts %+v, err %v: want an error naming the NLB", counts, err)
	}
	if len(api.ins) != 0 {
		t.Errorf("%d GetMetricData calls: want none", len(api.ins))
	}
}

// TestNLBResidualRefused: retire.cloudWatch built in Go for an NLB's group is refused: it
// would find a group holding long-lived connections drained on no measurement.
func TestNLBResidualRefused(t *testing.T) {
	r, err := NewALBResidual(spec.Retire{CloudWatch: &spec.RetireCloudWatch{Period: 1}}, &fakeMetrics{}, nlbStep(0, 100).TargetGroups[0], 0)
	if err == nil || !strings.Contains(err.Error(), "is behind a Network Load Balancer ("+lbNLB+")") || !strings.Contains(err.Error(), "retire.metrics or retire.prometheus") {
		t.Fatalf("residual %+v, err %v: want a refusal naming the NLB and what to use", r, err)
	}
}
