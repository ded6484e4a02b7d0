package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/crossfade-io/crossfade/internal/cloudmap"
	"github.com/crossfade-io/crossfade/internal/metrics"
	"github.com/crossfade-io/crossfade/internal/provider/cache"
	"github.com/crossfade-io/crossfade/internal/source"
)

// AppConfig is everything `crossfade controller` runs from, built from its command line
// and environment by the caller: RunApp reads neither.
type AppConfig struct {
	// REST is the Kubernetes API's client configuration.
	REST *rest.Config
	// Sources are the kinds asked for; those crossfade does not read are logged and
	// skipped.
	Sources []string
	// Namespace, when not empty, is the only namespace objects are read from.
	Namespace string
	// Syncer plans and writes through Zones; Source turns objects into records.
	Syncer *Syncer
	Source *source.Source
	// Zones is the zone cache the Syncer's provider is.
	Zones *cache.Provider
	// Metrics is the registry every part's metrics go to, served at MetricsAddress.
	Metrics        *metrics.Metrics
	MetricsAddress string
	// CloudMap publishes Services' endpoints as Cloud Map instances; nil when off.
	CloudMap *cloudmap.Publisher
	// Cutovers runs the Cutover objects (--cutovers) beside the publisher, on every
	// replica (each Cutover has its own Lease); nil when off.
	Cutovers CutoverRunner
	// Debounce, MaxDelay, Interval, CRDPoll, BackoffBase and BackoffMax are Config's
	// and WatchConfig's fields of those names.
	Debounce, MaxDelay, Interval, CRDPoll time.Duration
	BackoffBase, BackoffMax               time.Duration
	// Incremental is Config.Incremental: after a change, re-plan only the names of the
	// Services it touched; FullInterval is Config.FullInterval.
	Incremental  bool
	FullInterval time.Duration
	// HoldProbe configures the hold prober (Interval 0: none); RunApp sets its
	// Invalidate, Observe and Logger.
	HoldProbe HoldProbeConfig
	// Once reconciles once and returns, without leader election.
	Once bool
	// LeaderElect runs the loop only while holding the Lease Leader names; RunApp sets
	// its Client, OnLeading and Logger.
	LeaderElect bool
	Leader      LeaderConfig
	// Pod is the controller's own Pod, which its own Warning events are about; nil
	// outside a pod (they are only logged then).
	Pod *corev1.ObjectReference
	// Owner is the --txt-owner-id and DryRun the --dry-run, as the start is logged.
	Owner  string
	DryRun bool
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
}

// CutoverRunner runs Cutover objects until ctx ends, with what env gives it; the caller
// builds it from internal/cutover/reconciler. A function rather than the reconciler
// itself, so that this package, which the cutover packages' tests import, imports none of
// them.
type CutoverRunner func(ctx context.Context, env CutoverEnv) error

// CutoverEnv is what RunApp gives its CutoverRunner: the controller's own state
// directory, event recorder and metrics registry, so that the Cutovers' events and series
// go where the publisher's do.
type CutoverEnv struct {
	// StateDir keeps the runs' control files and reports: a directory RunApp makes and
	// removes once the runner has returned.
	StateDir string
	// Events records Kubernetes Events through the controller's broadcaster (source
	// component "crossfade"), running until RunApp returns.
	Events record.EventRecorder
	// Metrics is the controller's registry, served at /metrics.
	Metrics prometheus.Registerer
}

// app is a controller's parts, built by RunApp.
type app struct {
	cfg     AppConfig
	log     *slog.Logger
	client  kubernetes.Interface
	watcher *Watcher
	obs     *MetricsObserver
	ctl     *Controller
	sources []string
	// recorder is the controller's event recorder, given to the cutover runner too.
	recorder record.EventRecorder
}

// RunApp runs a controller until ctx ends (or, with Once, for one reconcile): informers,
// events, metrics and health server, leader election. It returns when the loop has
// stopped and the server has shut down.
func RunApp(ctx context.Context, cfg AppConfig) error {
	if cfg.Cutovers != nil && (cfg.Once || cfg.DryRun) {
		return errors.New("--cutovers: not with --once or --dry-run: a cutover's steps are written and held for minutes to hours")
	}
	a := &app{cfg: cfg, log: cfg.Logger}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	for _, s := range cfg.Sources {
		if slices.Contains(Sources, s) {
			a.sources = append(a.sources, s)
			continue
		}
		a.log.Warn("source not supported by crossfade, ignored", "source", s, "supported", Sources)
	}
	dyn, err := a.clients()
	if err != nil {
		return err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: a.client.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "crossfade"})
	a.recorder = recorder
	if err := a.build(dyn, recorder); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.MetricsAddress)
	if err != nil {
		return fmt.Errorf("--metrics-address %q: %w", cfg.MetricsAddress, err)
	}
	// Ready once every informer has its first list and, on the leader, the first
	// reconcile is done; a standby is ready, so that a rollout does not wait on it.
	ready := func() error { return a.obs.Ready(a.watcher.Synced) }
	// The server stops when RunApp returns (after Once too), and RunApp waits for it.
	serveCtx, stopServing := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- metrics.Serve(serveCtx, ln, cfg.Metrics.Handler(ready), a.log) }()
	defer func() {
		stopServing()
		<-served
	}()
	a.log.Info("serving metrics", "addr", ln.Addr().String(), "paths", []string{metrics.PathMetrics, metrics.PathHealthz, metrics.PathReadyz})
	a.log.Info("starting", "sources", a.sources, "owner", cfg.Owner, "cloudmap", cfg.CloudMap != nil, "cutovers", cfg.Cutovers != nil, "dry_run", cfg.DryRun)
	if cfg.Cutovers == nil {
		return a.run(ctx)
	}
	return a.runWithCutovers(ctx)
}

// runWithCutovers runs the publisher (a.run) and the Cutover reconciler side by side
// under one context, and returns once both have stopped. The reconciler runs whether or
// not this replica leads: each Cutover has its own Lease. Should it stop on its own, the
// publisher is stopped too and the error returned, so that the pod restarts rather than
// keep running without its cutovers.
func (a *app) runWithCutovers(ctx context.Context) error {
	// Control commands and reports are files of the engine's; in a pod they are scratch,
	// the journal being in each Cutover's status.
	dir, err := os.MkdirTemp("", "crossfade-cutovers-")
	if err != nil {
		return fmt.Errorf("--cutovers: state directory: %w", err)
	}
	defer func() {
		if err := os.RemoveAll(dir); err != nil {
			a.log.Warn("cutovers: state directory not removed", "dir", dir, "err", err)
		}
	}()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	stopped := make(chan error, 1)
	go func() {
		err := a.cfg.Cutovers(ctx, CutoverEnv{StateDir: dir, Events: a.recorder, Metrics: a.cfg.Metrics.Registry()})
		if ctx.Err() == nil {
			// Stopped before it was asked to: the replica cannot run cutovers.
			if err == nil {
				err = errors.New("stopped")
			}
			err = fmt.Errorf("--cutovers: the cutover reconciler stopped: %w", err)
			stop()
		} else {
			err = nil
		}
		stopped <- err
	}()
	a.log.Info("running cutovers", "state_dir", dir)
	err = a.run(ctx)
	stop()
	if cerr := <-stopped; cerr != nil {
		return cerr
	}
	return err
}

// clients builds the Kubernetes clients: the typed one (a.client) and the dynamic one.
func (a *app) clients() (dynamic.Interface, error) {
	// Built-in kinds travel as protobuf, as kube-controller-manager's do: decoding
	// 10,000 objects of a first list allocates a fraction of what JSON does. The
	// dynamic client reads CRDs, which the API server serves as JSON only.
	typedCfg := rest.CopyConfig(a.cfg.REST)
	typedCfg.ContentType = runtime.ContentTypeProtobuf
	typedCfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	client, err := kubernetes.NewForConfig(typedCfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	a.client = client
	dyn, err := dynamic.NewForConfig(a.cfg.REST)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return dyn, nil
}

// build makes the watcher, the event reporter, the observer and the controller.
func (a *app) build(dyn dynamic.Interface, recorder record.EventRecorder) error {
	cfg, m := a.cfg, a.cfg.Metrics
	// A name the provider refuses is not resent at every reconcile (each resend would
	// also re-list its zone): it waits a minute, then two, … up to an hour, or until its
	// object changes.
	cfg.Syncer.Refusals = &Refusals{}
	cfg.Syncer.QuietConflicts = true
	keep := cfg.Source.ReadsAnnotation
	if cfg.CloudMap != nil {
		keep = func(k string) bool { return cfg.Source.ReadsAnnotation(k) || cloudmap.ReadsAnnotation(k) }
	}
	watchMetrics, err := NewWatchMetrics(m.Registry())
	if err != nil {
		return err
	}
	// The Watcher's warnings (discovery failing, kinds it may not list) are the
	// controller's own problems; events is set below, before w.Run can warn.
	var events *EventReporter
	w, err := NewWatcher(a.client, dyn, WatchConfig{Sources: a.sources, Namespace: cfg.Namespace,
		CRDPoll: cfg.CRDPoll, CloudMap: cfg.CloudMap != nil, KeepAnnotation: keep, Logger: a.log, Metrics: watchMetrics,
		Warn:    func(reason, message string) { events.WarnController(reason, message) },
		Resolve: func(reason string) { events.ResolveController(reason, "") }})
	if err != nil {
		return fmt.Errorf("--source: %w", err)
	}
	a.watcher = w
	var drop []string
	if !slices.Contains(a.sources, SourceService) {
		drop = append(drop, "Service")
	}
	if !slices.Contains(a.sources, SourceIngress) {
		drop = append(drop, "Ingress")
	}
	events = NewEventReporter(recorder, w, 0, a.log)
	// The controller's own problems (deletions held by the guard) are Warning events on
	// its Pod, named by the downward API; run outside a pod, they are only logged.
	if cfg.Pod != nil {
		events.SetController(cfg.Pod)
	} else {
		a.log.Info("POD_NAME or POD_NAMESPACE not set (not run in a pod): the controller's own warnings, such as held deletions, are logged but sent as no event")
	}
	held, err := metrics.NewDeletionsHeld(m.Registry())
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	a.obs = NewMetricsObserver(m, held)
	m.SetCacheAges(func() map[string]time.Duration { return a.obs.ByName(cfg.Zones.Ages()) })
	ctlCfg := Config{Syncer: cfg.Syncer, Source: cfg.Source, DropKinds: drop,
		Debounce: cfg.Debounce, MaxDelay: cfg.MaxDelay, Interval: cfg.Interval, Incremental: cfg.Incremental, FullInterval: cfg.FullInterval,
		Events: events, Observer: a.obs, Logger: a.log}
	if cfg.CloudMap != nil {
		// Not a nil *Publisher in the interface: the loop tells "off" by a nil CloudMap.
		ctlCfg.CloudMap = cfg.CloudMap
	}
	if ctlCfg.Holds, err = a.holdProber(); err != nil {
		return err
	}
	backoff, err := NewBackoffMetrics(m.Registry())
	if err != nil {
		return err
	}
	ctlCfg.BackoffBase, ctlCfg.BackoffMax, ctlCfg.BackoffMetrics = cfg.BackoffBase, cfg.BackoffMax, backoff
	a.ctl, err = New(w, ctlCfg)
	return err
}

// holdProber builds the hold prober HoldProbe asks for, counting its probes; nil when
// its interval is 0.
func (a *app) holdProber() (*HoldProber, error) {
	hp := a.cfg.HoldProbe
	if hp.Interval <= 0 {
		return nil, nil
	}
	probes := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "crossfade_hold_probes_total",
		Help: "DNS probes of names with weighted records for a cutover's authority record, by result: same, changed (the zone is listed again), error."},
		[]string{"result"})
	if err := a.cfg.Metrics.Registry().Register(probes); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	hp.Invalidate, hp.Logger = a.cfg.Zones.Invalidate, a.log
	hp.Observe = func(r string) { probes.WithLabelValues(r).Inc() }
	return NewHoldProber(hp), nil
}

// run starts the informers and runs the loop: once, always, or while leading.
func (a *app) run(ctx context.Context) error {
	if err := a.watcher.Run(ctx); err != nil {
		return err
	}
	if a.cfg.Once || !a.cfg.LeaderElect {
		a.obs.SetLeading(true)
	}
	if a.cfg.Once {
		// A kind answered 404 once is not yet absent (the API server may be restarting):
		// the one reconcile waits until it is, or is watched.
		if err := a.watcher.Settle(ctx); err != nil {
			return err
		}
		_, err := a.ctl.ReconcileOnce(ctx)
		return err
	}
	if !a.cfg.LeaderElect {
		return a.ctl.Run(ctx)
	}
	lc := a.cfg.Leader
	lc.Client, lc.OnLeading, lc.Logger = a.client, a.obs.SetLeading, a.log
	err := Lead(ctx, lc, func(ctx context.Context) { _ = a.ctl.Run(ctx) })
	if errors.Is(err, ErrLeadershipLost) {
		a.log.Error("lost the lease: exiting so that only the new leader writes")
	}
	return err
}
