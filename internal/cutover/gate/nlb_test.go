package gate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// The ALB gates over a Network Load Balancer's listener: its groups' traffic is read in
// AWS/NetworkELB, new connections standing for requests.

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

func TestNLBTrafficReadsFlows(t *testing.T) {
	blueTG, greenTG := "targetgroup/shop-blue/73e2d6bc24d8a067", "targetgroup/shop-green/1a2b3c4d5e6f7a8b"
	for _, tc := range []struct {
		name       string
		blue, grn  float64
		pass       bool
		wantDetail string
	}{
		{"shares as written", 450, 50, true, "green 10% (want 10%) of 500 new connections"},
		{"shares off", 250, 250, false, "share off by more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeMetrics{values: map[series][]float64{
				{blueTG, lbNLB, "NewFlowCount", "Sum"}:  {tc.blue},
				{greenTG, lbNLB, "NewFlowCount", "Sum"}: {tc.grn},
				// An ALB metric of an NLB is never read: were it, the share would be off.
				{greenTG, lbNLB, "RequestCount", "Sum"}: {tc.blue * 10},
			}}
			tol := 0.05
			g, err := NewALBTraffic("traffic", spec.ALBTrafficGate{Period: 1, Tolerance: &tol, MinRequests: 100}, api, 0)
			if err != nil {
				t.Fatal(err)
			}
			r := g.Check(context.Background(), nlbStep(90, 10))
			if r.Pass != tc.pass || r.Pending || !strings.Contains(r.Detail, tc.wantDetail) {
				t.Fatalf("check %+v: want pass %v with %q", r, tc.pass, tc.wantDetail)
			}
			for _, in := range api.ins {
				for _, q := range in.MetricDataQueries {
					m := q.MetricStat.Metric
					if ns, name := aws.ToString(m.Namespace), aws.ToString(m.MetricName); ns != "AWS/NetworkELB" || name != "NewFlowCount" && name != "ActiveFlowCount" {
						t.Errorf("query %s %s: want AWS/NetworkELB NewFlowCount or ActiveFlowCount", ns, name)
					}
				}
			}
		})
	}
}

// TestNLBTrafficRefusesHTTPBounds: a 5xx or response-time bound on an NLB fails the check
// rather than pass on counts an NLB does not publish.
func TestNLBTrafficRefusesHTTPBounds(t *testing.T) {
	rate := 0.01
	for _, g := range []spec.ALBTrafficGate{
		{Period: 1, MaxErrorRate: &rate},
		{Period: 1, MaxResponseTime: &spec.Duration{Duration: time.Second}},
	} {
		gate, err := NewALBTraffic("traffic", g, &fakeMetrics{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		gate.now = func() time.Time { return time.Now().Add(time.Minute) }
		s := nlbStep(90, 10)
		s.Since = time.Now().Add(-time.Minute)
		if r := gate.Check(context.Background(), s); r.Pass || !strings.Contains(r.Err, "cannot be judged on a Network Load Balancer") {
			t.Errorf("%+v: want a failure naming the NLB", r)
		}
	}
}

// TestNLBResidualCountsOpenConnections: a from group with no new connection but two open
// ones is not drained.
func TestNLBResidualCountsOpenConnections(t *testing.T) {
	blueTG := "targetgroup/shop-blue/73e2d6bc24d8a067"
	api := &fakeMetrics{values: map[series][]float64{{blueTG, lbNLB, "ActiveFlowCount", "Maximum"}: {2, 1}}}
	r, err := NewALBResidual(spec.Retire{CloudWatch: &spec.RetireCloudWatch{Period: 1}}, api, nlbStep(0, 100).TargetGroups[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	rate, ok, err := r.Rate(context.Background())
	if err != nil || !ok || rate != 2 {
		t.Fatalf("rate %v %v %v: want 2 (two connections open, no new one)", rate, ok, err)
	}
	if !strings.Contains(r.Source(), "AWS/NetworkELB NewFlowCount and ActiveFlowCount of target group shop-blue") {
		t.Errorf("source %q", r.Source())
	}
}
