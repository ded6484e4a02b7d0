package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/child"
	"github.com/crossfade-io/crossfade/internal/sandbox/albproxy"
	"github.com/crossfade-io/crossfade/internal/testenv"
)

// TestMain lets the test binary serve as the albproxy's process: runTo starts
// os.Executable() again, which under `go test` is this binary.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == childALBProxy {
		os.Exit(serveALBProxy())
	}
	os.Exit(m.Run())
}

// needTools skips the test in -short mode; without nginx or wrk it fails under CI=true
// and skips otherwise (testenv.LookPath).
func needTools(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: runs nginx, wrk and the albproxy")
	}
	for _, bin := range []string{"nginx", "wrk"} {
		testenv.LookPath(t, bin, bin)
	}
}

// TestEndToEnd runs the whole benchmark for a 2-second round per path and checks the
// report, the spread over the backends, and that every process it started is gone.
func TestEndToEnd(t *testing.T) {
	needTools(t)
	o, err := parseFlags([]string{"-duration", "2s", "-warmup", "0s", "-connections", "8", "-threads", "2", "-out", t.TempDir() + "/r.md"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r, err := runTo(t.Context(), o, slog.New(slog.NewTextHandler(testWriter{t: t}, nil)), &out, []string{"-duration", "2s", "-warmup", "0s", "-out", "x.md"})
	if err != nil {
		t.Fatalf("runTo: %v\n%s", err, out.String())
	}
	checkGone(t, r)
	rep := out.String()
	t.Log("\n" + rep)

	if len(r.results) != 3 {
		t.Fatalf("%d results, want direct, albproxy and nginx", len(r.results))
	}
	for _, res := range r.results {
		if !res.ok() || res.wrk.failed() != 0 || res.wrk.reqPerSec <= 0 || res.wrk.percentiles[99] <= 0 {
			t.Errorf("%s: err %v, %+v", res.name, res.err, res.wrk)
		}
		var total int64
		groups := map[string]int64{}
		for i, b := range r.backends {
			total += res.served[i]
			groups[b.group] += res.served[i]
		}
		// wrk counts only the requests answered within its run; the backends also count
		// those in flight when it stops and, through a proxy, those of the run before
		// still on their way: at most one per connection each.
		if total < res.wrk.requests || total > res.wrk.requests+2*int64(o.connections) {
			t.Errorf("%s: backends served %d, wrk counted %d", res.name, total, res.wrk.requests)
		}
		switch res.name {
		case pathDirect:
			if res.served[0] != total {
				t.Errorf("direct: requests reached other backends than %s: %v", r.backends[0].name, res.served)
			}
		default:
			// 50/50 by weight: thousands of requests land within a few percent of half.
			for g, n := range groups {
				if share := float64(n) / float64(total); share < 0.45 || share > 0.55 {
					t.Errorf("%s: group %s got %.1f %% of %d requests, want about 50 %%", res.name, g, 100*share, total)
				}
			}
		}
	}
	for _, want := range []string{
		"| path | req/s | p50 | p99 | added p50 | added p99 | proxy CPU per request | failed requests |",
		"| direct to one backend (baseline) | ",
		"| sandbox albproxy: 1 listener, forward 50/50 to 2 target groups × 2 targets | ",
		"| nginx 1.", "albproxy ÷ nginx: ",
		"The machine has ", "load average ",
		"go run ./bench/albbench -duration 2s -warmup 0s\n",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if b, err := os.ReadFile(o.out); err != nil || string(b) != rep {
		t.Errorf("-out file: %v; equal to the report: %v", err, string(b) == rep)
	}
}

// TestInterrupted cancels a run while wrk is running, as Ctrl-C does, and checks that it
// returns the cancellation and leaves no process behind.
func TestInterrupted(t *testing.T) {
	needTools(t)
	o, err := parseFlags([]string{"-duration", "30s", "-warmup", "0s", "-connections", "4", "-threads", "1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// Cancel a second into the first measured run: both proxies are up, wrk is running.
	var once sync.Once
	log := slog.New(slog.NewTextHandler(testWriter{t: t, onLine: func(line string) {
		if strings.Contains(line, "msg=measuring") {
			once.Do(func() { time.AfterFunc(time.Second, cancel) })
		}
	}}, nil))
	start := time.Now()
	var out bytes.Buffer
	r, err := runTo(ctx, o, log, &out, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("runTo = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("runTo took %s to stop after the cancel", took)
	}
	checkGone(t, r)
}

// checkGone checks that the albproxy's process and nginx's master and workers have ended:
// no process is left in their process groups.
func checkGone(t *testing.T, r *run) {
	t.Helper()
	if r == nil || r.albPID == 0 || r.nginxPID == 0 {
		t.Fatalf("the run did not get as far as starting both proxies: %+v", r)
	}
	for name, pgid := range map[string]int{"albproxy": r.albPID, "nginx": r.nginxPID} {
		if left := child.GroupMembers(pgid); len(left) > 0 {
			t.Errorf("%s: processes %v of its group %d still run", name, left, pgid)
		}
	}
}

// testWriter sends log lines to t.Log, and to onLine when set.
type testWriter struct {
	t      *testing.T
	onLine func(string)
}

func (w testWriter) Write(p []byte) (int, error) {
	line := strings.TrimRight(string(p), "\n")
	w.t.Log(line)
	if w.onLine != nil {
		w.onLine(line)
	}
	return len(p), nil
}

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{nil, ""},
		{[]string{"-duration", "3s", "-warmup", "0s", "-nginx-workers", "2"}, ""},
		{[]string{"-duration", "1500ms"}, "whole seconds"},
		{[]string{"-duration", "0s"}, "at least 1s"},
		{[]string{"-warmup", "-1s"}, "-warmup"},
		{[]string{"-threads", "8", "-connections", "4"}, "threads ≤ connections"},
		{[]string{"-nginx-workers", "two"}, "want auto or a count"},
		{[]string{"-nginx-workers", "02"}, "want auto or a count"},
		{[]string{"-nginx-keepalive", "0"}, "at least 1"},
		{[]string{"-body", "0"}, "-body"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := parseFlags(tc.args)
			if (err != nil) != (tc.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("parseFlags(%q) = %v, want an error containing %q", tc.args, err, tc.wantErr)
			}
		})
	}
}

func TestReproduce(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "go run ./bench/albbench"},
		{[]string{"-duration", "10s", "-out", "r.md", "-keep"}, "go run ./bench/albbench -duration 10s"},
		{[]string{"-out=r.md", "--connections=16", "-nginx", "/opt/my nginx"}, "go run ./bench/albbench --connections=16 -nginx '/opt/my nginx'"},
	} {
		if got := reproduce(tc.args); got != tc.want {
			t.Errorf("reproduce(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestALBConfig checks the albproxy's config against the real proxy: it must apply, and
// send half the requests to each group, round-robin within them.
func TestALBConfig(t *testing.T) {
	backends, err := startBackends([]string{"blue", "green"}, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer closeBackends(backends)
	cfg := albConfig(backends)
	if len(cfg.TargetGroups) != 2 || len(cfg.TargetGroups[0].Targets) != 2 || len(cfg.TargetGroups[1].Targets) != 2 {
		t.Fatalf("target groups: %+v", cfg.TargetGroups)
	}
	for _, w := range cfg.LoadBalancers[0].Listeners[0].DefaultAction.TargetGroups {
		if w.Weight != 50 {
			t.Errorf("weight of %s = %d, want 50", w.TargetGroupID, w.Weight)
		}
	}
	p := albproxy.New(albproxy.Options{})
	if err := p.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if err := waitHealthy(t.Context(), p, cfg); err != nil {
		t.Fatal(err)
	}
	url := "http://" + p.Addr(listenerID) + "/"
	const n = 400
	for range n {
		resp, err := httpGet(url)
		if err != nil {
			t.Fatal(err)
		}
		if resp != 200 {
			t.Fatalf("GET %s: %d", url, resp)
		}
	}
	var blue int64
	for _, b := range backends {
		if b.group == "blue" {
			blue += b.served.Load()
		}
	}
	if blue < n*35/100 || blue > n*65/100 {
		t.Errorf("blue got %d of %d requests, want about half: %v", blue, n, servedCounts(backends))
	}
}

// httpGet GETs url and returns the status, the body read to its end so that the
// connection is reused.
func httpGet(url string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

func TestShares(t *testing.T) {
	bs := []*backend{{name: "blue-1", group: "blue"}, {name: "blue-2", group: "blue"}, {name: "green-1", group: "green"}}
	for _, tc := range []struct {
		served []int64
		want   string
	}{
		{[]int64{0, 0, 0}, "none"},
		{[]int64{1, 1, 2}, "blue-1 25.0 %, blue-2 25.0 %, green-1 50.0 %; groups: blue 50.0 %, green 50.0 %"},
		{[]int64{3, 0, 0}, "blue-1 100.0 %; groups: blue 100.0 %, green 0.0 %"},
	} {
		if got := shares(bs, tc.served); got != tc.want {
			t.Errorf("shares(%v) = %q, want %q", tc.served, got, tc.want)
		}
	}
}

func TestAdded(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{612 * time.Microsecond, "612 µs"},
		{1234 * time.Microsecond, "1.23 ms"},
		{1500 * time.Millisecond, "1.50 s"},
	} {
		if got := added(tc.d); got != "+"+tc.want {
			t.Errorf("added(%v) = %q", tc.d, got)
		}
		if got := added(-tc.d); got != "−"+tc.want {
			t.Errorf("added(%v) = %q", -tc.d, got)
		}
	}
}
