package gate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// The ALB gates' logic on in-memory stand-ins for DescribeTargetHealth and GetMetricData;
// test/e2e/alb_cutover_test.go runs them against the sandbox's ELBv2 and CloudWatch APIs
// under real traffic through its weighted proxy.

const (
	arnPrefix = "arn:aws:elasticloadbalancing:us-east-1:123456789012:"
	blueARN   = arnPrefix + "targetgroup/shop-blue/73e2d6bc24d8a067"
	greenARN  = arnPrefix + "targetgroup/shop-green/1a2b3c4d5e6f7a8b"
	greyARN   = arnPrefix + "targetgroup/shop-grey/0f0f0f0f0f0f0f0f"
	lbShop    = "app/shop/50dc6c495c0c9188"
	lbAdmin   = "app/admin/0123456789abcdef"
)

// albStep is a step of blue → green at weights from, to, with a grey group of weight grey.
func albStep(from, to, grey int64) Step {
	return Step{Index: 1, From: "blue", To: "green", Weights: map[string]int64{"blue": from, "green": to},
		TargetGroups: []TargetGroup{
			{Cluster: "blue", ARN: blueARN, Name: "shop-blue", LoadBalancers: []string{lbShop}, Weight: from},
			{Cluster: "green", ARN: greenARN, Name: "shop-green", LoadBalancers: []string{lbShop}, Weight: to},
			{ARN: greyARN, Name: "shop-grey", LoadBalancers: []string{lbShop}, Weight: grey},
		}}
}

// fakeHealth answers DescribeTargetHealth from target states per group ARN.
type fakeHealth map[string][]elbtypes.TargetHealthStateEnum

func (f fakeHealth) DescribeTargetHealth(_ context.Context, in *elbv2.DescribeTargetHealthInput, _ ...func(*elbv2.Options)) (*elbv2.DescribeTargetHealthOutput, error) {
	states, ok := f[aws.ToString(in.TargetGroupArn)]
	if !ok {
		return nil, errors.New("TargetGroupNotFound: One or more target groups not found")
	}
	out := &elbv2.DescribeTargetHealthOutput{}
	for i, st := range states {
		th := &elbtypes.TargetHealth{State: st}
		if st == elbtypes.TargetHealthStateEnumUnhealthy {
			th.Reason, th.Description = elbtypes.TargetHealthReasonEnumResponseCodeMismatch, aws.String("Health checks failed with these codes: [500]")
		}
		out.TargetHealthDescriptions = append(out.TargetHealthDescriptions, elbtypes.TargetHealthDescription{
			Target: &elbtypes.TargetDescription{Id: aws.String(fmt.Sprintf("10.0.0.%d", i+1)), Port: aws.Int32(8080)}, TargetHealth: th})
	}
	return out, nil
}

func TestTargetHealth(t *testing.T) {
	healthy, unhealthy, initial := elbtypes.TargetHealthStateEnumHealthy, elbtypes.TargetHealthStateEnumUnhealthy, elbtypes.TargetHealthStateEnumInitial
	api := fakeHealth{
		blueARN:  {healthy, healthy},
		greenARN: {unhealthy, initial},
		greyARN:  {healthy},
	}
	for _, tc := range []struct {
		name       string
		step       Step
		minHealthy int
		pass       bool
		detail     []string
	}{
		{"only groups with weight are asked", albStep(100, 0, 0), 1, true,
			[]string{"blue (shop-blue): 2 healthy of 2 targets"}},
		{"a step onto a group with no healthy target", albStep(90, 10, 0), 1, false,
			[]string{"green (shop-green) has 0 healthy targets, want at least 1, at weight 10 (e.g. target 10.0.0.1:8080 unhealthy: Target.ResponseCodeMismatch Health checks failed with these codes: [500])",
				" — blue (shop-blue): 2 healthy of 2 targets; green (shop-green): 0 healthy of 2 targets (1 initial, 1 unhealthy)"}},
		{"a third group with weight counts", albStep(100, 0, 1), 2, false,
			[]string{"shop-grey has 1 healthy targets, want at least 2, at weight 1"}},
		{"minHealthy", albStep(100, 0, 0), 3, false, []string{"blue (shop-blue) has 2 healthy targets, want at least 3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := NewTargetHealth("healthy", spec.TargetHealthGate{MinHealthy: tc.minHealthy}, api)
			if err != nil {
				t.Fatal(err)
			}
			r := g.Precheck(context.Background(), tc.step)
			if r.Pass != tc.pass || r.Kind != KindTargetHealth || r.Err != "" {
				t.Errorf("pass %v kind %s err %q, want pass %v: %s", r.Pass, r.Kind, r.Err, tc.pass, r.Detail)
			}
			for _, d := range tc.detail {
				if !strings.Contains(r.Detail, d) {
					t.Errorf("detail lacks %q:\n%s", d, r.Detail)
				}
			}
		})
	}
	g, _ := NewTargetHealth("healthy", spec.TargetHealthGate{}, fakeHealth{})
	if r := g.Check(context.Background(), albStep(100, 0, 0)); r.Pass || !strings.Contains(r.Err, "describe target health of shop-blue") {
		t.Errorf("unreadable health: %+v", r)
	}
	if r := g.Check(context.Background(), Step{Index: 2}); r.Pass || !strings.Contains(r.Err, "no target groups") {
		t.Errorf("a step without target groups: %+v", r)
	}
	if _, err := NewTargetHealth("healthy", spec.TargetHealthGate{}, nil); err == nil {
		t.Error("no ELBv2 client accepted")
	}
}

// series keys one metric of one group on one load balancer, at one statistic.
type series struct{ tg, lb, metric, stat string }

// fakeMetrics answers GetMetricData from per-series values (one per period; a series it
// lacks has no datapoints, as CloudWatch omits an ALB's zero counts), two results a page,
// and keeps the requests.
type fakeMetrics struct {
	mu     sync.Mutex
	values map[series][]float64
	ins    []*cloudwatch.GetMetricDataInput
	err    error
	// status is what the fake says of a series instead of Complete (InternalError, …).
	status map[series]cwtypes.StatusCode
}

func (f *fakeMetrics) GetMetricData(_ context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ins = append(f.ins, in)
	if f.err != nil {
		return nil, f.err
	}
	first := 0
	if in.NextToken != nil {
		fmt.Sscan(*in.NextToken, &first)
	}
	out := &cloudwatch.GetMetricDataOutput{}
	for i := first; i < len(in.MetricDataQueries) && i < first+2; i++ {
		q := in.MetricDataQueries[i]
		k := series{metric: aws.ToString(q.MetricStat.Metric.MetricName), stat: aws.ToString(q.MetricStat.Stat)}
		for _, d := range q.MetricStat.Metric.Dimensions {
			switch aws.ToString(d.Name) {
			case "TargetGroup":
				k.tg = aws.ToString(d.Value)
			case "LoadBalancer":
				k.lb = aws.ToString(d.Value)
			}
		}
		st, ok := f.status[k]
		if !ok {
			st = cwtypes.StatusCodeComplete
		}
		res := cwtypes.MetricDataResult{Id: q.Id, Values: f.values[k], StatusCode: st}
		if st != cwtypes.StatusCodeComplete {
			res.Values = nil
			res.Messages = []cwtypes.MessageData{{Code: aws.String(string(st)), Value: aws.String("the fake's " + string(st))}}
		}
		out.MetricDataResults = append(out.MetricDataResults, res)
	}
	if first+2 < len(in.MetricDataQueries) {
		out.NextToken = aws.String(fmt.Sprint(first + 2))
	}
	return out, nil
}

// noResponses drops tg's TargetResponseTime from values: requests no target answered (an
// ALB's own 502 or 504 when every target refuses or times out).
func noResponses(values map[series][]float64, tg string) map[series][]float64 {
	for k := range values {
		if k.tg == tg && k.metric == "TargetResponseTime" {
			delete(values, k)
		}
	}
	return values
}

// traffic is what the fake holds for blue and green on lbShop: requests and 5xx per
// group, spread over two periods, and each response taking rt.
func traffic(blue, green, blue5xx, green5xx float64, rt time.Duration) map[series][]float64 {
	m := map[series][]float64{}
	add := func(tg, metric, stat string, v float64) {
		if v != 0 { // CloudWatch has no datapoint for an ALB's zero count
			m[series{tg, lbShop, metric, stat}] = []float64{math.Floor(v / 2), v - math.Floor(v/2)}
		}
	}
	for _, g := range []struct {
		tg         string
		req, fives float64
	}{{"targetgroup/shop-blue/73e2d6bc24d8a067", blue, blue5xx}, {"targetgroup/shop-green/1a2b3c4d5e6f7a8b", green, green5xx}} {
		add(g.tg, "RequestCount", "Sum", g.req)
		add(g.tg, "HTTPCode_Target_5XX_Count", "Sum", g.fives)
		add(g.tg, "TargetResponseTime", "SampleCount", g.req)
		add(g.tg, "TargetResponseTime", "Sum", g.req*rt.Seconds())
	}
	return m
}

func TestALBTrafficJudges(t *testing.T) {
	since := time.Date(2026, 3, 1, 12, 0, 0, 300e6, time.UTC)
	now := since.Add(30 * time.Second)
	for _, tc := range []struct {
		name    string
		step    Step
		values  map[series][]float64
		gate    spec.ALBTrafficGate
		pass    bool
		pending bool
		detail  []string
	}{
		{"a 10% step measured at 10.3%", albStep(90, 10, 0), traffic(897, 103, 0, 0, 2*time.Millisecond), spec.ALBTrafficGate{}, true, false,
			[]string{"blue 89.7% (want 90%), green 10.3% (want 10%) of 1000 requests in 29s", "green (shop-green): 103 requests, 0 target 5xx, 2ms average response"}},
		{"too few requests to judge a share", albStep(90, 10, 0), traffic(45, 5, 0, 0, time.Millisecond), spec.ALBTrafficGate{}, true, true,
			[]string{"not judged yet: 50 requests to blue and green so far, fewer than the 100 a share is judged on"}},
		{"off, but within chance", albStep(50, 50, 0), traffic(60, 140, 0, 0, time.Millisecond), spec.ALBTrafficGate{}, true, true,
			[]string{"not judged yet: green's share 70% is off by more than 10% from the 50% written, but within chance of 200 requests"}},
		{"off beyond chance", albStep(50, 50, 0), traffic(600, 1400, 0, 0, time.Millisecond), spec.ALBTrafficGate{}, false, false,
			[]string{"share off by more than 10%: green 70% vs 50% written (2000 requests)"}},
		{"all to green, none to blue", albStep(0, 100, 0), traffic(0, 500, 0, 0, time.Millisecond), spec.ALBTrafficGate{}, true, false,
			[]string{"blue 0% (want 0%), green 100% (want 100%) of 500 requests"}},
		{"all to green written, blue still served", albStep(0, 100, 0), traffic(100, 400, 0, 0, time.Millisecond), spec.ALBTrafficGate{}, false, false,
			[]string{"share off by more than 10%: green 80% vs 100% written"}},
		{"a third group's weight does not enter the share", albStep(1, 1, 998), traffic(260, 240, 0, 0, time.Millisecond), spec.ALBTrafficGate{}, true, false,
			[]string{"blue 52% (want 50%), green 48% (want 50%) of 500 requests"}},
		{"green's 5xx rate", albStep(50, 50, 0), traffic(500, 500, 0, 20, time.Millisecond), spec.ALBTrafficGate{MaxErrorRate: ptr(0.01)}, false, false,
			[]string{"green (shop-green): target 5xx rate 4% (20 of 500 requests), above 1%"}},
		// A bound not judged is pending, never passed: the step holds on until green has
		// minRequests of its own, or fails at its time limit.
		{"a 5xx rate on too few requests is pending", albStep(99, 1, 0), traffic(990, 10, 0, 5, time.Millisecond), spec.ALBTrafficGate{MaxErrorRate: ptr(0.01)}, true, true,
			[]string{"not judged yet: green (shop-green): 10 requests (5 target 5xx) so far, fewer than the 100 its error rate is judged on"}},
		{"a 10% step, green's 60 requests all 5xx, is pending", albStep(90, 10, 0), traffic(540, 60, 0, 60, time.Millisecond), spec.ALBTrafficGate{MaxErrorRate: ptr(0.01)}, true, true,
			[]string{"not judged yet: green (shop-green): 60 requests (60 target 5xx) so far, fewer than the 100 its error rate is judged on",
				"blue 90% (want 90%), green 10% (want 10%) of 600 requests"}},
		{"a response time on too few responses is pending", albStep(90, 10, 0), traffic(900, 50, 0, 0, time.Millisecond), spec.ALBTrafficGate{MaxResponseTime: &spec.Duration{Duration: 250 * time.Millisecond}}, true, true,
			[]string{"not judged yet: green (shop-green): 50 target responses (of 50 requests) so far, fewer than the 100 its response time is judged on"}},
		{"requests no target answered give no response time", albStep(50, 50, 0), noResponses(traffic(500, 500, 0, 0, time.Millisecond), "targetgroup/shop-green/1a2b3c4d5e6f7a8b"),
			spec.ALBTrafficGate{MaxResponseTime: &spec.Duration{Duration: 250 * time.Millisecond}}, true, true,
			[]string{"not judged yet: green (shop-green): 0 target responses (of 500 requests) so far, fewer than the 100 its response time is judged on"}},
		{"both bounds pending on one group", albStep(90, 10, 0), traffic(900, 50, 0, 0, time.Millisecond),
			spec.ALBTrafficGate{MaxErrorRate: ptr(0.01), MaxResponseTime: &spec.Duration{Duration: 250 * time.Millisecond}}, true, true,
			[]string{"fewer than the 100 its error rate is judged on; green (shop-green): 50 target responses"}},
		{"a measured failure is not hidden by a pending bound", albStep(90, 10, 0), traffic(540, 60, 100, 60, time.Millisecond), spec.ALBTrafficGate{MaxErrorRate: ptr(0.01)}, false, false,
			[]string{"blue (shop-blue): target 5xx rate 18.5% (100 of 540 requests), above 1%"}},
		// Weight 0 sends a group nothing by design: its bounds do not apply to a trickle of
		// sticky requests, but do to minRequests of them.
		{"a group at weight 0 with a few requests is not pending", albStep(0, 100, 0), traffic(10, 490, 10, 0, time.Millisecond), spec.ALBTrafficGate{MaxErrorRate: ptr(0.01)}, true, false,
			[]string{"blue (shop-blue): 10 requests, 10 target 5xx"}},
		{"a group at weight 0 with enough requests is judged", albStep(0, 100, 0), traffic(100, 4900, 50, 0, time.Millisecond), spec.ALBTrafficGate{MaxErrorRate: ptr(0.01)}, false, false,
			[]string{"blue (shop-blue): target 5xx rate 50% (50 of 100 requests), above 1%"}},
		{"response time", albStep(50, 50, 0), traffic(500, 500, 0, 0, 300*time.Millisecond), spec.ALBTrafficGate{MaxResponseTime: &spec.Duration{Duration: 250 * time.Millisecond}}, false, false,
			[]string{"blue (shop-blue): average target response time 300ms, above 250ms", "green (shop-green): average target response time 300ms"}},
		{"both weights 0", albStep(0, 0, 5), traffic(0, 0, 0, 0, 0), spec.ALBTrafficGate{}, true, false,
			[]string{"0 requests in 29s; share not judged: the step weighs both from and to 0"}},
		{"no datapoints at all", albStep(90, 10, 0), nil, spec.ALBTrafficGate{MinRequests: 1}, true, true,
			[]string{"not judged yet: 0 requests to blue and green so far"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.gate.Period = 1
			api := &fakeMetrics{values: tc.values}
			g, err := NewALBTraffic("traffic", tc.gate, api, 0)
			if err != nil {
				t.Fatal(err)
			}
			g.now = func() time.Time { return now }
			tc.step.Since = since
			r := g.Check(context.Background(), tc.step)
			if r.Pass != tc.pass || r.Pending != tc.pending || r.Err != "" || r.Kind != KindALBTraffic {
				t.Errorf("pass %v pending %v err %q, want pass %v pending %v: %s", r.Pass, r.Pending, r.Err, tc.pass, tc.pending, r.Detail)
			}
			for _, d := range tc.detail {
				if !strings.Contains(r.Detail, d) {
					t.Errorf("detail lacks %q:\n%s", d, r.Detail)
				}
			}
			if len(api.ins) < 2 {
				t.Errorf("%d GetMetricData calls: the fake pages its 8 results two at a time", len(api.ins))
			}
		})
	}
}

// TestALBTrafficQuery: the request names each group's metrics by TargetGroup and
// LoadBalancer (every load balancer whose rules forward to it), at the plan's period, over
// whole periods since the weights took effect (or the last window of them).
func TestALBTrafficQuery(t *testing.T) {
	since := time.Date(2026, 3, 1, 12, 0, 10, 300e6, time.UTC)
	minute := func(m, s int) time.Time { return time.Date(2026, 3, 1, 12, m, s, 0, time.UTC) }
	for _, tc := range []struct {
		name       string
		period     int
		window     time.Duration
		delay      time.Duration
		since, now time.Time
		start      time.Time // zero: no call, not judged yet
		end        time.Time // zero: now
		pending    string    // what a check not judged yet says
	}{
		{"period 1: the next whole second", 1, 0, 0, since, since.Add(20 * time.Second), since.Truncate(time.Second).Add(time.Second), time.Time{}, ""},
		{"period 5", 5, 0, 0, since, since.Add(20 * time.Second), minute(0, 15), time.Time{}, ""},
		{"period 60: the next minute", 60, 0, 0, since, since.Add(2 * time.Minute), minute(1, 0), time.Time{}, ""},
		{"period 60, before the next minute", 60, 0, 0, since, since.Add(30 * time.Second), time.Time{}, time.Time{}, "the window begins at the first whole 1m0s period"},
		{"a window of 5s", 1, 5 * time.Second, 0, since, since.Add(20 * time.Second), minute(0, 26), time.Time{}, ""},
		{"before the write: the last ten periods", 5, 0, 0, time.Time{}, since, minute(0, 0).Add(-35 * time.Second), time.Time{}, ""},
		// With a delay the read ends at the last period that ended at least the delay ago:
		// at 12:04:10, with 2m, the minute 12:01–12:02 is the last one published whole.
		{"delay 2m: whole minutes published", 60, 0, 2 * time.Minute, since, minute(4, 10), minute(1, 0), minute(2, 0), ""},
		{"delay 2m: the first whole minute not yet published", 60, 0, 2 * time.Minute, since, minute(2, 59), time.Time{}, time.Time{},
			"is read once CloudWatch has published it, 2m0s after it ends (spec.alb.cloudWatch.delay): from 12:04:00 on"},
		{"delay 2m: published the moment the delay has passed", 60, 0, 2 * time.Minute, since, minute(4, 0), minute(1, 0), minute(2, 0), ""},
		{"delay 2m, a window of 2m: its last two published minutes", 60, 2 * time.Minute, 2 * time.Minute, since, minute(6, 30), minute(2, 0), minute(4, 0), ""},
		{"delay 2m before the write: ten published minutes", 60, 0, 2 * time.Minute, time.Time{}, minute(4, 10), minute(2, 0).Add(-10 * time.Minute), minute(2, 0), ""},
		{"delay 30s at period 5", 5, 0, 30 * time.Second, since, since.Add(50 * time.Second), minute(0, 15), minute(0, 30), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeMetrics{}
			g, err := NewALBTraffic("traffic", spec.ALBTrafficGate{Period: tc.period, Window: spec.Duration{Duration: tc.window}}, api, tc.delay)
			if err != nil {
				t.Fatal(err)
			}
			g.now = func() time.Time { return tc.now }
			s := albStep(90, 10, 0)
			s.TargetGroups[1].LoadBalancers = []string{lbShop, lbAdmin}
			s.Since = tc.since
			r := g.Check(context.Background(), s)
			if tc.start.IsZero() {
				if len(api.ins) != 0 || !r.Pending || !r.Pass || !strings.Contains(r.Detail, tc.pending) {
					t.Errorf("%d calls, result %+v, want not judged yet: %q", len(api.ins), r, tc.pending)
				}
				return
			}
			if len(api.ins) == 0 {
				t.Fatalf("no call: %+v", r)
			}
			in := api.ins[0]
			end := tc.end
			if end.IsZero() {
				end = tc.now
			}
			if !aws.ToTime(in.StartTime).Equal(tc.start) || !aws.ToTime(in.EndTime).Equal(end) {
				t.Errorf("window %s – %s, want %s – %s", aws.ToTime(in.StartTime), aws.ToTime(in.EndTime), tc.start, end)
			}
			if w := r.Values["window_s"]; w != end.Sub(tc.start).Seconds() {
				t.Errorf("window_s %v, want %v", w, end.Sub(tc.start).Seconds())
			}
			var got []string
			for _, q := range in.MetricDataQueries {
				ms := q.MetricStat
				var dims []string
				for _, d := range ms.Metric.Dimensions {
					dims = append(dims, aws.ToString(d.Name)+"="+aws.ToString(d.Value))
				}
				if aws.ToString(ms.Metric.Namespace) != "AWS/ApplicationELB" || aws.ToInt32(ms.Period) != int32(tc.period) {
					t.Errorf("query %s: namespace %s period %d", aws.ToString(q.Id), aws.ToString(ms.Metric.Namespace), aws.ToInt32(ms.Period))
				}
				got = append(got, fmt.Sprintf("%s %s %s %s", aws.ToString(q.Id), aws.ToString(ms.Metric.MetricName), aws.ToString(ms.Stat), strings.Join(dims, ",")))
			}
			want := []string{
				"g0_l0_req RequestCount Sum TargetGroup=targetgroup/shop-blue/73e2d6bc24d8a067,LoadBalancer=" + lbShop,
				"g0_l0_e5xx HTTPCode_Target_5XX_Count Sum TargetGroup=targetgroup/shop-blue/73e2d6bc24d8a067,LoadBalancer=" + lbShop,
				"g0_l0_rtsum TargetResponseTime Sum TargetGroup=targetgroup/shop-blue/73e2d6bc24d8a067,LoadBalancer=" + lbShop,
				"g0_l0_rtn TargetResponseTime SampleCount TargetGroup=targetgroup/shop-blue/73e2d6bc24d8a067,LoadBalancer=" + lbShop,
				"g1_l0_req RequestCount Sum TargetGroup=targetgroup/shop-green/1a2b3c4d5e6f7a8b,LoadBalancer=" + lbShop,
				"g1_l0_e5xx HTTPCode_Target_5XX_Count Sum TargetGroup=targetgroup/shop-green/1a2b3c4d5e6f7a8b,LoadBalancer=" + lbShop,
				"g1_l0_rtsum TargetResponseTime Sum TargetGroup=targetgroup/shop-green/1a2b3c4d5e6f7a8b,LoadBalancer=" + lbShop,
				"g1_l0_rtn TargetResponseTime SampleCount TargetGroup=targetgroup/shop-green/1a2b3c4d5e6f7a8b,LoadBalancer=" + lbShop,
				"g1_l1_req RequestCount Sum TargetGroup=targetgroup/shop-green/1a2b3c4d5e6f7a8b,LoadBalancer=" + lbAdmin,
				"g1_l1_e5xx HTTPCode_Target_5XX_Count Sum TargetGroup=targetgroup/shop-green/1a2b3c4d5e6f7a8b,LoadBalancer=" + lbAdmin,
				"g1_l1_rtsum TargetResponseTime Sum TargetGroup=targetgroup/shop-green/1a2b3c4d5e6f7a8b,LoadBalancer=" + lbAdmin,
				"g1_l1_rtn TargetResponseTime SampleCount TargetGroup=targetgroup/shop-green/1a2b3c4d5e6f7a8b,LoadBalancer=" + lbAdmin,
			}
			if !slices.Equal(got, want) {
				t.Errorf("queries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestALBTrafficSumsLoadBalancers: a group behind two load balancers counts both.
func TestALBTrafficSumsLoadBalancers(t *testing.T) {
	values := traffic(450, 40, 0, 0, time.Millisecond)
	values[series{"targetgroup/shop-green/1a2b3c4d5e6f7a8b", lbAdmin, "RequestCount", "Sum"}] = []float64{10}
	api := &fakeMetrics{values: values}
	g, _ := NewALBTraffic("traffic", spec.ALBTrafficGate{Period: 1}, api, 0)
	s := albStep(90, 10, 0)
	s.TargetGroups[1].LoadBalancers = []string{lbShop, lbAdmin}
	r := g.Check(context.Background(), s)
	if !r.Pass || r.Pending || r.Values["green.requests"] != 50 || r.Values["requests"] != 500 || r.Values["green.share"] != 0.1 {
		t.Errorf("%+v", r)
	}
	api.err = errors.New("AccessDenied: not authorized to perform cloudwatch:GetMetricData")
	if r := g.Check(context.Background(), s); r.Pass || !strings.Contains(r.Err, "GetMetricData AWS/ApplicationELB") || !strings.Contains(r.Err, "AccessDenied") {
		t.Errorf("a failing call: %+v", r)
	}
}

// TestALBTrafficUnreadSeries: a series CloudWatch could not read whole is an error (could
// not measure), never 0 requests or 0 errors; the retire check's read alike.
func TestALBTrafficUnreadSeries(t *testing.T) {
	green := "targetgroup/shop-green/1a2b3c4d5e6f7a8b"
	blue := "targetgroup/shop-blue/73e2d6bc24d8a067"
	for _, tc := range []struct {
		name   string
		series series
		status cwtypes.StatusCode
		want   string
	}{
		{"green's 5xx forbidden", series{green, lbShop, "HTTPCode_Target_5XX_Count", "Sum"}, cwtypes.StatusCodeForbidden, "result g1_l0_e5xx: status Forbidden (Forbidden: the fake's Forbidden): not read whole"},
		{"blue's requests failed", series{blue, lbShop, "RequestCount", "Sum"}, cwtypes.StatusCodeInternalError, "result g0_l0_req: status InternalError"},
		{"partial data on the last page", series{green, lbShop, "TargetResponseTime", "SampleCount"}, cwtypes.StatusCodePartialData, "result g1_l0_rtn: status PartialData"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// All of green's requests 5xx: read as 0 errors, maxErrorRate would pass.
			api := &fakeMetrics{values: traffic(900, 100, 0, 100, time.Millisecond), status: map[series]cwtypes.StatusCode{tc.series: tc.status}}
			g, err := NewALBTraffic("traffic", spec.ALBTrafficGate{Period: 1, MaxErrorRate: ptr(0.01)}, api, 0)
			if err != nil {
				t.Fatal(err)
			}
			r := g.Check(context.Background(), albStep(90, 10, 0))
			if r.Pass || r.Pending || !strings.Contains(r.Err, tc.want) {
				t.Errorf("pass %v pending %v err %q, want an error containing %q", r.Pass, r.Pending, r.Err, tc.want)
			}
		})
	}
	api := &fakeMetrics{values: traffic(900, 100, 0, 0, time.Millisecond),
		status: map[series]cwtypes.StatusCode{{blue, lbShop, "RequestCount", "Sum"}: cwtypes.StatusCodeInternalError}}
	res, err := NewALBResidual(spec.Retire{CloudWatch: &spec.RetireCloudWatch{Period: 1}}, api, albStep(0, 100, 0).TargetGroups[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	if rate, ok, err := res.Rate(context.Background()); ok || err == nil || !strings.Contains(err.Error(), "status InternalError") {
		t.Errorf("retire read of a failed series: rate %v ok %v err %v, want an error", rate, ok, err)
	}
}

func TestALBTrafficSpec(t *testing.T) {
	api := &fakeMetrics{}
	for _, bad := range []spec.ALBTrafficGate{
		{Period: 7}, {Tolerance: ptr(1.5)}, {MaxErrorRate: ptr(-0.1)}, {MaxResponseTime: &spec.Duration{}},
	} {
		if _, err := NewALBTraffic("traffic", bad, api, 0); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := NewALBTraffic("traffic", spec.ALBTrafficGate{}, nil, 0); err == nil {
		t.Error("no CloudWatch client accepted")
	}
	if _, err := NewALBTraffic("traffic", spec.ALBTrafficGate{}, api, -time.Second); err == nil {
		t.Error("a negative delay accepted")
	}
	g, err := NewALBTraffic("traffic", spec.ALBTrafficGate{}, api, 0)
	if err != nil || g.period != time.Minute || g.minRequests != spec.DefaultMinRequests || g.tolerance != spec.DefaultALBTolerance {
		t.Errorf("defaults: %+v %v", g, err)
	}
}

// TestALBResidual: the retire check's rate is the from group's RequestCount over the last
// period and the current one so far; with a delay, over the last period published whole,
// so that a minute CloudWatch has not published yet never reads as a drained cluster.
func TestALBResidual(t *testing.T) {
	at := func(m, s int) time.Time { return time.Date(2026, 3, 1, 12, m, s, 0, time.UTC) }
	for _, tc := range []struct {
		name       string
		period     int
		delay      time.Duration
		now        time.Time
		start, end time.Time
		rate       float64 // the fake's 3+1 requests over the window
		source     string
	}{
		{"no delay: the last period and the current one so far", 1, 0, at(0, 10).Add(500 * time.Millisecond), at(0, 9), at(0, 10).Add(500 * time.Millisecond), 4 / 1.5, "period 1s, delay 0s)"},
		{"delay 2m: the last minute that ended 2m ago", 60, 2 * time.Minute, at(5, 30), at(2, 0), at(3, 0), 4.0 / 60, "period 1m0s, delay 2m0s)"},
		{"delay 2m, just before the next minute is published", 60, 2 * time.Minute, at(5, 59), at(2, 0), at(3, 0), 4.0 / 60, "period 1m0s, delay 2m0s)"},
		{"delay 2m, the moment it is", 60, 2 * time.Minute, at(6, 0), at(3, 0), at(4, 0), 4.0 / 60, "period 1m0s, delay 2m0s)"},
		{"delay 10s at period 5", 5, 10 * time.Second, at(0, 17), at(0, 0), at(0, 5), 4.0 / 5, "period 5s, delay 10s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeMetrics{values: map[series][]float64{{"targetgroup/shop-blue/73e2d6bc24d8a067", lbShop, "RequestCount", "Sum"}: {3, 1}}}
			from := albStep(0, 100, 0).TargetGroups[0]
			r, err := NewALBResidual(spec.Retire{CloudWatch: &spec.RetireCloudWatch{Period: tc.period}}, api, from, tc.delay)
			if err != nil {
				t.Fatal(err)
			}
			r.now = func() time.Time { return tc.now }
			rate, ok, err := r.Rate(context.Background())
			if err != nil || !ok || math.Abs(rate-tc.rate) > 1e-9 {
				t.Errorf("rate %v %v %v, want %v", rate, ok, err, tc.rate)
			}
			in := api.ins[0]
			if n := len(in.MetricDataQueries); n != 1 || aws.ToString(in.MetricDataQueries[0].MetricStat.Metric.MetricName) != "RequestCount" {
				t.Errorf("%d queries: want RequestCount alone", n)
			}
			if !aws.ToTime(in.StartTime).Equal(tc.start) || !aws.ToTime(in.EndTime).Equal(tc.end) {
				t.Errorf("window %s – %s, want %s – %s", aws.ToTime(in.StartTime), aws.ToTime(in.EndTime), tc.start, tc.end)
			}
			if !strings.Contains(r.Source(), "RequestCount of target group shop-blue (load balancer "+lbShop+", "+tc.source) {
				t.Errorf("source %q", r.Source())
			}
		})
	}
	api := &fakeMetrics{}
	if _, err := NewResidual(spec.Retire{CloudWatch: &spec.RetireCloudWatch{}}); err == nil {
		t.Error("NewResidual accepted a cloudWatch retire")
	}
	if _, err := NewALBResidual(spec.Retire{CloudWatch: &spec.RetireCloudWatch{}}, api, TargetGroup{Name: "x"}, 0); err == nil {
		t.Error("a group without ARN accepted")
	}
	if _, err := NewALBResidual(spec.Retire{CloudWatch: &spec.RetireCloudWatch{}}, api, albStep(0, 100, 0).TargetGroups[0], -time.Second); err == nil {
		t.Error("a negative delay accepted")
	}
}
