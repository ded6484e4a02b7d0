package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/bench/internal/machine"
	"github.com/crossfade-io/crossfade/bench/internal/report"
)

// environment describes where and when the run happened, and with what.
type environment struct {
	machine.Info
	nginxVersion string
	wrkVersion   string
	args         []string
}

func describe(args []string) environment {
	return environment{Info: machine.Describe(), args: args}
}

// byPath indexes results by path name.
func byPath(results []*result) map[string]*result {
	m := map[string]*result{}
	for _, r := range results {
		m[r.name] = r
	}
	return m
}

// ok reports whether r measured something usable.
func (r *result) ok() bool { return r != nil && r.err == nil && r.wrk.requests > 0 }

// added renders a difference of latencies with its sign: "+0.42 ms", "−35 µs".
func added(d time.Duration) string {
	if d < 0 {
		return "−" + report.Latency(-d)
	}
	return "+" + report.Latency(d)
}

// cores renders CPU time used over wall time as a number of CPUs kept busy: "0.93".
func cores(cpu, wall time.Duration) string {
	if wall <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", cpu.Seconds()/wall.Seconds())
}

// perRequest is the proxy's CPU time per request, "n/a" when not measured.
func (r *result) perRequest() (time.Duration, bool) {
	if !r.ok() || !r.proxyCPUOK {
		return 0, false
	}
	return r.proxyCPU / time.Duration(r.wrk.requests), true
}

// pathTitle is a path's row title with how it is set up.
func pathTitle(o options, r *result) string {
	switch r.name {
	case pathALBProxy:
		return "sandbox albproxy: 1 listener, forward 50/50 to 2 target groups × 2 targets"
	case pathNginx:
		return fmt.Sprintf("%s: upstream of the 4 targets, weight 1 each, keepalive %d", r.title, o.nginxKeepalive)
	}
	return r.title
}

// render is the Markdown report: the main table, a comparison line, details, how it was
// measured and how to reproduce it.
func render(o options, run *run) string {
	var b strings.Builder
	env := run.env
	by := byPath(run.results)
	direct := by[pathDirect]

	b.WriteString("## Sandbox ALB proxy vs nginx: reverse-proxy throughput and added latency\n\n")
	fmt.Fprintf(&b, "%s · %d CPUs (%s), shared with other work · %s · %s · wrk %s · %d connections, %d threads, %s per path %s\n\n",
		env.Date.Format("2006-01-02 15:04 UTC"), env.CPUs, report.OrNA(env.CPUModel), env.GoVersion, report.OrNA(env.nginxVersion), report.OrNA(env.wrkVersion),
		o.connections, o.threads, o.duration, warmupText(o))

	b.WriteString("| path | req/s | p50 | p99 | added p50 | added p99 | proxy CPU per request | failed requests |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range run.results {
		cells := []string{pathTitle(o, r)}
		if !r.ok() {
			msg := "n/a (failed)"
			if r.err == nil {
				msg = "n/a (no requests)"
			}
			cells = append(cells, msg, "", "", "", "", "", "")
			fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
			continue
		}
		p50, p99 := r.wrk.percentiles[50], r.wrk.percentiles[99]
		cells = append(cells, report.Thousands(int64(r.wrk.reqPerSec+0.5)), report.Latency(p50), report.Latency(p99))
		if r.name != pathDirect && direct.ok() {
			cells = append(cells, added(p50-direct.wrk.percentiles[50]), added(p99-direct.wrk.percentiles[99]))
		} else {
			cells = append(cells, "—", "—")
		}
		if d, ok := r.perRequest(); ok {
			cells = append(cells, fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond)))
		} else {
			cells = append(cells, "—")
		}
		cells = append(cells, report.Thousands(r.wrk.failed()))
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	if line := comparison(by[pathALBProxy], by[pathNginx], direct); line != "" {
		b.WriteString("\n" + line + "\n")
	}

	writeDetails(&b, run)
	writeMethod(&b, o, run)
	fmt.Fprintf(&b, "\nReproduce (from the repository root; needs the Debian packages nginx and wrk, `scripts/deps.sh bench`):\n\n```sh\n%s\n```\n", reproduce(env.args))
	return b.String()
}

// comparison is the albproxy ÷ nginx line: throughput, added p99 and CPU per request.
func comparison(alb, ngx, direct *result) string {
	if !alb.ok() || !ngx.ok() {
		return ""
	}
	parts := []string{fmt.Sprintf("%.2f× the throughput", alb.wrk.reqPerSec/ngx.wrk.reqPerSec)}
	if direct.ok() {
		a := alb.wrk.percentiles[99] - direct.wrk.percentiles[99]
		n := ngx.wrk.percentiles[99] - direct.wrk.percentiles[99]
		if n > 0 && a >= 0 {
			parts = append(parts, fmt.Sprintf("%.2f× the added p99", float64(a)/float64(n)))
		} else {
			parts = append(parts, fmt.Sprintf("added p99 %s against nginx's %s", added(a), added(n)))
		}
	}
	if a, ok1 := alb.perRequest(); ok1 {
		if n, ok2 := ngx.perRequest(); ok2 && n > 0 {
			parts = append(parts, fmt.Sprintf("%.2f× the CPU per request", float64(a)/float64(n)))
		}
	}
	return "albproxy ÷ nginx: " + strings.Join(parts, ", ") + "."
}

// writeDetails writes a column per path: the rest of wrk's numbers, the CPU each process
// used and how the requests were spread over the backends.
func writeDetails(b *strings.Builder, run *run) {
	b.WriteString("\n### Details\n\n")
	var titles []string
	for _, r := range run.results {
		titles = append(titles, r.name)
	}
	b.WriteString("| | " + strings.Join(titles, " | ") + " |\n")
	b.WriteString("|---" + strings.Repeat("|---", len(run.results)) + "|\n")
	row := func(name string, cell func(*result) string) {
		cells := []string{name}
		for _, r := range run.results {
			if r.wrk.requests == 0 && r.err != nil {
				cells = append(cells, "n/a")
				continue
			}
			cells = append(cells, cell(r))
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
	row("requests in the measured run", func(r *result) string {
		return fmt.Sprintf("%s in %s", report.Thousands(r.wrk.requests), report.Latency(r.wrk.duration))
	})
	row("latency p75 / p90", func(r *result) string {
		return report.Latency(r.wrk.percentiles[75]) + " / " + report.Latency(r.wrk.percentiles[90])
	})
	row("latency mean / max", func(r *result) string { return report.Latency(r.wrk.avg) + " / " + report.Latency(r.wrk.max) })
	row("transfer/s (wrk)", func(r *result) string { return report.OrNA(r.wrk.transferPerSec) })
	row("CPUs busy: proxy (process tree)", func(r *result) string {
		if !r.proxyCPUOK {
			return "—"
		}
		return cores(r.proxyCPU, r.wall)
	})
	row("CPUs busy: backends (this process)", func(r *result) string {
		if !r.selfCPUOK {
			return "n/a"
		}
		return cores(r.selfCPU, r.wall)
	})
	row("CPUs busy: wrk", func(r *result) string { return cores(r.wrkCPU, r.wall) })
	row("CPUs busy: everything else on the machine", func(r *result) string {
		if !r.machineOK || !r.selfCPUOK {
			return "n/a"
		}
		other := r.busy - r.selfCPU - r.wrkCPU
		if r.proxyCPUOK {
			other -= r.proxyCPU
		}
		return cores(max(other, 0), r.wall)
	})
	row("requests per backend", func(r *result) string { return shares(run.backends, r.served) })
	row("socket errors (connect/read/write/timeout) · status ≥ 400", func(r *result) string {
		w := r.wrk
		return fmt.Sprintf("%d/%d/%d/%d · %d", w.connectErrs, w.readErrs, w.writeErrs, w.timeouts, w.badStatus)
	})
	row("error", func(r *result) string { return report.ErrorCell(r.err) })
}

// shares renders how the backends split the requests: "blue-1 25.0 %, …; blue 50.1 %".
func shares(backends []*backend, served []int64) string {
	var total int64
	for _, n := range served {
		total += n
	}
	if total == 0 {
		return "none"
	}
	var parts []string
	groups := map[string]int64{}
	var order []string
	for i, b := range backends {
		if served[i] > 0 {
			parts = append(parts, fmt.Sprintf("%s %.1f %%", b.name, 100*float64(served[i])/float64(total)))
		}
		if _, seen := groups[b.group]; !seen {
			order = append(order, b.group)
		}
		groups[b.group] += served[i]
	}
	var gs []string
	for _, g := range order {
		gs = append(gs, fmt.Sprintf("%s %.1f %%", g, 100*float64(groups[g])/float64(total)))
	}
	return strings.Join(parts, ", ") + "; groups: " + strings.Join(gs, ", ")
}

// writeMethod says how the numbers were made.
func writeMethod(b *strings.Builder, o options, run *run) {
	env := run.env
	b.WriteString("\n### How it was measured\n\n")
	fmt.Fprintf(b, "- Backends: 4 Go `net/http` servers on 127.0.0.1 inside the benchmark process, groups blue (blue-1, blue-2) and green (green-1, green-2), each answering every request with the same %d-byte `text/plain` body.\n", o.body)
	b.WriteString("- albproxy: `internal/sandbox/albproxy` (New, Start, Apply, Addr) in a process of its own (this program started again), as it runs inside `crossfade sandbox` apart from the targets. One load balancer, one listener on 127.0.0.1, no rules, default action forward blue 50 / green 50 (a group by weight per request, then round-robin over its healthy targets); ALB's default health check (30 s) on `/healthz`; measured once all 4 targets were healthy. Every request is counted into its per-second CloudWatch buckets, as in the sandbox.\n")
	accessLog := "access log off, as the albproxy writes none (`-nginx-access-log`: buffered, in the temp dir)"
	if o.nginxAccessLog {
		accessLog = "access log on, `combined` format buffered 64k, in the temp dir"
	}
	fmt.Fprintf(b, "- nginx: %s from a generated `nginx.conf` in the temp dir, run as `nginx -p <dir>/ -c <dir>/nginx.conf -e <dir>/error.log` with `daemon off`, `worker_processes %s`, `worker_connections 4096`; `upstream` of the same 4 backends with `weight=1` each (so blue and green get half each), `keepalive %d` idle connections per worker with `proxy_http_version 1.1` and an empty `Connection` header; `keepalive_requests` unlimited towards clients and upstreams (nginx's default, 1,000, would reconnect where Go's server and transport never do); the client's Host and `X-Forwarded-For/-Proto/-Port` as the albproxy sends them; error log, pid and temp paths in the temp dir, %s.\n",
		report.OrNA(env.nginxVersion), o.nginxWorkers, o.nginxKeepalive, accessLog)
	fmt.Fprintf(b, "- Load: wrk %s, `wrk -t %d -c %d -d %ds --latency <url>` per path, %s (a wrk run whose numbers are dropped), in the order direct, albproxy, nginx. \"added\" is the path's percentile less the direct one's. wrk is closed-loop: each connection sends its next request when the answer arrives, so at %d connections latency is mostly queueing (about connections ÷ req/s) and the added p99 carries the throughput difference too.\n",
		report.OrNA(env.wrkVersion), o.threads, o.connections, int(o.duration.Seconds()), warmupText(o), o.connections)
	b.WriteString("- Proxy CPU per request: the proxy's CPU time (user + system, from `/proc`; nginx: master and workers) over the measured run ÷ its requests. It depends less on what else the machine does than req/s.\n")
	fmt.Fprintf(b, "- The machine has %d CPUs shared with other work; wrk, the proxy and the backends all run on them at once, so every path is CPU-bound on the same cores and the numbers are noisy (load average %s before, %s after; the details show the CPU other processes took). Compare paths within one run.\n",
		env.CPUs, report.OrNA(env.LoadBefore), report.OrNA(env.LoadAfter))
}

// warmupText says whether each measured run came after a warm-up.
func warmupText(o options) string {
	if o.warmup == 0 {
		return "with no warm-up"
	}
	return fmt.Sprintf("after a %s warm-up", o.warmup)
}

// outputOnly are the flags that change where results go, not what is measured: the
// reproduce line leaves them out. The bool says whether the flag takes a value.
var outputOnly = map[string]bool{"out": true, "keep": false}

// reproduce is the command line that measures the same again.
func reproduce(args []string) string {
	return report.Reproduce("go run ./bench/albbench", args, outputOnly)
}
