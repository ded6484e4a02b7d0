package gate

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/prometheustest"
)

// serveMetrics serves reg's metrics on a loopback port until the test ends.
func serveMetrics(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serve(t, ln, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), nil)
	return ln.Addr().String()
}

// eventually runs check until it returns "" or the deadline passes.
func eventually(t *testing.T, what string, check func() string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		why := check()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not so after 15s: %s", what, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestPrometheusGate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Prometheus server; not in -short")
	}
	reg := prometheus.NewRegistry()
	value := prometheus.NewGauge(prometheus.GaugeOpts{Name: "gate_test_error_ratio", Help: "The value the gate bounds."})
	pair := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gate_test_pair", Help: "Two series."}, []string{"cluster"})
	reg.MustRegister(value, pair)
	value.Set(0.01)
	pair.WithLabelValues("blue").Set(1)
	pair.WithLabelValues("green").Set(2)
	prom := prometheustest.Start(t, serveMetrics(t, reg))

	gate := func(g spec.PrometheusGate) *Prometheus {
		t.Helper()
		g.URL = prom.URL
		p, err := NewPrometheus("prom-1", g)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(p *Prometheus) Result {
		r := p.Check(context.Background(), Step{})
		t.Logf("%s: pass=%v err=%q detail: %s", p.query, r.Pass, r.Err, r.Detail)
		return r
	}
	underMax := gate(spec.PrometheusGate{Query: "gate_test_error_ratio", Max: ptr(0.05)})
	eventually(t, "the first scrape is queryable", func() string {
		if r := run(underMax); !r.Pass {
			return r.Detail
		}
		return ""
	})

	for _, tc := range []struct {
		name    string
		g       spec.PrometheusGate
		pass    bool
		pending bool
		detail  string
	}{
		{"value under max", spec.PrometheusGate{Query: "gate_test_error_ratio", Max: ptr(0.05)}, true, false, "gate_test_error_ratio = 0.01, ≤ 0.05"},
		{"value under min", spec.PrometheusGate{Query: "gate_test_error_ratio", Min: ptr(0.5)}, false, false, "= 0.01, < 0.5"},
		{"within both", spec.PrometheusGate{Query: "gate_test_error_ratio", Min: ptr(0.0), Max: ptr(1.0)}, true, false, "≥ 0, ≤ 1"},
		{"two series", spec.PrometheusGate{Query: "gate_test_pair", Max: ptr(10.0)}, false, false, "2 series"},
		{"aggregated", spec.PrometheusGate{Query: "sum(gate_test_pair)", Max: ptr(10.0)}, true, false, "= 3"},
		{"scalar", spec.PrometheusGate{Query: "scalar(gate_test_error_ratio) * 100", Max: ptr(5.0)}, true, false, "= 1"},
		// Not a number is no measurement: pending, never pass (nor a verdict).
		{"NaN", spec.PrometheusGate{Query: "0/0", Max: ptr(1.0)}, true, true, "not judged yet: 0/0 = NaN: not a number to bound"},
		{"+Inf", spec.PrometheusGate{Query: "1/0", Max: ptr(1.0)}, true, true, "not judged yet: 1/0 = +Inf"},
		{"-Inf", spec.PrometheusGate{Query: "-1/0", Min: ptr(0.0)}, true, true, "not judged yet: -1/0 = -Inf"},
		{"range vector", spec.PrometheusGate{Query: "gate_test_error_ratio[1m]", Max: ptr(1.0)}, false, false, "range vector"},
		{"no data fails", spec.PrometheusGate{Query: "gate_test_absent", Max: ptr(1.0)}, false, false, "no data (noData: fail)"},
		{"no data that means 0, said so in the query", spec.PrometheusGate{Query: "sum(gate_test_absent) or vector(0)", Max: ptr(1.0)}, true, false, "= 0, ≤ 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(gate(tc.g))
			if r.Pass != tc.pass || r.Pending != tc.pending || r.Err != "" {
				t.Errorf("Pass = %v Pending = %v (Err %q), want %v %v: %s", r.Pass, r.Pending, r.Err, tc.pass, tc.pending, r.Detail)
			}
			if !strings.Contains(r.Detail, tc.detail) {
				t.Errorf("Detail lacks %q: %s", tc.detail, r.Detail)
			}
		})
	}
	two := run(gate(spec.PrometheusGate{Query: "gate_test_pair", Max: ptr(10.0)}))
	if !strings.Contains(two.Detail, "sum(") {
		t.Errorf("a two-series failure should suggest aggregating with sum(): %s", two.Detail)
	}

	// The retire check's rate: no series and not-a-number are errors (no measurement), never
	// a drained cluster's 0.
	t.Run("retire rate", func(t *testing.T) {
		for _, tc := range []struct {
			query string
			rate  float64
			err   string
		}{
			{"gate_test_error_ratio", 0.01, ""},
			{"sum(gate_test_absent) or vector(0)", 0, ""},
			{"sum(gate_test_absent)", 0, `retire: query "sum(gate_test_absent)": no data: no rate to judge the drain on; if no series means no requests, write (sum(gate_test_absent)) or vector(0)`},
			{"0/0", 0, `retire: query "0/0" = NaN: not a rate`},
		} {
			res, err := NewResidual(spec.Retire{Prometheus: &spec.RetireQuery{URL: prom.URL, Query: tc.query}})
			if err != nil {
				t.Fatal(err)
			}
			rate, ok, err := res.Rate(context.Background())
			switch {
			case tc.err == "" && (err != nil || !ok || rate != tc.rate):
				t.Errorf("%s: rate %v ok %v err %v, want %v", tc.query, rate, ok, err, tc.rate)
			case tc.err != "" && (ok || err == nil || err.Error() != tc.err):
				t.Errorf("%s: rate %v ok %v err %v, want the error %q", tc.query, rate, ok, err, tc.err)
			}
		}
	})

	t.Run("value raised above max", func(t *testing.T) {
		value.Set(0.2)
		eventually(t, "the raised value fails the gate", func() string {
			r := run(underMax)
			if r.Pass || r.Values["value"] != 0.2 {
				return r.Detail
			}
			if !strings.Contains(r.Detail, "= 0.2, > 0.05") {
				t.Errorf("Detail: %s", r.Detail)
			}
			return ""
		})
	})

	t.Run("server stopped", func(t *testing.T) {
		prom.Stop()
		r := run(underMax)
		if r.Pass || r.Err == "" || !strings.Contains(r.Err, "connection refused") {
			t.Errorf("want a failure with Err: %+v", r)
		}
	})
}

// A Check honours its context: a server that never answers cannot hold it.
func TestPrometheusGateContext(t *testing.T) {
	if testing.Short() {
		t.Skip("serves on loopback; not in -short")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serve(t, ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }), nil)
	p, err := NewPrometheus("prom-1", spec.PrometheusGate{URL: "http://" + ln.Addr().String(), Query: "up", Max: ptr(1.0)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := p.Check(ctx, Step{})
	if r.Pass || !strings.Contains(r.Err, "deadline exceeded") || time.Since(start) > 2*time.Second {
		t.Errorf("want an Err about the deadline within 2s, got %+v after %s", r, time.Since(start))
	}
}
