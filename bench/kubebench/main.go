// Command kubebench runs `crossfade controller` and external-dns v0.21.0 side by side,
// one after the other, against one real kube-apiserver (internal/kubetest) and one
// in-process sandbox (its Route 53 API and its DNS server), and prints a Markdown table:
//
//   - first sync: from the controller's process start until every one of --services
//     LoadBalancer Services has its A record in the zone (read from the sandbox's store
//     in process, so polling costs no API call), and the peak RSS (VmHWM) of the process;
//   - Route 53 API calls during an --idle window after convergence (from the sandbox's
//     call counters);
//   - change-to-answer: the time from a change of one Service's target annotation until
//     the sandbox's DNS server answers the new address, polled every 10 ms; p50 and p99.
//
// It measures crossfade, external-dns at its default --interval=1m, and external-dns with
// --events, each on a fresh zone with the same owner id, on freshly created Services.
//
// That is the "services" scenario: the API server holds the Services and nothing else. The
// "cluster" scenario runs every tool again on Services that select Pods, with --nodes Nodes,
// --pods-per-service Running Pods per Service and one EndpointSlice per Service created
// once before its first tool, as a real cluster holds them (external-dns v0.21.0's service
// source keeps an informer over every Pod; crossfade watches no Pods). It measures the
// first sync, the peak RSS after a --cluster-hold window and the CPU time at the first sync.
//
// The "hold" scenario (crossfade only, not run by default) measures issue 25's promise: one
// weighted Service published by the controller at its default --hold-probe-interval and
// --resync-interval, and a cutover's authority record written again and again; it measures
// the time until the controller confirms each hold in the member's ownership record, and
// the Route 53 calls meanwhile (hold.go).
//
//	go run ./bench/kubebench                                           # both scenarios (~55 min)
//	go run ./bench/kubebench --scenarios cluster                       # the cluster one (~11 min)
//	go run ./bench/kubebench --services 1000 --idle 30s --samples 5    # a quick one
//	go run ./bench/kubebench --tools crossfade --scenarios hold        # the hold one (~10 min)
//
// Every process it starts (etcd, kube-apiserver, the controllers) runs on loopback only and
// is stopped before it returns, also on error or Ctrl-C.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/bench/internal/cli"
	"github.com/crossfade-io/crossfade/bench/internal/machine"
	"github.com/crossfade-io/crossfade/bench/internal/report"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/kubetest"
)

// options are the command-line settings.
type options struct {
	services        int
	idle            time.Duration
	samples         int
	intervalSamples int
	sampleTimeout   time.Duration
	sampleGap       time.Duration
	settle          time.Duration
	syncTimeout     time.Duration
	workers         int
	tools           []string
	scenarios       []string
	podsPerService  int
	nodes           int
	clusterHold     time.Duration
	crossfade       string
	externalDNS     string
	out             string
	keep            bool
	cpuProfile      string
	memProfile      string
	seed            uint64
	bystanders      bool
	holdSamples     int
	holdProbe       time.Duration
	holdTimeout     time.Duration
	soak            time.Duration
	soakEvery       time.Duration
	soakSettle      time.Duration
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("kubebench", flag.ContinueOnError)
	fs.IntVar(&o.services, "services", 10000, "LoadBalancer Services to publish (each svc-N.<zone>)")
	fs.DurationVar(&o.idle, "idle", 5*time.Minute, "length of the idle window whose Route 53 API calls are counted")
	fs.IntVar(&o.samples, "samples", 50, "change-to-answer samples for crossfade and external-dns --events")
	fs.IntVar(&o.intervalSamples, "interval-samples", 10, "change-to-answer samples for external-dns at its default 1 m interval (each takes up to a minute)")
	fs.DurationVar(&o.sampleTimeout, "sample-timeout", 3*time.Minute, "give up on one change-to-answer sample after this long")
	fs.DurationVar(&o.sampleGap, "sample-gap", time.Second, "least pause between samples; a random extra, uniform over the tool's cycle (1 m for external-dns, 5 s with --events, this much for crossfade), lands each change at a random point of it")
	fs.DurationVar(&o.settle, "settle", 10*time.Second, "wait after convergence before the idle window starts, for the write in flight to finish")
	fs.DurationVar(&o.syncTimeout, "sync-timeout", 15*time.Minute, "give up on a first sync after this long")
	fs.BoolVar(&o.bystanders, "bystanders", false, "give every Service also the 7 annotations a Helm-installed Service behind the AWS Load Balancer Controller carries (Helm release, NLB settings, tags), which neither tool reads")
	fs.IntVar(&o.workers, "workers", 16, "concurrent API requests while creating and deleting the Services and creating the cluster scenario's objects")
	scenarios := fs.String("scenarios", strings.Join(defaultScenarios, ","), "scenarios to run (comma-separated; run in this order whatever the order given): "+
		"services (the Services alone), hold (crossfade only: a cutover's hold of a weighted member, confirmed by the controller; issue 25), soak (crossfade only: at rest for --soak after the first sync; issue 32), cluster (Services selecting Running Pods, with their EndpointSlices and Nodes)")
	fs.IntVar(&o.holdSamples, "hold-samples", 3, "hold scenario: holds to confirm (each takes up to twice the probe interval, 2m by default, plus a pause of up to one)")
	fs.DurationVar(&o.holdProbe, "hold-probe-interval", 0, "hold scenario: the controller's --hold-probe-interval (0: not passed, its default "+controller.DefaultHoldProbe.String()+")")
	fs.DurationVar(&o.holdTimeout, "hold-timeout", goalHoldConfirm+time.Minute, "hold scenario: give up on a confirmation (or its removal) after this long")
	fs.DurationVar(&o.soak, "soak", time.Hour, "soak scenario: how long the controller runs at rest after its first sync")
	fs.DurationVar(&o.soakEvery, "soak-every", time.Minute, "soak scenario: time between two readings of its CPU, goroutines and heap")
	fs.DurationVar(&o.soakSettle, "soak-settle", 11*time.Minute, "soak scenario: wait after the first sync before the window starts: the controller keeps what its first sync built until its first periodic full re-plan (--full-reconcile-interval, 10m)")
	fs.IntVar(&o.podsPerService, "pods-per-service", 3, "cluster scenario: Running Pods behind each Service")
	fs.IntVar(&o.nodes, "nodes", 20, "cluster scenario: Nodes the Pods run on")
	fs.DurationVar(&o.clusterHold, "cluster-hold", 70*time.Second, "cluster scenario: keep each tool running this long after the first sync (and --settle) before its peak RSS is read, so that it goes through one periodic sync (both tools' interval is 1m)")
	tools := fs.String("tools", strings.Join(toolNames, ","), "tools to run, in order (comma-separated): "+strings.Join(toolNames, ", "))
	fs.StringVar(&o.crossfade, "crossfade", "", "crossfade binary (default: go build ./cmd/crossfade into the temp dir)")
	fs.StringVar(&o.externalDNS, "external-dns", filepath.Join(kubetest.BinDir(), "external-dns"), "external-dns v0.21.0 binary (scripts/deps.sh builds it)")
	fs.StringVar(&o.out, "out", "", "also write the Markdown report to this file")
	fs.BoolVar(&o.keep, "keep", false, "keep the temp dir (controller, etcd and kube-apiserver logs) after the run")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (the sandbox, the fixtures and the polls) to this file")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a heap profile of this process at the end to this file")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the sample order and gaps")
	err := cli.Parse(fs, args)
	if err != nil {
		return o, err
	}
	for _, t := range strings.Split(*tools, ",") {
		t = strings.TrimSpace(t)
		if !slices.Contains(toolNames, t) {
			return o, fmt.Errorf("--tools: unknown tool %q; want some of %s", t, strings.Join(toolNames, ", "))
		}
		if slices.Contains(o.tools, t) {
			return o, fmt.Errorf("--tools: %q twice", t)
		}
		o.tools = append(o.tools, t)
	}
	if o.scenarios, err = parseScenarios(*scenarios); err != nil {
		return o, err
	}
	switch {
	case o.services < 1 || o.services > maxServices:
		return o, fmt.Errorf("--services %d: want 1..%d (the API server's service CIDR holds %d cluster IPs)", o.services, maxServices, maxServices)
	case o.idle < 0:
		return o, fmt.Errorf("--idle %s: want 0 or more", o.idle)
	case o.samples < 0 || o.intervalSamples < 0:
		return o, fmt.Errorf("--samples %d --interval-samples %d: want 0 or more", o.samples, o.intervalSamples)
	case o.sampleTimeout <= 0 || o.syncTimeout <= 0:
		return o, errors.New("--sample-timeout and --sync-timeout: want more than 0")
	case o.sampleGap < 0 || o.settle < 0:
		return o, errors.New("--sample-gap and --settle: want 0 or more")
	case o.workers < 1:
		return o, fmt.Errorf("--workers %d: want at least 1", o.workers)
	case o.podsPerService < 1 || o.podsPerService > maxPodsPerService:
		return o, fmt.Errorf("--pods-per-service %d: want 1..%d (one EndpointSlice per Service holds them)", o.podsPerService, maxPodsPerService)
	case o.nodes < 1 || o.nodes > maxNodes:
		return o, fmt.Errorf("--nodes %d: want 1..%d", o.nodes, maxNodes)
	case o.clusterHold < 0:
		return o, fmt.Errorf("--cluster-hold %s: want 0 or more", o.clusterHold)
	case o.holdSamples < 1 || o.holdProbe < 0 || o.holdTimeout <= 0:
		return o, fmt.Errorf("--hold-samples %d --hold-probe-interval %s --hold-timeout %s: want at least 1, 0 or more, more than 0", o.holdSamples, o.holdProbe, o.holdTimeout)
	case o.soak <= 0 || o.soakEvery <= 0:
		return o, fmt.Errorf("--soak %s --soak-every %s: want more than 0", o.soak, o.soakEvery)
	case o.soakSettle < 0:
		return o, fmt.Errorf("--soak-settle %s: want 0 or more", o.soakSettle)
	case o.has(scenarioSoak) && !slices.Contains(o.tools, toolCrossfade):
		return o, errors.New("--scenarios soak measures crossfade only: add crossfade to --tools")
	case o.has(scenarioHold) && !slices.Contains(o.tools, toolCrossfade):
		return o, errors.New("--scenarios hold measures crossfade only (external-dns confirms no cutover's hold): add crossfade to --tools")
	case o.has(scenarioCluster) && o.services*o.podsPerService > maxPods:
		return o, fmt.Errorf("--services %d × --pods-per-service %d = %d Pods: the Pod network 10.244.0.0/16 holds %d",
			o.services, o.podsPerService, o.services*o.podsPerService, maxPods)
	}
	return o, nil
}

// The scenarios, as --scenarios names them, in the order they run. cluster runs last:
// its Pods, EndpointSlices and Nodes stay until the API server goes.
const (
	scenarioServices = "services"
	scenarioHold     = "hold"
	scenarioSoak     = "soak"
	scenarioCluster  = "cluster"
)

var scenarioNames = []string{scenarioServices, scenarioHold, scenarioSoak, scenarioCluster}

// defaultScenarios are the ones run without --scenarios: the comparisons with
// external-dns (hold measures crossfade alone, and takes minutes per sample).
var defaultScenarios = []string{scenarioServices, scenarioCluster}

// parseScenarios reads --scenarios: known names, each once, at least one; returned in
// the order they run.
func parseScenarios(s string) ([]string, error) {
	var asked []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			continue
		case !slices.Contains(scenarioNames, name):
			return nil, fmt.Errorf("--scenarios: unknown scenario %q; want some of %s", name, strings.Join(scenarioNames, ", "))
		case slices.Contains(asked, name):
			return nil, fmt.Errorf("--scenarios: %q twice", name)
		}
		asked = append(asked, name)
	}
	if len(asked) == 0 {
		return nil, fmt.Errorf("--scenarios %q: want one or more of %s", s, strings.Join(scenarioNames, ", "))
	}
	var out []string
	for _, name := range scenarioNames {
		if slices.Contains(asked, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// has reports whether --scenarios asks for scenario.
func (o options) has(scenario string) bool { return slices.Contains(o.scenarios, scenario) }

// layout is the cluster scenario's shape as the flags ask for it.
func (o options) layout() clusterLayout {
	return clusterLayout{services: o.services, podsPerService: o.podsPerService, nodes: o.nodes}
}

func main() {
	os.Exit(cli.Main("kubebench", os.Args[1:], parseFlags, func(ctx context.Context, o options, log *slog.Logger) error {
		return profiled(o, func() error { return run(ctx, o, log) })
	}))
}

// profiled runs f under the CPU profile and writes the heap profile after it, as the
// flags ask.
func profiled(o options, f func() error) error {
	if o.cpuProfile != "" {
		pf, err := os.Create(o.cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	err := f()
	if o.memProfile != "" {
		runtime.GC()
		pf, perr := os.Create(o.memProfile)
		if perr == nil {
			perr = pprof.WriteHeapProfile(pf)
			perr = errors.Join(perr, pf.Close())
		}
		if perr != nil {
			err = errors.Join(err, fmt.Errorf("--memprofile: %w", perr))
		}
	}
	return err
}

// run does the whole benchmark and prints the report on stdout.
func run(ctx context.Context, o options, log *slog.Logger) error {
	return runTo(ctx, o, log, os.Stdout)
}

// runTo does the whole benchmark and writes the report to w (and to --out). Every
// resource it takes is released by its defers, so it must return (not exit) on every
// path.
func runTo(ctx context.Context, o options, log *slog.Logger, w io.Writer) (err error) {
	dir, done, err := cli.TempDir("kubebench-", log)
	if err != nil {
		return err
	}
	defer func() { done(o.keep) }()

	tools, err := o.selectTools()
	if err != nil {
		return err
	}
	if o.crossfade == "" && slices.ContainsFunc(tools, func(t tool) bool { return t.kind == kindCrossfade }) {
		if o.crossfade, err = buildCrossfade(ctx, dir, log); err != nil {
			return err
		}
	}
	env := describe()

	bed, err := startBed(ctx, dir, log)
	if err != nil {
		return err
	}
	defer bed.close(log)

	var failed []error
	// nil: the scenario did not run.
	var services []*result
	var cluster *clusterRun
	var hold *holdRun
	var soak *soakRun
	if o.has(scenarioServices) {
		services, failed = bed.runTools(ctx, o, scenarioServices, tools, dir, log)
	}
	if i := slices.IndexFunc(tools, func(t tool) bool { return t.name == toolCrossfade }); o.has(scenarioHold) && i >= 0 && ctx.Err() == nil {
		log.Info("benchmarking", "scenario", scenarioHold, "tool", tools[i].title, "samples", o.holdSamples)
		hold = bed.measureHold(ctx, o, tools[i], filepath.Join(dir, tools[i].name+"-"+scenarioHold+".log"), log)
		if hold.err != nil && ctx.Err() == nil {
			failed = append(failed, fmt.Errorf("%s (%s): %w", tools[i].title, scenarioHold, hold.err))
			log.Error("tool failed (--keep keeps its log)", "scenario", scenarioHold, "tool", tools[i].title, "err", hold.err)
		}
	}
	if i := slices.IndexFunc(tools, func(t tool) bool { return t.name == toolCrossfade }); o.has(scenarioSoak) && i >= 0 && ctx.Err() == nil {
		log.Info("benchmarking", "scenario", scenarioSoak, "tool", tools[i].title, "length", o.soak)
		soak = bed.measureSoak(ctx, o, tools[i], filepath.Join(dir, tools[i].name+"-"+scenarioSoak+".log"), log)
		if soak.err != nil && ctx.Err() == nil {
			failed = append(failed, fmt.Errorf("%s (%s): %w", tools[i].title, scenarioSoak, soak.err))
			log.Error("tool failed (--keep keeps its log)", "scenario", scenarioSoak, "tool", tools[i].title, "err", soak.err)
		}
	}
	if o.has(scenarioCluster) && ctx.Err() == nil {
		cluster = &clusterRun{}
		l := o.layout()
		log.Info("creating the cluster's objects", "nodes", l.nodes, "pods", l.pods(), "endpointslices", l.services)
		// Left in place at the end: the cluster scenario runs last, and the API server
		// goes with the run.
		cluster.fixtures, cluster.err = createCluster(ctx, bed.kube, l, o.workers, log)
		if cluster.err != nil {
			failed = append(failed, fmt.Errorf("cluster scenario: %w", cluster.err))
		} else {
			var fails []error
			cluster.results, fails = bed.runTools(ctx, o, scenarioCluster, tools, dir, log)
			failed = append(failed, fails...)
		}
	}

	env.LoadAfter = machine.LoadAverage()
	if werr := report.Write(w, renderRun(o, env, services, hold, soak, cluster), "--out", o.out); werr != nil {
		failed = append(failed, werr)
	}
	if ctx.Err() != nil {
		failed = append(failed, context.Cause(ctx))
	}
	return errors.Join(failed...)
}

// clusterRun is what the cluster scenario made and measured.
type clusterRun struct {
	fixtures *clusterFixtures
	err      error // creating the fixtures failed: no tool ran
	results  []*result
}

// runTools measures every tool in one scenario, one after the other, and returns their
// results and the failures. It stops early once ctx ends.
func (b *bed) runTools(ctx context.Context, o options, scenario string, tools []tool, dir string, log *slog.Logger) ([]*result, []error) {
	results := []*result{}
	var failed []error
	for _, t := range tools {
		log.Info("benchmarking", "scenario", scenario, "tool", t.title, "services", o.services)
		logName := t.name + ".log"
		if scenario != scenarioServices {
			logName = t.name + "-" + scenario + ".log"
		}
		r := b.measure(ctx, o, scenario, t, filepath.Join(dir, logName), log)
		results = append(results, r)
		if ctx.Err() != nil {
			break // reported once, by the caller
		}
		if r.err != nil {
			failed = append(failed, fmt.Errorf("%s (%s): %w", t.title, scenario, r.err))
			log.Error("tool failed (--keep keeps its log)", "scenario", scenario, "tool", t.title, "err", r.err)
		}
	}
	return results, failed
}

// maxServices is what the API server's service CIDR (10.96.0.0/16, kubetest) holds, less
// the kubernetes Service and some room.
const maxServices = 60000
