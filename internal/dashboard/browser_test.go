package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
// 0 → 10 → 50 → 100 % runs, and checks that the charts and the step advance with it.
// Screenshots (dashboard-step2.png, dashboard-done.png) go to $CROSSFADE_ARTIFACTS, else
// to the test's temporary directory.
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

	// Cleanups run last-in first-out: the browser closes, then the server stops.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	c := &clock{now: time.Now().Truncate(time.Second)}
	rec := newRecorder("shop", "blue", "green", c.Now)
	url, wait, err := Serve(ctx, "127.0.0.1:0", rec.Handler())
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

	run := syntheticCutover(rec, c)
	run(0, 0)
	run(1, 10)
	early := readPage(t, bctx, "2", 2, filepath.Join(artifacts, "dashboard-step2.png"))
	run(2, 50)
	run(3, 100)
	rec.Event(cutover.Event{Phase: cutover.PhaseDone, Message: "cutover completed", Total: 4, Weights: weights(0, 100)})
	late := readPage(t, bctx, "4", 4, filepath.Join(artifacts, "dashboard-done.png"))

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
