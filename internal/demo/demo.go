// Package demo runs crossfade's whole job on a laptop: the embedded sandbox, two
// simulated clusters each publishing its own member of a weighted name, real traffic from
// clients that resolve the name like caching resolvers, and a gated cutover from one
// cluster to the other, shown live on the dashboard. With Config.Kube each cluster is a
// real kube-apiserver whose own `crossfade controller` publishes from a real Service, and
// the cutover is a Cutover object that green's controller runs, the dashboard following
// its status (kubecutover.go). With Config.Lever LeverALB the two clusters sit behind one
// sandbox ALB instead, and the cutover moves its listener rule's target-group weights: no
// DNS change at all (alb.go).
package demo

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	lr53 "github.com/crossfade-io/crossfade/internal/cutover/lever/route53"
	"github.com/crossfade-io/crossfade/internal/cutover/levers"
	"github.com/crossfade-io/crossfade/internal/cutover/render"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/dashboard"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// Config says how the demo runs; cmd builds it from flags.
type Config struct {
	// UI is the dashboard's listen address (loopback); port 0 picks one.
	UI string
	// Keep leaves everything running after the cutover, until ctx is done (Ctrl-C).
	Keep bool
	// Pause is each step's hold; the records' TTL is 1 s.
	Pause time.Duration
	// Clients and Interval shape the traffic: each client sends one request per interval.
	Clients  int
	Interval time.Duration
	// Progress shows the cutover; nil prints plain lines to Out.
	Progress cutover.Progress
	Out      io.Writer
	Logger   *slog.Logger
	// Kube, when set, runs the two clusters as real kube-apiservers (demo --kube): with
	// LeverDNS each with its own `crossfade controller` publishing from a real Service,
	// instead of publishers that sync manifest files; with LeverALB each holding the app's
	// pods, registered into its target group by its own AWS Load Balancer Controller
	// through a TargetGroupBinding when the controller is built (albkube.go).
	Kube *KubeConfig
	// Lever is the lever the cutover pulls: LeverDNS (or "": Route 53 weighted records)
	// or LeverALB (the two clusters behind one sandbox ALB, demo --lever alb).
	Lever string
}

const (
	zoneName = "demo.crossfade.test"
	appName  = "app." + zoneName
	ttl      = 1
	// region and the keys are what the demo's clients sign with: the sandbox checks no
	// credentials, but an AWS client refuses to send a request without them.
	region    = "us-east-1"
	accessKey = "demo"
	secretKey = "demo"
)

//go:embed cutover.yaml
var planTemplate string

// Result is what the demo measured, for its caller and its test.
type Result struct {
	Report *cutover.Report
	// Requests are the requests that landed per cluster; Failures those that did not.
	Requests map[string]int64
	Failures int64
	// FinalWeights are the weights the zone holds at the end.
	FinalWeights map[string]int64
	// PerStep is the share of requests each cluster got while each step held.
	PerStep []StepTraffic
	// Dashboard is the dashboard's state when the cutover ended.
	Dashboard dashboard.State
	// Cutover is, in demo --kube, the Cutover object as it was when its run ended (or
	// when the demo stopped following it); nil otherwise.
	Cutover *v1alpha1.Cutover
	// RegisteredBy says, in the ALB demo, who registered each cluster's targets: its AWS
	// Load Balancer Controller (demo --kube, when built) or the demo's own registrar.
	RegisteredBy map[string]string
	// Targets are, in the ALB demo, each cluster's target group's targets ("IP:PORT",
	// sorted) when the cutover ended.
	Targets map[string][]string
}

// StepTraffic is where requests landed during one step's hold.
type StepTraffic struct {
	Step     string
	Weights  map[string]int64
	Requests map[string]int64
	// CloudWatch is, in the ALB demo, each cluster's share (0..1) of the requests its
	// target group got as the albTraffic gate last read them from CloudWatch while the
	// step held; nil in the DNS demo.
	CloudWatch map[string]float64
}

// Run runs the demo and returns an error unless the cutover completed with every step
// passed, the final split 0/100 and no failed request.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Pause <= 0 {
		cfg.Pause = 5 * time.Second
	}
	if cfg.Clients <= 0 {
		cfg.Clients = 10
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 100 * time.Millisecond
	}
	if cfg.UI == "" {
		cfg.UI = "127.0.0.1:0"
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	switch cfg.Lever {
	case "", LeverDNS:
	case LeverALB:
	default:
		return nil, fmt.Errorf("demo: lever %q: want %s or %s", cfg.Lever, LeverDNS, LeverALB)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup // every goroutine the demo starts; waited for before returning
	defer wg.Wait()
	defer cancel()

	dir, err := os.MkdirTemp("", "crossfade-demo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if cfg.Lever == LeverALB {
		return runALB(ctx, cancel, &wg, dir, cfg)
	}
	return runDNS(ctx, cancel, &wg, dir, cfg)
}

// runDNS is Run for LeverDNS, in dir, its goroutines owned by wg and stopped by cancel.
func runDNS(ctx context.Context, cancel context.CancelFunc, wg *sync.WaitGroup, dir string, cfg Config) (*Result, error) {
	out, log := cfg.Out, cfg.Logger
	var err error

	// The API servers come first: without their binaries the demo stops here, saying how
	// to build them, before anything else starts.
	var k *kube
	if cfg.Kube != nil {
		if cfg.Kube.Crossfade == "" {
			return nil, errors.New("demo --kube: no crossfade binary to run the controllers")
		}
		if k, err = startKube(ctx, *cfg.Kube, dir, []string{"blue", "green"}, out, log); err != nil {
			return nil, err
		}
		defer k.close()
	}

	// A Route 53 change stays PENDING a moment, as in AWS, so that INSYNC means something.
	quiet := slog.New(slog.DiscardHandler) // the sandbox and the provider log every call
	sb, err := sandbox.Start(ctx, sandbox.Config{APIAddr: "127.0.0.1:0", DNSAddr: "127.0.0.1:0", ChangeDelay: 300 * time.Millisecond, Logger: quiet})
	if err != nil {
		return nil, fmt.Errorf("start sandbox: %w", err)
	}
	defer sb.Close()
	zone, _, err := sb.Store().CreateZone(zoneName, "crossfade-demo", "crossfade demo", false)
	if err != nil {
		return nil, fmt.Errorf("create zone %s: %w", zoneName, err)
	}
	dns, err := route53.New(ctx, route53.Config{Endpoint: sb.APIURL(), Region: region,
		Credentials: credentials.NewStaticCredentialsProvider(accessKey, secretKey, ""), Logger: quiet})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "sandbox: Route 53 API %s, DNS %s, zone %s\n", sb.APIURL(), sb.DNSAddr(), zoneName)

	// Two clusters on 127.0.0.2 and 127.0.0.3, one port, so that the name's address is
	// all a client needs.
	blue, err := startCluster(dns, dir, "blue", "v1", "127.0.0.2", 0, 100, ttl, out, log)
	if err != nil {
		return nil, err
	}
	green, err := startCluster(dns, dir, "green", "v2", "127.0.0.3", blue.port, 0, ttl, out, log)
	if err != nil {
		blue.close()
		return nil, err
	}
	clusters := []*cluster{blue, green}
	for _, c := range clusters {
		wg.Go(func() {
			if err := c.serve(); err != nil {
				log.Error("backend", "cluster", c.id, "err", err)
			}
		})
		defer c.close()
		if k != nil {
			continue // its controller publishes, from its Service (below)
		}
		if _, err := c.publish(ctx); err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "cluster %-5s app %s at %s, publishing %s from %s (owner %s, weight %d)\n", c.id, c.version, c.url("/"), appName, c.manifests, c.id, c.weight)
		wg.Go(func() { c.publishLoop(ctx, 2*time.Second) })
	}
	if k != nil {
		defer k.stopControllers() // before the sandbox and the backends go
		if err := k.publish(ctx, clusters, sb.APIURL(), sb.DNSAddr(), dns, out); err != nil {
			return nil, err
		}
		wg.Go(func() { k.watchEvents(ctx, out) })
	}

	lg := newLoadgen(appName, sb.DNSAddr(), blue.port, cfg.Clients, cfg.Interval)
	wg.Go(func() { lg.run(ctx) })
	fmt.Fprintf(out, "traffic: %d clients, each resolving %s (honouring the TTL) and sending %s requests/s\n", cfg.Clients, appName, fmt.Sprint(int(time.Second/cfg.Interval)))

	rec := dashboard.NewRecorder("demo", "blue", "green")
	url, stopUI, err := serveDashboard(ctx, cancel, wg, cfg.UI, lg, rec, out)
	if err != nil {
		return nil, err
	}
	defer stopUI()

	planFile := filepath.Join(dir, "demo-cutover.yaml")
	r := strings.NewReplacer("{{PAUSE}}", cfg.Pause.String(), "{{PORT}}", fmt.Sprint(blue.port), "{{DNS}}", sb.DNSAddr(),
		"{{BLUE}}", blue.url("/"), "{{GREEN}}", green.url("/"))
	p, err := loadPlan(planFile, r.Replace(planTemplate))
	if err != nil {
		return nil, err
	}
	reg, err := registry.New(registry.Config{OwnerID: "crossfade-cutover"})
	if err != nil {
		return nil, err
	}
	var res *Result
	var runErr error
	if k != nil {
		// Declaratively, as in a cluster: the plan applied as a Cutover object, run by
		// the cutover cluster's controller, followed through its status.
		res, runErr = k.runKubeCutover(ctx, cfg, p, r.Replace(planTemplate), lg, rec)
	} else {
		ccfg := cutover.Config{Plan: p, Levers: levers.New(levers.Env{DNS: func() (lr53.DNS, error) { return dns, nil }, Registry: reg}),
			DNSServers: []string{sb.DNSAddr()}}
		res, runErr = runCutover(ctx, cfg, dir, ccfg, lg, rec)
	}
	res.FinalWeights, err = weights(ctx, dns)
	if err != nil {
		return res, err
	}
	if err := res.report(out); err != nil {
		return res, err
	}
	err = errors.Join(runErr, res.check())
	if err == nil {
		fmt.Fprintf(out, "\ndemo: OK — every step passed, the final split is %s, %d requests served, 0 failed\n", cutover.FormatWeights(res.FinalWeights), total(res.Requests))
	}
	if cfg.Keep && ctx.Err() == nil {
		state := stateDir(dir)
		if k != nil {
			state = "" // the journal is the Cutover object's status: k.hint names it
		}
		fmt.Fprint(out, keepHint(url, sb.APIURL(), zone.ID, sb.DNSAddr(), planFile, state))
		if k != nil {
			fmt.Fprint(out, k.hint())
		}
		<-ctx.Done()
	}
	return res, err
}

// keepHint is what --keep prints: where everything is, and commands that explore the
// zone as printed, from any shell (the environment they need is on the line).
func keepHint(dashboardURL, apiURL, zoneID, dnsAddr, planFile, stateDir string) string {
	digAt := "@" + dnsAddr
	if host, port, err := net.SplitHostPort(dnsAddr); err == nil {
		digAt = "@" + host + " -p " + port
	}
	return fmt.Sprintf("\n--keep: everything stays up until Ctrl-C:\n"+
		"  dashboard   %s\n"+
		"  Route 53    AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s AWS_DEFAULT_REGION=%s %s --endpoint-url %s route53 list-resource-record-sets --hosted-zone-id %s\n"+
		"  DNS         dig %s %s\n"+
		"%s",
		dashboardURL, accessKey, secretKey, region, awsCLI(), apiURL, zoneID, digAt, appName, runHint(planFile, stateDir))
}

// runHint is the end of every --keep hint: where the cutover's plan and state are, and
// the `cutover status` command that finds its run there (the default --state-dir is
// another directory, where the demo's run is not).
func runHint(planFile, stateDir string) string {
	if stateDir == "" {
		// demo --kube: no state dir here; the controller keeps the journal in the object.
		return fmt.Sprintf("  plan file   %s\n", planFile)
	}
	return fmt.Sprintf("  state dir   %s\n"+
		"  status      crossfade cutover status %s --state-dir %s\n"+
		"  plan file   %s\n",
		stateDir, shellQuote(planFile), shellQuote(stateDir), planFile)
}

// shellQuote quotes s for a POSIX shell when it holds anything but the characters of an
// ordinary path (a temp dir under a home with a space), so the hint runs as pasted.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:,@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// stateDir is where the demo in dir runs its cutover: its journal, lock, control and
// report files, as `cutover run --state-dir` keeps them.
func stateDir(dir string) string { return filepath.Join(dir, "state") }

// debianAWS is Debian's AWS CLI (package awscli, version 2).
const debianAWS = "/usr/bin/aws"

// awsCLI is the AWS CLI the --keep hint names: Debian's by its path where it is installed,
// because on some machines an older aws 1.x (pyenv) comes first on PATH; else the aws on
// PATH (macOS, other distributions).
func awsCLI() string {
	if fi, err := os.Stat(debianAWS); err == nil && !fi.IsDir() {
		return debianAWS
	}
	return "aws"
}

// check is the demo's verdict.
func (r *Result) check() error {
	var problems []string
	if r.Report == nil || r.Report.Outcome != "completed" {
		problems = append(problems, "the cutover did not complete")
	} else {
		for _, s := range r.Report.Steps {
			if strings.HasPrefix(s.Name, "step") && s.Outcome != "passed" {
				problems = append(problems, fmt.Sprintf("%s: %s", s.Name, s.Outcome))
			}
		}
	}
	if r.FinalWeights["blue"] != 0 || r.FinalWeights["green"] != 100 {
		problems = append(problems, "final weights "+cutover.FormatWeights(r.FinalWeights)+", want blue=0 green=100")
	}
	if r.Failures > 0 {
		problems = append(problems, fmt.Sprintf("%d requests failed", r.Failures))
	}
	if len(problems) > 0 {
		return fmt.Errorf("demo: %s", strings.Join(problems, "; "))
	}
	return nil
}

// serveDashboard serves rec at ui and feeds it lg's counts each second (a goroutine of
// wg). The caller defers stop: it cancels the demo's context, which stops the server, and
// waits for the server, so that it is gone before the sandbox goes.
func serveDashboard(ctx context.Context, cancel context.CancelFunc, wg *sync.WaitGroup, ui string, lg *loadgen, rec *dashboard.Recorder, out io.Writer) (url string, stop func(), err error) {
	url, waitUI, err := dashboard.Serve(ctx, ui, rec.Handler())
	if err != nil {
		return "", nil, err
	}
	wg.Go(func() { observe(ctx, lg, rec) })
	fmt.Fprintf(out, "dashboard: %s\n\n", url)
	return url, func() {
		cancel()
		_ = waitUI()
	}, nil
}

// loadPlan writes text, the demo's plan with its placeholders filled, to path (where
// --keep points) and loads it from there as `cutover run` would.
func loadPlan(path, text string) (*spec.Plan, error) {
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return nil, err
	}
	p, err := spec.Load(path)
	if err != nil {
		return nil, fmt.Errorf("demo plan: %w", err)
	}
	return p, nil
}

// runCutover runs ccfg (its plan, levers and lever-specific settings; the demo's state
// dir, pace, progress and logger are set here) while lg's clients send traffic. Its
// progress goes to cfg.Progress (else a plain one on cfg.Out), the dashboard and a step
// tracker; the Result holds the report and what the clients saw. The error is the run's.
func runCutover(ctx context.Context, cfg Config, dir string, ccfg cutover.Config, lg *loadgen, rec *dashboard.Recorder) (*Result, error) {
	progress := cfg.Progress
	if progress == nil {
		progress = render.NewProgress(cfg.Out, false)
	}
	tracker := &stepTracker{lg: lg}
	ccfg.StateDir, ccfg.By = stateDir(dir), "demo"
	ccfg.CheckInterval, ccfg.PollInterval = time.Second, 100*time.Millisecond
	ccfg.Progress, ccfg.Logger = render.MultiProgress(progress, rec, tracker), cfg.Logger
	rep, err := cutover.Run(ctx, ccfg, false)
	tracker.Event(cutover.Event{Phase: cutover.PhaseDone})

	res := &Result{Report: rep, PerStep: tracker.steps, Dashboard: rec.State()}
	res.Requests, res.Failures, _ = lg.snapshot()
	return res, err
}

// report prints the run's report and the traffic the clients saw to out; the error is
// the report's, failing to render.
func (r *Result) report(out io.Writer) error {
	if r.Report != nil {
		fmt.Fprintln(out)
		if err := render.Report(out, r.Report); err != nil {
			return err
		}
	}
	writeTraffic(out, r)
	return nil
}

// observe feeds the dashboard the traffic counts once a second.
func observe(ctx context.Context, lg *loadgen, rec *dashboard.Recorder) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		counts, failures, _ := lg.snapshot()
		rec.Observe(dashboard.Traffic{At: time.Now(), Requests: counts, Failures: failures})
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// stepTracker notes the traffic counts when each step starts holding, to say where the
// requests landed during each hold.
type stepTracker struct {
	lg    *loadgen
	mu    sync.Mutex
	cur   *StepTraffic
	base  map[string]int64
	steps []StepTraffic
}

func (t *stepTracker) Event(e cutover.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	name := ""
	if e.Phase == cutover.PhaseHolding {
		name = fmt.Sprintf("step %d/%d", e.Step+1, e.Total)
	}
	if t.cur != nil && t.cur.Step == name {
		t.cur.noteCloudWatch(e.Gates)
		return
	}
	counts, _, _ := t.lg.snapshot()
	if t.cur != nil {
		for k, v := range counts {
			t.cur.Requests[k] = v - t.base[k]
		}
		t.steps = append(t.steps, *t.cur)
		t.cur = nil
	}
	if name != "" {
		t.cur = &StepTraffic{Step: name, Weights: maps.Clone(e.Weights), Requests: map[string]int64{}}
		t.base = counts
		t.cur.noteCloudWatch(e.Gates)
	}
}

// noteCloudWatch keeps the shares an albTraffic gate's result read from CloudWatch
// ("<cluster>.share"), when it counted requests.
func (s *StepTraffic) noteCloudWatch(gates []gate.Result) {
	for _, g := range gates {
		if g.Kind != gate.KindALBTraffic {
			continue
		}
		shares := map[string]float64{}
		for k, v := range g.Values {
			if id, ok := strings.CutSuffix(k, ".share"); ok {
				shares[id] = v
			}
		}
		if len(shares) > 0 {
			s.CloudWatch = shares
		}
	}
}

// writeTraffic prints where requests landed in each step against the weights; in the
// ALB demo, also green's share as the traffic gate last read it from CloudWatch.
func writeTraffic(out io.Writer, r *Result) {
	cloudWatch := slices.ContainsFunc(r.PerStep, func(s StepTraffic) bool { return s.CloudWatch != nil })
	fmt.Fprintf(out, "\ntraffic observed by the clients (requests that landed on each cluster while each step held):\n")
	if cloudWatch {
		fmt.Fprintf(out, "  (GREEN BY CLOUDWATCH: green's share of the requests to both target groups, as the traffic gate last read it)\n")
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	header := "  STEP\tWEIGHTS\tBLUE (v1)\tGREEN (v2)"
	if cloudWatch {
		header += "\tGREEN BY CLOUDWATCH"
	}
	fmt.Fprintln(tw, header)
	for _, s := range r.PerStep {
		n := total(s.Requests)
		row := fmt.Sprintf("  %s\t%s\t%s\t%s", s.Step, cutover.FormatWeights(s.Weights), pct(s.Requests["blue"], n), pct(s.Requests["green"], n))
		if cloudWatch {
			share := fmt.Sprintf("%6s", "-") // as wide as a share, right-aligned like one
			if v, ok := s.CloudWatch["green"]; ok {
				share = fmt.Sprintf("%5.1f%%", 100*v)
			}
			row += "\t" + share
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	fmt.Fprintf(out, "  in all: %d requests, blue %d, green %d, %d failed\n", total(r.Requests), r.Requests["blue"], r.Requests["green"], r.Failures)
}

func pct(n, of int64) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%5.1f%% (%d)", 100*float64(n)/float64(of), n)
}

func total(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// weights reads the members' weights of the demo's name from the zone.
func weights(ctx context.Context, dns *route53.Provider) (map[string]int64, error) {
	zones, err := dns.Zones(ctx)
	if err != nil {
		return nil, fmt.Errorf("read zone %s: %w", zoneName, err)
	}
	if len(zones) == 0 {
		return nil, fmt.Errorf("read zone %s: no such hosted zone", zoneName)
	}
	recs, err := dns.Records(ctx, zones[0])
	if err != nil {
		return nil, fmt.Errorf("read zone %s: %w", zoneName, err)
	}
	out := map[string]int64{}
	for _, r := range recs {
		if r.Name == appName && r.Type == "A" {
			out[r.SetIdentifier] = r.Policy.Weight
		}
	}
	return out, nil
}
