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
//	go run ./bench/kubebench                                           # the full run (~45 min)
//	go run ./bench/kubebench --services 1000 --idle 30s --samples 5    # a quick one
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
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

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
	crossfade       string
	externalDNS     string
	out             string
	keep            bool
	cpuProfile      string
	memProfile      string
	seed            uint64
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
	fs.IntVar(&o.workers, "workers", 16, "concurrent API requests while creating and deleting the Services")
	tools := fs.String("tools", strings.Join(toolNames, ","), "tools to run, in order (comma-separated): "+strings.Join(toolNames, ", "))
	fs.StringVar(&o.crossfade, "crossfade", "", "crossfade binary (default: go build ./cmd/crossfade into the temp dir)")
	fs.StringVar(&o.externalDNS, "external-dns", filepath.Join(kubetest.BinDir(), "external-dns"), "external-dns v0.21.0 binary (scripts/deps.sh builds it)")
	fs.StringVar(&o.out, "out", "", "also write the Markdown report to this file")
	fs.BoolVar(&o.keep, "keep", false, "keep the temp dir (controller, etcd and kube-apiserver logs) after the run")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (the sandbox, the fixtures and the polls) to this file")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a heap profile of this process at the end to this file")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the sample order and gaps")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
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
	}
	return o, nil
}

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	opts, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		log.Error("kubebench: bad flags", "err", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = profiled(opts, func() error { return run(ctx, opts, log) })
	stop()
	if err != nil {
		log.Error("kubebench failed", "err", err)
		os.Exit(1)
	}
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
	dir, err := os.MkdirTemp("", "kubebench-")
	if err != nil {
		return fmt.Errorf("temp dir: %w", err)
	}
	defer func() {
		if o.keep {
			log.Info("kept the temp dir (logs)", "dir", dir)
			return
		}
		if rmErr := os.RemoveAll(dir); rmErr != nil {
			log.Warn("remove temp dir", "dir", dir, "err", rmErr)
		}
	}()

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

	var results []*result
	var failed []error
	for _, t := range tools {
		log.Info("benchmarking", "tool", t.title, "services", o.services)
		r := bed.measure(ctx, o, t, filepath.Join(dir, t.name+".log"), log)
		results = append(results, r)
		if ctx.Err() != nil {
			break // reported once, below
		}
		if r.err != nil {
			failed = append(failed, fmt.Errorf("%s: %w", t.title, r.err))
			log.Error("tool failed (--keep keeps its log)", "tool", t.title, "err", r.err)
		}
	}

	env.loadAfter = loadAverage()
	rep := renderReport(o, env, results)
	if _, werr := io.WriteString(w, rep); werr != nil {
		failed = append(failed, fmt.Errorf("write the report: %w", werr))
	}
	if o.out != "" {
		if werr := os.WriteFile(o.out, []byte(rep), 0o644); werr != nil {
			failed = append(failed, fmt.Errorf("write --out %s: %w", o.out, werr))
		}
	}
	if ctx.Err() != nil {
		failed = append(failed, context.Cause(ctx))
	}
	return errors.Join(failed...)
}

// maxServices is what the API server's service CIDR (10.96.0.0/16, kubetest) holds, less
// the kubernetes Service and some room.
const maxServices = 60000
