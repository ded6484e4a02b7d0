package gate

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// promServer is a real Prometheus process started for the test.
type promServer struct {
	url  string
	log  string // its output, for failure messages
	stop func()
}

// startPrometheus runs /usr/bin/prometheus on a free loopback port, scraping target every
// second, and waits until it is ready. It is stopped when the test ends, or by stop.
func startPrometheus(t *testing.T, target string) promServer {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("prometheus is not installed (%v): run scripts/deps.sh test, or apt-get install prometheus", err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	conf := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gate
    static_configs:
      - targets: [%q]
`, target)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	// The port is found free and then handed over, so another process may take it in
	// between: then Prometheus exits at once and the next port is tried.
	for attempt := range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		logPath := filepath.Join(dir, fmt.Sprintf("prometheus-%d.log", attempt))
		logFile, err := os.Create(logPath)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin,
			"--config.file="+cfg,
			"--storage.tsdb.path="+filepath.Join(dir, fmt.Sprintf("data-%d", attempt)),
			"--web.listen-address="+addr,
			"--web.console.templates="+dir, "--web.console.libraries="+dir,
			"--log.level=warn")
		cmd.Stdout, cmd.Stderr = logFile, logFile
		if err := cmd.Start(); err != nil {
			logFile.Close()
			t.Fatalf("start %s: %v", bin, err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); logFile.Close(); close(exited) }()
		var once sync.Once
		stop := func() {
			once.Do(func() {
				_ = cmd.Process.Kill()
				<-exited
			})
		}
		t.Cleanup(stop)
		p := promServer{url: "http://" + addr, log: logPath, stop: stop}
		if p.waitReady(t, exited) {
			return p
		}
		stop()
	}
	t.Fatal("prometheus did not start on a free port in 3 tries")
	return promServer{}
}

// waitReady polls /-/ready; false if the process exits first.
func (p promServer) waitReady(t *testing.T, exited <-chan struct{}) bool {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			out, _ := os.ReadFile(p.log)
			t.Logf("prometheus exited before ready:\n%s", out)
			return false
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get(p.url + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
	}
	out, _ := os.ReadFile(p.log)
	t.Fatalf("prometheus at %s not ready in 15s:\n%s", p.url, out)
	return false
}

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
	prom := startPrometheus(t, serveMetrics(t, reg))

	gate := func(g spec.PrometheusGate) *Prometheus {
		t.Helper()
		g.URL = prom.url
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
			res, err := NewResidual(spec.Retire{Prometheus: &spec.RetireQuery{URL: prom.url, Query: tc.query}})
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
		prom.stop()
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
