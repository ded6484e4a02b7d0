package dashboard

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
)

// dnsResult is what the DNS gate reports for a measured split.
func dnsResult(blue, green float64) gate.Result {
	return gate.Result{Gate: "answers", Kind: gate.KindDNS, Pass: true, Detail: "ok",
		Values: map[string]float64{"app.example.com/A.blue.share": blue, "app.example.com/A.green.share": green, "app.example.com/A.samples": 200}}
}

func weights(blue, green int64) map[string]int64 {
	return map[string]int64{"blue": blue, "green": green}
}

func state(t *testing.T, h http.Handler) State {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/state", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /api/v1/state: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	var s State
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRecorderState(t *testing.T) {
	r := NewRecorder("shop", "blue", "green")
	h := r.Handler()
	if s := state(t, h); s.Cutover != "shop" || len(s.Series.Weights) != 0 || s.Timeline == nil {
		t.Fatalf("empty state: %+v", s)
	}
	t0 := time.Now()
	r.Observe(Traffic{At: t0, Requests: map[string]int64{"blue": 100}})
	for i, w := range []map[string]int64{weights(100, 0), weights(90, 10)} {
		r.Event(cutover.Event{Phase: cutover.PhaseWriting, Step: i, Total: 3, Weights: w})
		r.Event(cutover.Event{Phase: cutover.PhaseHolding, Step: i, Total: 3, Weights: w, Left: 3 * time.Second,
			Gates: []gate.Result{dnsResult(float64(w["blue"])/100, float64(w["green"])/100)}})
	}
	r.Observe(Traffic{At: t0.Add(2 * time.Second), Requests: map[string]int64{"blue": 280, "green": 20}, Failures: 2})
	// Step 3 fails its gate and rolls back.
	r.Event(cutover.Event{Phase: cutover.PhaseWriting, Step: 2, Total: 3, Weights: weights(50, 50)})
	r.Event(cutover.Event{Phase: cutover.PhaseHolding, Step: 2, Total: 3, Weights: weights(50, 50),
		Gates: []gate.Result{{Gate: "http", Kind: gate.KindHTTP, Pass: false, Detail: "green: 3/10 ok"}}})
	r.Event(cutover.Event{Phase: cutover.PhaseRollingBack, Step: 0, Total: 1, Weights: weights(100, 0)})
	r.Event(cutover.Event{Phase: cutover.PhaseDone, Message: "rolled back: gate http: green: 3/10 ok", Weights: weights(100, 0)})

	s := state(t, h)
	var ws []float64
	for _, p := range s.Series.Weights {
		ws = append(ws, p.Values["green"])
	}
	if got := jsonOf(ws); got != "[0,10,50,0]" {
		t.Errorf("green weight series %v, want 0,10,50,0 (one point per change)", ws)
	}
	if n := len(s.Series.DNSShares); n != 2 || s.Series.DNSShares[1].Values["green"] != 10 {
		t.Errorf("dns shares %+v, want 2 points, the second green 10 %%", s.Series.DNSShares)
	}
	if n := len(s.Series.Requests); n != 1 {
		t.Fatalf("requests %+v, want 1 rate point from 2 observations", s.Series.Requests)
	}
	if v := s.Series.Requests[0].Values; v["blue"] != 90 || v["green"] != 10 || v["failures"] != 1 {
		t.Errorf("rates %v, want blue 90/s green 10/s failures 1/s", v)
	}
	var tl []string
	for _, st := range s.Timeline {
		tl = append(tl, st.Name+":"+st.Outcome)
	}
	if got := strings.Join(tl, " "); got != "step 1/3:passed step 2/3:passed step 3/3:failed rollback 1/1:held" {
		t.Errorf("timeline %s", got)
	}
	if len(s.Gates) != 2 || s.Gates[1].Gate != "http" || s.Gates[1].Pass {
		t.Errorf("gates %+v", s.Gates)
	}
	if len(s.Errors) != 2 || !strings.Contains(s.Errors[0].Message, "gate http: green: 3/10 ok") || !strings.HasPrefix(s.Errors[1].Message, "rolled back") {
		t.Errorf("errors %+v", s.Errors)
	}
	if !s.Current.Done || s.Current.Phase != cutover.PhaseDone {
		t.Errorf("current %+v", s.Current)
	}
}

// TestRequestsFromHTTPGate: without a load generator, the requests an HTTP gate sent
// through the public name, per cluster that served them, are the requests chart.
func TestRequestsFromHTTPGate(t *testing.T) {
	r := NewRecorder("shop", "blue", "green")
	r.Event(cutover.Event{Phase: cutover.PhaseHolding, Step: 0, Total: 1, Weights: weights(50, 50),
		Gates: []gate.Result{{Gate: "http", Kind: gate.KindHTTP, Pass: true, Values: map[string]float64{"public.cluster.blue": 6, "public.cluster.green": 4, "public.requests": 10}}}})
	s := state(t, r.Handler())
	if len(s.Series.Requests) != 1 || s.Series.Requests[0].Values["green"] != 4 || !strings.HasPrefix(s.RequestsSource, "http gate http") {
		t.Errorf("requests %+v from %q", s.Series.Requests, s.RequestsSource)
	}
}

// TestPageIsSelfContained: the page and its assets are served with their types and
// refer to nothing outside this server.
func TestPageIsSelfContained(t *testing.T) {
	h := NewRecorder("shop", "blue", "green").Handler()
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]`)
	for path, ctype := range map[string]string{"/": "text/html", "/assets/app.js": "javascript", "/assets/style.css": "text/css"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		body, _ := io.ReadAll(rec.Body)
		if rec.Code != 200 || !strings.Contains(rec.Header().Get("Content-Type"), ctype) {
			t.Errorf("GET %s: %d %s", path, rec.Code, rec.Header().Get("Content-Type"))
		}
		// The SVG namespace is an identifier, not a fetch.
		if m := external.FindString(strings.ReplaceAll(string(body), "http://www.w3.org/2000/svg", "")); m != "" {
			t.Errorf("%s refers to %q outside this server", path, m)
		}
	}
}

func TestServeLoopbackOnly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:8080", ":8080", "nohost"} {
		if _, _, err := Serve(ctx, addr, http.NotFoundHandler()); err == nil {
			t.Errorf("Serve(%q) accepted a non-loopback address", addr)
		}
	}
	url, wait, err := Serve(ctx, "127.0.0.1:0", NewRecorder("x", "a", "b").Handler())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(url + "api/v1/state")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET: %v", err)
	}
	resp.Body.Close()
	cancel()
	if err := wait(); err != nil {
		t.Errorf("wait: %v", err)
	}
	if _, err := http.Get(url); err == nil {
		t.Error("the server still answers after its context ended")
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
