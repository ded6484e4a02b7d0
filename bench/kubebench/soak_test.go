package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseGauges(t *testing.T) {
	const text = `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 57
go_memstats_heap_alloc_bytes 2.5165824e+07
# TYPE go_gc_heap_live_bytes gauge
go_gc_heap_live_bytes 1.2582912e+07
go_gc_cycles_total_gc_cycles_total 42
go_memstats_next_gc_bytes 4.194304e+07
go_gc_duration_seconds{quantile="0"} 1e-05
process_resident_memory_bytes 9.8e+07
`
	got, err := parseGauges(strings.NewReader(text), soakRead)
	if err != nil {
		t.Fatal(err)
	}
	if got[metricGoroutines] != 57 || got[metricHeapLive] != 12582912 || got[metricHeapAlloc] != 25165824 || got[metricNextGC] != 41943040 ||
		got[metricRSS] != 98e6 || got[metricGCCycles] != 42 {
		t.Errorf("parsed %v", got)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"missing", "go_goroutines 1\n", "no metric go_gc_heap_live_bytes"},
		{"not a number", "go_goroutines many\n", `value is not a number`},
		{"twice", "go_goroutines 1\ngo_goroutines 2\n", "go_goroutines twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseGauges(strings.NewReader(tc.text), soakRead); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestSlopePerHour(t *testing.T) {
	for _, tc := range []struct {
		name   string
		xs, ys []float64
		want   float64
	}{
		{"flat", []float64{0, 0.5, 1}, []float64{7, 7, 7}, 0},
		{"one per hour", []float64{0, 0.5, 1, 1.5}, []float64{10, 10.5, 11, 11.5}, 1},
		{"noisy decline", []float64{0, 1, 2}, []float64{4, 1, 0}, -2},
		{"one sample", []float64{0}, []float64{3}, 0},
		{"one time", []float64{1, 1}, []float64{3, 4}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := slopePerHour(tc.xs, tc.ys); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("slope %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWriteSoak(t *testing.T) {
	r := &soakRun{tool: tool{title: "crossfade"}, version: "crossfade abc123", calls: callCounts{}}
	for i, g := range []float64{50, 51, 50} {
		r.samples = append(r.samples, soakSample{at: time.Duration(i) * 30 * time.Minute, cpu: time.Duration(i) * 9 * time.Second,
			values: map[string]float64{metricGoroutines: g, metricHeapLive: 10 << 20, metricHeapAlloc: 20 << 20, metricNextGC: 40 << 20,
				metricRSS: 100 << 20, metricGCCycles: 7 + 5*float64(i)}})
	}
	var b strings.Builder
	writeSoak(&b, options{services: 100, soak: time.Hour, soakEvery: 30 * time.Minute, soakSettle: 11 * time.Minute}, environment{}, r)
	out := b.String()
	for _, want := range []string{
		"| metric | first | last | min | max | least-squares slope per hour | fitted change over the window | verdict |",
		"| `go_goroutines` | 50.0 | 50.0 | 50.0 | 51.0 | 0.0 | 0.0 | **flat** (limit ±2.0) |",
		"| `go_gc_heap_live_bytes` | 10.00 MiB | 10.00 MiB | 10.00 MiB | 10.00 MiB | 0.00 MiB | 0.00 MiB | **flat** (limit ±1.00 MiB) |",
		"| `go_memstats_heap_alloc_bytes` | 20.00 MiB | 20.00 MiB | 20.00 MiB | 20.00 MiB | 0.00 MiB | 0.00 MiB | not judged |",
		"| `process_resident_memory_bytes` | 100.00 MiB | 100.00 MiB | 100.00 MiB | 100.00 MiB | 0.00 MiB | 0.00 MiB | **flat** (limit ±2.00 MiB) |",
		"**Verdict: flat** — `go_goroutines`, `go_gc_heap_live_bytes`, `process_resident_memory_bytes`.",
		"Garbage collections over the window: 10 (`go_gc_cycles_total_gc_cycles_total`).",
		"18s in 1h0m0s = **0.500 %** of one core",
		"Route 53 API calls over the window: **0**.",
		"crossfade abc123, 100 Services published, then nothing changes; after 11m0s at rest (`--soak-settle`", "a window of 1h0m0s, sampled every 30m0s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}

	// A live heap that gains 3 MiB in the hour is named in the verdict.
	for i := range r.samples {
		r.samples[i].values[metricHeapLive] = float64(10<<20 + i*(3<<20)/2)
	}
	b.Reset()
	writeSoak(&b, options{services: 100, soak: time.Hour, soakEvery: 30 * time.Minute, soakSettle: 11 * time.Minute}, environment{}, r)
	if want := "**Verdict: not flat** — `go_gc_heap_live_bytes` grows (3.00 MiB over the window, limit ±1.00 MiB)."; !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
}
