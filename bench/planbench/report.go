package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/bench/internal/machine"
	"github.com/crossfade-io/crossfade/bench/internal/report"
)

// summary is what the table says of one tree's runs.
type summary struct {
	best, median      time.Duration
	bytesOp, allocsOp float64
	runs              int
}

func summarize(rs []result) summary {
	ns := make([]float64, len(rs))
	for i, r := range rs {
		ns[i] = r.nsPerOp
	}
	slices.Sort(ns)
	s := summary{runs: len(rs), best: time.Duration(ns[0]), median: time.Duration(median(ns))}
	b := make([]float64, len(rs))
	a := make([]float64, len(rs))
	for i, r := range rs {
		b[i], a[i] = r.bytesPerOp, r.allocsPerOp
	}
	slices.Sort(b)
	slices.Sort(a)
	s.bytesOp, s.allocsOp = median(b), median(a)
	return s
}

// median of sorted values: the middle one, or the mean of the middle two.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// ratio is base / work, "2.41×": how many times the working tree is better.
func ratio(base, work float64) string {
	if work == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f×", base/work)
}

// render is the Markdown report.
func render(o options, info machine.Info, trees []*tree, sameFixture bool, others string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Planning 100,000 records: %s side by side with %s\n\n", benchName, o.base)
	fmt.Fprintf(&b, "%d rounds, each running `go test -run '^$' -bench 'Calculate100k$' -benchmem -benchtime %s -count %d` once in each tree (its compiled test binary), alternating which goes first.\n\n",
		o.rounds, o.benchtime, o.count)
	b.WriteString("| tree | package | runs | ns/op best | ns/op median | B/op | allocs/op |\n|---|---|---|---|---|---|---|\n")
	sums := make([]summary, len(trees))
	for i, t := range trees {
		s := summarize(t.results)
		sums[i] = s
		fmt.Fprintf(&b, "| %s (%s) | `%s` | %d | %s | %s | %s | %s |\n", t.label, shortCommit(t.commit), t.pkg, s.runs,
			report.Latency(s.best), report.Latency(s.median), report.Thousands(int64(s.bytesOp)), report.Thousands(int64(s.allocsOp)))
	}
	base, work := sums[0], sums[1]
	fmt.Fprintf(&b, "| **ratio** (baseline / working tree) | | | **%s** | **%s** | **%s** | **%s** |\n\n",
		ratio(float64(base.best), float64(work.best)), ratio(float64(base.median), float64(work.median)),
		ratio(base.bytesOp, work.bytesOp), ratio(base.allocsOp, work.allocsOp))
	if sameFixture {
		fmt.Fprintf(&b, "The fixture is the same: %s's source is identical in both trees.\n\n", benchName)
	} else {
		fmt.Fprintf(&b, "**The fixture differs**: %s's source is not the same in both trees, so the ratios compare different work.\n\n", benchName)
	}
	fmt.Fprintf(&b, "Machine: %d CPUs, %s, %s; load average %s before, %s after",
		info.CPUs, report.OrNA(info.CPUModel), info.GoVersion, report.OrNA(info.LoadBefore), report.OrNA(info.LoadAfter))
	if others != "" {
		fmt.Fprintf(&b, "; all processes kept the CPUs %s busy during the run (this one's benchmarks use at most one CPU and the GC a part of the other)", others)
	}
	fmt.Fprintf(&b, ". Measured %s.\n\n", info.Date.Format(time.RFC3339))
	fmt.Fprintf(&b, "Reproduce: `%s`\n", report.Reproduce("go run ./bench/planbench", o.args, map[string]bool{"out": true, "keep": false}))
	return b.String()
}

// shortCommit is the first 12 hex digits of an id, with what follows it.
func shortCommit(id string) string {
	if len(id) >= 12 {
		return id[:12] + id[min(len(id), 40):]
	}
	return id
}
