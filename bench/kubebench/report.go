package main

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/bench/internal/machine"
	"github.com/crossfade-io/crossfade/bench/internal/report"
)

// Goals of issue 14 for crossfade, and the margin it must have over external-dns.
const (
	goalFirstSync = 10 * time.Second
	goalRSS       = 150 << 20
	goalIdleCalls = 0
	goalP99       = time.Second
	goalRatio     = 3.0
)

// environment describes where and when the run happened, and with what flags.
type environment struct {
	machine.Info
	args []string
}

func describe() environment {
	return environment{Info: machine.Describe(), args: os.Args[1:]}
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
			title:  fmt.Sprintf("first sync: process start → all %s records in the zone (goal < %s)", report.Thousands(o.services), goalFirstSync),
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

// renderReport renders the Markdown report of the services scenario alone.
func renderReport(o options, env environment, results []*result) string {
	return renderRun(o, env, results, nil, nil, nil)
}

// renderRun renders the Markdown report: for each scenario that ran (services, hold and
// cluster non-nil), its main table, a table of details, and how the numbers were made;
// then how to reproduce them.
func renderRun(o options, env environment, services []*result, hold *holdRun, soak *soakRun, cluster *clusterRun) string {
	var b strings.Builder
	if services != nil {
		writeServices(&b, o, env, services)
	}
	if hold != nil {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		writeHold(&b, o, env, hold)
	}
	if soak != nil {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		writeSoak(&b, o, env, soak)
	}
	if cluster != nil {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		writeCluster(&b, o, env, cluster)
	}
	fmt.Fprintf(&b, "\nReproduce (from the repository root; needs kube-apiserver, etcd and external-dns v0.21.0 in the cache, `scripts/deps.sh test`):\n\n```sh\n%s\n```\n", reproduce(env.args))
	return b.String()
}

// writeHeader writes a section's title and where it ran.
func writeHeader(b *strings.Builder, env environment, title string) {
	fmt.Fprintf(b, "## %s\n\n", title)
	fmt.Fprintf(b, "%s · %d CPUs (%s) · %s · kube-apiserver v1.31.4 + etcd v3.5.16 (internal/kubetest) · in-process sandbox\n\n",
		env.Date.Format("2006-01-02 15:04 UTC"), env.CPUs, report.OrNA(env.CPUModel), env.GoVersion)
}

// writeTable writes the main table: one row per metric, a column per tool, and the
// ratio column (external-dns ÷ crossfade) with ✓/✗ for the 3× goal where the metric has it.
func writeTable(b *strings.Builder, ms []metric, results []*result) {
	by := byTool(results)
	cf := by[toolCrossfade]
	others := []string{toolExternalDNS, toolExternalDNSEvents}
	fmt.Fprintf(b, "| metric | crossfade | external-dns (default) | external-dns --events | ratio (external-dns ÷ crossfade: default / --events) |\n")
	fmt.Fprintf(b, "|---|---|---|---|---|\n")
	for _, m := range ms {
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
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
}

// writeServices writes the services scenario's section.
func writeServices(b *strings.Builder, o options, env environment, results []*result) {
	writeHeader(b, env, fmt.Sprintf("crossfade controller vs external-dns: %s LoadBalancer Services", report.Thousands(o.services)))
	writeTable(b, metrics(o), results)
	fmt.Fprintf(b, "\n✓/✗: crossfade's goal (issue 14), and in the ratio column whether it is at least %.0f× better than each external-dns run.\n\n", goalRatio)

	row := detailsTable(b, results)
	row("version", func(r *result) string { return report.OrNA(r.version) })
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
	endRows(row)

	b.WriteString("\n### How it was measured\n\n")
	fmt.Fprintf(b, "- One kube-apiserver and one sandbox for all tools, which run one after the other, each on its own fresh zone `<tool>.%s` (removed after it stops) with `--txt-owner-id %s`, `--source service`, `--domain-filter <zone>`, `--policy sync`, and every other setting at the tool's default.\n", zoneSuffix, ownerID)
	fmt.Fprintf(b, "- Before each tool starts, %s Services `svc-N` in namespace `%s` are created (type LoadBalancer, `allocateLoadBalancerNodePorts: false`, hostname annotation `svc-N.<zone>`%s, load-balancer status IP 192.0.2.x); they are deleted after it stops.\n", report.Thousands(o.services), namespace, map[bool]string{true: " and 7 annotations no tool reads (Helm release, NLB settings, tags: `--bystanders`)"}[o.bystanders])
	b.WriteString("- First sync: from the process start until the sandbox's store (read in process: no API call) holds every `svc-N` A record with its address.\n")
	fmt.Fprintf(b, "- Idle: %s after the first sync, the sandbox's `crossfade_sandbox_api_calls_total` is read before and after a %s window in which nothing changes.\n", o.settle, o.idle)
	fmt.Fprintf(b, "- Change → answer: one merge patch sets a random Service's `%s` to a new address; the sandbox's DNS server is asked every %s until it answers it. The next change follows after %s plus a random pause uniform over the tool's cycle, so that it lands at a random point of it, as a real change would: 1 m for external-dns (its `--interval`), 5 s with `--events` (it syncs 5 s after an event), %s for crossfade (its debounce starts at the change). Every tool gets the same Services in the same order. p50/p99 are nearest-rank (below 100 samples, p99 is the largest).\n", targetAnnotation, dnsPollEvery, o.sampleGap, o.sampleGap)
	b.WriteString("- Peak RSS: `VmHWM` of the tool's process from `/proc/<pid>/status`, read after the samples, just before SIGTERM.\n")
	fmt.Fprintf(b, "- The machine has %d CPUs shared with other work; the API server, etcd, the sandbox and the tool all run on them, so times are noisy (load average %s before, %s after). Compare tools within one run.\n",
		env.CPUs, report.OrNA(env.LoadBefore), report.OrNA(env.LoadAfter))
}

// endRows adds the rows that end every details table: what the tool cost over the whole
// run, and how it failed.
func endRows(row func(name string, cell func(*result) string)) {
	row("RSS at the end: anonymous + file-backed (the binary)", func(r *result) string {
		if r.rssAnon == 0 && r.rssFile == 0 {
			return "n/a"
		}
		return mib(float64(r.rssAnon)) + " + " + mib(float64(r.rssFile))
	})
	row("CPU time over the whole run", func(r *result) string { return dur(r.cpu) })
	row("error", errorCell)
}

// detailsTable writes the header of a Details table with a column per result, and
// returns the function that writes one row of it.
func detailsTable(b *strings.Builder, results []*result) func(name string, cell func(*result) string) {
	b.WriteString("### Details\n\n")
	b.WriteString("| | " + strings.Join(titles(results), " | ") + " |\n")
	b.WriteString("|---" + strings.Repeat("|---", len(results)) + "|\n")
	return func(name string, cell func(*result) string) {
		cells := []string{name}
		for _, r := range results {
			cells = append(cells, cell(r))
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
}

// errorCell is the first line of a result's error, escaped for a table cell.
func errorCell(r *result) string { return report.ErrorCell(r.err) }

// clusterMetrics are the cluster scenario's rows: what the Pods, EndpointSlices and Nodes
// cost each tool. The goals of issue 14 are for a cluster of that many Services, so they
// hold here too.
func clusterMetrics(o options) []metric {
	return []metric{
		{
			title:  fmt.Sprintf("first sync: process start → all %s records in the zone (goal < %s)", report.Thousands(o.services), goalFirstSync),
			value:  func(r *result) (float64, bool) { return float64(r.firstSync), r.synced },
			format: seconds, goal: func(v float64) bool { return time.Duration(v) < goalFirstSync }, ratioGoal: true,
		},
		{
			title:  fmt.Sprintf("peak RSS, VmHWM %s after the first sync (goal < %d MiB)", o.settle+o.clusterHold, goalRSS>>20),
			value:  func(r *result) (float64, bool) { return float64(r.peakRSS), r.peakRSS > 0 },
			format: mib, goal: func(v float64) bool { return v < goalRSS }, ratioGoal: true,
		},
		{
			title:  "CPU time at the first sync (user + system)",
			value:  func(r *result) (float64, bool) { return float64(r.syncCPU), r.synced && r.syncCPU > 0 },
			format: seconds, ratioGoal: true,
		},
	}
}

// writeCluster writes the cluster scenario's section.
func writeCluster(b *strings.Builder, o options, env environment, run *clusterRun) {
	l := o.layout()
	writeHeader(b, env, fmt.Sprintf("crossfade controller vs external-dns in a cluster: %s LoadBalancer Services, %s Running Pods, %s EndpointSlices, %s Nodes",
		report.Thousands(l.services), report.Thousands(l.pods()), report.Thousands(l.services), report.Thousands(l.nodes)))
	if run.err != nil {
		line, _, _ := strings.Cut(run.err.Error(), "\n")
		fmt.Fprintf(b, "Creating the cluster's objects failed, so no tool ran: %s\n", line)
	} else {
		writeTable(b, clusterMetrics(o), run.results)
		fmt.Fprintf(b, "\n✓/✗: crossfade's goal (issue 14), and in the ratio column whether it is at least %.0f× better than each external-dns run.\n\n", goalRatio)
		row := detailsTable(b, run.results)
		row("version", func(r *result) string { return report.OrNA(r.version) })
		row("Services created in (before the start)", func(r *result) string { return dur(r.create) })
		row("Route 53 calls during the first sync", func(r *result) string {
			if !r.synced {
				return "n/a"
			}
			return fmt.Sprintf("%d: %s", r.syncCalls.total(), r.syncCalls)
		})
		row("record sets in the zone at the first sync", func(r *result) string { return ifSynced(r, fmt.Sprint(r.records)) })
		row(fmt.Sprintf("Route 53 calls in the %s hold", o.clusterHold), func(r *result) string {
			if r.idle == 0 {
				return "n/a"
			}
			return fmt.Sprintf("%d: %s", r.idleCalls.total(), r.idleCalls)
		})
		endRows(row)
	}

	b.WriteString("\n### How it was measured\n\n")
	fmt.Fprintf(b, "- The same API server, sandbox, tools and settings as the services scenario (`--source service`, every other setting at the tool's default), after it: each tool on a fresh zone `<tool>.%s`.\n", zoneSuffix)
	b.WriteString("- What the tools watch with these settings: external-dns v0.21.0's service source, whose default `--service-type-filter` includes ClusterIP and NodePort, keeps informers over every Service, EndpointSlice, Pod and Node of the cluster; crossfade over Services, EndpointSlices and Nodes (it keeps only a Node's addresses), and no Pods.\n")
	if fx := run.fixtures; fx != nil {
		fmt.Fprintf(b, "- Created once, before the first tool, in %s with %d concurrent requests (no scheduler, controller-manager or kubelet runs: kubebench writes the objects as they would), and left until the API server goes at the end of the run (the scenario runs last). The JSON size is of the object as the API server returned it after its last write (what it stores, managed fields included; without them in parentheses):\n", dur(fx.took()), o.workers)
		fmt.Fprintf(b, "  - %s Nodes in %s, %s bytes each on average (%s): EKS m5.4xlarge nodes `ip-10-0-x-y.ec2.internal` over 3 zones, with the EKS and topology labels, a provider ID, addresses InternalIP (10.0.0.0/16), ExternalIP (198.18.0.0/15), InternalDNS, Hostname and ExternalDNS, capacity and allocatable, 5 conditions, nodeInfo and 10 images with sizes.\n",
			report.Thousands(int(fx.nodes.count)), dur(fx.nodes.took), report.Thousands(int(fx.nodes.avg())), report.Thousands(int(fx.nodes.avgNoManaged())))
		fmt.Fprintf(b, "  - %s Pods, %d per Service, in %s, %s bytes each on average (%s): created as a Deployment's ReplicaSet creates them (`svc-N-<hash>-<5 chars>`, labels `app=svc-N` and `pod-template-hash`, a controller owner reference to the ReplicaSet, one container with image, port, 5 env vars, requests and limits, liveness and readiness HTTP probes, the `kube-api-access` projected volume and its mount, the default tolerations, `serviceAccountName`, `nodeName` spread over the Nodes), then set Running through the status subresource as the kubelet reports it (5 conditions, hostIP, podIP from 10.244.0.0/16, a ready and started container status with imageID and containerID, qosClass Burstable, startTime): 2 requests per Pod.\n",
			report.Thousands(int(fx.pods.count)), l.podsPerService, dur(fx.pods.took), report.Thousands(int(fx.pods.avg())), report.Thousands(int(fx.pods.avgNoManaged())))
		fmt.Fprintf(b, "  - %s EndpointSlices, one per Service, in %s, %s bytes each on average (%s): as the EndpointSlice controller writes them (labels `kubernetes.io/service-name` and `endpointslice.kubernetes.io/managed-by`, an owner reference to the Service, IPv4, one port, an endpoint per Pod with its IP, ready/serving/terminating, nodeName, zone and a targetRef to the Pod).\n",
			report.Thousands(int(fx.slices.count)), dur(fx.slices.took), report.Thousands(int(fx.slices.avg())), report.Thousands(int(fx.slices.avgNoManaged())))
		b.WriteString("  - No ReplicaSets, Deployments or (v1) Endpoints: neither tool reads them.\n")
	}
	fmt.Fprintf(b, "- Before each tool starts, the same %s LoadBalancer Services as in the services scenario are created, each with `spec.selector: {app: svc-N}`; they are deleted after it stops.\n", report.Thousands(o.services))
	fmt.Fprintf(b, "- First sync and the CPU time at it: as in the services scenario; the CPU time is the tool's user + system time from `/proc/<pid>/stat` when the last record appears. Then the tool runs on for %s plus a %s hold, so that it goes through one periodic sync (both tools' interval is 1 m), and its `VmHWM` is read just before SIGTERM. No change-to-answer samples and no idle window here: neither depends on the Pods (the Route 53 calls of the hold are in the details).\n", o.settle, o.clusterHold)
	fmt.Fprintf(b, "- The machine has %d CPUs shared with other work; the API server, etcd, the sandbox and the tool all run on them, so times are noisy (load average %s before, %s after). Compare tools within one run.\n",
		env.CPUs, report.OrNA(env.LoadBefore), report.OrNA(env.LoadAfter))
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

// outputOnly are the flags that change where results go, not what is measured: the
// reproduce line leaves them out. The bool says whether the flag takes a value.
var outputOnly = map[string]bool{"out": true, "keep": false, "cpuprofile": true, "memprofile": true}

// reproduce is the command line that measures the same again.
func reproduce(args []string) string {
	return report.Reproduce("go run ./bench/kubebench", args, outputOnly)
}
