package cutover

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// TestRetireNeedsMeasuredLows: the retire check declares the from cluster retirable only
// on lows measured without a gap for its whole window, says when it has no current rate
// instead of showing the last one measured, and journals its verdict whatever the
// endpoint served. Each case's counter reads low once (a rate of 0 after the baseline),
// then:
//   - restarts at every scrape (a counter reset, or scrapes landing on different pods):
//     no rate is measured again. Before, the time with no measurement counted toward the
//     window, and one low reading declared blue retirable.
//   - fails to scrape (500): the progress showed the last rate, 0.00 req/s, as current.
//   - reads NaN: the rate NaN was taken as measured, shown as "NaN req/s", and the
//     verdict's JSON failed silently (a retire entry with no data: the report's verdict
//     named no cluster).
//
// and, for contrast, stays put: blue is retirable.
func TestRetireNeedsMeasuredLows(t *testing.T) {
	for _, tc := range []struct {
		name string
		// serve answers scrape n (from 0): a counter value, or "" for a 500.
		serve     func(n int) string
		retirable bool
		// detail and progress are in the verdict's detail and the last retire event.
		detail, progress string
	}{
		{"counter restarts", func(n int) string { return fmt.Sprint(1000 - max(n-1, 0)) }, false,
			"NOT retirable", "no current rate (the counter's first read or a restart"},
		{"scrape fails", func(n int) string {
			if n < 2 {
				return "1000"
			}
			return ""
		}, false, "last error: retire: metrics", "no current rate (retire: metrics"},
		{"NaN", func(n int) string {
			if n == 0 {
				return "1000"
			}
			return "NaN"
		}, false, "requests_total = NaN: not a count", "no current rate (retire: metrics"},
		{"stays put", func(int) string { return "1000" }, true, "blue retirable", "0.00 req/s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var scrapes atomic.Int64
			metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				v := tc.serve(int(scrapes.Add(1) - 1))
				if v == "" {
					http.Error(w, "scrape failed", http.StatusInternalServerError)
					return
				}
				fmt.Fprintf(w, "# TYPE requests_total counter\nrequests_total %s\n", v)
			}))
			defer metrics.Close()
			p := fakePlan(time.Millisecond, 100)
			p.Retire = &spec.Retire{Metrics: metrics.URL + "/metrics", Counter: "requests_total", MaxRate: 1,
				Window: spec.Duration{Duration: 100 * time.Millisecond}, Timeout: spec.Duration{Duration: time.Second}}
			cfg := fakeConfig(t, p, newFakeLever("blue", "green", 100, 0), &scriptGate{name: "g", next: passing})
			cfg.CheckInterval = 5 * time.Millisecond
			var mu sync.Mutex
			var last []string // retire events after the first measured low
			cfg.Progress = progressHook(func(ev Event) {
				if ev.Phase == PhaseRetiring && scrapes.Load() > 2 {
					mu.Lock()
					last = append(last, ev.Message)
					mu.Unlock()
				}
			})
			rep, err := Run(context.Background(), cfg, false)
			if err != nil || rep.Outcome != outcomeCompleted || rep.Retire == nil {
				t.Fatalf("run: %v, report %+v", err, rep)
			}
			if rep.Retire.Cluster != "blue" || rep.Retire.Retirable != tc.retirable {
				t.Errorf("verdict %+v, want cluster blue, retirable %t", rep.Retire, tc.retirable)
			}
			if !strings.Contains(rep.Retire.Detail, tc.detail) {
				t.Errorf("verdict detail %q lacks %q", rep.Retire.Detail, tc.detail)
			}
			entries, _ := journal.Read(PathsFor(cfg.StateDir, p.Name).Journal)
			for _, e := range entries {
				if e.Kind == kindRetire && len(e.Data) == 0 {
					t.Errorf("retire entry without its verdict's data: %+v", e)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(last) == 0 {
				t.Fatalf("no retire progress after %d scrapes", scrapes.Load())
			}
			if msg := last[len(last)-1]; !strings.Contains(msg, tc.progress) {
				t.Errorf("last retire progress %q lacks %q", msg, tc.progress)
			}
		})
	}
}
