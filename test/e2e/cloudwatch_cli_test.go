package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/sandbox/cloudwatchapi"
)

const (
	cwLB   = "app/shop/50dc6c495c0c9188"
	cwBlue = "targetgroup/shop-blue/73e2d6bc24d8a067"
	cwGrn  = "targetgroup/shop-green/1f2e3d4c5b6a7980"
)

// albSeconds is a cloudwatchapi.Source over fixed per-second counts: the shape of what the
// sandbox's ALB proxy keeps, without the proxy.
type albSeconds map[[3]string][]cloudwatchapi.Point

func (s albSeconds) Series(_ context.Context, lb, tg, metric string, from, to time.Time) ([]cloudwatchapi.Point, error) {
	var out []cloudwatchapi.Point
	for _, p := range s[[3]string{lb, tg, metric}] {
		if !p.Time.Before(from) && p.Time.Before(to) {
			out = append(out, p)
		}
	}
	return out, nil
}

// cloudWatchServer serves the CloudWatch API on loopback over five minutes of traffic
// from t0 (blue 9 requests a second, green 1, a green 5xx every 30 s) and records how
// each request came in.
type cloudWatchServer struct {
	url   string
	reg   *prometheus.Registry
	t0    time.Time
	mu    sync.Mutex
	wires []string // "POST / application/x-www-form-urlencoded Action=…"
}

func startCloudWatch(t *testing.T) *cloudWatchServer {
	t.Helper()
	t0 := time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute)
	src := albSeconds{}
	for i := range 300 {
		at := t0.Add(time.Duration(i) * time.Second)
		add := func(tg, metric string, n float64) {
			k := [3]string{cwLB, tg, metric}
			src[k] = append(src[k], cloudwatchapi.CountPoint(at, n))
		}
		add(cwBlue, cloudwatchapi.RequestCount, 9)
		add(cwGrn, cloudwatchapi.RequestCount, 1)
		add("", cloudwatchapi.RequestCount, 10)
		if i%30 == 0 {
			add(cwGrn, cloudwatchapi.HTTPCodeTarget5XXCount, 1)
		}
	}
	s := &cloudWatchServer{reg: prometheus.NewRegistry(), t0: t0}
	api, err := cloudwatchapi.New(cloudwatchapi.Config{Source: src, Registerer: s.reg})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !api.Matches(r) {
			t.Errorf("Matches refused %s %s", r.Method, r.URL.Path)
		}
		wire := fmt.Sprintf("%s %s %s target=%q", r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("X-Amz-Target"))
		s.mu.Lock()
		s.wires = append(s.wires, wire)
		s.mu.Unlock()
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// calls reads crossfade_sandbox_api_calls_total for one operation and result.
func (s *cloudWatchServer) calls(t *testing.T, op, result string) float64 {
	t.Helper()
	families, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "crossfade_sandbox_api_calls_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["operation"] == op && labels["result"] == result {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

func cwQuery(id, metric, stat string, period int, dims ...string) string {
	var d []string
	for i := 0; i+1 < len(dims); i += 2 {
		d = append(d, fmt.Sprintf(`{"Name": %q, "Value": %q}`, dims[i], dims[i+1]))
	}
	return fmt.Sprintf(`{"Id": %q, "MetricStat": {"Metric": {"Namespace": "AWS/ApplicationELB", "MetricName": %q, "Dimensions": [%s]}, "Period": %d, "Stat": %q}}`,
		id, metric, strings.Join(d, ", "), period, stat)
}

type cliMetricData struct {
	MetricDataResults []struct {
		Id, Label, StatusCode string
		Timestamps            []string
		Values                []float64
	}
	NextToken string
}

// TestCloudWatchCLI reads the ALB metrics the way an AWS user does, with the real AWS CLI
// (`aws cloudwatch get-metric-data`, query protocol) against the sandbox's CloudWatch API:
// request share per target group, 5xx, paging, and CloudWatch's errors.
func TestCloudWatchCLI(t *testing.T) {
	needTool(t, awsBin, "awscli")
	cw := startCloudWatch(t)
	aws := &cli{t: t, endpoint: cw.url, home: t.TempDir()}
	window := []string{"--start-time", cw.t0.Format(time.RFC3339), "--end-time", cw.t0.Add(5 * time.Minute).Format(time.RFC3339)}
	queries := func(qs ...string) string { return aws.batchFile("[" + strings.Join(qs, ", ") + "]") }

	// Request share per target group over the window, by TargetGroup with its LoadBalancer
	// as the ALB publishes it; and the 5xx, which exist only where there were some.
	var got cliMetricData
	aws.must(&got, append([]string{"cloudwatch", "get-metric-data", "--metric-data-queries", queries(
		cwQuery("blue", "RequestCount", "Sum", 60, "TargetGroup", cwBlue, "LoadBalancer", cwLB),
		cwQuery("green", "RequestCount", "Sum", 60, "LoadBalancer", cwLB, "TargetGroup", cwGrn),
		cwQuery("errors", "HTTPCode_Target_5XX_Count", "Sum", 10, "LoadBalancer", cwLB, "TargetGroup", cwGrn),
		cwQuery("tgonly", "RequestCount", "Sum", 60, "TargetGroup", cwBlue),
	)}, window...)...)
	sums := map[string]float64{}
	counts := map[string]int{}
	labels := map[string]string{"blue": "RequestCount", "green": "RequestCount", "errors": "HTTPCode_Target_5XX_Count", "tgonly": "RequestCount"}
	for _, r := range got.MetricDataResults {
		if r.StatusCode != "Complete" || r.Label != labels[r.Id] {
			t.Errorf("result %s: status %s label %s", r.Id, r.StatusCode, r.Label)
		}
		for i, v := range r.Values {
			sums[r.Id] += v
			counts[r.Id]++
			if _, err := time.Parse(time.RFC3339, r.Timestamps[i]); err != nil {
				t.Errorf("%s timestamp %q: %v", r.Id, r.Timestamps[i], err)
			}
		}
	}
	if sums["blue"] != 2700 || sums["green"] != 300 || counts["blue"] != 5 {
		t.Fatalf("sums %v over %v minutes: want blue 2700 and green 300 over 5", sums, counts)
	}
	if share := sums["blue"] / (sums["blue"] + sums["green"]); share != 0.9 {
		t.Fatalf("blue share %v, want 0.9", share)
	}
	if sums["errors"] != 10 || counts["errors"] != 10 {
		t.Fatalf("5xx %v in %d periods: want one in each of 10 ten-second periods, none where there were none", sums["errors"], counts["errors"])
	}
	if counts["tgonly"] != 0 {
		t.Fatalf("RequestCount by TargetGroup alone gave %d data points: the ALB publishes it only with LoadBalancer", counts["tgonly"])
	}
	if first := got.MetricDataResults[0].Timestamps; first[0] != cw.t0.Add(4*time.Minute).Format("2006-01-02T15:04:05+00:00") {
		t.Fatalf("timestamps %v: want newest first", first)
	}
	cw.mu.Lock()
	wire := cw.wires[len(cw.wires)-1]
	cw.mu.Unlock()
	if !strings.HasPrefix(wire, "POST / application/x-www-form-urlencoded") {
		t.Fatalf("the CLI came as %s, want the query protocol", wire)
	}

	// --page-size is MaxDatapoints: the CLI follows NextToken and appends the pages.
	before := cw.calls(t, "GetMetricData", "ok")
	aws.must(&got, append([]string{"cloudwatch", "get-metric-data", "--page-size", "2", "--scan-by", "TimestampAscending", "--metric-data-queries", queries(
		cwQuery("blue", "RequestCount", "Sum", 60, "TargetGroup", cwBlue, "LoadBalancer", cwLB),
		cwQuery("green", "RequestCount", "Sum", 60, "TargetGroup", cwGrn, "LoadBalancer", cwLB),
	)}, window...)...)
	paged := map[string]float64{}
	var blueStamps []string
	for _, r := range got.MetricDataResults {
		for _, v := range r.Values {
			paged[r.Id] += v
		}
		if r.Id == "blue" {
			blueStamps = append(blueStamps, r.Timestamps...)
		}
	}
	if calls := cw.calls(t, "GetMetricData", "ok") - before; calls != 5 || paged["blue"] != 2700 || paged["green"] != 300 {
		t.Fatalf("paged: %v calls, sums %v: want 5 pages of 2 and the same sums", calls, paged)
	}
	for i := 1; i < len(blueStamps); i++ {
		if blueStamps[i] <= blueStamps[i-1] {
			t.Fatalf("ascending scan out of order: %v", blueStamps)
		}
	}

	// GetMetricStatistics, the older call, for the load balancer as a whole.
	var stats struct {
		Label      string
		Datapoints []struct {
			Timestamp string
			Sum       float64
			Unit      string
		}
	}
	aws.must(&stats, append([]string{"cloudwatch", "get-metric-statistics", "--namespace", "AWS/ApplicationELB", "--metric-name", "RequestCount",
		"--dimensions", "Name=LoadBalancer,Value=" + cwLB, "--period", "300", "--statistics", "Sum"}, window...)...)
	if stats.Label != "RequestCount" || len(stats.Datapoints) != 1 || stats.Datapoints[0].Sum != 3000 || stats.Datapoints[0].Unit != "Count" {
		t.Fatalf("get-metric-statistics %+v: want one 5-minute Sum of 3000 Count", stats)
	}

	// Errors, as the CLI prints them.
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"statistic", []string{"cloudwatch", "get-metric-data", "--metric-data-queries",
			queries(cwQuery("m1", "RequestCount", "Total", 60, "LoadBalancer", cwLB))},
			"(ValidationError) when calling the GetMetricData operation: The value Total for parameter MetricDataQueries.member.1.MetricStat.Stat is not a valid statistic."},
		{"id pattern", []string{"cloudwatch", "get-metric-data", "--metric-data-queries",
			queries(cwQuery("Blue", "RequestCount", "Sum", 60, "LoadBalancer", cwLB))},
			"The value Blue for parameter MetricDataQueries.member.1.Id is not matching the expected pattern ^[a-z][a-zA-Z0-9_]*$."},
		{"period", []string{"cloudwatch", "get-metric-data", "--metric-data-queries",
			queries(cwQuery("m1", "RequestCount", "Sum", 45, "LoadBalancer", cwLB))},
			"The parameter MetricDataQueries.member.1.MetricStat.Period must be a value in the set [ 1, 5, 10, 20, 30 ] or a multiple of 60."},
		{"duplicate ids", []string{"cloudwatch", "get-metric-data", "--metric-data-queries",
			queries(cwQuery("m1", "RequestCount", "Sum", 60, "LoadBalancer", cwLB), cwQuery("m1", "RequestCount", "Sum", 60, "LoadBalancer", cwLB))},
			"The values for parameter id in MetricDataQueries are not unique."},
		{"expression", []string{"cloudwatch", "get-metric-data", "--metric-data-queries",
			aws.batchFile(`[{"Id": "e1", "Expression": "SUM(METRICS())"}]`)},
			"(ValidationError) when calling the GetMetricData operation: The crossfade sandbox does not serve this: MetricDataQueries.member.1.Expression"},
		{"statistics period", []string{"cloudwatch", "get-metric-statistics", "--namespace", "AWS/ApplicationELB", "--metric-name", "RequestCount",
			"--period", "7", "--statistics", "Sum"},
			"(InvalidParameterValue) when calling the GetMetricStatistics operation: The parameter Period must be a value in the set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := aws.run(append(tc.args, window...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("aws error:\n%v\nwant it to contain\n%s", err, tc.want)
			}
		})
	}
	if refused := cw.calls(t, "GetMetricData", "ValidationError"); refused != 5 {
		t.Fatalf("counted %v refused GetMetricData calls, want 5", refused)
	}
}
