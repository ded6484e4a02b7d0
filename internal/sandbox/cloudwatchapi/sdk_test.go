package cloudwatchapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/smithy-go"
	"github.com/prometheus/client_golang/prometheus"
)

const (
	testLB  = "app/web/50dc6c495c0c9188"
	testTGA = "targetgroup/blue/73e2d6bc24d8a067"
	testTGB = "targetgroup/green/1f2e3d4c5b6a7980"
)

// memSource is a Source over fixed points, keyed by lb, tg and metric.
type memSource map[[3]string][]Point

func (m memSource) Series(_ context.Context, lb, tg, metric string, from, to time.Time) ([]Point, error) {
	var out []Point
	for _, p := range m[[3]string{lb, tg, metric}] {
		if !p.Time.Before(from) && p.Time.Before(to) {
			out = append(out, p)
		}
	}
	return out, nil
}

// trafficSource is two target groups behind one load balancer over 120 seconds from t0:
// blue takes 3 requests a second, green 1, and every tenth green second one 5xx.
func trafficSource(t0 time.Time) memSource {
	src := memSource{}
	add := func(lb, tg, metric string, p Point) {
		k := [3]string{lb, tg, metric}
		src[k] = append(src[k], p)
	}
	for i := range 120 {
		at := t0.Add(time.Duration(i) * time.Second)
		add(testLB, testTGA, RequestCount, CountPoint(at, 3))
		add(testLB, testTGB, RequestCount, CountPoint(at, 1))
		add(testLB, "", RequestCount, CountPoint(at, 4))
		fives := 0.0
		if i%10 == 0 {
			fives = 1
		}
		add(testLB, testTGB, HTTPCodeTarget5XXCount, CountPoint(at, fives)) // zero seconds too: the API drops them
		add(testLB, testTGA, TargetResponseTime, Point{Time: at, SampleCount: 3, Sum: 0.3, Minimum: 0.05, Maximum: 0.2, Values: []float64{0.05, 0.05, 0.2}})
	}
	return src
}

type sdkFixture struct {
	api    *API
	reg    *prometheus.Registry
	client *cloudwatch.Client
	t0     time.Time
	// protocols counts the protocols the requests came in: the SDK's must all be CBOR.
	mu        sync.Mutex
	protocols map[protocol]int
}

func newSDKFixture(t testing.TB) *sdkFixture {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Minute)
	t0 := now.Add(-10 * time.Minute)
	reg := prometheus.NewRegistry()
	api, err := New(Config{Source: trafficSource(t0), Registerer: reg, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	f := &sdkFixture{api: api, reg: reg, t0: t0, protocols: map[protocol]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !api.Matches(r) {
			t.Errorf("Matches refused the SDK's %s %s", r.Method, r.URL.Path)
		}
		f.mu.Lock()
		f.protocols[detect(r)]++
		f.mu.Unlock()
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.client = cloudwatch.New(cloudwatch.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer:      retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = 10 * time.Millisecond }),
	})
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.protocols[protoCBOR] == 0 || len(f.protocols) != 1 {
			t.Errorf("the SDK's requests came in %v, want rpc-v2-cbor only", f.protocols)
		}
	})
	return f
}

func requestCountBy(id, tg string, period int32) types.MetricDataQuery {
	return types.MetricDataQuery{
		Id: aws.String(id),
		MetricStat: &types.MetricStat{
			Metric: &types.Metric{
				Namespace:  aws.String(Namespace),
				MetricName: aws.String(RequestCount),
				Dimensions: []types.Dimension{
					{Name: aws.String(DimTargetGroup), Value: aws.String(tg)},
					{Name: aws.String(DimLoadBalancer), Value: aws.String(testLB)},
				},
			},
			Period: aws.Int32(period),
			Stat:   aws.String("Sum"),
		},
	}
}

// TestSDKGetMetricData asks, through the real aws-sdk-go-v2 client (rpc-v2-cbor), for
// RequestCount by target group for two groups over a window, paged, and gets the sums.
func TestSDKGetMetricData(t *testing.T) {
	f := newSDKFixture(t)
	ctx := context.Background()
	in := &cloudwatch.GetMetricDataInput{
		StartTime:         aws.Time(f.t0),
		EndTime:           aws.Time(f.t0.Add(2 * time.Minute)),
		MetricDataQueries: []types.MetricDataQuery{requestCountBy("blue", testTGA, 10), requestCountBy("green", testTGB, 10)},
		ScanBy:            types.ScanByTimestampAscending,
		MaxDatapoints:     aws.Int32(5), // 24 data points: five pages
	}
	sums := map[string]float64{}
	points := map[string]int{}
	pages := 0
	var lastStamp time.Time
	for p := cloudwatch.NewGetMetricDataPaginator(f.client, in); p.HasMorePages(); {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatalf("page %d: %v", pages+1, err)
		}
		pages++
		for _, r := range out.MetricDataResults {
			if len(r.Timestamps) != len(r.Values) {
				t.Fatalf("%s: %d timestamps, %d values", *r.Id, len(r.Timestamps), len(r.Values))
			}
			for i, v := range r.Values {
				sums[*r.Id] += v
				points[*r.Id]++
				if *r.Id == "blue" {
					if !r.Timestamps[i].After(lastStamp) {
						t.Fatalf("blue timestamps not ascending: %v after %v", r.Timestamps[i], lastStamp)
					}
					lastStamp = r.Timestamps[i]
				}
			}
			if *r.Label != RequestCount {
				t.Errorf("label %q, want the metric name", *r.Label)
			}
		}
	}
	if sums["blue"] != 360 || sums["green"] != 120 {
		t.Fatalf("sums %v, want blue 360 and green 120", sums)
	}
	if points["blue"] != 12 || points["green"] != 12 || pages != 5 {
		t.Fatalf("%v data points in %d pages, want 12 each in 5 pages of at most 5", points, pages)
	}
	if got := f.api.chain.Calls.Count("GetMetricData", "ok"); got != 5 {
		t.Fatalf("counted %v GetMetricData calls, want 5", got)
	}

	// One page, newest first by default; 5xx only where there were some; p99 and Average.
	out, err := f.client.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{
		StartTime: aws.Time(f.t0),
		EndTime:   aws.Time(f.t0.Add(time.Minute)),
		MetricDataQueries: []types.MetricDataQuery{
			{Id: aws.String("errors"), Label: aws.String("5xx ${PROP('Dim.TargetGroup')}"), MetricStat: &types.MetricStat{
				Metric: &types.Metric{Namespace: aws.String(Namespace), MetricName: aws.String(HTTPCodeTarget5XXCount), Dimensions: []types.Dimension{
					{Name: aws.String(DimLoadBalancer), Value: aws.String(testLB)}, {Name: aws.String(DimTargetGroup), Value: aws.String(testTGB)}}},
				Period: aws.Int32(5), Stat: aws.String("Sum")}},
			{Id: aws.String("p99"), MetricStat: &types.MetricStat{
				Metric: &types.Metric{Namespace: aws.String(Namespace), MetricName: aws.String(TargetResponseTime), Dimensions: []types.Dimension{
					{Name: aws.String(DimLoadBalancer), Value: aws.String(testLB)}, {Name: aws.String(DimTargetGroup), Value: aws.String(testTGA)}}},
				Period: aws.Int32(60), Stat: aws.String("p99")}},
			{Id: aws.String("avg"), MetricStat: &types.MetricStat{
				Metric: &types.Metric{Namespace: aws.String(Namespace), MetricName: aws.String(TargetResponseTime), Dimensions: []types.Dimension{
					{Name: aws.String(DimLoadBalancer), Value: aws.String(testLB)}, {Name: aws.String(DimTargetGroup), Value: aws.String(testTGA)}}},
				Period: aws.Int32(60), Stat: aws.String("Average")}},
			{Id: aws.String("hidden"), ReturnData: aws.Bool(false), MetricStat: requestCountBy("x", testTGA, 60).MetricStat},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(out.MetricDataResults); n != 3 || out.NextToken != nil {
		t.Fatalf("%d results, token %v: want 3 (ReturnData false left out) and no token", n, out.NextToken)
	}
	errs := out.MetricDataResults[0]
	if *errs.Label != "5xx "+testTGB || len(errs.Values) != 6 || errs.StatusCode != types.StatusCodeComplete {
		t.Fatalf("5xx result %q %v %s: want 6 five-second periods with a 5xx, labelled by target group", *errs.Label, errs.Values, errs.StatusCode)
	}
	if !errs.Timestamps[0].Equal(f.t0.Add(50*time.Second)) || !errs.Timestamps[5].Equal(f.t0) {
		t.Fatalf("5xx timestamps %v: want newest first, from %v down to %v", errs.Timestamps, f.t0.Add(50*time.Second), f.t0)
	}
	if v := out.MetricDataResults[1].Values; len(v) != 1 || v[0] != 0.2 {
		t.Fatalf("p99 %v, want [0.2]", v)
	}
	if v := out.MetricDataResults[2].Values; len(v) != 1 || v[0] < 0.0999 || v[0] > 0.1001 {
		t.Fatalf("average %v, want [0.1]", v)
	}
}

// TestSDKErrors checks that the SDK sees CloudWatch's error codes: its typed errors for the
// modeled ones and the query code for the rest.
func TestSDKErrors(t *testing.T) {
	f := newSDKFixture(t)
	ctx := context.Background()
	q := requestCountBy("m1", testTGA, 60)
	q.MetricStat.Stat = aws.String("Total")
	_, err := f.client.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{
		StartTime: aws.Time(f.t0), EndTime: aws.Time(f.t0), MetricDataQueries: []types.MetricDataQuery{q},
	})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "ValidationError" ||
		ae.ErrorMessage() != "The parameter StartTime must not equal parameter EndTime.\nThe value Total for parameter MetricDataQueries.member.1.MetricStat.Stat is not a valid statistic.\n" {
		t.Fatalf("error %v, want both problems in one ValidationError", err)
	}

	_, err = f.client.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{
		StartTime: aws.Time(f.t0), EndTime: aws.Time(f.t0.Add(time.Minute)),
		MetricDataQueries: []types.MetricDataQuery{requestCountBy("m1", testTGA, 60)}, NextToken: aws.String("forged"),
	})
	var bad *types.InvalidNextToken
	if !errors.As(err, &bad) || bad.ErrorCode() != "InvalidNextToken" {
		t.Fatalf("forged token: %v, want InvalidNextToken", err)
	}

	_, err = f.client.GetMetricStatistics(ctx, &cloudwatch.GetMetricStatisticsInput{
		Namespace: aws.String(Namespace), MetricName: aws.String(RequestCount),
		StartTime: aws.Time(f.t0), EndTime: aws.Time(f.t0.Add(time.Hour)), Period: aws.Int32(7), Statistics: []types.Statistic{types.StatisticSum},
	})
	var ipv *types.InvalidParameterValueException
	if !errors.As(err, &ipv) || ipv.ErrorCode() != "InvalidParameterValue" || !strings.Contains(ipv.ErrorMessage(), "Period") {
		t.Fatalf("period 7: %v, want InvalidParameterValue", err)
	}

	_, err = f.client.GetMetricStatistics(ctx, &cloudwatch.GetMetricStatisticsInput{
		Namespace: aws.String(Namespace), MetricName: aws.String(RequestCount),
		StartTime: aws.Time(f.t0), EndTime: aws.Time(f.t0.Add(24 * time.Hour)), Period: aws.Int32(1), Statistics: []types.Statistic{types.StatisticSum},
	})
	var ipc *types.InvalidParameterCombinationException
	if !errors.As(err, &ipc) || ipc.ErrorCode() != "InvalidParameterCombination" ||
		ipc.ErrorMessage() != "You have requested up to 86400 datapoints, which exceeds the limit of 1440. You may reduce the datapoints requested by increasing Period, or decreasing the time range." {
		t.Fatalf("a day at 1s: %v, want InvalidParameterCombination", err)
	}
	if got := f.api.chain.Calls.Count("GetMetricStatistics", "InvalidParameterCombination"); got != 1 {
		t.Fatalf("counted %v refused GetMetricStatistics calls, want 1", got)
	}
}

// TestSDKGetMetricStatistics reads a load balancer's RequestCount and TargetResponseTime
// with GetMetricStatistics, percentiles included.
func TestSDKGetMetricStatistics(t *testing.T) {
	f := newSDKFixture(t)
	ctx := context.Background()
	lbDim := []types.Dimension{{Name: aws.String(DimLoadBalancer), Value: aws.String(testLB)}}
	out, err := f.client.GetMetricStatistics(ctx, &cloudwatch.GetMetricStatisticsInput{
		Namespace: aws.String(Namespace), MetricName: aws.String(RequestCount), Dimensions: lbDim,
		StartTime: aws.Time(f.t0), EndTime: aws.Time(f.t0.Add(2 * time.Minute)), Period: aws.Int32(60),
		Statistics: []types.Statistic{types.StatisticSum, types.StatisticSampleCount},
	})
	if err != nil {
		t.Fatal(err)
	}
	if *out.Label != RequestCount || len(out.Datapoints) != 2 {
		t.Fatalf("label %q, %d datapoints: want 2 minutes", *out.Label, len(out.Datapoints))
	}
	for _, dp := range out.Datapoints {
		if *dp.Sum != 240 || *dp.SampleCount != 60 || dp.Unit != types.StandardUnitCount || dp.Average != nil {
			t.Fatalf("datapoint %+v: want Sum 240 over 60 samples, Count, no Average", dp)
		}
	}
	tg := []types.Dimension{{Name: aws.String(DimLoadBalancer), Value: aws.String(testLB)}, {Name: aws.String(DimTargetGroup), Value: aws.String(testTGA)}}
	out, err = f.client.GetMetricStatistics(ctx, &cloudwatch.GetMetricStatisticsInput{
		Namespace: aws.String(Namespace), MetricName: aws.String(TargetResponseTime), Dimensions: tg,
		StartTime: aws.Time(f.t0), EndTime: aws.Time(f.t0.Add(time.Minute)), Period: aws.Int32(60),
		ExtendedStatistics: []string{"p50", "p99"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Datapoints) != 1 || out.Datapoints[0].ExtendedStatistics["p50"] != 0.05 || out.Datapoints[0].ExtendedStatistics["p99"] != 0.2 ||
		out.Datapoints[0].Unit != types.StandardUnitSeconds {
		t.Fatalf("datapoints %+v: want p50 0.05 and p99 0.2 seconds", out.Datapoints)
	}
}

// BenchmarkSDKGetMetricData measures one GetMetricData call through the real SDK: two
// target groups' RequestCount per second over two minutes (240 data points).
func BenchmarkSDKGetMetricData(b *testing.B) {
	f := newSDKFixture(b)
	in := &cloudwatch.GetMetricDataInput{
		StartTime:         aws.Time(f.t0),
		EndTime:           aws.Time(f.t0.Add(2 * time.Minute)),
		MetricDataQueries: []types.MetricDataQuery{requestCountBy("blue", testTGA, 1), requestCountBy("green", testTGB, 1)},
	}
	for b.Loop() {
		out, err := f.client.GetMetricData(context.Background(), in)
		if err != nil || len(out.MetricDataResults[0].Values) != 120 {
			b.Fatalf("%v %v", out, err)
		}
	}
}

// TestSDKNetworkFlowsByTargetGroup: an NLB's flow counts are published by LoadBalancer
// only, as on AWS: a GetMetricData query adding a TargetGroup dimension comes back
// Complete with no values, even from a source that counts per target group, and the load
// balancer's own series is served.
func TestSDKNetworkFlowsByTargetGroup(t *testing.T) {
	const nlb, tg = "net/db/50dc6c495c0c9188", "targetgroup/db-blue/73e2d6bc24d8a067"
	now := time.Now().UTC().Truncate(time.Minute)
	src := memSource{}
	for _, m := range []string{NewFlowCount, ActiveFlowCount, TCPELBResetCount} {
		for _, group := range []string{"", tg} {
			src[[3]string{nlb, group, m}] = []Point{CountPoint(now.Add(-30*time.Second), 5)}
		}
	}
	api, err := New(Config{Source: src, Registerer: prometheus.NewRegistry(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	client := cloudwatch.New(cloudwatch.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	query := func(id, metric, stat string, dims ...string) types.MetricDataQuery {
		var ds []types.Dimension
		for i := 0; i < len(dims); i += 2 {
			ds = append(ds, types.Dimension{Name: aws.String(dims[i]), Value: aws.String(dims[i+1])})
		}
		return types.MetricDataQuery{Id: aws.String(id), MetricStat: &types.MetricStat{
			Metric: &types.Metric{Namespace: aws.String(NetworkNamespace), MetricName: aws.String(metric), Dimensions: ds},
			Period: aws.Int32(60), Stat: aws.String(stat)}}
	}
	out, err := client.GetMetricData(context.Background(), &cloudwatch.GetMetricDataInput{
		StartTime: aws.Time(now.Add(-time.Minute)), EndTime: aws.Time(now),
		MetricDataQueries: []types.MetricDataQuery{
			query("lb", NewFlowCount, "Sum", DimLoadBalancer, nlb),
			query("tgnew", NewFlowCount, "Sum", DimTargetGroup, tg, DimLoadBalancer, nlb),
			query("tgactive", ActiveFlowCount, "Maximum", DimLoadBalancer, nlb, DimTargetGroup, tg),
			query("tgreset", TCPELBResetCount, "Sum", DimTargetGroup, tg, DimLoadBalancer, nlb),
		}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]types.MetricDataResult{}
	for _, r := range out.MetricDataResults {
		got[aws.ToString(r.Id)] = r
	}
	if r := got["lb"]; len(r.Values) != 1 || r.Values[0] != 5 {
		t.Errorf("load balancer's NewFlowCount: %v, want [5]", r.Values)
	}
	for _, id := range []string{"tgnew", "tgactive", "tgreset"} {
		if r, ok := got[id]; !ok || r.StatusCode != types.StatusCodeComplete || len(r.Values) != 0 {
			t.Errorf("%s by TargetGroup: %+v: want Complete with no values (AWS/NetworkELB has no TargetGroup dimension for flows)", id, r)
		}
	}
}
