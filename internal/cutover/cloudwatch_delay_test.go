package cutover

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/alb/albtest"
	"github.com/crossfade-io/crossfade/internal/cutover/levers"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// endTimes keeps the EndTime of every GetMetricData request, and answers with no data.
type endTimes struct {
	mu   sync.Mutex
	ends []time.Time
}

func (e *endTimes) GetMetricData(_ context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ends = append(e.ends, aws.ToTime(in.EndTime))
	return &cloudwatch.GetMetricDataOutput{}, nil
}

// TestCloudWatchDelayReachesReaders: spec.alb.cloudWatch.delay, resolved into the plan,
// reaches the albTraffic gates the engine builds and the retire check's reader: neither
// reads a period that ended less than the delay ago. It is how the metrics are read, not
// what the plan moves: a resume may change it (the plan's hash leaves it out).
func TestCloudWatchDelayReachesReaders(t *testing.T) {
	planFor := func(cw string) *spec.Plan {
		t.Helper()
		p, err := spec.Parse([]byte(`apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata: {name: shop}
spec:
  alb: {listenerRules: [`+albtest.RuleHTTPS+`], from: shop-blue, to: shop-green`+cw+`}
  steps: [50, 100]
  pause: 5m
  gates: [{name: traffic, albTraffic: {period: 60}}]
  retire: {cloudWatch: {period: 60}, window: 1m, timeout: 20m}
`), "plan.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	hash := planHash(planFor(""))
	for _, tc := range []struct {
		name  string
		cw    string
		delay time.Duration
	}{
		{"the default", "", spec.DefaultCloudWatchDelay},
		{"90s", ", cloudWatch: {delay: 90s}", 90 * time.Second},
		{"none", ", cloudWatch: {delay: 0s}", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planFor(tc.cw)
			if p.CloudWatchDelay != tc.delay {
				t.Fatalf("plan delay %s, want %s", p.CloudWatchDelay, tc.delay)
			}
			if h := planHash(p); h != hash {
				t.Errorf("plan hash %s, want %s: the delay must not keep a resume from changing it", h, hash)
			}
			cw := &endTimes{}
			_, clients := levers.ALB(p, nil, cw)
			g, err := NewGate(p.Steps[0].Gates[0], clients)
			if err != nil {
				t.Fatal(err)
			}
			groups := []gate.TargetGroup{{Cluster: "blue", ARN: albtest.TGBlue, Name: "shop-blue", LoadBalancers: []string{"app/shop/50dc6c495c0c9188"}, Weight: 50},
				{Cluster: "green", ARN: albtest.TGGreen, Name: "shop-green", LoadBalancers: []string{"app/shop/50dc6c495c0c9188"}, Weight: 50}}
			before := time.Now()
			g.Check(context.Background(), gate.Step{Index: 0, From: "blue", To: "green", Weights: map[string]int64{"blue": 50, "green": 50},
				TargetGroups: groups, Since: before.Add(-time.Hour)})
			res, err := gate.NewALBResidual(*p.Retire, cw, groups[0], p.CloudWatchDelay)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := res.Rate(context.Background()); err != nil {
				t.Fatal(err)
			}
			after := time.Now()
			if len(cw.ends) != 2 {
				t.Fatalf("%d GetMetricData calls, want the gate's and the retire check's", len(cw.ends))
			}
			for i, end := range cw.ends {
				switch {
				case tc.delay == 0 && end.Before(before):
					t.Errorf("read %d ends %s, before the check began: with no delay it reads up to now", i, end)
				case tc.delay > 0 && (end.After(after.Add(-tc.delay)) || end.Before(before.Add(-tc.delay-time.Minute))):
					t.Errorf("read %d ends %s, want the last minute boundary at least %s before the read (%s)", i, end, tc.delay, before)
				}
			}
		})
	}
}

// TestALBPreviewCloudWatchNote: `cutover plan` says how CloudWatch is read and what the
// delay does to a step's pace, or that a plan without delay suits the sandbox only.
func TestALBPreviewCloudWatchNote(t *testing.T) {
	traffic := spec.Gate{Name: "traffic", ALBTraffic: &spec.ALBTrafficGate{Period: 60}}
	for _, tc := range []struct {
		name   string
		gates  []spec.Gate
		retire bool
		delay  time.Duration
		want   string // "": no note about CloudWatch
	}{
		{"no reader", nil, false, 2 * time.Minute, ""},
		{"a gate, the default delay", []spec.Gate{traffic}, false, 2 * time.Minute,
			"CloudWatch is read up to the last period it has published whole, 2m0s after its end (spec.alb.cloudWatch.delay): an albTraffic gate of period 1m0s first judges a step up to 4m0s after its write"},
		{"the retire check alone", nil, true, time.Minute, "CloudWatch is read up to the last period it has published whole, 1m0s after its end"},
		{"no delay", []spec.Gate{traffic}, true, 0, "CloudWatch is read up to now (spec.alb.cloudWatch.delay 0s), for a CloudWatch that counts every request at once (the sandbox's)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := albtest.Plan()
			p.CloudWatchDelay = tc.delay
			for i := range p.Steps {
				p.Steps[i].Gates = tc.gates
			}
			if tc.retire {
				p.Retire = &spec.Retire{CloudWatch: &spec.RetireCloudWatch{Period: 60}, Window: spec.Duration{Duration: time.Minute}, Timeout: spec.Duration{Duration: time.Hour}}
			}
			pv, err := DryRun(context.Background(), Config{Plan: p, Levers: albLevers(albtest.NewFakeELB(), &endTimes{})})
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for _, n := range pv.Notes {
				if strings.HasPrefix(n, "CloudWatch is read") {
					got = n
				}
			}
			if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
				t.Errorf("note %q, want %q", got, tc.want)
			}
		})
	}
}
