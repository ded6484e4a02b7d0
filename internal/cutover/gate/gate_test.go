package gate

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

func ptr[T any](v T) *T { return &v }

func TestPercentile(t *testing.T) {
	oneToTwenty := make([]float64, 20)
	for i := range oneToTwenty {
		oneToTwenty[20-1-i] = float64(i + 1) // descending: percentile must sort a copy
	}
	for _, tc := range []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"empty", nil, 99, math.NaN()},
		{"zero percentile", []float64{1}, 0, math.NaN()},
		{"one sample", []float64{7}, 99, 7},
		{"p99 of 20 is the slowest", oneToTwenty, 99, 20},
		{"p95 of 20 is the 19th", oneToTwenty, 95, 19},
		{"p50 of 20 is the 10th", oneToTwenty, 50, 10},
		{"p100", oneToTwenty, 100, 20},
		{"tiny p is the fastest", oneToTwenty, 0.1, 1},
		{"p50 of 3", []float64{3, 1, 2}, 50, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]float64(nil), tc.xs...)
			got := percentile(tc.xs, tc.p)
			if got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
				t.Errorf("percentile(%v, %v) = %v, want %v", tc.xs, tc.p, got, tc.want)
			}
			for i := range in {
				if in[i] != tc.xs[i] {
					t.Fatalf("percentile modified its input")
				}
			}
		})
	}
	if got := percentile([]time.Duration{3 * time.Millisecond, time.Millisecond}, 99); got != float64(3*time.Millisecond) {
		t.Errorf("percentile of durations = %v", got)
	}
}

func TestExpectedShares(t *testing.T) {
	for _, tc := range []struct {
		name    string
		weights map[string]int64
		want    map[string]float64
	}{
		{"1:3", map[string]int64{"blue": 1, "green": 3}, map[string]float64{"blue": 0.25, "green": 0.75}},
		{"all to one", map[string]int64{"blue": 0, "green": 255}, map[string]float64{"blue": 0, "green": 1}},
		{"0:0 splits evenly", map[string]int64{"blue": 0, "green": 0}, map[string]float64{"blue": 0.5, "green": 0.5}},
		{"three zeros", map[string]int64{"a": 0, "b": 0, "c": 0}, map[string]float64{"a": 1.0 / 3, "b": 1.0 / 3, "c": 1.0 / 3}},
		{"90:10", map[string]int64{"blue": 90, "green": 10}, map[string]float64{"blue": 0.9, "green": 0.1}},
		{"none", map[string]int64{}, map[string]float64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := expectedShares(tc.weights)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for id, w := range tc.want {
				if math.Abs(got[id]-w) > 1e-12 {
					t.Errorf("%s: got %v, want %v", id, got[id], w)
				}
			}
		})
	}
}

func TestShares(t *testing.T) {
	got := shares(map[string]int{"blue": 50, "green": 150, "empty": 0}, 200)
	want := map[string]float64{"blue": 0.25, "green": 0.75, "empty": 0}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %v, want %v", k, got[k], v)
		}
	}
	if got := shares(map[string]int{"blue": 0}, 0); got["blue"] != 0 {
		t.Errorf("no samples: got %v, want 0", got["blue"])
	}
}

func TestMatchMember(t *testing.T) {
	members := map[string][]string{
		"blue":  {"192.0.2.1", "192.0.2.2"},
		"green": {"192.0.2.3"},
		"alb":   {"green-alb.elb.amazonaws.com"},
	}
	for _, tc := range []struct {
		name string
		vals []string
		want string
	}{
		{"exact", []string{"192.0.2.1", "192.0.2.2"}, "blue"},
		{"part of a set", []string{"192.0.2.2"}, "blue"},
		{"single", []string{"192.0.2.3"}, "green"},
		{"cname", []string{"green-alb.elb.amazonaws.com"}, "alb"},
		{"foreign", []string{"198.51.100.1"}, ""},
		{"spans members", []string{"192.0.2.1", "192.0.2.3"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := matchMember(tc.vals, members); got != tc.want {
				t.Errorf("matchMember(%v) = %q, want %q", tc.vals, got, tc.want)
			}
		})
	}
	// Identical values cannot be told apart: the exact match of the first id wins.
	dup := map[string][]string{"b": {"192.0.2.1"}, "a": {"192.0.2.1"}}
	if got := matchMember([]string{"192.0.2.1"}, dup); got != "a" {
		t.Errorf("identical members: got %q, want a", got)
	}
}

func TestCanonicalValue(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1":              "192.0.2.1",
		" 192.0.2.1 ":            "192.0.2.1",
		"::ffff:192.0.2.1":       "192.0.2.1",
		"2001:DB8:0:0::1":        "2001:db8::1",
		"Green-ALB.example.com.": "green-alb.example.com",
		"green-alb.example.com":  "green-alb.example.com",
	} {
		if got := canonicalValue(in); got != want {
			t.Errorf("canonicalValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDeviations(t *testing.T) {
	d := &DNS{tolerance: 0.1}
	want := map[string]float64{"blue": 0.5, "green": 0.5}
	for _, tc := range []struct {
		name   string
		counts map[string]int
		bad    []string
	}{
		{"exact", map[string]int{"blue": 100, "green": 100}, nil},
		{"at the tolerance", map[string]int{"blue": 80, "green": 120}, nil},
		{"beyond", map[string]int{"blue": 78, "green": 122}, []string{"blue", "green"}},
		{"1:3 read as 1:1", map[string]int{"blue": 50, "green": 150}, []string{"blue", "green"}},
		{"empties dilute every share", map[string]int{"blue": 60, "green": 60, classEmpty: 80}, []string{"blue", "green"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := &tally{counts: tc.counts}
			for _, n := range tc.counts {
				tl.total += n
			}
			got := d.deviations(tl, want)
			if strings.Join(got, ",") != strings.Join(tc.bad, ",") {
				t.Errorf("deviations = %v, want %v", got, tc.bad)
			}
		})
	}
}

func TestResultValuesEncode(t *testing.T) {
	var r Result
	r.set("ok", 1.5)
	r.set("nan", math.NaN())
	r.set("inf", math.Inf(1))
	if _, err := json.Marshal(r); err != nil {
		t.Fatalf("marshal: %v", err)
	}
	if len(r.Values) != 1 || r.Values["ok"] != 1.5 {
		t.Errorf("Values = %v, want only ok", r.Values)
	}
}

func TestFormat(t *testing.T) {
	for got, want := range map[string]string{
		fmtPct(0.955):                     "95.5%",
		fmtPct(1):                         "100%",
		fmtPct(0.25):                      "25%",
		fmtMs(400 * time.Microsecond):     "0.4ms",
		fmtMs(12345 * time.Microsecond):   "12ms",
		fmtMs(1500 * time.Millisecond):    "1500ms",
		withPort("ns1.example.com", "53"): "ns1.example.com:53",
		withPort("127.0.0.1:5353", "53"):  "127.0.0.1:5353",
		withPort("::1", "53"):             "[::1]:53",
		withPort("[::1]", "53"):           "[::1]:53",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestSingle(t *testing.T) {
	sample := func(v float64, labels model.LabelSet) *model.Sample {
		return &model.Sample{Metric: model.Metric(labels), Value: model.SampleValue(v)}
	}
	for _, tc := range []struct {
		name    string
		val     model.Value
		v       float64
		n       int
		errWant string
	}{
		{"scalar", &model.Scalar{Value: 3}, 3, 1, ""},
		{"one sample", model.Vector{sample(0.5, model.LabelSet{"job": "a"})}, 0.5, 1, ""},
		{"empty vector", model.Vector{}, 0, 0, ""},
		{"two series", model.Vector{sample(1, model.LabelSet{"job": "a"}), sample(2, model.LabelSet{"job": "b"})}, 0, 2, "aggregate"},
		{"matrix", model.Matrix{}, 0, 0, "range vector"},
		{"string", &model.String{Value: "x"}, 0, 0, "want a scalar"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, n, err := single(tc.val)
			if tc.errWant != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errWant) {
					t.Fatalf("err = %v, want one containing %q", err, tc.errWant)
				}
				return
			}
			if err != nil || v != tc.v || n != tc.n {
				t.Errorf("single = %v, %d, %v; want %v, %d", v, n, err, tc.v, tc.n)
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	u := "http://127.0.0.1:9/"
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"http nothing to probe", second(NewHTTP("h", spec.HTTPGate{})), "nothing to probe"},
		{"http bad url", second(NewHTTP("h", spec.HTTPGate{URL: "app.example.com"})), "http:// or https://"},
		{"http bad cluster url", second(NewHTTP("h", spec.HTTPGate{Clusters: map[string]string{"blue": "ftp://x"}})), "clusters[blue]"},
		{"http ratio", second(NewHTTP("h", spec.HTTPGate{URL: u, MinSuccessRatio: ptr(1.5)})), "minSuccessRatio"},
		{"http latency max", second(NewHTTP("h", spec.HTTPGate{URL: u, Latency: &spec.Latency{}})), "latency.max"},
		{"http no worse needs two", second(NewHTTP("h", spec.HTTPGate{URL: u, NoWorseThanFrom: true, Clusters: map[string]string{"blue": u}})), "noWorseThanFrom"},
		{"prom no bound", second(NewPrometheus("p", spec.PrometheusGate{URL: u, Query: "up"})), "neither min nor max"},
		{"prom empty query", second(NewPrometheus("p", spec.PrometheusGate{URL: u, Max: ptr(1.0)})), "query is empty"},
		{"prom min over max", second(NewPrometheus("p", spec.PrometheusGate{URL: u, Query: "up", Min: ptr(2.0), Max: ptr(1.0)})), "no value can pass"},
		{"prom noData", second(NewPrometheus("p", spec.PrometheusGate{URL: u, Query: "up", Max: ptr(1.0), NoData: "maybe"})), "noData"},
		// Never blind: an empty result is no measurement and cannot be told to pass.
		{"prom noData pass", second(NewPrometheus("p", spec.PrometheusGate{URL: u, Query: "up", Max: ptr(1.0), NoData: NoDataPass})),
			`gate p: noData "pass": a step would pass on no measurement; make the query answer when there is no data, e.g. "(up) or vector(0)"`},
		{"prom url", second(NewPrometheus("p", spec.PrometheusGate{URL: "localhost:9090", Query: "up", Max: ptr(1.0)})), "url"},
		{"dns tolerance", second(NewDNS("d", spec.DNSGate{Tolerance: ptr(2.0)})), "tolerance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", tc.err, tc.want)
			}
		})
	}
}

func second[T any](_ T, err error) error { return err }

func TestDefaults(t *testing.T) {
	h, err := NewHTTP("h", spec.HTTPGate{URL: "http://app.example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	if h.requests != spec.DefaultHTTPRequests || h.timeout != spec.DefaultHTTPTimeout || h.minRatio != 1 ||
		h.pct != spec.DefaultPercentile || h.slack != spec.DefaultLatencySlack {
		t.Errorf("http defaults: %+v", h)
	}
	for status, want := range map[int]bool{199: false, 200: true, 302: true, 399: true, 404: false, 500: false} {
		if h.expected(status) != want {
			t.Errorf("expected(%d) = %v, want %v", status, !want, want)
		}
	}
	d, err := NewDNS("d", spec.DNSGate{Servers: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.samples != spec.DefaultDNSSamples || d.tolerance != spec.DefaultDNSTolerance || d.Servers()[0] != "127.0.0.1:53" {
		t.Errorf("dns defaults: %+v", d)
	}
}

// A DNS gate with no servers cannot run; the engine is meant to fill them in.
func TestDNSNoServers(t *testing.T) {
	d, err := NewDNS("dns-1", spec.DNSGate{})
	if err != nil {
		t.Fatal(err)
	}
	r := d.Check(context.Background(), Step{Weights: map[string]int64{"blue": 1}, Records: []Record{{Name: "app.example.com"}}})
	if r.Pass || !strings.Contains(r.Err, "no name servers") || r.Gate != "dns-1" || r.Kind != KindDNS {
		t.Errorf("got %+v, want a failure with Err about servers", r)
	}
}

// judge is the HTTP gate's verdict on measurements; these cases need no network.
func TestHTTPJudge(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		var out []time.Duration
		for _, v := range n {
			out = append(out, time.Duration(v)*time.Millisecond)
		}
		return out
	}
	// probeOf builds a probe with n requests, ok successes at the given latencies.
	probeOf := func(label, role string, n, ok int, lat []time.Duration) *probe {
		p := &probe{label: label, role: role, requests: n, ok: ok, latencies: lat}
		if n > ok {
			p.failures = map[string]int{"HTTP 500": n - ok}
		}
		return p
	}
	for _, tc := range []struct {
		name     string
		g        spec.HTTPGate
		probes   []*probe
		pass     bool
		pending  bool
		contains []string
	}{
		{
			name:     "all good",
			g:        spec.HTTPGate{Latency: &spec.Latency{Max: spec.Duration{Duration: 100 * time.Millisecond}}},
			probes:   []*probe{probeOf("public", "", 4, 4, ms(1, 2, 3, 4))},
			pass:     true,
			contains: []string{"public: 4/4 ok, p99 4.0ms ≤ 100ms"},
		},
		{
			name:     "ratio below minimum names the failure",
			g:        spec.HTTPGate{},
			probes:   []*probe{probeOf("green", "to", 4, 2, ms(1, 1))},
			contains: []string{"green (to): 2/4 ok, want ≥ 100% (2× HTTP 500)"},
		},
		{
			name:     "ratio at the minimum passes",
			g:        spec.HTTPGate{MinSuccessRatio: ptr(0.5)},
			probes:   []*probe{probeOf("green", "to", 4, 2, ms(1, 1))},
			pass:     true,
			contains: []string{"green (to): 2/4 ok"},
		},
		{
			name:     "latency over max",
			g:        spec.HTTPGate{Latency: &spec.Latency{Percentile: 50, Max: spec.Duration{Duration: 10 * time.Millisecond}}},
			probes:   []*probe{probeOf("public", "", 4, 4, ms(5, 20, 30, 40))},
			contains: []string{"public: p50 20ms > 10ms"},
		},
		{
			name: "no worse: sub-millisecond noise is within the floor",
			g:    spec.HTTPGate{NoWorseThanFrom: true},
			probes: []*probe{
				probeOf("blue", "from", 2, 2, []time.Duration{200 * time.Microsecond, 300 * time.Microsecond}),
				probeOf("green", "to", 2, 2, []time.Duration{900 * time.Microsecond, 3 * time.Millisecond}),
			},
			pass:     true,
			contains: []string{"green vs blue: 2/2 vs 2/2 ok, p99 3.0ms vs 0.3ms (bound 5.4ms)"},
		},
		{
			name: "no worse: slower beyond slack and floor",
			g:    spec.HTTPGate{NoWorseThanFrom: true},
			probes: []*probe{
				probeOf("blue", "from", 2, 2, ms(10, 10)),
				probeOf("green", "to", 2, 2, ms(10, 18)),
			},
			contains: []string{"green (to) slower than blue (from): p99 18ms > 1.2×10ms+5.0ms"},
		},
		{
			name: "no worse: less successful",
			g:    spec.HTTPGate{NoWorseThanFrom: true, MinSuccessRatio: ptr(0.0)},
			probes: []*probe{
				probeOf("blue", "from", 4, 4, ms(1, 1, 1, 1)),
				probeOf("green", "to", 4, 3, ms(1, 1, 1)),
			},
			contains: []string{"green (to) worse than blue (from): 3/4 ok vs 4/4"},
		},
		// A bound with nothing to judge it on is pending, never passed.
		{
			name: "no worse: a from cluster with no successes gives no latency to compare",
			g:    spec.HTTPGate{NoWorseThanFrom: true, MinSuccessRatio: ptr(0.0)},
			probes: []*probe{
				probeOf("blue", "from", 4, 0, nil),
				probeOf("green", "to", 4, 4, ms(100, 100, 100, 100)),
			},
			pass: true, pending: true,
			contains: []string{"not judged yet: noWorseThanFrom: no successful request at blue (from), so no p99 of green to compare with blue's"},
		},
		{
			name: "no worse: neither cluster succeeds",
			g:    spec.HTTPGate{NoWorseThanFrom: true, MinSuccessRatio: ptr(0.0)},
			probes: []*probe{
				probeOf("blue", "from", 4, 0, nil),
				probeOf("green", "to", 4, 0, nil),
			},
			pass: true, pending: true,
			contains: []string{"no successful request at green (to) or blue (from)"},
		},
		{
			name:     "latency max with no successful request",
			g:        spec.HTTPGate{MinSuccessRatio: ptr(0.0), Latency: &spec.Latency{Max: spec.Duration{Duration: 100 * time.Millisecond}}},
			probes:   []*probe{probeOf("public", "", 4, 0, nil)},
			pass:     true,
			pending:  true,
			contains: []string{"not judged yet: public: no successful request of 4, so no p99 to bound by 100ms — public: 0/4 ok"},
		},
		{
			name:     "no latency bound: no successful request is no bound left unjudged",
			g:        spec.HTTPGate{MinSuccessRatio: ptr(0.0)},
			probes:   []*probe{probeOf("public", "", 4, 0, nil)},
			pass:     true,
			contains: []string{"public: 0/4 ok"},
		},
		{
			name: "a measured failure is not hidden by a pending bound",
			g:    spec.HTTPGate{MinSuccessRatio: ptr(0.5), Latency: &spec.Latency{Max: spec.Duration{Duration: 100 * time.Millisecond}}},
			probes: []*probe{
				probeOf("blue", "from", 4, 0, nil),
				probeOf("green", "to", 4, 4, ms(1, 1, 1, 1)),
			},
			contains: []string{"blue (from): 0/4 ok, want ≥ 50% (4× HTTP 500)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.g.URL = "http://app.example.com/"
			tc.g.Clusters = map[string]string{"blue": "http://127.0.0.10/", "green": "http://127.0.0.20/"}
			h, err := NewHTTP("http-1", tc.g)
			if err != nil {
				t.Fatal(err)
			}
			r := Result{Gate: h.Name(), Kind: KindHTTP}
			h.judge(&r, tc.probes)
			if r.Pass != tc.pass || r.Pending != tc.pending {
				t.Errorf("Pass = %v Pending = %v, want %v %v: %s", r.Pass, r.Pending, tc.pass, tc.pending, r.Detail)
			}
			for _, s := range tc.contains {
				if !strings.Contains(r.Detail, s) {
					t.Errorf("Detail %q lacks %q", r.Detail, s)
				}
			}
		})
	}
}
