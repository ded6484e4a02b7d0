// Command albbench measures the sandbox's ALB data plane, internal/sandbox/albproxy,
// against Debian's nginx as a reverse proxy to the same backends, side by side in one
// run, with wrk as the load:
//
//   - four small Go HTTP servers on 127.0.0.1 (two per target group, blue and green)
//     answer every request with the same small body;
//   - the albproxy, in a process of its own, serves one listener whose default action
//     forwards 50/50 to the two groups (ALB's default health check on /healthz; the run
//     starts once every target is healthy);
//   - nginx, from a generated nginx.conf in the temp dir (run in the foreground with -p
//     and -c, logs and temp files in the temp dir), proxies to one upstream of the same
//     four backends, weight 1 each, with a keepalive cache to them;
//   - the baseline is wrk straight to one backend.
//
// For each, after a --warmup run whose numbers are dropped, one wrk run of --duration at
// --connections over --threads gives throughput and latency p50/p99; "added" latency is
// the proxy's percentile less the direct one. It prints a Markdown table, how it was
// measured (CPU used by each process, load average) and the command to reproduce it.
//
//	go run ./bench/albbench                                   # 64 connections, 2 threads, 5 s + 20 s each
//	go run ./bench/albbench -duration 10s -connections 16 -out albbench.md
//
// Needs nginx and wrk on PATH (Debian packages nginx and wrk). Everything listens on
// 127.0.0.1 only; every process it starts is stopped before it returns, also on error or
// Ctrl-C.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/bench/internal/cli"
	"github.com/crossfade-io/crossfade/bench/internal/machine"
	"github.com/crossfade-io/crossfade/bench/internal/report"
	"github.com/crossfade-io/crossfade/internal/child"
)

// options are the command-line settings.
type options struct {
	connections    int
	threads        int
	duration       time.Duration
	warmup         time.Duration
	body           int
	nginx          string
	wrk            string
	nginxWorkers   string
	nginxKeepalive int
	nginxAccessLog bool
	out            string
	keep           bool
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("albbench", flag.ContinueOnError)
	fs.IntVar(&o.connections, "connections", 64, "wrk connections held open (-c)")
	fs.IntVar(&o.threads, "threads", 2, "wrk threads (-t)")
	fs.DurationVar(&o.duration, "duration", 20*time.Second, "measured wrk run per path (whole seconds)")
	fs.DurationVar(&o.warmup, "warmup", 5*time.Second, "wrk run before each measured one, its numbers dropped (whole seconds; 0: none)")
	fs.IntVar(&o.body, "body", 64, "bytes of every backend answer")
	fs.StringVar(&o.nginx, "nginx", "nginx", "nginx binary (Debian package nginx)")
	fs.StringVar(&o.wrk, "wrk", "wrk", "wrk binary (Debian package wrk)")
	fs.StringVar(&o.nginxWorkers, "nginx-workers", "auto", "nginx worker_processes: auto (one per CPU) or a count")
	fs.IntVar(&o.nginxKeepalive, "nginx-keepalive", 64, "idle keep-alive connections to the backends each nginx worker keeps (upstream keepalive)")
	fs.BoolVar(&o.nginxAccessLog, "nginx-access-log", false, "nginx writes a buffered access log in the temp dir (the albproxy writes none, so off by default)")
	fs.StringVar(&o.out, "out", "", "also write the Markdown report to this file")
	fs.BoolVar(&o.keep, "keep", false, "keep the temp dir (nginx.conf, the logs) after the run")
	if err := cli.Parse(fs, args); err != nil {
		return o, err
	}
	whole := func(d time.Duration) bool { return d%time.Second == 0 }
	switch {
	case o.connections < 1 || o.threads < 1 || o.threads > o.connections:
		return o, fmt.Errorf("-connections %d -threads %d: want 1 ≤ threads ≤ connections (wrk gives each thread at least one)", o.connections, o.threads)
	case o.duration < time.Second || !whole(o.duration):
		return o, fmt.Errorf("-duration %s: want whole seconds, at least 1s (wrk counts in seconds)", o.duration)
	case o.warmup < 0 || !whole(o.warmup):
		return o, fmt.Errorf("-warmup %s: want 0 or whole seconds", o.warmup)
	case o.body < 1 || o.body > 1<<20:
		return o, fmt.Errorf("-body %d: want 1 to 1048576 bytes", o.body)
	case o.nginxKeepalive < 1:
		return o, fmt.Errorf("-nginx-keepalive %d: want at least 1", o.nginxKeepalive)
	case o.nginxWorkers != "auto" && !isPositive(o.nginxWorkers):
		return o, fmt.Errorf("-nginx-workers %q: want auto or a count", o.nginxWorkers)
	}
	return o, nil
}

func isPositive(s string) bool {
	var n int
	_, err := fmt.Sscanf(s, "%d", &n)
	return err == nil && n > 0 && fmt.Sprint(n) == s
}

func main() {
	if os.Getenv(childEnv) == childALBProxy {
		os.Exit(serveALBProxy())
	}
	os.Exit(cli.Main("albbench", os.Args[1:], parseFlags, func(ctx context.Context, o options, log *slog.Logger) error {
		_, err := runTo(ctx, o, log, os.Stdout, os.Args[1:])
		return err
	}))
}

// The paths measured, in the order they run.
const (
	pathDirect   = "direct"
	pathALBProxy = "albproxy"
	pathNginx    = "nginx"
)

// path is one way to the backends that wrk measures.
type path struct {
	name  string
	title string
	url   string
	// proc is the proxy's process (nil for direct), and cpu reads its process tree's CPU time.
	proc *child.Process
	cpu  func() (time.Duration, error)
}

// run is what one benchmark run made and measured.
type run struct {
	env      environment
	backends []*backend
	results  []*result
	// The proxies' process ids, for tests that check they are gone.
	albPID, nginxPID int
}

// runTo does the whole benchmark and writes the report to w (and to -out); args are the
// flags as given, for the reproduce line. Every resource it takes is released by its
// defers, so it returns (never exits) on every path, Ctrl-C included.
func runTo(ctx context.Context, o options, log *slog.Logger, w io.Writer, args []string) (*run, error) {
	nginxBin, err := exec.LookPath(o.nginx)
	if err != nil {
		return nil, fmt.Errorf("nginx: %w (Debian: apt-get install nginx, or scripts/deps.sh bench)", err)
	}
	wrkBin, err := exec.LookPath(o.wrk)
	if err != nil {
		return nil, fmt.Errorf("wrk: %w (Debian: apt-get install wrk, or scripts/deps.sh bench)", err)
	}
	env := describe(args)
	if env.nginxVersion, err = nginxVersion(ctx, nginxBin); err != nil {
		return nil, err
	}
	env.wrkVersion = wrkVersion(ctx, wrkBin)

	dir, done, err := cli.TempDir("albbench-", log)
	if err != nil {
		return nil, err
	}
	defer func() { done(o.keep) }()
	// Run as root, nginx's workers switch to user nobody and must reach their temp paths
	// in here. Nothing in it is secret.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}

	r := &run{env: env}
	r.backends, err = startBackends([]string{"blue", "green"}, o.body)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := closeBackends(r.backends); cerr != nil {
			log.Warn("close backends", "err", cerr)
		}
	}()

	log.Info("starting the albproxy", "targets", len(r.backends))
	alb, err := startALBProxy(ctx, dir, albConfig(r.backends), log)
	if err != nil {
		return nil, err
	}
	defer alb.stop(log)
	r.albPID = alb.Pid()

	listen, err := freeAddr()
	if err != nil {
		return nil, err
	}
	conf := nginxConf{
		dir: filepath.Join(dir, "nginx"), listen: listen, workers: o.nginxWorkers,
		keepalive: o.nginxKeepalive, accessLog: o.nginxAccessLog,
	}
	for _, b := range r.backends {
		conf.upstreams = append(conf.upstreams, upstream{Addr: b.addr(), Name: b.name})
	}
	log.Info("starting nginx", "version", env.nginxVersion, "listen", listen)
	ngx, err := startNginx(ctx, nginxBin, conf, log)
	if err != nil {
		return nil, err
	}
	defer stopChild(ngx, log)
	r.nginxPID = ngx.Pid()

	paths := []path{
		{name: pathDirect, title: "direct to one backend (baseline)", url: "http://" + r.backends[0].addr() + "/"},
		{name: pathALBProxy, title: "sandbox albproxy", url: "http://" + alb.addr + "/", proc: alb.Process,
			cpu: func() (time.Duration, error) { return child.CPUTime(r.albPID) }},
		{name: pathNginx, title: "nginx " + strings.TrimPrefix(env.nginxVersion, "nginx/"), url: "http://" + listen + "/", proc: ngx,
			cpu: func() (time.Duration, error) { return child.TreeCPUTime(r.nginxPID) }},
	}
	var failed []error
	for _, p := range paths {
		if ctx.Err() != nil {
			break
		}
		log.Info("measuring", "path", p.name, "url", p.url, "warmup", o.warmup, "duration", o.duration)
		res := measure(ctx, o, wrkBin, p, r.backends)
		r.results = append(r.results, res)
		switch {
		case ctx.Err() != nil:
		case res.err != nil:
			failed = append(failed, fmt.Errorf("%s: %w", p.name, res.err))
			log.Error("path failed (-keep keeps the logs)", "path", p.name, "err", res.err)
		case res.wrk.failed() > 0:
			failed = append(failed, fmt.Errorf("%s: %d of %d requests failed", p.name, res.wrk.failed(), res.wrk.requests))
		}
	}

	r.env.LoadAfter = machine.LoadAverage()
	if werr := report.Write(w, render(o, r), "-out", o.out); werr != nil {
		failed = append(failed, werr)
	}
	if ctx.Err() != nil {
		failed = append(failed, context.Cause(ctx))
	}
	return r, errors.Join(failed...)
}

// wrkVersion is the first word after "wrk" in `wrk -v`, e.g. "debian/4.1.0-3+b2"; wrk
// exits 1 after printing it with its usage, so only the output counts.
func wrkVersion(ctx context.Context, bin string) string {
	out, _ := exec.CommandContext(ctx, bin, "-v").CombinedOutput()
	line, _, _ := strings.Cut(string(out), "\n")
	f := strings.Fields(line)
	if len(f) >= 2 && f[0] == "wrk" {
		return f[1]
	}
	return ""
}
