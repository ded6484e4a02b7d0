package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/bench/internal/report"
	"github.com/crossfade-io/crossfade/internal/child"
	ctlmetrics "github.com/crossfade-io/crossfade/internal/metrics"
)

// The soak scenario (issue 32, bullet 5): `crossfade controller` at rest over --services
// Services for --soak, nothing changing after its first sync. Every --soak-every it reads
// the process's CPU time (/proc), and from its /metrics the goroutines, the live heap
// (what the last collection marked live), the heap (live plus garbage not yet collected),
// the heap goal of the next collection, the RSS and the collections so far; the sandbox
// counts the Route 53 calls. A controller at rest should cost no Route 53 call, no CPU
// beyond its periodic re-plan and the Go runtime, and hold its goroutines and live heap
// flat: a leak of one goroutine or a few KiB per reconcile shows as a slope over an hour.
// The verdict judges the live heap, not go_memstats_heap_alloc_bytes: that one saws
// between collections by tens of MiB, so a sample a minute lands on it at random and its
// slope over an hour says more about where the samples fell than about a leak.

// The controller's metrics the soak reads (client_golang's Go and process collectors).
const (
	metricGoroutines = "go_goroutines"
	metricHeapLive   = ctlmetrics.NameGoHeapLive
	metricHeapAlloc  = "go_memstats_heap_alloc_bytes"
	metricNextGC     = "go_memstats_next_gc_bytes"
	metricRSS        = "process_resident_memory_bytes"
	metricGCCycles   = ctlmetrics.NameGoGCCycles
)

// soakMetrics are the series a soak sample holds, in the order the report lists them in
// its table; the collections counter is read too (soakRead) and reported under it.
var soakMetrics = []string{metricGoroutines, metricHeapLive, metricHeapAlloc, metricNextGC, metricRSS}

// soakRead is every series readSoakSample reads.
var soakRead = append(append([]string(nil), soakMetrics...), metricGCCycles)

// soakTolerances are the series the soak judges flat or not, and how far each may drift
// over the window (the least-squares line's change, slope × window) while still flat.
// Series not here are reported without a verdict.
//
//   - Goroutines: 2. At rest they wander by a few (43–48 over the hour measured at
//     0185ad0: metrics scrapes' connections, informer watches re-opened, the leader
//     Lease's renewal), but the fitted line's change stayed under 1. A leak of one per
//     reconcile is 6 an hour at a full re-plan every 10 minutes, one per Lease renewal
//     1,800: both far past 2.
//   - Live heap and RSS: 1 MiB or 2 % of the series' mean, whichever is larger. The live
//     heap at 10,000 Services is some 20–30 MiB, the RSS about 110 MiB; 2 % of those is
//     0.5–2.2 MiB. Below 1 MiB a collection that happens to end during a re-plan (which
//     allocates about 32 MB) shifts single samples enough to tilt the line; above it, a
//     leak of 16 KiB per reconcile at a re-plan a minute (1 MiB an hour) is caught, and
//     one of 100 KiB at a re-plan every 10 minutes too.
var soakTolerances = map[string]tolerance{
	metricGoroutines: {abs: 2},
	metricHeapLive:   {abs: 1 << 20, share: 0.02},
	metricRSS:        {abs: 1 << 20, share: 0.02},
}

// soakSample is one reading of the controller at rest.
type soakSample struct {
	// at is the time since the soak window began.
	at time.Duration
	// cpu is the process's user + system CPU time since it started.
	cpu time.Duration
	// values are soakMetrics' values, by name.
	values map[string]float64
}

// soakRun is what the soak scenario measured.
type soakRun struct {
	tool      tool
	version   string
	firstSync time.Duration
	samples   []soakSample
	// calls are the Route 53 calls during the soak window.
	calls callCounts
	err   error
}

// measureSoak runs the soak scenario with t (crossfade) and returns what it measured; its
// err says why it stopped early.
func (b *bed) measureSoak(ctx context.Context, o options, t tool, logPath string, log *slog.Logger) *soakRun {
	r := &soakRun{tool: t, version: t.version(ctx, o)}
	r.err = b.soakInto(ctx, o, t, logPath, log, r)
	if ctx.Err() == nil {
		if err := deleteServices(ctx, b.kube, o.services, o.workers); err != nil {
			r.err = errors.Join(r.err, err)
		}
	}
	return r
}

func (b *bed) soakInto(ctx context.Context, o options, t tool, logPath string, log *slog.Logger, r *soakRun) (err error) {
	store := b.sb.Store()
	z, _, err := store.CreateZone(t.zone(), fmt.Sprintf("kubebench-soak-%d", time.Now().UnixNano()), "kubebench soak", false)
	if err != nil {
		return fmt.Errorf("create zone %s: %w", t.zone(), err)
	}
	defer func() {
		if derr := dropZone(store, z.ID); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	if err := createServices(ctx, b.kube, o.services, t.zone(), o.workers, shape{bystanders: o.bystanders}); err != nil {
		return err
	}
	args, env := t.command(o, b.cluster.Kubeconfig, b.sb.APIURL())
	started := time.Now()
	c, err := startChild(t.title, logPath, env, args...)
	if err != nil {
		return err
	}
	defer stopChildInto(c, &err)
	if err := waitConverged(ctx, c, store, z.ID, z.Name, o.services, o.syncTimeout); err != nil {
		return err
	}
	r.firstSync = time.Since(started)
	log.Info("first sync", "tool", t.title, "took", r.firstSync.Round(time.Millisecond))
	// The first sync's state (the informers' initial lists, the full plan the
	// incremental path starts from) stays live until the first periodic full re-plan
	// replaces it: a window that began before would read its release as a falling heap.
	log.Info("settling before the soak window", "tool", t.title, "for", o.soakSettle)
	if err := sleep(ctx, o.settle+o.soakSettle); err != nil {
		return err
	}
	logText, err := os.ReadFile(logPath)
	if err != nil {
		return err
	}
	addr, ok := metricsAddr(string(logText))
	if !ok {
		return fmt.Errorf("%s: no \"serving metrics\" line in its log", t.title)
	}
	url := "http://" + addr + "/metrics"

	before, err := readCalls(ctx, b.sb.APIURL())
	if err != nil {
		return err
	}
	log.Info("soak window", "tool", t.title, "length", o.soak, "every", o.soakEvery)
	began := time.Now()
	for {
		s, err := readSoakSample(ctx, c.Pid(), url)
		if err != nil {
			return err
		}
		s.at = time.Since(began)
		r.samples = append(r.samples, s)
		log.Debug("soak sample", "at", s.at.Round(time.Second), "cpu", s.cpu, "values", s.values)
		if s.at >= o.soak {
			break
		}
		if err := sleep(ctx, min(o.soakEvery, o.soak-s.at)); err != nil {
			return err
		}
		if c.Exited() {
			return c.ExitError()
		}
	}
	after, err := readCalls(ctx, b.sb.APIURL())
	if err != nil {
		return err
	}
	r.calls = after.since(before)
	return nil
}

// readSoakSample reads the process's CPU time and soakRead from its /metrics.
func readSoakSample(ctx context.Context, pid int, url string) (soakSample, error) {
	cpu, err := child.CPUTime(pid)
	if err != nil {
		return soakSample{}, fmt.Errorf("cpu time of pid %d: %w", pid, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return soakSample{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return soakSample{}, fmt.Errorf("read %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return soakSample{}, fmt.Errorf("read %s: %s", url, resp.Status)
	}
	values, err := parseGauges(resp.Body, soakRead)
	if err != nil {
		return soakSample{}, fmt.Errorf("read %s: %w", url, err)
	}
	return soakSample{cpu: cpu, values: values}, nil
}

// parseGauges picks the unlabelled series names out of Prometheus text exposition; each
// must be there once.
func parseGauges(r io.Reader, names []string) (map[string]float64, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || !want[name] {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: value is not a number", sc.Text())
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("metric %s twice", name)
		}
		out[name] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("no metric %s", n)
		}
	}
	return out, nil
}

// slopePerHour is the least-squares slope of ys over xs (hours), per hour; 0 with fewer
// than two distinct times.
func slopePerHour(xs, ys []float64) float64 {
	n := float64(len(xs))
	if len(xs) < 2 || len(xs) != len(ys) {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / den
}

// series returns the samples' times (hours) and one metric's values.
func (r *soakRun) series(name string) (xs, ys []float64) {
	for _, s := range r.samples {
		xs = append(xs, s.at.Hours())
		ys = append(ys, s.values[name])
	}
	return xs, ys
}

// cpuShare is the CPU the process used over the window, as a share of one core, and the
// window's length.
func (r *soakRun) cpuShare() (share float64, cpu, window time.Duration) {
	if len(r.samples) < 2 {
		return 0, 0, 0
	}
	first, last := r.samples[0], r.samples[len(r.samples)-1]
	cpu, window = last.cpu-first.cpu, last.at-first.at
	if window <= 0 {
		return 0, cpu, window
	}
	return cpu.Seconds() / window.Seconds(), cpu, window
}

// writeSoak writes the soak scenario's section.
func writeSoak(b *strings.Builder, o options, env environment, r *soakRun) {
	writeHeader(b, env, "crossfade controller at rest (issue 32)")
	who := r.version
	if who == "" {
		who = r.tool.title
	}
	fmt.Fprintf(b, "%s, %d Services published, then nothing changes; after %s at rest (`--soak-settle`: past the first periodic full re-plan, which drops what the first sync built), a window of %s, sampled every %s (%d samples).\n\n",
		who, o.services, o.soakSettle, o.soak, o.soakEvery, len(r.samples))
	if r.err != nil {
		fmt.Fprintf(b, "**Stopped early:** %s\n\n", report.ErrorCell(r.err))
	}
	share, cpu, window := r.cpuShare()
	b.WriteString("| metric | first | last | min | max | least-squares slope per hour | fitted change over the window | verdict |\n|---|---:|---:|---:|---:|---:|---:|---|\n")
	var judged, moved []string
	for _, name := range soakMetrics {
		xs, ys := r.series(name)
		if len(ys) == 0 {
			continue
		}
		f := formatCount
		if name != metricGoroutines {
			f = formatMiB
		}
		tol, judge := soakTolerances[name]
		t := trendOf(xs, ys, tol)
		verdict := "not judged"
		if judge {
			verdict = fmt.Sprintf("**%s** (limit ±%s)", t.verdict, f(t.limit))
			judged = append(judged, name)
			if t.verdict != verdictFlat {
				moved = append(moved, fmt.Sprintf("`%s` %s (%s over the window, limit ±%s)", name, t.verdict, f(t.drift), f(t.limit)))
			}
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s | %s | %s | %s |\n", name, f(t.first), f(t.last), f(t.min), f(t.max), f(t.slope), f(t.drift), verdict)
	}
	if len(moved) == 0 {
		fmt.Fprintf(b, "\n**Verdict: flat** — %s.\n", strings.Join(quoted(judged), ", "))
	} else {
		fmt.Fprintf(b, "\n**Verdict: not flat** — %s.\n", strings.Join(moved, "; "))
	}
	fmt.Fprintf(b, "\n- CPU over the window: %s in %s = **%.3f %%** of one core.\n", cpu.Round(time.Millisecond), window.Round(time.Second), 100*share)
	fmt.Fprintf(b, "- Route 53 API calls over the window: **%d**%s.\n", r.calls.total(), callsDetail(r.calls))
	if _, gcs := r.series(metricGCCycles); len(gcs) >= 2 {
		fmt.Fprintf(b, "- Garbage collections over the window: %.0f (`%s`).\n", gcs[len(gcs)-1]-gcs[0], metricGCCycles)
	}
	b.WriteString("- CPU is the process's user + system time (/proc/PID/stat); goroutines, heap and RSS are the controller's own /metrics (client_golang's Go and process collectors). `go_gc_heap_live_bytes` is the heap the last collection marked live (runtime/metrics `/gc/heap/live:bytes`): garbage not yet collected is not in it, so it is the series a leak shows in. `go_memstats_heap_alloc_bytes` includes that garbage and saws between collections; `go_memstats_next_gc_bytes` is the goal the runtime set from the live heap. The fitted change is the least-squares slope times the window; a judged series is flat when that stays inside its limit (goroutines ±2; live heap and RSS the larger of 1 MiB and 2 % of their mean).\n")
}

// quoted wraps each name in backquotes, for Markdown.
func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + n + "`"
	}
	return out
}

// callsDetail is ": by operation" for a non-empty count, "" otherwise.
func callsDetail(c callCounts) string {
	if c.total() == 0 {
		return ""
	}
	return " (" + c.String() + ")"
}

// formatCount formats a count, with its sign when negative (a slope).
func formatCount(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// formatMiB formats bytes as MiB.
func formatMiB(v float64) string { return fmt.Sprintf("%.2f MiB", v/(1<<20)) }
