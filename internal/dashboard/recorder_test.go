package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
)

// t0 is the fake clock's start; each clock tick is one second.
var t0 = time.Date(2026, 11, 23, 4, 32, 0, 0, time.UTC)

// clock is a fake time.Now that moves one second per call of tick.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Second)
}

// dnsResult is what the DNS gate reports for a measured split of one record.
func dnsResult(blue, green float64) gate.Result {
	return gate.Result{Gate: "answers", Kind: gate.KindDNS, Pass: true, Detail: "ok",
		Values: map[string]float64{"app.example.com/A.blue.share": blue, "app.example.com/A.green.share": green,
			"app.example.com/A.blue.expected": 0.5, "app.example.com/A.samples": 200}}
}

func httpResult(pass bool, detail string, blue, green float64) gate.Result {
	return gate.Result{Gate: "probe", Kind: gate.KindHTTP, Pass: pass, Detail: detail,
		Values: map[string]float64{"public.cluster.blue": blue, "public.cluster.green": green, "public.requests": blue + green}}
}

func weights(blue, green int64) map[string]int64 {
	return map[string]int64{"blue": blue, "green": green}
}

// getState fetches and decodes GET /api/v1/state from h.
func getState(t *testing.T, h http.Handler) State {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/state", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /api/v1/state: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	var s State
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
		t.Fatalf("decode state: %v\n%s", err, rec.Body)
	}
	return s
}

// TestRecorderState feeds the events the engine sends for a 3-step cutover whose third
// step fails its HTTP gate and rolls back through two stops, with client traffic, and
// checks every part of the state document.
func TestRecorderState(t *testing.T) {
	c := &clock{now: t0}
	r := newRecorder("shop", "blue", "green", c.Now)
	h := r.Handler()
	if s := getState(t, h); s.Cutover != "shop" || s.Version != 1 || len(s.Series.Weights) != 0 || s.Timeline == nil {
		t.Fatalf("empty state: %+v", s)
	}
	ev := func(e cutover.Event) { r.Event(e); c.tick() }
	obs := func(at time.Duration, blue, green, failures int64) {
		r.Observe(Traffic{At: t0.Add(at), Requests: map[string]int64{"blue": blue, "green": green}, Failures: failures})
	}

	ev(cutover.Event{Phase: cutover.PhaseLoweringTTL, Message: "lower TTL to 60s"})
	ev(cutover.Event{Phase: cutover.PhaseLoweringTTL, Left: time.Minute, Message: "TTL lowered to 60s; waiting out the old 5m0s"})
	obs(0, 100, 0, 0)
	for i, w := range []map[string]int64{weights(100, 0), weights(90, 10)} {
		ev(cutover.Event{Phase: cutover.PhaseWriting, Step: i, Total: 3, Weights: w, Message: fmt.Sprintf("step %d of 3", i+1)})
		ev(cutover.Event{Phase: cutover.PhaseHolding, Step: i, Total: 3, Weights: w, Left: 3 * time.Second,
			Gates: []gate.Result{dnsResult(float64(w["blue"])/100, float64(w["green"])/100), httpResult(true, "ok", float64(w["blue"])/10, float64(w["green"])/10)}})
	}
	ev(cutover.Event{Phase: cutover.PhasePaused, Step: 1, Total: 3, Weights: weights(90, 10), Message: "paused: crossfade cutover resume to go on"})
	if s := getState(t, h); s.Timeline[len(s.Timeline)-1].Outcome != "paused" || s.Current.Phase != "paused" || s.Current.Step != 2 {
		t.Errorf("while paused: current %+v, timeline %+v", s.Current, s.Timeline)
	}
	// Two seconds of traffic: 180 to blue, 20 to green, 2 failures.
	obs(2*time.Second, 280, 20, 2)
	// Step 3 fails its HTTP gate: the engine shows the failed check, then rolls back
	// through two stops, each written and held.
	ev(cutover.Event{Phase: cutover.PhaseWriting, Step: 2, Total: 3, Weights: weights(50, 50), Message: "step 3 of 3"})
	failed := httpResult(false, "green: 3/10 ok", 5, 5)
	failed.Err = "connection refused"
	ev(cutover.Event{Phase: cutover.PhaseHolding, Step: 2, Total: 3, Weights: weights(50, 50), Gates: []gate.Result{dnsResult(0.5, 0.5), failed}})
	reason := "gate probe: green: 3/10 ok (connection refused)"
	retry := "rollback 2 of 2: write failed transiently (AWS throttling or errors beyond the SDK's retries) at attempt 1, failing for 20ms: retrying in 1s (a rollback retries until it lands)"
	for k, w := range []map[string]int64{weights(90, 10), weights(100, 0)} {
		ev(cutover.Event{Phase: cutover.PhaseRollingBack, Step: k, Total: 2, Weights: w, Message: reason})
		if k == 1 { // the second stop's write is throttled once: a problem, not a new stage or reason
			ev(cutover.Event{Phase: cutover.PhaseRollingBack, Step: k, Total: 2, Weights: w, Message: retry, Retrying: true})
		}
		ev(cutover.Event{Phase: cutover.PhaseRollingBack, Step: k, Total: 2, Weights: w, Left: time.Second, Message: reason})
	}
	ev(cutover.Event{Phase: cutover.PhaseRestoringTTL, Message: "restore TTL to 300s"})
	ev(cutover.Event{Phase: cutover.PhaseDone, Message: "rolled back: " + reason, Weights: weights(100, 0)})

	s := getState(t, h)
	var greens []string
	for _, p := range s.Series.Weights {
		greens = append(greens, fmt.Sprint(p.Values["green"]))
	}
	if got := strings.Join(greens, ","); got != "0,10,50,10,0" {
		t.Errorf("green weight series %s, want 0,10,50,10,0 (one point per change)", got)
	}
	if n := len(s.Series.DNSShares); n != 3 {
		t.Errorf("dns shares: %d points, want 3 (steps 1 and 2, and step 3's failing check)", n)
	} else if v := s.Series.DNSShares[1].Values; v["blue"] != 90 || v["green"] != 10 || len(v) != 2 {
		t.Errorf("dns shares %v, want blue 90 green 10 (percent of answers)", v)
	}
	if s.RequestsSource != SourceClients || len(s.Series.Requests) != 1 {
		t.Fatalf("requests from %q: %+v, want 1 rate point from 2 observations (gate counts dropped)", s.RequestsSource, s.Series.Requests)
	}
	if v := s.Series.Requests[0].Values; v["blue"] != 90 || v["green"] != 10 || v["failures"] != 1 {
		t.Errorf("rates %v, want blue 90/s green 10/s failures 1/s", v)
	}
	var tl []string
	for _, st := range s.Timeline {
		tl = append(tl, st.Name+":"+st.Outcome)
		if st.Ended.IsZero() || st.Ended.Before(st.Started) {
			t.Errorf("stage %s: started %s ended %s", st.Name, st.Started, st.Ended)
		}
	}
	want := "lower TTL:done step 1/3:passed step 2/3:passed step 3/3:rolled back rollback 1/2:held rollback 2/2:held restore TTL:done"
	if got := strings.Join(tl, " "); got != want {
		t.Errorf("timeline\n got %s\nwant %s", got, want)
	}
	if st := s.Timeline[1]; !st.Started.Equal(t0.Add(2*time.Second)) || !st.Ended.Equal(t0.Add(4*time.Second)) || st.Weights["blue"] != 100 {
		t.Errorf("step 1: %+v", st)
	}
	if len(s.Gates) != 2 || s.Gates[0].Gate != "answers" || !s.Gates[0].Pass || s.Gates[1].Gate != "probe" || s.Gates[1].Pass ||
		s.Gates[1].Detail != "green: 3/10 ok" || s.Gates[1].Err != "connection refused" {
		t.Errorf("gates %+v, want answers passing and probe failed as its last check said", s.Gates)
	}
	if len(s.Errors) != 3 || s.Errors[0].Gate != "probe" || s.Errors[0].Message != reason ||
		s.Errors[1].Gate != "probe" || s.Errors[1].Message != "rolling back: "+reason || s.Errors[2].Message != retry {
		t.Errorf("errors %+v, want the failed check, then the rollback reason once, both under the gate, then the retry", s.Errors)
	}
	cur := s.Current
	if !cur.Done || !cur.RolledBack || cur.Phase != cutover.PhaseDone || cur.Step != 3 || cur.Total != 3 || cur.Weights["green"] != 0 {
		t.Errorf("current %+v", cur)
	}
}

func TestStageOf(t *testing.T) {
	for _, tc := range []struct {
		e          cutover.Event
		name, kind string
	}{
		{cutover.Event{Phase: cutover.PhaseWriting, Step: 1, Total: 4}, "step 2/4", kindStep},
		{cutover.Event{Phase: cutover.PhaseHolding, Step: 3, Total: 4}, "step 4/4", kindStep},
		{cutover.Event{Phase: cutover.PhasePaused, Step: 0, Total: 4}, "step 1/4", kindStep},
		{cutover.Event{Phase: cutover.PhaseRollingBack, Step: 0, Total: 2}, "rollback 1/2", kindRollback},
		{cutover.Event{Phase: cutover.PhaseRollingBack, Step: 1, Total: 3, Message: "gate g: failed"}, "rollback 2/3", kindRollback},
		{cutover.Event{Phase: cutover.PhaseLoweringTTL, Message: "lower TTL to 60s"}, "lower TTL", kindTTL},
		{cutover.Event{Phase: cutover.PhaseLoweringTTL, Message: "TTL lowered"}, "lower TTL", kindTTL},
		{cutover.Event{Phase: cutover.PhaseRestoringTTL, Message: "restore TTL to 300s"}, "restore TTL", kindTTL},
		{cutover.Event{Phase: cutover.PhaseRetiring, Message: "waiting for blue to drain"}, "retire", kindRetire},
		{cutover.Event{Phase: cutover.PhaseWriting, Message: "something new"}, "something new", kindOther},
		{cutover.Event{Phase: "odd"}, "odd", kindOther},
	} {
		if name, kind := stageOf(tc.e); name != tc.name || kind != tc.kind {
			t.Errorf("stageOf(%+v) = %q, %q; want %q, %q", tc.e, name, kind, tc.name, tc.kind)
		}
	}
}

func TestDNSShares(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]float64
		want   map[string]float64
	}{
		{"one record", map[string]float64{"a.example.com/A.blue.share": 0.9, "a.example.com/A.green.share": 0.1, "a.example.com/A.samples": 200},
			map[string]float64{"blue": 90, "green": 10}},
		{"averaged over records", map[string]float64{"a.example.com/A.blue.share": 0.8, "a.example.com/AAAA.blue.share": 0.6,
			"a.example.com/A.green.share": 0.2, "a.example.com/AAAA.green.share": 0.4}, map[string]float64{"blue": 70, "green": 30}},
		{"set identifier with dots", map[string]float64{"a.example.com/CNAME.eks-1.31.share": 1}, map[string]float64{"eks-1.31": 100}},
		{"no shares", map[string]float64{"empty": 0, "other": 3}, map[string]float64{}},
		{"nil", nil, map[string]float64{}},
	} {
		got := dnsShares(tc.values)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestObserveRates(t *testing.T) {
	for _, tc := range []struct {
		name   string
		obs    []Traffic
		points int
		last   map[string]float64
	}{
		{"one observation, no rate", []Traffic{{At: t0, Requests: map[string]int64{"blue": 5}}}, 0, nil},
		{"rates over 2 s, absent cluster at 0", []Traffic{{At: t0, Requests: map[string]int64{"blue": 10}},
			{At: t0.Add(2 * time.Second), Requests: map[string]int64{"blue": 30}, Failures: 4}},
			1, map[string]float64{"blue": 10, "green": 0, "failures": 2}},
		{"counter reset counts as 0", []Traffic{{At: t0, Requests: map[string]int64{"blue": 50, "green": 50}, Failures: 9},
			{At: t0.Add(time.Second), Requests: map[string]int64{"blue": 3, "green": 60}}},
			1, map[string]float64{"blue": 0, "green": 10, "failures": 0}},
		{"same instant is a new baseline", []Traffic{{At: t0, Requests: map[string]int64{"green": 1}},
			{At: t0, Requests: map[string]int64{"green": 5}}, {At: t0.Add(time.Second), Requests: map[string]int64{"green": 8}}},
			1, map[string]float64{"blue": 0, "green": 3, "failures": 0}},
		{"third cluster", []Traffic{{At: t0, Requests: map[string]int64{"red": 0}}, {At: t0.Add(time.Second), Requests: map[string]int64{"red": 7}}},
			1, map[string]float64{"blue": 0, "green": 0, "red": 7, "failures": 0}},
	} {
		r := newRecorder("x", "blue", "green", func() time.Time { return t0 })
		for _, o := range tc.obs {
			r.Observe(o)
		}
		s := getState(t, r.Handler())
		if len(s.Series.Requests) != tc.points {
			t.Errorf("%s: %d points, want %d", tc.name, len(s.Series.Requests), tc.points)
			continue
		}
		if tc.points > 0 {
			if got := s.Series.Requests[tc.points-1].Values; fmt.Sprint(got) != fmt.Sprint(tc.last) {
				t.Errorf("%s: last point %v, want %v", tc.name, got, tc.last)
			}
		}
	}
}

// TestRequestsFromHTTPGate: without a load generator, the requests an HTTP gate sent
// through the public name, per cluster that served them, are the requests chart; the
// first Observe replaces them.
func TestRequestsFromHTTPGate(t *testing.T) {
	r := NewRecorder("shop", "blue", "green")
	for range 2 {
		r.Event(cutover.Event{Phase: cutover.PhaseHolding, Step: 0, Total: 1, Weights: weights(50, 50),
			Gates: []gate.Result{httpResult(true, "ok", 6, 4)}})
	}
	s := getState(t, r.Handler())
	if len(s.Series.Requests) != 2 || s.Series.Requests[1].Values["green"] != 4 || s.RequestsSource != SourceGate || s.RequestsGate != "probe" {
		t.Errorf("requests %+v from %q %q", s.Series.Requests, s.RequestsSource, s.RequestsGate)
	}
	r.Observe(Traffic{At: time.Now(), Requests: map[string]int64{"blue": 1}})
	r.Event(cutover.Event{Phase: cutover.PhaseHolding, Step: 0, Total: 1, Gates: []gate.Result{httpResult(true, "ok", 6, 4)}})
	if s := getState(t, r.Handler()); len(s.Series.Requests) != 0 || s.RequestsSource != SourceClients {
		t.Errorf("after Observe: requests %+v from %q, want none yet from clients", s.Series.Requests, s.RequestsSource)
	}
}

// TestCaps: series keep their last maxPoints points and errors their last maxErrors.
func TestCaps(t *testing.T) {
	r := NewRecorder("shop", "blue", "green")
	for i := range maxPoints + 100 {
		r.Observe(Traffic{At: t0.Add(time.Duration(i) * time.Second), Requests: map[string]int64{"blue": int64(i)}})
		r.Event(cutover.Event{Phase: cutover.PhaseHolding, Step: 0, Total: 1,
			Gates: []gate.Result{{Gate: "g", Kind: gate.KindPrometheus, Detail: fmt.Sprintf("error rate %d", i)}}})
	}
	s := getState(t, r.Handler())
	if n := len(s.Series.Requests); n != maxPoints {
		t.Errorf("%d request points, want %d", n, maxPoints)
	}
	if n := len(s.Errors); n != maxErrors || s.Errors[n-1].Message != fmt.Sprintf("gate g: error rate %d", maxPoints+99) {
		t.Errorf("%d errors ending %+v, want the last %d", n, s.Errors[n-1], maxErrors)
	}
}

// TestEnded: the document says when the cutover ended (its done event), and nothing
// before; a later event does not move it.
func TestEnded(t *testing.T) {
	c := &clock{now: t0}
	r := newRecorder("shop", "blue", "green", c.Now)
	r.Event(cutover.Event{Phase: cutover.PhaseWriting, Step: 0, Total: 1, Weights: weights(0, 100)})
	c.tick()
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/state", nil))
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["ended"]; ok {
		t.Errorf("a running cutover's document has ended: %s", rec.Body)
	}
	r.Event(cutover.Event{Phase: cutover.PhaseDone, Message: "cutover completed", Total: 1})
	c.tick()
	r.Event(cutover.Event{Phase: cutover.PhaseDone, Message: "cutover completed", Total: 1})
	if s := getState(t, r.Handler()); !s.Ended.Equal(t0.Add(time.Second)) {
		t.Errorf("ended %s, want the first done event's time %s", s.Ended, t0.Add(time.Second))
	}
}

// TestCapKeepsTheCutover: once the cutover has ended, however long the clients go on
// reporting (demo --keep), the requests series keeps the cutover's points and the newest
// after it; only a cutover that filled the series gives up its oldest points, to leave
// tailPoints for the time since.
func TestCapKeepsTheCutover(t *testing.T) {
	for _, tc := range []struct {
		name string
		// during is the number of observations a second apart while the cutover runs.
		during int
		// wantCutover is the number of the cutover's points kept.
		wantCutover int
	}{
		{"a short cutover", 60, 59},
		{"a cutover that filled the series", maxPoints + 50, maxPoints - tailPoints},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{now: t0}
			r := newRecorder("shop", "blue", "green", c.Now)
			var n int64
			observe := func() {
				n += 100
				r.Observe(Traffic{At: c.Now(), Requests: map[string]int64{"green": n}})
				c.tick()
			}
			for range tc.during {
				observe()
			}
			r.Event(cutover.Event{Phase: cutover.PhaseDone, Message: "cutover completed"})
			c.tick()
			lastDuring := getState(t, r.Handler()).Series.Requests
			for range 3 * maxPoints {
				observe()
			}
			s := getState(t, r.Handler())
			pts := s.Series.Requests
			if len(pts) != maxPoints {
				t.Fatalf("%d points, want %d", len(pts), maxPoints)
			}
			kept := 0
			for kept < len(pts) && !pts[kept].T.After(s.Ended) {
				kept++
			}
			if kept != tc.wantCutover {
				t.Errorf("%d of the cutover's points kept, want %d", kept, tc.wantCutover)
			}
			// The cutover's points kept are its newest, the tail's its newest.
			if kept == 0 || kept > len(lastDuring) {
				t.Fatalf("%d of the cutover's points kept, of %d", kept, len(lastDuring))
			}
			if want := lastDuring[len(lastDuring)-kept:]; !pts[0].T.Equal(want[0].T) {
				t.Errorf("the first point is from %s, want %s", pts[0].T, want[0].T)
			}
			if last := pts[len(pts)-1].T; !last.Equal(c.Now().Add(-time.Second)) {
				t.Errorf("the last point is from %s, want the last observation's %s", last, c.Now().Add(-time.Second))
			}
			for i := 1; i < len(pts); i++ {
				if !pts[i].T.After(pts[i-1].T) {
					t.Fatalf("points out of order at %d: %s after %s", i, pts[i].T, pts[i-1].T)
				}
			}
		})
	}
}

// TestStateDocument: the document's names, RFC 3339 times, and arrays that are never null.
func TestStateDocument(t *testing.T) {
	rec := httptest.NewRecorder()
	NewRecorder("shop", "blue", "green").Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/state", nil))
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "cutover", "from", "to", "lever", "started", "now", "current", "series", "requestsSource", "timeline", "gates", "errors", "targetHealth"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("no %q in %s", k, rec.Body)
		}
	}
	if _, err := time.Parse(time.RFC3339, doc["now"].(string)); err != nil {
		t.Errorf("now: %v", err)
	}
	body := rec.Body.String()
	for _, k := range []string{`"timeline":[]`, `"gates":[]`, `"errors":[]`, `"weights":[]`, `"dnsShares":[]`, `"requests":[]`, `"weights":{}`,
		`"albShares":[]`, `"clientShares":[]`, `"targetHealth":[]`, `"lever":""`} {
		if !strings.Contains(body, k) {
			t.Errorf("no %s in %s", k, body)
		}
	}
	if rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", rec.Header().Get("Cache-Control"))
	}
}

// TestConcurrent runs the runner, a load generator and the page at once (meaningful
// under -race).
func TestConcurrent(t *testing.T) {
	r := NewRecorder("shop", "blue", "green")
	h := r.Handler()
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 200 {
			r.Event(cutover.Event{Phase: cutover.PhaseHolding, Step: i % 4, Total: 4, Weights: weights(int64(100-i%100), int64(i%100)),
				Gates: []gate.Result{dnsResult(0.5, 0.5), trafficResult(0.5, 100, false), healthResult(map[string][2]int{"blue": {2, 2}})}})
		}
	})
	wg.Go(func() {
		for i := range 200 {
			r.Observe(Traffic{At: t0.Add(time.Duration(i) * time.Second), Requests: map[string]int64{"blue": int64(i)}})
		}
	})
	for range 50 {
		getState(t, h)
	}
	wg.Wait()
}

// TestPageIsSelfContained: the page and its assets are served with their types and
// refer to nothing outside this server.
func TestPageIsSelfContained(t *testing.T) {
	h := NewRecorder("shop", "blue", "green").Handler()
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9-]+(\.[a-z0-9-]+)+`)
	for _, tc := range []struct{ path, ctype, has string }{
		{"/", "text/html", `id="chart-weights"`},
		{"/assets/app.js", "text/javascript", "api/v1/state"},
		{"/assets/style.css", "text/css", "body"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		body, _ := io.ReadAll(rec.Body)
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), tc.ctype) {
			t.Errorf("GET %s: %d %q, want %s", tc.path, rec.Code, rec.Header().Get("Content-Type"), tc.ctype)
		}
		if !strings.Contains(string(body), tc.has) {
			t.Errorf("GET %s: no %q in it", tc.path, tc.has)
		}
		// The SVG namespace is an identifier, not a fetch.
		if m := external.FindString(strings.ReplaceAll(string(body), "http://www.w3.org/2000/svg", "")); m != "" {
			t.Errorf("%s refers to %q outside this server", tc.path, m)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/nothing", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("GET /nothing: %d", rec.Code)
	}
}

func TestServeLoopbackOnly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:8080", ":8080", "[::]:0", "example.com:80", "nohost"} {
		if _, _, err := Serve(ctx, addr, http.NotFoundHandler()); err == nil || !strings.Contains(err.Error(), "dashboard: address") {
			t.Errorf("Serve(%q) = %v, want a refusal", addr, err)
		}
	}
	url, wait, err := Serve(ctx, "127.0.0.1:0", NewRecorder("x", "a", "b").Handler())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/") {
		t.Errorf("url %q", url)
	}
	resp, err := http.Get(url + "api/v1/state")
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET: %s", resp.Status)
	}
	// A page elsewhere that rebinds its name to 127.0.0.1 is refused.
	req, _ := http.NewRequest("GET", url+"api/v1/state", nil)
	req.Host = "attacker.example"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("Host attacker.example: %v %v, want 421", resp, err)
	} else {
		resp.Body.Close()
	}
	cancel()
	if err := wait(); err != nil {
		t.Errorf("wait: %v", err)
	}
	if _, err := http.Get(url); err == nil {
		t.Error("the server still answers after its context ended")
	}
}
