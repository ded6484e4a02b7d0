package dashboard

import (
	"context"
	"fmt"
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

// TestPageInChromium loads the page in real headless Chromium while a synthetic cutover
// 0 → 10 → 50 → 100 % runs, and checks that the charts and the step advance with it.
// Screenshots go to $CROSSFADE_ARTIFACTS (default: the test's temp dir).
func TestPageInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Chromium")
	}
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium not found (Debian package chromium; `make test` installs it): %v", err)
	}
	artifacts := os.Getenv("CROSSFADE_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec := NewRecorder("shop", "blue", "green")
	url, wait, err := Serve(ctx, "127.0.0.1:0", rec.Handler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); wait() })

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 800))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel() // closes the browser, even when the test fails

	traffic := map[string]int64{}
	at := time.Now()
	step := func(i int, green int64) {
		w := map[string]int64{"blue": 100 - green, "green": green}
		rec.Event(cutover.Event{Phase: cutover.PhaseWriting, Step: i, Total: 4, Weights: w})
		for k := range 3 {
			at = at.Add(time.Second)
			traffic["blue"] += 100 - green
			traffic["green"] += green
			rec.Observe(Traffic{At: at, Requests: map[string]int64{"blue": traffic["blue"], "green": traffic["green"]}})
			rec.Event(cutover.Event{Phase: cutover.PhaseHolding, Step: i, Total: 4, Weights: w, Left: time.Duration(3-k) * time.Second,
				Gates: []gate.Result{dnsResult(float64(100-green)/100, float64(green)/100)}})
		}
	}
	// read waits until the page shows step n, then returns each chart's point count.
	read := func(n int, shot string) map[string]int {
		t.Helper()
		var buf []byte
		var pts [3]string
		err := chromedp.Run(bctx,
			chromedp.WaitVisible(fmt.Sprintf(`body[data-step="%d"]`, n), chromedp.ByQuery),
			chromedp.Sleep(700*time.Millisecond), // one more poll, so the charts hold the step's points
			chromedp.AttributeValue("#chart-weights", "data-points", &pts[0], nil, chromedp.ByQuery),
			chromedp.AttributeValue("#chart-dns", "data-points", &pts[1], nil, chromedp.ByQuery),
			chromedp.AttributeValue("#chart-requests", "data-points", &pts[2], nil, chromedp.ByQuery),
			chromedp.FullScreenshot(&buf, 90),
		)
		if err != nil {
			t.Fatalf("page at step %d: %v", n, err)
		}
		path := filepath.Join(artifacts, shot)
		if err := os.WriteFile(path, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
		out := map[string]int{}
		for i, k := range []string{"weights", "dns", "requests"} {
			out[k], _ = strconv.Atoi(pts[i])
		}
		return out
	}

	if err := chromedp.Run(bctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("load %s: %v", url, err)
	}
	step(0, 0)
	step(1, 10)
	early := read(2, "dashboard-step2.png")
	step(2, 50)
	step(3, 100)
	rec.Event(cutover.Event{Phase: cutover.PhaseDone, Message: "cutover completed", Weights: map[string]int64{"blue": 0, "green": 100}})
	var phase, legend string
	late := read(4, "dashboard-done.png")
	if err := chromedp.Run(bctx,
		chromedp.WaitVisible(`body[data-phase="done"]`, chromedp.ByQuery),
		chromedp.TextContent(`#chart-weights`, &legend, chromedp.ByQuery),
		chromedp.AttributeValue("body", "data-phase", &phase, nil, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	t.Logf("points at step 2 %v, at the end %v; weights legend %q", early, late, legend)
	for _, k := range []string{"weights", "dns", "requests"} {
		if early[k] == 0 || late[k] <= early[k] {
			t.Errorf("chart %s: %d points at step 2, %d at the end: it did not advance", k, early[k], late[k])
		}
	}
	if want := "green 100"; !strings.Contains(legend, want) {
		t.Errorf("weights chart legend %q lacks %q", legend, want)
	}
	if phase != "done" {
		t.Errorf("phase %q", phase)
	}
}
