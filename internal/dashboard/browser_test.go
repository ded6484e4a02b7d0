package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
)

// charts are the page's chart SVGs, by the ids a test reads.
var charts = [...]string{"chart-weights", "chart-dns", "chart-requests"}

// pageView is what the page shows at a moment, read from its data attributes.
type pageView struct {
	step, phase string
	points      map[string]int
	// lastWeights is the weights chart's last point: percent per cluster.
	lastWeights map[string]float64
}

// TestPageInChromium loads the page in real headless Chromium while a synthetic cutover
// 0 → 10 → 50 → 100 % runs, and checks that the charts and the step advance with it; then,
// after half an hour of idle traffic (a demo kept up), that the cutover still spans most of
// the requests chart. Screenshots (dashboard-step2.png, dashboard-done.png,
// dashboard-idle.png) go to $CROSSFADE_ARTIFACTS, else to the test's temporary directory.
func TestPageInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Chromium; not under -short")
	}
	browser := chromium(t)
	artifacts := os.Getenv("CROSSFADE_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatalf("artifacts: %v", err)
	}

	c := &clock{now: time.Now().Truncate(time.Second)}
	rec := newRecorder("shop", "blue", "green", c.Now)
	bctx := openPage(t, browser, rec.Handler())

	run := syntheticCutover(rec, c)
	run(0, 0)
	run(1, 10)
	early := readPage(t, bctx, "2", 2, filepath.Join(artifacts, "dashboard-step2.png"))
	run(2, 50)
	run(3, 100)
	rec.Event(cutover.Event{Phase: cutover.PhaseDone, Message: "cutover completed", Total: 4, Weights: weights(0, 100)})
	late := readPage(t, bctx, "4", 4, filepath.Join(artifacts, "dashboard-done.png"))
	done := rec.snapshot()
	// The cutover's requests are the points recorded up to its end.
	cutoverPoints := len(done.Series.Requests)

	// The page stays up (demo --keep) while the clients go on for half an hour, over a
	// hundred times the cutover's length: the cutover must still fill most of the chart.
	idleTraffic(rec, c, 30*time.Minute)
	idle := readChart(t, bctx, "chart-requests", len(rec.snapshot().Series.Requests), filepath.Join(artifacts, "dashboard-idle.png"))
	if len(idle.xs) < cutoverPoints || cutoverPoints < 2 {
		t.Fatalf("the requests chart draws %d points, the cutover alone had %d", len(idle.xs), cutoverPoints)
	}
	// The chart's scale over the cutover, from its drawn points, times the cutover's
	// length (from the recorder's start to its end) is the width the cutover takes.
	first, last := done.Series.Requests[0].T, done.Series.Requests[cutoverPoints-1].T
	perSecond := (idle.xs[cutoverPoints-1] - idle.xs[0]) / last.Sub(first).Seconds()
	share := perSecond * done.Ended.Sub(done.Started).Seconds() / (idle.right - idle.left)
	t.Logf("after 30 min idle the cutover (%s) spans %.0f%% of the requests chart's width (cut at x=%q)",
		done.Ended.Sub(done.Started), 100*share, idle.cut)
	if share < 0.75 {
		t.Errorf("after 30 min idle the cutover spans %.1f%% of the requests chart's width, want most of it (≥ 75%%)", 100*share)
	}
	if idle.cut == "" {
		t.Errorf("no cut drawn between the cutover and its idle tail")
	}

	t.Logf("at step 2: %+v; at the end: %+v", early, late)
	if early.step != "2" || late.step != "4" || late.phase != cutover.PhaseDone {
		t.Errorf("data-step %s then %s, data-phase at the end %q; want 2, 4, done", early.step, late.step, late.phase)
	}
	for _, id := range charts {
		if early.points[id] == 0 || late.points[id] <= early.points[id] {
			t.Errorf("%s: %d points at step 2, %d at the end: it did not advance", id, early.points[id], late.points[id])
		}
	}
	if late.lastWeights["green"] != 100 || late.lastWeights["blue"] != 0 {
		t.Errorf("weights chart ends at %v, want green 100 %%", late.lastWeights)
	}
}

// TestTimeAxis checks the page's time axis (timeAxis in app.js), evaluated in Chromium: it
// follows now while the cutover runs; once it has ended, the cutover keeps most of the
// width however long the idle after it (a long idle is cut and compressed), the axis stays
// linear until then, and the cut appears without a jump.
func TestTimeAxis(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Chromium; not under -short")
	}
	browser := chromium(t)
	bctx := openPage(t, browser, NewRecorder("shop", "blue", "green").Handler())
	const left, right = 44.0, 490.0
	const s = 1000.0 // ms
	type axis struct {
		Cut *struct{ T, X float64 }
		// Xs are the x of the cutover's start, its end, and now.
		Xs [3]float64
	}
	eval := func(t *testing.T, ended, now float64) axis {
		t.Helper()
		endedJS := "NaN"
		if ended >= 0 {
			endedJS = fmt.Sprint(ended)
		}
		var a axis
		expr := fmt.Sprintf(`(() => { const a = timeAxis(0, %s, %v, %v, %v);
			return { Cut: a.cut && { T: a.cut.t, X: a.cut.x }, Xs: [a.x(0), a.x(%v), a.x(%v)] }; })()`,
			endedJS, now, left, right, max(ended, 0), now)
		if err := chromedp.Run(bctx, chromedp.Evaluate(expr, &a)); err != nil {
			t.Fatalf("timeAxis: %v", err)
		}
		return a
	}
	for _, tc := range []struct {
		name       string
		ended, now float64 // ms after the start; ended < 0: running
		// share is the least share of the width from start to ended (to now while running).
		share float64
		cut   bool
	}{
		{"running", -1, 20 * s, 1, false},
		{"running long", -1, 3600 * s, 1, false},
		{"ended as it started", 0, 3600 * s, 0, false},
		{"just ended", 20 * s, 21 * s, 0.95, false},
		{"a short idle stays linear", 20 * s, 24 * s, 20.0 / 24, false},
		{"idle past the tail's share", 20 * s, 30 * s, 0.8, true},
		{"idle 30 min", 20 * s, 1800 * s, 0.8, true},
		{"idle a day after a 5 s cutover", 5 * s, 86400 * s, 0.8, true},
		{"idle a day after an hour's cutover", 3600 * s, 86400 * s, 0.8, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := eval(t, tc.ended, tc.now)
			if a.Xs[0] != left || a.Xs[2] != right {
				t.Errorf("start at x=%v, now at x=%v; want %v and %v", a.Xs[0], a.Xs[2], left, right)
			}
			end := a.Xs[1]
			if tc.ended < 0 {
				end = a.Xs[2]
			}
			if share := (end - a.Xs[0]) / (right - left); share < tc.share-1e-9 {
				t.Errorf("the cutover spans %.3f of the width, want ≥ %.3f", share, tc.share)
			}
			if (a.Cut != nil) != tc.cut {
				t.Errorf("cut %+v, want a cut: %v", a.Cut, tc.cut)
			}
			if a.Cut != nil && !(a.Cut.T > tc.ended && a.Xs[1] < a.Cut.X && a.Cut.X < right) {
				t.Errorf("cut %+v, want after the end (t %v, x %v) and left of now", a.Cut, tc.ended, a.Xs[1])
			}
		})
	}
	t.Run("the cut appears without a jump", func(t *testing.T) {
		// The end's x, as the idle grows a tenth of a second at a time across the moment
		// the cut appears, moves left by little each time and never back.
		prev := eval(t, 20*s, 24*s).Xs[1]
		for now := 24.0 * s; now <= 26*s; now += 100 {
			x := eval(t, 20*s, now).Xs[1]
			if x > prev || prev-x > 2 {
				t.Fatalf("at now=%v ms the end moved from x=%.2f to x=%.2f", now, prev, x)
			}
			prev = x
		}
	})
}

// openPage serves h on loopback and opens its page in headless Chromium; it returns the
// browser's context. The browser and the server stop when the test ends.
func openPage(t *testing.T, browser string, h http.Handler) context.Context {
	t.Helper()
	// Cleanups run last-in first-out: the browser closes, then the server stops.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	url, wait, err := Serve(ctx, "127.0.0.1:0", h)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := wait(); err != nil {
			t.Errorf("server: %v", err)
		}
	})
	profile := userDataDir(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 800))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel) // closes the browser, even when the test fails
	if err := chromedp.Run(bctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("load %s in %s: %v", url, browser, err)
	}
	return bctx
}

// idleTraffic is the clients going on after the cutover, 100 requests a second on green:
// the clock jumps idle ahead, then two observations a second apart.
func idleTraffic(rec *Recorder, c *clock, idle time.Duration) {
	rec.mu.Lock()
	counts := maps.Clone(rec.last.Requests)
	rec.mu.Unlock()
	c.mu.Lock()
	c.now = c.now.Add(idle)
	c.mu.Unlock()
	counts["green"] += 100 * int64(idle.Seconds())
	for range 2 {
		rec.Observe(Traffic{At: c.Now(), Requests: maps.Clone(counts)})
		c.tick()
		counts["green"] += 100
	}
}

// chartView is a chart's drawing: the plot's left and right edge, its cut ("" for none),
// and the x of each point of its "green" line.
type chartView struct {
	left, right float64
	cut         string
	xs          []float64
}

// readChart waits until chart id draws points points, reads it, and saves a PNG.
func readChart(t *testing.T, ctx context.Context, id string, points int, shot string) chartView {
	t.Helper()
	var raw struct {
		Left, Right float64
		Cut         string
		Line        string
	}
	var png []byte
	read := fmt.Sprintf(`(() => { const svg = document.getElementById(%q), axis = svg.querySelector("line.axis");
		const line = svg.querySelector('polyline[data-key="green"]');
		return { Left: +axis.getAttribute("x1"), Right: +axis.getAttribute("x2"), Cut: svg.dataset.cut,
			Line: line ? line.getAttribute("points") : "" }; })()`, id)
	if err := chromedp.Run(ctx,
		chromedp.Poll(fmt.Sprintf(`document.getElementById(%q).dataset.points === "%d"`, id, points), nil,
			chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Evaluate(read, &raw),
		chromedp.FullScreenshot(&png, 100),
	); err != nil {
		t.Fatalf("%s with %d points: %v", id, points, err)
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	t.Logf("screenshot: %s", shot)
	v := chartView{left: raw.Left, right: raw.Right, cut: raw.Cut}
	for _, xy := range strings.Fields(raw.Line) {
		xs, _, _ := strings.Cut(xy, ",")
		x, err := strconv.ParseFloat(xs, 64)
		if err != nil {
			t.Fatalf("%s: point %q: %v", id, xy, err)
		}
		v.xs = append(v.xs, x)
	}
	return v
}

// chromium finds the browser; in the full suite its absence is a failure, not a skip.
func chromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (neither /usr/bin/chromium nor on PATH): `make test` installs it (Debian package chromium); `go test -short` skips this test")
	}
	return path
}

// userDataDir makes a fresh Chromium profile directory, removed after the browser has
// stopped. Not t.TempDir: Chromium's helper processes may still write to it for a moment
// after the browser exits, and t.TempDir fails the test when its removal fails.
func userDataDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "crossfade-chromium-")
	if err != nil {
		t.Fatalf("chromium profile: %v", err)
	}
	t.Cleanup(func() {
		for range 50 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("could not remove the chromium profile %s", dir)
	})
	return dir
}

// syntheticCutover returns a function that plays step i of 4 with green% to green, as the
// engine and a load generator would: written, then three holding checks a second apart
// with DNS, HTTP and Prometheus gate results and client traffic. The recorder's clock c
// moves a second per check, so the charts span a realistic 14 s in no time.
func syntheticCutover(rec *Recorder, c *clock) func(i int, green int64) {
	traffic := map[string]int64{}
	var failures int64
	rec.Event(cutover.Event{Phase: cutover.PhaseLoweringTTL, Message: "lower TTL to 60s"})
	c.tick()
	rec.Observe(Traffic{At: c.Now(), Requests: map[string]int64{"blue": 0, "green": 0}})
	return func(i int, green int64) {
		w := weights(100-green, green)
		rec.Event(cutover.Event{Phase: cutover.PhaseWriting, Step: i, Total: 4, Weights: w, Message: fmt.Sprintf("step %d of 4", i+1)})
		for k := range 3 {
			c.tick()
			// About 100 requests a second, split as the weights say, with a little noise.
			noise := int64((i+k)%3) - 1
			traffic["blue"] += 100 - green - noise*min(100-green, 3)
			traffic["green"] += green + noise*min(green, 3)
			failures += int64(k % 2)
			rec.Observe(Traffic{At: c.Now(), Requests: maps.Clone(traffic), Failures: failures})
			blue, gr := float64(100-green)/100, float64(green)/100
			dns := dnsResult(blue, gr)
			dns.Detail = fmt.Sprintf("app.example.com/A: blue %.0f%% (want %d%%), green %.0f%% (want %d%%) of 200 answers", 100*blue, 100-green, 100*gr, green)
			rec.Event(cutover.Event{Phase: cutover.PhaseHolding, Step: i, Total: 4, Weights: w, Left: time.Duration(2-k) * time.Second,
				Gates: []gate.Result{dns, httpResult(true, "public: 10/10 ok, p99 8ms ≤ 500ms", 10*blue, 10*gr),
					{Gate: "error-rate", Kind: gate.KindPrometheus, Pass: true, Detail: "0.002 ≤ 0.01"}}})
		}
	}
}

// readPage waits until the page shows step and weightPoints points in its weights chart
// (so one poll has seen every event sent so far), reads it and saves a full-page PNG.
func readPage(t *testing.T, ctx context.Context, step string, weightPoints int, shot string) pageView {
	t.Helper()
	ready := fmt.Sprintf(`document.body.dataset.step === %q && document.getElementById("chart-weights").dataset.points === "%d"`,
		step, weightPoints)
	var attrs [len(charts)]string
	var v pageView
	var last string
	var png []byte
	actions := []chromedp.Action{
		chromedp.Poll(ready, nil, chromedp.WithPollingTimeout(10*time.Second)),
		// One more poll of the state, so that every chart holds the last events.
		chromedp.Sleep(600 * time.Millisecond),
		chromedp.AttributeValue("body", "data-step", &v.step, nil, chromedp.ByQuery),
		chromedp.AttributeValue("body", "data-phase", &v.phase, nil, chromedp.ByQuery),
		chromedp.AttributeValue("#chart-weights", "data-last", &last, nil, chromedp.ByQuery),
	}
	for i, id := range charts {
		actions = append(actions, chromedp.AttributeValue("#"+id, "data-points", &attrs[i], nil, chromedp.ByQuery))
	}
	// Quality 100 makes a PNG; anything less is a JPEG.
	actions = append(actions, chromedp.FullScreenshot(&png, 100))
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("page at step %s: %v", step, err)
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	t.Logf("screenshot: %s", shot)
	v.points = map[string]int{}
	for i, id := range charts {
		v.points[id], _ = strconv.Atoi(attrs[i])
	}
	if err := json.Unmarshal([]byte(last), &v.lastWeights); err != nil {
		t.Errorf("weights chart data-last %q: %v", last, err)
	}
	return v
}

// TestALBPageInChromium loads the page in real headless Chromium while a synthetic ALB
// cutover 0 → 10 → 50 → 100 % runs (targetHealth and albTraffic gates, clients observing):
// the page shows the ALB view — the request shares CloudWatch measured and the clients
// saw, and a row per target group with its weight and health — and not the DNS chart.
// Screenshots (dashboard-alb-step2.png, dashboard-alb-done.png) as TestPageInChromium's.
func TestALBPageInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Chromium; not under -short")
	}
	browser := chromium(t)
	artifacts := os.Getenv("CROSSFADE_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatalf("artifacts: %v", err)
	}
	c := &clock{now: time.Now().Truncate(time.Second)}
	rec := newRecorder("demo-alb", "blue", "green", c.Now)
	rec.SetLever(cutover.LeverALB)
	bctx := openPage(t, browser, rec.Handler())

	counts := map[string]int64{"blue": 0, "green": 0}
	rec.Observe(Traffic{At: c.Now(), Requests: maps.Clone(counts)})
	play := func(i int, green int64) {
		w := weights(100-green, green)
		checked := map[string][2]int{}
		for id, v := range w {
			if v > 0 {
				checked[id] = [2]int{2, 2}
			}
		}
		rec.Event(cutover.Event{Phase: cutover.PhaseWriting, Step: i, Total: 4, Weights: w, Gates: []gate.Result{healthResult(checked)}})
		for k := range 3 {
			c.tick()
			counts["blue"] += 100 - green
			counts["green"] += green
			rec.Observe(Traffic{At: c.Now(), Requests: maps.Clone(counts)})
			rec.Event(cutover.Event{Phase: cutover.PhaseHolding, Step: i, Total: 4, Weights: w, Left: time.Duration(2-k) * time.Second,
				Gates: []gate.Result{healthResult(checked), trafficResult(float64(green)/100, 50+100*k, k == 0)}})
		}
	}
	type albView struct {
		Lever, Step             string
		DNSHidden, ALBHidden    bool
		ALBPoints, ClientPoints string
		ALBLast                 string
		Groups                  []struct{ Group, Healthy, Targets, Text string }
	}
	read := func(step string, shot string) albView {
		t.Helper()
		var v albView
		var png []byte
		expr := `(() => { const $ = id => document.getElementById(id);
			return { Lever: document.body.dataset.lever, Step: document.body.dataset.step,
				DNSHidden: $("fig-dns").hidden, ALBHidden: $("fig-alb").hidden,
				ALBPoints: $("chart-alb").dataset.points, ClientPoints: $("chart-client-shares").dataset.points,
				ALBLast: $("chart-alb").dataset.last,
				Groups: [...document.querySelectorAll("#target-groups tbody tr")].map(tr => ({ Group: tr.dataset.group || "",
					Healthy: tr.dataset.healthy || "", Targets: tr.dataset.targets || "", Text: tr.textContent })) }; })()`
		if err := chromedp.Run(bctx,
			chromedp.Poll(fmt.Sprintf(`document.body.dataset.step === %q && document.body.dataset.lever === "alb"`, step), nil,
				chromedp.WithPollingTimeout(10*time.Second)),
			chromedp.Sleep(600*time.Millisecond), // one more poll: every event sent so far
			chromedp.Evaluate(expr, &v),
			chromedp.FullScreenshot(&png, 100),
		); err != nil {
			t.Fatalf("page at step %s: %v", step, err)
		}
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		t.Logf("screenshot: %s", shot)
		return v
	}

	play(0, 0)
	play(1, 10)
	early := read("2", filepath.Join(artifacts, "dashboard-alb-step2.png"))
	play(2, 50)
	play(3, 100)
	rec.Event(cutover.Event{Phase: cutover.PhaseDone, Message: "cutover completed", Total: 4, Weights: weights(0, 100)})
	late := read("4", filepath.Join(artifacts, "dashboard-alb-done.png"))
	t.Logf("at step 2: %+v\nat the end: %+v", early, late)

	for _, v := range []albView{early, late} {
		if !v.DNSHidden || v.ALBHidden {
			t.Errorf("step %s: DNS chart hidden %v, ALB chart hidden %v; want the ALB view only", v.Step, v.DNSHidden, v.ALBHidden)
		}
		if len(v.Groups) != 2 || v.Groups[0].Group != "blue" || v.Groups[1].Group != "green" {
			t.Errorf("step %s: target group rows %+v, want blue and green", v.Step, v.Groups)
			continue
		}
		for _, g := range v.Groups {
			if g.Healthy != "2" || g.Targets != "2" || !strings.Contains(g.Text, "2 of 2") {
				t.Errorf("step %s: row %+v, want 2 of 2 healthy", v.Step, g)
			}
		}
	}
	if a, b := atoi(early.ALBPoints), atoi(late.ALBPoints); a == 0 || b <= a {
		t.Errorf("CloudWatch share chart: %d points at step 2, %d at the end: it did not advance", a, b)
	}
	if a, b := atoi(early.ClientPoints), atoi(late.ClientPoints); a == 0 || b <= a {
		t.Errorf("client share chart: %d points at step 2, %d at the end", a, b)
	}
	var last map[string]float64
	if err := json.Unmarshal([]byte(late.ALBLast), &last); err != nil || last["green"] != 100 {
		t.Errorf("the CloudWatch share chart ends at %q (%v), want green 100", late.ALBLast, err)
	}
	if !strings.Contains(late.Groups[1].Text, "100") {
		t.Errorf("green's row at the end %q shows no weight or share of 100", late.Groups[1].Text)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
