// Package reconciler runs Cutover objects: `crossfade controller --cutovers`. It watches
// the Cutovers in its scope and runs each live one with the cutover engine, its journal
// and lock in the object's status and Lease (statusstore), so that any replica can take
// over a run whose holder died. It is level-triggered: each worker re-reads its object and
// acts on what the object says now (status phase, journal, spec.paused), never on the
// events that led there, so that a lost write, a conflict or a dead replica is repaired
// by the next look.
package reconciler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
)

// resyncPeriod is how often the informer hands every Cutover to its worker again, as a
// safety net under the watch.
const resyncPeriod = 30 * time.Second

// Config is what the reconciler needs; `crossfade controller --cutovers` fills it from
// its flags and the pod's environment.
type Config struct {
	// REST reaches the API server.
	REST *rest.Config
	// Namespace limits the Cutovers run to one namespace; "" runs those of every
	// namespace.
	Namespace string
	// Identity names this replica (the pod's name): the holder of the Leases it takes.
	Identity string
	// Levers builds the lever each plan pulls and its gates' clients (levers.New).
	Levers lever.Factory
	// StateDir is pod-local scratch: each run's control commands and report, under
	// StateDir/NAMESPACE/. Nothing a takeover needs is kept there.
	StateDir string
	// DNSServers are asked by DNS gates whose spec lists no servers.
	DNSServers []string
	// LeaseDuration is how long a dead holder keeps a Cutover's Lease; 0 is
	// statusstore.DefaultLeaseDuration (15 s).
	LeaseDuration time.Duration
	// Logger receives structured logs; nil is slog.Default().
	Logger *slog.Logger
	// Events records Kubernetes Events on the Cutover objects (each step, gate
	// failure, pause, rollback, command); nil records none.
	Events record.EventRecorder
	// Metrics is where crossfade_cutover_phase and crossfade_cutover_weight are
	// registered; nil registers none.
	Metrics prometheus.Registerer
}

// Reconciler runs every Cutover in its scope, one worker per live object.
type Reconciler struct {
	cfg    Config
	client *statusstore.Client
	log    *slog.Logger

	// checkInterval and pollInterval are the engine's gate-check and INSYNC-poll
	// intervals; 0 keeps the engine's defaults. Tests shorten them.
	checkInterval, pollInterval time.Duration
	// pauseEvery is how often a worker compares spec.paused with the run besides on each
	// change of the object.
	pauseEvery time.Duration
}

// New checks cfg and builds the API client; it starts nothing (Run does).
func New(cfg Config) (*Reconciler, error) {
	switch {
	case cfg.REST == nil:
		return nil, errors.New("cutover reconciler: Config.REST is required (the API server to watch Cutovers on)")
	case cfg.Identity == "":
		return nil, errors.New("cutover reconciler: Config.Identity is required (this replica's name, the holder of its Leases)")
	case cfg.Levers == nil:
		return nil, errors.New("cutover reconciler: Config.Levers is required (levers.New)")
	case cfg.StateDir == "":
		return nil, errors.New("cutover reconciler: Config.StateDir is required (scratch for control commands and reports)")
	case cfg.LeaseDuration < 0:
		return nil, fmt.Errorf("cutover reconciler: Config.LeaseDuration %s: want 0 (the default, %s) or more", cfg.LeaseDuration, statusstore.DefaultLeaseDuration)
	}
	if cfg.LeaseDuration == 0 {
		cfg.LeaseDuration = statusstore.DefaultLeaseDuration
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c, err := statusstore.NewClient(cfg.REST)
	if err != nil {
		return nil, fmt.Errorf("cutover reconciler: %w", err)
	}
	return &Reconciler{cfg: cfg, client: c, log: cfg.Logger.With("component", "cutover-reconciler", "identity", cfg.Identity), pauseEvery: time.Second}, nil
}

// Run watches the Cutovers and runs each live one until ctx ends; every goroutine it
// starts (the informer, one worker per Cutover) has stopped when it returns. A run
// stopped this way keeps its Lease until it expires (LeaseDuration): a standby replica
// then takes it over from status.
func (r *Reconciler) Run(ctx context.Context) error {
	if err := r.checkAccess(ctx); err != nil {
		return err
	}
	lw := cache.NewListWatchFromClient(r.client.Cutovers, v1alpha1.Resource, r.cfg.Namespace, fields.Everything())
	inf := cache.NewSharedIndexInformer(lw, &v1alpha1.Cutover{}, resyncPeriod, cache.Indexers{})
	unregisterMetrics, err := r.registerMetrics(inf.GetIndexer())
	if err != nil {
		return err
	}
	defer unregisterMetrics()

	q := newKeyQueue()
	enqueue := func(obj any) {
		key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
		if err != nil {
			r.log.Error("cutover event without a key", "err", err)
			return
		}
		q.add(key)
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		return fmt.Errorf("cutover reconciler: watch cutovers: %w", err)
	}

	ictx, stopInformer := context.WithCancel(ctx)
	var iwg sync.WaitGroup
	iwg.Add(1)
	go func() {
		defer iwg.Done()
		inf.RunWithContext(ictx)
	}()
	workers := map[string]*worker{}
	defer func() {
		for _, w := range workers {
			w.stop()
		}
		for _, w := range workers {
			<-w.done
		}
		stopInformer()
		iwg.Wait()
	}()

	r.log.Info("watching cutovers", "namespace", r.cfg.Namespace)
	for {
		select {
		case <-ctx.Done():
			r.log.Info("stopping: every run keeps its Lease until it expires, then a standby takes over", "cutovers", len(workers))
			return nil
		case <-q.ready:
		}
		for _, key := range q.take() {
			obj, exists, err := inf.GetIndexer().GetByKey(key)
			if err != nil {
				r.log.Error("read cutover from the cache", "key", key, "err", err)
				continue
			}
			w := workers[key]
			c, _ := obj.(*v1alpha1.Cutover)
			if w != nil && (!exists || c == nil || c.UID != w.uid) {
				// Deleted (or deleted and created again under the same name): its run stops
				// here; the new object, if any, gets a worker of its own.
				w.log.Info("cutover gone: stopping its worker")
				w.stop()
				<-w.done
				delete(workers, key)
				w = nil
			}
			if !exists || c == nil {
				continue
			}
			if w == nil {
				w = r.startWorker(ctx, c)
				workers[key] = w
			}
			w.poke()
		}
	}
}

// startWorker starts the worker of c, owned by Run (which stops it and waits for it).
func (r *Reconciler) startWorker(ctx context.Context, c *v1alpha1.Cutover) *worker {
	wctx, cancel := context.WithCancel(ctx)
	w := &worker{
		r: r, namespace: c.Namespace, name: c.Name, uid: c.UID,
		log:    r.log.With("namespace", c.Namespace, "name", c.Name),
		cancel: cancel, done: make(chan struct{}), pokes: make(chan struct{}, 1),
		stateDir: filepath.Join(r.cfg.StateDir, c.Namespace),
	}
	go func() {
		defer close(w.done)
		w.loop(wctx)
	}()
	return w
}

// keyQueue is a set of object keys waiting for the manager loop, with a signal that it
// is not empty: events coalesce (a worker re-reads its object anyway), and the informer
// never blocks on a slow loop.
type keyQueue struct {
	mu    sync.Mutex
	keys  map[string]bool
	ready chan struct{}
}

func newKeyQueue() *keyQueue {
	return &keyQueue{keys: map[string]bool{}, ready: make(chan struct{}, 1)}
}

// add queues key and signals.
func (q *keyQueue) add(key string) {
	q.mu.Lock()
	q.keys[key] = true
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take empties the queue.
func (q *keyQueue) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]string, 0, len(q.keys))
	for k := range q.keys {
		out = append(out, k)
	}
	clear(q.keys)
	return out
}

// worker runs one Cutover object.
type worker struct {
	r               *Reconciler
	namespace, name string
	uid             types.UID
	log             *slog.Logger
	stateDir        string

	cancel context.CancelFunc
	done   chan struct{}
	// pokes says the object changed: the worker (or, while a run goes, its pause
	// follower) looks at it again.
	pokes chan struct{}

	// mu guards emitted and pending, which the status hook and the journal writer read
	// and write.
	mu sync.Mutex
	// emitted is the seq of the last journal entry whose status change this worker has
	// recorded Events for: an append retried after a conflict projects the same change
	// again, and must not record it twice.
	emitted int
	// pending is the status change of the append in flight, recorded as Events once it
	// lands.
	pending *pendingEvents
	// startErr is why the last run could not start (the zone refused it), retried: the
	// Pending status says so until a run starts.
	startErr error
	// abortFailures counts the failed aborts in a row of a deleted Cutover nobody runs;
	// abortRetryAt is when to try again.
	abortFailures int
	abortRetryAt  time.Time
	// leased is set while this process's run holds the cutover's Lease (its engine's
	// Acquire succeeded, and neither its Release nor the end of cutover.Run came since):
	// the Lease names the replica, not the process, so a container restarted in the same
	// pod would otherwise count the dead process's Lease as its own.
	leased atomic.Bool
}

// poke tells the worker its object changed.
func (w *worker) poke() {
	select {
	case w.pokes <- struct{}{}:
	default:
	}
}

// stop cancels the worker; its done channel closes once it has returned.
func (w *worker) stop() { w.cancel() }

// checkAccess lists one Cutover once, so that a cluster without the CRD, or a service
// account without the right to read Cutovers, is an error naming the fix rather than an
// informer that retries in silence while the controller reports ready. Other errors (the
// API server not answering yet) are left to the informer, which retries them.
func (r *Reconciler) checkAccess(ctx context.Context) error {
	err := r.client.Cutovers.Get().NamespaceIfScoped(r.cfg.Namespace, r.cfg.Namespace != "").Resource(v1alpha1.Resource).
		Param("limit", "1").Do(ctx).Error()
	scope := "every namespace"
	if r.cfg.Namespace != "" {
		scope = "namespace " + r.cfg.Namespace
	}
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("--cutovers: the Cutover CRD (cutovers.crossfade.io) is not installed: apply deploy/crds/cutovers.crossfade.io.yaml, or install the chart with cutovers.enabled=true: %w", err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("--cutovers: may not list cutovers.crossfade.io in %s: grant get, list and watch on cutovers, patch on cutovers (commands, the finalizer), update on cutovers/status, get, create and update on leases (coordination.k8s.io), and create and patch on events: %w", scope, err)
	}
	return nil
}
