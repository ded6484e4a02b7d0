// Command dnsbench measures the crossfade sandbox against CoreDNS and Knot DNS on the same
// machine, in the same run: DNS queries per second and latency under dnsperf, on plain A
// records (sandbox, CoreDNS's file plugin, Knot) and on weighted A pairs (sandbox, against
// Knot's plain records), and the throughput of the sandbox's Route 53 API for full
// 1,000-change batches.
//
//	go run ./bench/dnsbench [-crossfade PATH] [-coredns PATH | -no-coredns] [-names 10000] [-duration 10s] [-enforce-goals] [-out FILE]
//
// It prints a Markdown report and exits non-zero if any step fails (or, with -enforce-goals,
// if a ratio misses its goal). Every child process it starts (two sandboxes, CoreDNS, knotd,
// dnsperf) is stopped before it returns, also on error or Ctrl-C.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/crossfade-io/crossfade/bench/internal/cli"
	"github.com/crossfade-io/crossfade/bench/internal/machine"
	"github.com/crossfade-io/crossfade/bench/internal/report"
)

// options are the command-line settings.
type options struct {
	crossfade        string
	coredns          string
	noCoreDNS        bool
	names            int
	duration         time.Duration
	rounds           int
	clients          int
	threads          int
	outstanding      int
	latencyRate      int
	latencyLength    time.Duration
	seed             uint64
	timeout          time.Duration
	minRatio         float64
	goalCoreDNS      float64
	goalKnotPlain    float64
	goalKnotWeighted float64
	enforceGoals     bool
	out              string
	keepTempOnFail   bool
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("dnsbench", flag.ContinueOnError)
	fs.StringVar(&o.crossfade, "crossfade", "", "crossfade binary to benchmark (default: build ./cmd/crossfade into the temp dir)")
	fs.StringVar(&o.coredns, "coredns", defaultCoreDNS(), "CoreDNS "+coreDNSVersion+" binary (scripts/deps.sh bench builds it there)")
	fs.BoolVar(&o.noCoreDNS, "no-coredns", false, "run without CoreDNS (its ratio is then left out of the report)")
	fs.IntVar(&o.names, "names", 10000, "number of names in the zone bench.test.")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "length of each dnsperf throughput run")
	fs.IntVar(&o.rounds, "rounds", 2, "throughput runs per server, the servers taking turns; the best is reported")
	fs.IntVar(&o.clients, "clients", 8, "dnsperf -c: simulated clients (UDP sockets; more spread queries over the servers' SO_REUSEPORT sockets)")
	fs.IntVar(&o.threads, "threads", 2, "dnsperf -T: dnsperf threads (it shares the CPUs with the server)")
	fs.IntVar(&o.outstanding, "outstanding", 1000, "dnsperf -q: queries in flight at once")
	fs.IntVar(&o.latencyRate, "latency-qps", 0, "offered rate of the latency (p99) run; 0: half the lower best qps of the two servers, -1: unlimited")
	fs.DurationVar(&o.latencyLength, "latency-duration", 5*time.Second, "length of the verbose dnsperf run per server that measures p99")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the query file's random order")
	fs.DurationVar(&o.timeout, "timeout", 0, "bound on the whole run (default: derived from the durations)")
	fs.Float64Var(&o.minRatio, "min-ratio", 0, "fail unless the weighted sandbox's qps / knot qps reaches this (0: report only)")
	fs.Float64Var(&o.goalCoreDNS, "goal-coredns", 1.5, "goal of sandbox plain qps / CoreDNS qps, reported (0: none)")
	fs.Float64Var(&o.goalKnotPlain, "goal-knot-plain", 0.85, "goal of sandbox plain qps / Knot qps, reported (0: none)")
	fs.Float64Var(&o.goalKnotWeighted, "goal-knot-weighted", 0.8, "goal of sandbox weighted qps / Knot qps, reported (0: none)")
	fs.BoolVar(&o.enforceGoals, "enforce-goals", false, "fail (after the report) if a ratio misses its goal")
	fs.StringVar(&o.out, "out", "", "also write the Markdown report to this file")
	fs.BoolVar(&o.keepTempOnFail, "keep", false, "keep the temp dir (configs, logs) when a step fails")
	if err := cli.Parse(fs, args); err != nil {
		return o, err
	}
	switch {
	case o.names < 1 || o.names > 100000:
		return o, fmt.Errorf("-names %d: want 1..100000 (names are h00000..h99999)", o.names)
	case o.duration < time.Second:
		return o, fmt.Errorf("-duration %s: want at least 1s", o.duration)
	case o.rounds < 1:
		return o, fmt.Errorf("-rounds %d: want at least 1", o.rounds)
	case o.clients < 1 || o.threads < 1 || o.threads > o.clients:
		return o, fmt.Errorf("-clients %d -threads %d: want 1 <= threads <= clients", o.clients, o.threads)
	case o.outstanding < 1:
		return o, fmt.Errorf("-outstanding %d: want at least 1", o.outstanding)
	case o.goalCoreDNS < 0 || o.goalKnotPlain < 0 || o.goalKnotWeighted < 0:
		return o, fmt.Errorf("-goal-coredns %g -goal-knot-plain %g -goal-knot-weighted %g: want ≥ 0", o.goalCoreDNS, o.goalKnotPlain, o.goalKnotWeighted)
	}
	if o.timeout == 0 {
		// Startup, population and checks take well under two minutes on a small machine;
		// the rest is the dnsperf runs, each with its own 5 s query timeout at the end.
		servers := time.Duration(o.servers())
		runs := servers*time.Duration(o.rounds)*(o.duration+10*time.Second) + servers*(o.latencyLength+10*time.Second)
		o.timeout = 3*time.Minute + runs
	}
	return o, nil
}

// servers is how many DNS servers a run measures: the weighted and the plain sandbox,
// Knot, and CoreDNS unless -no-coredns.
func (o options) servers() int {
	if o.noCoreDNS {
		return 3
	}
	return 4
}

func main() {
	os.Exit(cli.Main("dnsbench", os.Args[1:], parseFlags, run))
}

// run does the whole benchmark; every resource it takes is released by its defers, so it
// must return (not exit) on every path.
func run(ctx context.Context, o options, log *slog.Logger) (err error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()

	dir, done, err := cli.TempDir("dnsbench-", log)
	if err != nil {
		return err
	}
	defer func() { done(err != nil && o.keepTempOnFail) }()

	// Before any build: a missing CoreDNS should stop the run at once, saying how to get it.
	if !o.noCoreDNS {
		if err := checkCoreDNS(o.coredns); err != nil {
			return err
		}
	}
	env := describeMachine(ctx)
	binary := o.crossfade
	if binary == "" {
		if binary, err = buildCrossfade(ctx, dir, log); err != nil {
			return err
		}
	}

	// Two sandboxes, each serving bench.test. with the same names: the weighted pairs the
	// Route 53 API figures come from, and plain A records, the shape Knot and CoreDNS serve.
	// Separate processes keep the names identical and each one's CPU time its own.
	sb, err := startSandbox(ctx, binary, dir, "sandbox weighted", log)
	if err != nil {
		return err
	}
	defer stopChild(sb.Process, log)
	api, err := populateAPI(ctx, sb.apiURL, o.names, weightedPairs, log)
	if err != nil {
		return err
	}
	plain, err := startSandbox(ctx, binary, dir, "sandbox plain", log)
	if err != nil {
		return err
	}
	defer stopChild(plain.Process, log)
	if _, err := populateAPI(ctx, plain.apiURL, o.names, plainA, log); err != nil {
		return err
	}

	kn, err := startKnot(ctx, dir, o.names, log)
	if err != nil {
		return err
	}
	defer stopChild(kn.Process, log)

	targets := []*target{
		{name: "crossfade sandbox (weighted)", role: roleWeighted, kind: "weighted A pair (blue 1 / green 3)", addr: sb.dnsAddr, proc: sb.Process},
		{name: "crossfade sandbox (plain)", role: rolePlain, kind: "plain A", addr: plain.dnsAddr, proc: plain.Process},
	}
	if !o.noCoreDNS {
		cd, err := startCoreDNS(ctx, o.coredns, dir, o.names, log)
		if err != nil {
			return err
		}
		defer stopChild(cd.Process, log)
		targets = append(targets, &target{name: "CoreDNS " + coreDNSVersion + " (file plugin)", role: roleCoreDNS, kind: "plain A", addr: cd.addr, proc: cd.Process})
	}
	targets = append(targets, &target{name: "Knot DNS " + knotVersion(ctx), role: roleKnot, kind: "plain A", addr: kn.addr, proc: kn.Process})
	if err := checkAnswers(ctx, targets, o.names); err != nil {
		return err
	}

	queries := filepath.Join(dir, "queries.txt")
	if err := writeQueryFile(queries, o.names, o.seed); err != nil {
		return err
	}
	if err := measureDNS(ctx, o, queries, targets, log); err != nil {
		return err
	}

	env.LoadAfter = machine.LoadAverage()
	results := evalRatios(ratios(o), targets)
	if err := report.Write(os.Stdout, renderReport(o, env, targets, results, api), "-out", o.out); err != nil {
		return err
	}
	if o.minRatio > 0 {
		if r := weightedRatio(results); r < o.minRatio {
			return fmt.Errorf("sandbox weighted / knot qps ratio %.2f is below -min-ratio %.2f", r, o.minRatio)
		}
	}
	if o.enforceGoals {
		if err := goalErrors(results); err != nil {
			return fmt.Errorf("-enforce-goals: %w", err)
		}
	}
	return ctx.Err()
}
