package cloudwatchapi

import (
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		in      string
		verdict statVerdict
		kind    statKind
		pct     float64
	}{
		{"Sum", statOK, statSum, 0},
		{"Average", statOK, statAverage, 0},
		{"SampleCount", statOK, statSampleCount, 0},
		{"Minimum", statOK, statMinimum, 0},
		{"Maximum", statOK, statMaximum, 0},
		{"p99", statOK, statPercentile, 99},
		{"p99.9", statOK, statPercentile, 99.9},
		{"p50.25", statOK, statPercentile, 50.25},
		{"p0", statOK, statPercentile, 0},
		{"p100", statOK, statPercentile, 100},
		{"p100.5", statInvalid, 0, 0},
		{"p99.999", statInvalid, 0, 0},
		{"P99", statInvalid, 0, 0},
		{"sum", statInvalid, 0, 0},
		{"Total", statInvalid, 0, 0},
		{"", statInvalid, 0, 0},
		{"tm99", statUnsupported, 0, 0},
		{"wm90.5", statUnsupported, 0, 0},
		{"TM(10%:90%)", statUnsupported, 0, 0},
		{"PR(:0.5)", statUnsupported, 0, 0},
		{"IQM", statUnsupported, 0, 0},
	} {
		st, verdict := parseStat(tc.in)
		if verdict != tc.verdict || (verdict == statOK && (st.kind != tc.kind || st.pct != tc.pct || st.name != tc.in)) {
			t.Errorf("parseStat(%q) = %+v, %v; want kind %v pct %v verdict %v", tc.in, st, verdict, tc.kind, tc.pct, tc.verdict)
		}
	}
}

func TestValidPeriod(t *testing.T) {
	for p, want := range map[int64]bool{
		1: true, 5: true, 10: true, 20: true, 30: true, 60: true, 120: true, 300: true, 3600: true, 86400: true,
		0: false, -60: false, 2: false, 15: false, 45: false, 59: false, 61: false, 90: false,
	} {
		if got := validPeriod(p); got != want {
			t.Errorf("validPeriod(%d) = %v, want %v", p, got, want)
		}
	}
}

func TestAlignStartAndRetention(t *testing.T) {
	now := time.Date(2026, 5, 20, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) time.Time { return now.Add(-ago) }
	// 12:32:34.5 on the day before now, and variations of its age.
	base := time.Date(2026, 5, 19, 12, 32, 34, 500e6, time.UTC)
	for _, tc := range []struct {
		name   string
		start  time.Time
		period int64
		want   time.Time
	}{
		{"1 s to the second", base, 1, time.Date(2026, 5, 19, 12, 32, 34, 0, time.UTC)},
		{"5 s to a fifth of ten", base, 5, time.Date(2026, 5, 19, 12, 32, 30, 0, time.UTC)},
		{"10 s", base, 10, time.Date(2026, 5, 19, 12, 32, 30, 0, time.UTC)},
		{"20 s", base, 20, time.Date(2026, 5, 19, 12, 32, 20, 0, time.UTC)},
		{"30 s", base, 30, time.Date(2026, 5, 19, 12, 32, 30, 0, time.UTC)},
		{"60 s to the minute", base, 60, time.Date(2026, 5, 19, 12, 32, 0, 0, time.UTC)},
		{"300 s still to the minute", base, 300, time.Date(2026, 5, 19, 12, 32, 0, 0, time.UTC)},
		{"20 days old: 5 minutes", base.AddDate(0, 0, -20), 60, time.Date(2026, 4, 29, 12, 30, 0, 0, time.UTC)},
		{"70 days old: the hour", base.AddDate(0, 0, -70), 60, time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)},
	} {
		if got := alignStart(tc.start, now, tc.period); !got.Equal(tc.want) {
			t.Errorf("%s: alignStart = %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		ago    time.Duration
		period int64
		want   bool
	}{
		{time.Hour, 1, true},
		{3*time.Hour + time.Second, 1, false},
		{3*time.Hour + time.Second, 60, true},
		{16 * day, 60, false},
		{16 * day, 300, true},
		{64 * day, 300, false},
		{64 * day, 3600, true},
	} {
		if got := retained(at(tc.ago), now, tc.period); got != tc.want {
			t.Errorf("retained(%v ago, period %d) = %v, want %v", tc.ago, tc.period, got, tc.want)
		}
	}
}

func TestAggregate(t *testing.T) {
	t0 := time.Date(2026, 5, 20, 11, 0, 0, 0, time.UTC)
	now := t0.Add(time.Hour)
	sec := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	counts := func(n ...float64) []Point {
		var ps []Point
		for i, v := range n {
			ps = append(ps, CountPoint(sec(i), v))
		}
		return ps
	}
	rt := func(i int, values ...float64) Point {
		p := Point{Time: sec(i), SampleCount: float64(len(values)), Values: values}
		for j, v := range values {
			p.Sum += v
			if j == 0 || v < p.Minimum {
				p.Minimum = v
			}
			p.Maximum = max(p.Maximum, v)
		}
		return p
	}
	type dp struct {
		at int // seconds after t0
		v  float64
	}
	for _, tc := range []struct {
		name      string
		points    []Point
		start     int
		end       int
		period    int64
		countLike bool
		stat      string
		want      []dp
	}{
		{name: "sum per period", points: counts(1, 2, 3, 4, 5, 6), end: 6, period: 5, countLike: true, stat: "Sum",
			want: []dp{{0, 15}, {5, 6}}},
		{name: "zero counts are no data, empty periods no data point", points: counts(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 3), end: 20, period: 5, countLike: true, stat: "Sum",
			want: []dp{{10, 5}}},
		{name: "end is exclusive", points: counts(1, 1, 1, 1, 1, 1), end: 4, period: 60, countLike: true, stat: "Sum",
			want: []dp{{0, 4}}},
		{name: "points before the start are left out", points: counts(7, 1, 1), start: 1, end: 3, period: 1, countLike: true, stat: "Sum",
			want: []dp{{1, 1}, {2, 1}}},
		{name: "sample count of a count metric is its seconds with data", points: counts(3, 0, 4), end: 3, period: 60, countLike: true, stat: "SampleCount",
			want: []dp{{0, 2}}},
		{name: "average of a count metric is per datum", points: counts(3, 0, 4), end: 3, period: 60, countLike: true, stat: "Average",
			want: []dp{{0, 3.5}}},
		{name: "average response time is weighted by requests", points: []Point{rt(0, 1, 1, 1), rt(1, 4)}, end: 2, period: 60, stat: "Average",
			want: []dp{{0, 7.0 / 4}}},
		{name: "minimum and maximum", points: []Point{rt(0, 0.5, 0.2), rt(1, 0.9)}, end: 2, period: 60, stat: "Maximum",
			want: []dp{{0, 0.9}}},
		{name: "minimum", points: []Point{rt(0, 0.5, 0.2), rt(1, 0.9)}, end: 2, period: 60, stat: "Minimum",
			want: []dp{{0, 0.2}}},
		{name: "p99 over all responses of the period", points: []Point{rt(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), rt(1, 100)}, end: 2, period: 60, stat: "p99",
			want: []dp{{0, 100}}},
		{name: "p50 nearest rank", points: []Point{rt(0, 1, 2, 3, 4)}, end: 1, period: 60, stat: "p50",
			want: []dp{{0, 2}}},
		{name: "a zero response time is still a response", points: []Point{rt(0, 0)}, end: 1, period: 1, stat: "Sum",
			want: []dp{{0, 0}}},
		{name: "no percentile from points without their values", points: []Point{{Time: sec(0), SampleCount: 2, Sum: 1, Minimum: 0.4, Maximum: 0.6}}, end: 1, period: 60, stat: "p99",
			want: nil},
		{name: "percentile of counts uses the per-second counts", points: counts(1, 9, 5), end: 3, period: 60, countLike: true, stat: "p100",
			want: []dp{{0, 9}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, verdict := parseStat(tc.stat)
			if verdict != statOK {
				t.Fatalf("stat %s: %v", tc.stat, verdict)
			}
			got := datapoints(aggregate(tc.points, sec(tc.start), sec(tc.end), tc.period, tc.countLike), st, now, tc.period)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i, w := range tc.want {
				if !got[i].t.Equal(sec(w.at)) || got[i].v != w.v {
					t.Fatalf("data point %d: %v %v, want +%ds %v", i, got[i].t, got[i].v, w.at, w.v)
				}
			}
		})
	}
}

func TestResolve(t *testing.T) {
	lb := dimension{DimLoadBalancer, "app/a/1"}
	tg := dimension{DimTargetGroup, "targetgroup/b/2"}
	for _, tc := range []struct {
		name, namespace, metric, unit string
		dims                          []dimension
		ok                            bool
	}{
		{"by load balancer", Namespace, RequestCount, "", []dimension{lb}, true},
		{"by target group and load balancer, any order", Namespace, RequestCount, "Count", []dimension{tg, lb}, true},
		{"target group alone is not published", Namespace, RequestCount, "", []dimension{tg}, false},
		{"no dimensions is not published", Namespace, RequestCount, "", nil, false},
		{"ELB 5xx has no target group", Namespace, HTTPCodeELB5XXCount, "", []dimension{lb, tg}, false},
		{"ELB 5xx by load balancer", Namespace, HTTPCodeELB5XXCount, "", []dimension{lb}, true},
		{"response time in seconds", Namespace, TargetResponseTime, "Seconds", []dimension{lb, tg}, true},
		{"response time in another unit has no data", Namespace, TargetResponseTime, "Milliseconds", []dimension{lb}, false},
		{"another namespace", "AWS/EC2", RequestCount, "", []dimension{lb}, false},
		{"another metric", Namespace, "ActiveConnectionCount", "", []dimension{lb}, false},
		{"an extra dimension", Namespace, RequestCount, "", []dimension{lb, {"AvailabilityZone", "us-east-1a"}}, false},
	} {
		check(t, tc.name, tc.namespace, tc.metric, tc.unit, tc.dims, tc.ok, lb, tg)
	}
}

// TestResolveNetwork: the NLB's metrics are in AWS/NetworkELB, for "net/" load balancers
// only, and an NLB's counts are not in AWS/ApplicationELB.
func TestResolveNetwork(t *testing.T) {
	lb := dimension{DimLoadBalancer, "net/a/1"}
	tg := dimension{DimTargetGroup, "targetgroup/b/2"}
	alb := dimension{DimLoadBalancer, "app/a/1"}
	for _, tc := range []struct {
		name, namespace, metric, unit string
		dims                          []dimension
		ok                            bool
	}{
		{"new flows by load balancer", NetworkNamespace, NewFlowCount, "", []dimension{lb}, true},
		{"active flows by load balancer", NetworkNamespace, ActiveFlowCount, "", []dimension{lb}, true},
		// AWS publishes an NLB's flows by LoadBalancer only: TargetGroup is not a dimension.
		{"new flows by target group", NetworkNamespace, NewFlowCount, "Count", []dimension{tg, lb}, false},
		{"active flows by target group", NetworkNamespace, ActiveFlowCount, "", []dimension{lb, tg}, false},
		{"resets by target group", NetworkNamespace, TCPELBResetCount, "", []dimension{lb, tg}, false},
		{"ELB resets", NetworkNamespace, TCPELBResetCount, "", []dimension{lb}, true},
		{"an NLB's RequestCount is not published", Namespace, RequestCount, "", []dimension{lb, tg}, false},
		{"an NLB's flows under the ALB namespace", Namespace, NewFlowCount, "", []dimension{lb}, false},
		{"an ALB's flows", NetworkNamespace, NewFlowCount, "", []dimension{alb}, false},
		{"target group alone", NetworkNamespace, NewFlowCount, "", []dimension{tg}, false},
	} {
		check(t, tc.name, tc.namespace, tc.metric, tc.unit, tc.dims, tc.ok, lb, tg)
	}
}

func check(t *testing.T, name, namespace, metric, unit string, dims []dimension, ok bool, lb, tg dimension) {
	t.Helper()
	for _, tc := range []struct {
		name, namespace, metric, unit string
		dims                          []dimension
		ok                            bool
	}{{name, namespace, metric, unit, dims, ok}} {
		s, why := resolve(tc.namespace, tc.metric, tc.dims, tc.unit)
		if (why == "") != tc.ok {
			t.Errorf("%s: resolve = %+v, %q; want ok %v", tc.name, s, why, tc.ok)
		}
		if tc.ok && (s.lb != lb.Value || (len(tc.dims) == 2 && s.tg != tg.Value)) {
			t.Errorf("%s: resolved to lb %q tg %q", tc.name, s.lb, s.tg)
		}
	}
}
