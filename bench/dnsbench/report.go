package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/bench/internal/machine"
	"github.com/crossfade-io/crossfade/bench/internal/report"
)

// environment describes where the numbers were taken, because on a small shared machine
// the load matters as much as the code.
type environment struct {
	machine.Info
	dnsperf string
}

func describeMachine(ctx context.Context) environment {
	env := environment{Info: machine.Describe()}
	// dnsperf has no version flag; -h ends its usage text with "Version 2.10.0".
	if out, err := output(ctx, "dnsperf", "-h"); err == nil {
		if _, v, ok := strings.Cut(out, "Version "); ok {
			env.dnsperf, _, _ = strings.Cut(v, "\n")
		}
	}
	return env
}

// renderReport formats everything measured as Markdown.
func renderReport(o options, m environment, targets []*target, results []ratioResult, api apiStats) string {
	var b strings.Builder
	b.WriteString("## DNS: crossfade sandbox vs CoreDNS and Knot DNS\n\n")
	fmt.Fprintf(&b, "%d names in %s, UDP, %s per run, %d rounds, the %d servers taking turns; %d CPUs, load avg %s before / %s after; %s, dnsperf %s; %s.\n\n",
		o.names, zoneName, o.duration, o.rounds, len(targets), m.CPUs, report.OrNA(m.LoadBefore), report.OrNA(m.LoadAfter), m.GoVersion, m.dnsperf, m.Date.Format(time.RFC3339))
	if findRole(targets, roleCoreDNS) == nil {
		b.WriteString("CoreDNS was not run (-no-coredns).\n\n")
	}
	fmt.Fprintf(&b, "| server | records | qps (best of %d) | avg latency | p99 latency | lost | notes |\n", o.rounds)
	b.WriteString("|---|---|---:|---:|---:|---:|---|\n")
	for _, t := range targets {
		writeDNSRow(&b, t)
	}
	b.WriteString("\n| ratio (best qps) | value | per server core | goal |\n|---|---:|---:|---|\n")
	for _, r := range results {
		perCore := "n/a"
		if r.perCoreOK {
			perCore = fmt.Sprintf("%.2f", r.perCore)
		}
		goal := "none"
		if r.goal > 0 {
			verdict := "met"
			if !r.met() {
				verdict = "NOT met"
			}
			goal = fmt.Sprintf("≥ %.2f: %s", r.goal, verdict)
		}
		fmt.Fprintf(&b, "| %s | **%.2f** | %s | %s |\n", r.label, r.value, perCore, goal)
	}
	b.WriteString("\nThe Knot row is the baseline of both Knot ratios: it serves the same plain A records in both. ")
	b.WriteString("Numbers from a shared machine are indicative: see each row's \"other processes\" CPU.\n\n")
	writeMethod(&b, o, targets)
	writeAPI(&b, api)
	return b.String()
}

func writeDNSRow(b *strings.Builder, t *target) {
	best := t.best()
	rounds := make([]string, len(t.runs))
	for i, r := range t.runs {
		rounds[i] = fmt.Sprintf("%.0f", r.qps)
	}
	notes := []string{"rounds: " + strings.Join(rounds, ", ") + " qps"}
	if best.serverCPU >= 0 {
		c := cores(best.serverCPU, best.runTime)
		notes = append(notes, fmt.Sprintf("best run: server used %.2f cores (%s qps per core), other processes %.2f cores",
			c, thousands(best.qps/max(c, 0.01)), cores(best.otherCPU, best.window)))
	}
	p99 := "n/a"
	if l := t.latency; l != nil && l.hist != nil {
		h := l.hist
		p99 = report.Latency(h.quantile(0.99))
		notes = append(notes, fmt.Sprintf("latency run @ %s: %.0f qps, p50 %s, p99.9 %s, max %s, %d lost",
			rateLabel(l), l.qps, report.Latency(h.quantile(0.50)), report.Latency(h.quantile(0.999)), report.Latency(h.max), l.lost))
	}
	notes = append(notes, t.notes...)
	fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", t.name, t.kind, thousands(best.qps), report.Latency(best.avg), p99,
		fmt.Sprintf("%d (%.2f%%)", best.lost, pct(best.lost, best.sent)), strings.Join(notes, "; "))
}

func writeMethod(b *strings.Builder, o options, targets []*target) {
	best := targets[0].best()
	if len(best.args) > 0 {
		fmt.Fprintf(b, "Throughput: `%s` (query file: the %d names, type A, shuffled with seed %d; replayed in a loop). ",
			strings.Join(best.args, " "), o.names, o.seed)
	}
	b.WriteString("qps, avg latency and lost are from the best throughput run, in which dnsperf keeps `-q` queries in flight, so its avg latency is mostly queueing (≈ q / qps).\n\n")
	if l := targets[0].latency; l != nil {
		fmt.Fprintf(b, "p99: a separate %s run per server with `-v` at %s (`%s`); dnsperf 2.10 reports only avg/min/max/stddev, so each per-response line (`> NOERROR name A 0.000123`) is folded into a log-linear histogram (1 µs buckets below 1 ms, ≤0.2 %% wide above) as it streams, and p99 is read from it (nearest rank, bucket upper edge). Timed-out queries are counted as lost, not in the percentiles.\n\n",
			o.latencyLength, rateLabel(l), strings.Join(l.args, " "))
	}
}

func writeAPI(b *strings.Builder, api apiStats) {
	b.WriteString("## Route 53 API (sandbox, aws-sdk-go-v2, no retries)\n\n")
	b.WriteString("| measurement | value |\n|---|---:|\n")
	n := len(api.batches)
	if n == 0 {
		b.WriteString("| ChangeResourceRecordSets | no batches |\n")
		return
	}
	sizes := fmt.Sprintf("%d × %s changes", n, thousands(changesPerBatch))
	if rest := api.changes % changesPerBatch; rest != 0 {
		sizes = fmt.Sprintf("%d × %s changes + 1 × %d", n-1, thousands(changesPerBatch), rest)
	}
	fmt.Fprintf(b, "| ChangeResourceRecordSets batches (CREATE, weighted A) | %s |\n", sizes)
	fmt.Fprintf(b, "| batches/s | %.2f |\n", float64(n)/api.total.Seconds())
	fmt.Fprintf(b, "| changes/s | %s |\n", thousands(float64(api.changes)/api.total.Seconds()))
	fmt.Fprintf(b, "| mean batch latency | %s |\n", report.Latency(api.total/time.Duration(n)))
	fmt.Fprintf(b, "| p50 batch latency | %s |\n", report.Latency(median(api.batches)))
	fmt.Fprintf(b, "| max batch latency | %s |\n", report.Latency(slices.Max(api.batches)))
	fmt.Fprintf(b, "| ListResourceRecordSets full walk (maxitems 300) | %d pages, %s sets, %s (%s per page) |\n",
		api.pages, thousands(float64(api.sets)), report.Latency(api.walk), report.Latency(api.walk/time.Duration(max(api.pages, 1))))
}

func rateLabel(r *perfResult) string {
	for i, a := range r.args {
		if a == "-Q" && i+1 < len(r.args) {
			return r.args[i+1] + " qps offered"
		}
	}
	return "unlimited rate"
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func cores(cpu, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return cpu.Seconds() / wall.Seconds()
}

func pct(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

// thousands prints a rate rounded to an integer with thousands separators.
func thousands(v float64) string { return report.Thousands(int64(math.RoundToEven(v))) }
