package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Goals of issue 14 for crossfade, and the margin it must have over external-dns.
const (
	goalFirstSync = 10 * time.Second
	goalRSS       = 150 << 20
	goalIdleCalls = 0
	goalP99       = time.Second
	goalRatio     = 3.0
)

// environment describes where and when the run happened.
type environment struct {
	date       time.Time
	cpus       int
	cpuModel   string
	goVersion  string
	loadBefore string
	loadAfter  string
	args       []string
}

func describe() environment {
	return environment{
		date:       time.Now().UTC(),
		cpus:       runtime.NumCPU(),
		cpuModel:   cpuModel(),
		goVersion:  runtime.Version(),
		loadBefore: loadAverage(),
		args:       os.Args[1:],
	}
}

// cpuModel is the first "model name" of /proc/cpuinfo, "" where there is none.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// byTool indexes results by tool name.
func byTool(results []*result) map[string]*result {
	m := map[string]*result{}
	for _, r := range results {
		m[r.tool.name] = r
	}
	return m
}

// metric is one row of the main table: how to read a tool's value (ok false: not
// measured), how to print it, and crossfade's goal.
type metric struct {
	title  string
	value  func(*result) (float64, bool)
	format func(float64) string
	// goal reports whether crossfade's value meets its goal; nil: no goal.
	goal func(float64) bool
	// ratioGoal says the row has the "≥ 3× better than external-dns" goal.
	ratioGoal bool
}

func seconds(v float64) string {
	d := time.Duration(v)
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	default:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
}

func mib(v float64) string   { return fmt.Sprintf("%.0f MiB", v/(1<<20)) }
func count(v float64) string { return fmt.Sprintf("%.0f", v) }

func metrics(o options) []metric {
	pct := func(p float64) func(*result) (float64, bool) {
		return func(r *result) (float64, bool) {
			d, ok := percentile(r.samples, p)
			return float64(d), ok && r.missed == 0
		}
	}
	return []metric{
		{
			title:  fmt.Sprintf("first sync: process start → all %s records in the zone (goal < %s)", thousands(o.services), goalFirstSync),
			value:  func(r *result) (float64, bool) { return float64(r.firstSync), r.synced },
			format: seconds, goal: func(v float64) bool { return time.Duration(v) < goalFirstSync }, ratioGoal: true,
		},
		{
			title:  fmt.Sprintf("peak RSS, VmHWM at the end (goal < %d MiB)", goalRSS>>20),
			value:  func(r *result) (float64, bool) { return float64(r.peakRSS), r.peakRSS > 0 },
			format: mib, goal: func(v float64) bool { return v < goalRSS }, ratioGoal: true,
		},
		{
			title:  fmt.Sprintf("Route 53 API calls in a %s idle window (goal %d)", o.idle, goalIdleCalls),
			value:  func(r *result) (float64, bool) { return float64(r.idleCalls.total()), r.idle > 0 },
			format: count, goal: func(v float64) bool { return v <= goalIdleCalls }, ratioGoal: true,
		},
		{
			title: "change → DNS answer, p50",
			value: pct(50), format: seconds,
		},
		{
			title: fmt.Sprintf("change → DNS answer, p99 (goal < %s)", goalP99),
			value: pct(99), format: seconds, goal: func(v float64) bool { return time.Duration(v) < goalP99 }, ratioGoal: true,
		},
	}
}

// ratio renders how many times crossfade's value is below external-dns's (every metric
// here is lower-is-better): "8.4×", "∞" when crossfade's is 0 and the other's is not.
// comparable is false when both are 0: neither is better, and no ratio goal is judged.
func ratio(cf, other float64) (s string, r float64, comparable bool) {
	switch {
	case cf == 0 && other == 0:
		return "= (both 0)", 1, false
	case cf == 0:
		return "∞", math.Inf(1), true
	}
	r = other / cf
	return fmt.Sprintf("%.1f×", r), r, true
}

func mark(ok bool) string {
	if ok {
		return " ✓"
	}
	return " ✗"
}

// renderReport renders the Markdown report: the main table, a table of details, and
// how the numbers were made.
func renderReport(o options, env environment, results []*result) string {
	var b strings.Builder
	by := byTool(results)
	cf := by[toolCrossfade]
	others := []string{toolExternalDNS, toolExternalDNSEvents}

	fmt.Fprintf(&b, "## crossfade controller vs external-dns: %s LoadBalancer Services\n\n", thousands(o.services))
	fmt.Fprintf(&b, "%s · %d CPUs (%s) · %s · kube-apiserver v1.31.4 + etcd v3.5.16 (internal/kubetest) · in-process sandbox\n\n",
		env.date.Format("2006-01-02 15:04 UTC"), env.cpus, orNA(env.cpuModel), env.goVersion)
	fmt.Fprintf(&b, "| metric | crossfade | external-dns (default) | external-dns --events | ratio (external-dns ÷ crossfade: default / --events) |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|\n")
	for _, m := range metrics(o) {
		cells := []string{m.title}
		var cfv float64
		var cfok bool
		if cf != nil {
			cfv, cfok = m.value(cf)
		}
		for _, name := range append([]string{toolCrossfade}, others...) {
			r := by[name]
			switch v, ok := valueOf(m, r); {
			case r == nil:
				cells = append(cells, "not run")
			case !ok && r.err != nil:
				cells = append(cells, "n/a (failed)")
			case !ok:
				cells = append(cells, "not measured")
			case name == toolCrossfade && m.goal != nil:
				cells = append(cells, m.format(v)+mark(m.goal(v)))
			default:
				cells = append(cells, m.format(v))
			}
		}
		var ratios []string
		measured, allMet := 0, true
		for _, name := range others {
			v, ok := valueOf(m, by[name])
			if !cfok || !ok {
				ratios = append(ratios, "—")
				continue
			}
			s, r, comparable := ratio(cfv, v)
			ratios = append(ratios, s)
			if comparable {
				measured++
				allMet = allMet && r >= goalRatio
			}
		}
		cell := strings.Join(ratios, " / ")
		if m.ratioGoal && measured > 0 {
			cell += mark(allMet)
		}
		cells = append(cells, cell)
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintf(&b, "\n✓/✗: crossfade's goal (issue 14), and in the ratio column whether it is at least %.0f× better than each external-dns run.\n\n", goalRatio)

	b.WriteString("### Details\n\n")
	b.WriteString("| | " + strings.Join(titles(results), " | ") + " |\n")
	b.WriteString("|---" + strings.Repeat("|---", len(results)) + "|\n")
	row := func(name string, cell func(*result) string) {
		cells := []string{name}
		for _, r := range results {
			cells = append(cells, cell(r))
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	row("version", func(r *result) string { return orNA(r.version) })
	row("zone", func(r *result) string { return r.tool.zone() })
	row("Services created in (before the start)", func(r *result) string { return dur(r.create) })
	row("Route 53 calls during the first sync", func(r *result) string {
		if !r.synced {
			return "n/a"
		}
		return fmt.Sprintf("%d: %s", r.syncCalls.total(), r.syncCalls)
	})
	row("CPU time at the first sync", func(r *result) string { return ifSynced(r, dur(r.syncCPU)) })
	row("record sets in the zone at the first sync", func(r *result) string { return ifSynced(r, fmt.Sprint(r.records)) })
	row("idle calls by operation", func(r *result) string {
		if r.idle == 0 {
			return "n/a"
		}
		return r.idleCalls.String()
	})
	row("change → answer samples (missed), min … max", func(r *result) string {
		if len(r.samples) == 0 {
			return fmt.Sprintf("0 (%d)", r.missed)
		}
		return fmt.Sprintf("%d (%d), %s … %s", len(r.samples), r.missed, dur(slices.Min(r.samples)), dur(slices.Max(r.samples)))
	})
	row("RSS at the end: anonymous + file-backed (the binary)", func(r *result) string {
		if r.rssAnon == 0 && r.rssFile == 0 {
			return "n/a"
		}
		return mib(float64(r.rssAnon)) + " + " + mib(float64(r.rssFile))
	})
	row("CPU time over the whole run", func(r *result) string { return dur(r.cpu) })
	row("error", func(r *result) string {
		if r.err == nil {
			return ""
		}
		return strings.ReplaceAll(firstLine(r.err.Error()), "|", "\\|")
	})

	b.WriteString("\n### How it was measured\n\n")
	fmt.Fprintf(&b, "- One kube-apiserver and one sandbox for all tools, which run one after the other, each on its own fresh zone `<tool>.%s` with `--txt-owner-id %s`, `--source service`, `--domain-filter <zone>`, `--policy sync`, and every other setting at the tool's default.\n", zoneSuffix, ownerID)
	fmt.Fprintf(&b, "- Before each tool starts, %s Services `svc-N` in namespace `%s` are created (type LoadBalancer, `allocateLoadBalancerNodePorts: false`, hostname annotation `svc-N.<zone>`, load-balancer status IP 192.0.2.x); they are deleted after it stops.\n", thousands(o.services), namespace)
	b.WriteString("- First sync: from the process start until the sandbox's store (read in process: no API call) holds every `svc-N` A record with its address.\n")
	fmt.Fprintf(&b, "- Idle: %s after the first sync, the sandbox's `crossfade_sandbox_api_calls_total` is read before and after a %s window in which nothing changes.\n", o.settle, o.idle)
	fmt.Fprintf(&b, "- Change → answer: one merge patch sets a random Service's `%s` to a new address; the sandbox's DNS server is asked every %s until it answers it. The next change follows after %s plus a random pause uniform over the tool's cycle, so that it lands at a random point of it, as a real change would: 1 m for external-dns (its `--interval`), 5 s with `--events` (it syncs 5 s after an event), %s for crossfade (its debounce starts at the change). Every tool gets the same Services in the same order. p50/p99 are nearest-rank (below 100 samples, p99 is the largest).\n", targetAnnotation, dnsPollEvery, o.sampleGap, o.sampleGap)
	b.WriteString("- Peak RSS: `VmHWM` of the tool's process from `/proc/<pid>/status`, read after the samples, just before SIGTERM.\n")
	fmt.Fprintf(&b, "- The machine has %d CPUs shared with other work; the API server, etcd, the sandbox and the tool all run on them, so times are noisy (load average %s before, %s after). Compare tools within one run.\n",
		env.cpus, orNA(env.loadBefore), orNA(env.loadAfter))
	fmt.Fprintf(&b, "\nReproduce (from the repository root; needs kube-apiserver, etcd and external-dns v0.21.0 in the cache, `scripts/deps.sh test`):\n\n```sh\n%s\n```\n", reproduce(env.args))
	return b.String()
}

func valueOf(m metric, r *result) (float64, bool) {
	if r == nil {
		return 0, false
	}
	return m.value(r)
}

func titles(results []*result) []string {
	var out []string
	for _, r := range results {
		out = append(out, r.tool.title)
	}
	return out
}

func ifSynced(r *result, s string) string {
	if !r.synced {
		return "n/a"
	}
	return s
}

func dur(d time.Duration) string {
	if d == 0 {
		return "n/a"
	}
	return seconds(float64(d))
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// outputOnly are the flags that change where results go, not what is measured: the
// reproduce line leaves them out. The bool says whether the flag takes a value.
var outputOnly = map[string]bool{"out": true, "keep": false, "cpuprofile": true, "memprofile": true}

// reproduce is the command line that measures the same again: this run's flags less
// those in outputOnly.
func reproduce(args []string) string {
	cmd := "go run ./bench/kubebench"
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if takesValue, skip := outputOnly[name]; skip && strings.HasPrefix(a, "-") {
			if takesValue && !hasValue {
				i++ // its value is the next argument
			}
			continue
		}
		if strings.ContainsAny(a, " \t'\"$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		cmd += " " + a
	}
	return cmd
}

// thousands spells n with a comma every three digits: 10000 → "10,000".
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
