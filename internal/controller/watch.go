package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/crossfade-io/crossfade/internal/source"
)

// The sources a controller can watch, named as external-dns's --source values.
const (
	SourceService             = "service"
	SourceIngress             = "ingress"
	SourceCRD                 = "crd"
	SourceIstioGateway        = "istio-gateway"
	SourceIstioVirtualService = "istio-virtualservice"
	SourceHTTPRoute           = "gateway-httproute"
	SourceGRPCRoute           = "gateway-grpcroute"
)

// Sources lists every --source value crossfade understands.
var Sources = []string{SourceService, SourceIngress, SourceCRD, SourceIstioGateway,
	SourceIstioVirtualService, SourceHTTPRoute, SourceGRPCRoute}

// DefaultCRDPoll is how often a Watcher looks for the CRDs of kinds it was asked to watch
// but the cluster does not serve yet.
const DefaultCRDPoll = 30 * time.Second

// WatchConfig selects what a Watcher watches.
type WatchConfig struct {
	// Sources are the kinds published, as Sources names them.
	Sources []string
	// Namespace limits the namespaced objects watched; "" watches all.
	Namespace string
	// CRDPoll is how often absent CRDs are looked for; 0 means DefaultCRDPoll.
	CRDPoll time.Duration
	// CloudMap watches what the Cloud Map publisher reads, Services and their
	// EndpointSlices (whatever the sources), and keeps every slice's endpoint addresses
	// and ports, which the Service source alone mostly drops.
	CloudMap bool
	// KeepAnnotation says which annotation keys anything reads (the sources, the Cloud
	// Map publisher, --annotation-filter): only those are cached. Nil caches every
	// annotation but kubectl's last-applied copy.
	KeepAnnotation func(key string) bool
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// Warn, if set, sends a Warning event about the controller itself: once when
	// discovery has failed for discoveryFailPolls polls in a row (ReasonDiscoveryFailing),
	// and once when Run goes on without kinds the API refuses to list (ReasonCannotList).
	Warn func(reason, message string)
	// Resolve, if set, says that the problem of a Warning sent through Warn is over
	// (discovery answers again), so that its next episode is reported at once.
	Resolve func(reason string)
	// Metrics, if set, counts discovery errors.
	Metrics *WatchMetrics
}

// Watcher keeps an informer cache of every object the configured sources read and
// says when any of them changed. Kinds served by CRDs (DNSEndpoint, Istio, Gateway API)
// are watched once the cluster serves them, so installing a CRD later needs no restart.
type Watcher struct {
	cfg     WatchConfig
	client  kubernetes.Interface
	dyn     dynamic.Interface
	log     *slog.Logger
	typed   []*listState
	lists   typedLists
	changed chan struct{}
	// strip is every informer's transform.
	strip func(any) (any, error)

	mu   sync.Mutex
	crds []*crdKind
	// discoveryWarned is whether the Warning for the discovery errors now going on was
	// sent, under mu.
	discoveryWarned bool
	// confirming is whether the last poll left some kind's absence to be confirmed by
	// later polls, under mu.
	confirming bool

	// changes are the objects changed since the controller last took them.
	changes changeLog
}

// typedLists are the built-in kinds' informer stores; nil when not watched.
type typedLists struct {
	services, ingresses, slices, nodes, namespaces cache.Store
}

// crdKind is a kind served by a CRD, watched through the dynamic client once served.
type crdKind struct {
	kind     string
	group    string
	versions []string // preferred first
	resource string
	// convert turns the API's object into the typed one sources read, which also drops
	// every field they do not.
	convert func(*unstructured.Unstructured) (any, error)
	// add puts the cached objects into a snapshot.
	add func(*source.Snapshot, []any)

	// state, under Watcher.mu
	informer cache.SharedIndexInformer
	list     *listState // the informer's errors
	stop     context.CancelFunc
	version  string
	absent   bool // the cluster said it does not serve the kind
	unknown  error
	logged   bool
	// unserved counts the polls in a row that found the kind not served.
	unserved int
	// failing counts the polls in a row that could not tell whether it is served;
	// failure is the last one's error.
	failing int
	failure error
}

// unservedPolls is how many polls in a row must find a kind not served before it counts
// as absent (its objects gone, so their records may go; a watched kind's informer stops),
// whether it was watched before or not: an API server that has just restarted answers 404
// for CRD groups for a few seconds, and one such answer must not unpublish every record
// the kind asks for. Until then the kind is unknown and nothing is deleted.
const unservedPolls = 3

// NewWatcher builds a Watcher; Run starts it.
func NewWatcher(client kubernetes.Interface, dyn dynamic.Interface, cfg WatchConfig) (*Watcher, error) {
	want := map[string]bool{}
	for _, s := range cfg.Sources {
		if !slices.Contains(Sources, s) {
			return nil, fmt.Errorf("source %q: want one of %v", s, Sources)
		}
		want[s] = true
	}
	if len(want) == 0 && !cfg.CloudMap {
		return nil, fmt.Errorf("no source: want one or more of %v", Sources)
	}
	if cfg.CRDPoll <= 0 {
		cfg.CRDPoll = DefaultCRDPoll
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	strip := stripper{keepEndpoints: cfg.CloudMap, keepAnnotation: cfg.KeepAnnotation}.strip
	w := &Watcher{cfg: cfg, client: client, dyn: dyn, log: log, changed: make(chan struct{}, 1), strip: strip}
	ns := cfg.Namespace
	typed := func(resource string, example runtime.Object, list listFunc, watchFn watchFunc) cache.Store {
		inf := cache.NewSharedIndexInformer(pagedListWatch(list, watchFn, strip), example, 0, cache.Indexers{})
		// Objects that arrive by watch are stripped here; listed ones already were.
		_ = inf.SetTransform(strip)
		w.typed = append(w.typed, w.track(resource, forbiddenHint(resource, cfg.CloudMap), inf))
		w.handle(inf)
		return inf.GetStore()
	}
	core, disc, netv1 := client.CoreV1(), client.DiscoveryV1(), client.NetworkingV1()
	// Istio Gateways find their load balancer through the Services their selector
	// matches (or an Ingress an annotation names), so Services and Ingresses are read for
	// them, and for the VirtualServices that publish through them, even when Services and
	// Ingresses do not publish.
	istio := want[SourceIstioGateway] || want[SourceIstioVirtualService]
	if want[SourceService] || istio || cfg.CloudMap {
		w.lists.services = typed("services", &corev1.Service{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return core.Services(ns).List(ctx, o)
			},
			func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return core.Services(ns).Watch(ctx, o)
			})
	}
	if want[SourceService] {
		// NodePort Services publish node addresses; headless ones their endpoints'
		// addresses, read from EndpointSlices rather than from a cluster-wide Pod
		// informer (external-dns issue 5595: gigabytes in a large cluster).
		w.lists.nodes = typed("nodes", &corev1.Node{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return core.Nodes().List(ctx, o)
			},
			func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return core.Nodes().Watch(ctx, o)
			})
	}
	if want[SourceService] || cfg.CloudMap {
		w.lists.slices = typed("endpointslices", &discoveryv1.EndpointSlice{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return disc.EndpointSlices(ns).List(ctx, o)
			},
			func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return disc.EndpointSlices(ns).Watch(ctx, o)
			})
	}
	if want[SourceIngress] || istio {
		w.lists.ingresses = typed("ingresses", &networkingv1.Ingress{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return netv1.Ingresses(ns).List(ctx, o)
			},
			func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return netv1.Ingresses(ns).Watch(ctx, o)
			})
	}
	if want[SourceHTTPRoute] || want[SourceGRPCRoute] {
		w.lists.namespaces = typed("namespaces", &corev1.Namespace{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return core.Namespaces().List(ctx, o)
			},
			func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return core.Namespaces().Watch(ctx, o)
			})
	}
	w.crds = crdKinds(want)
	return w, nil
}

// crdKinds returns the CRD-served kinds the wanted sources read.
func crdKinds(want map[string]bool) []*crdKind {
	var out []*crdKind
	if want[SourceCRD] {
		out = append(out, &crdKind{kind: "DNSEndpoint", group: "externaldns.k8s.io", versions: []string{"v1alpha1"},
			resource: "dnsendpoints", convert: convertTo[source.DNSEndpoint],
			add: func(s *source.Snapshot, objs []any) {
				s.DNSEndpoints = appendAll[*source.DNSEndpoint](s.DNSEndpoints, objs)
			}})
	}
	istio := []string{"v1", "v1beta1", "v1alpha3"}
	if want[SourceIstioGateway] || want[SourceIstioVirtualService] {
		// A VirtualService publishes through the Gateways it binds to.
		out = append(out, &crdKind{kind: "Gateway", group: "networking.istio.io", versions: istio,
			resource: "gateways", convert: convertTo[source.IstioGateway],
			add: func(s *source.Snapshot, objs []any) {
				s.IstioGateways = appendAll[*source.IstioGateway](s.IstioGateways, objs)
			}})
	}
	if want[SourceIstioVirtualService] {
		out = append(out, &crdKind{kind: "VirtualService", group: "networking.istio.io", versions: istio,
			resource: "virtualservices", convert: convertTo[source.IstioVirtualService],
			add: func(s *source.Snapshot, objs []any) {
				s.IstioVirtualServices = appendAll[*source.IstioVirtualService](s.IstioVirtualServices, objs)
			}})
	}
	gw := "gateway.networking.k8s.io"
	if want[SourceHTTPRoute] || want[SourceGRPCRoute] {
		out = append(out, &crdKind{kind: "Gateway", group: gw, versions: []string{"v1"}, resource: "gateways",
			convert: convertTo[gatewayv1.Gateway],
			add:     func(s *source.Snapshot, objs []any) { s.Gateways = appendAll[*gatewayv1.Gateway](s.Gateways, objs) }})
	}
	if want[SourceHTTPRoute] {
		out = append(out, &crdKind{kind: "HTTPRoute", group: gw, versions: []string{"v1"}, resource: "httproutes",
			convert: convertTo[gatewayv1.HTTPRoute],
			add: func(s *source.Snapshot, objs []any) {
				s.HTTPRoutes = appendAll[*gatewayv1.HTTPRoute](s.HTTPRoutes, objs)
			}})
	}
	if want[SourceGRPCRoute] {
		out = append(out, &crdKind{kind: "GRPCRoute", group: gw, versions: []string{"v1"}, resource: "grpcroutes",
			convert: convertTo[gatewayv1.GRPCRoute],
			add: func(s *source.Snapshot, objs []any) {
				s.GRPCRoutes = appendAll[*gatewayv1.GRPCRoute](s.GRPCRoutes, objs)
			}})
	}
	return out
}

// convertTo decodes an unstructured object into T, which keeps only T's fields.
func convertTo[T any](u *unstructured.Unstructured) (any, error) {
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return out, nil
}

func appendAll[T any](dst []T, objs []any) []T {
	for _, o := range objs {
		if t, ok := o.(T); ok {
			dst = append(dst, t)
		}
	}
	return dst
}

// Changed receives a value after any watched object changed (coalesced: one value may
// stand for many changes).
func (w *Watcher) Changed() <-chan struct{} { return w.changed }

func (w *Watcher) notify() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// handle makes inf's events wake the reconciler.
func (w *Watcher) handle(inf cache.SharedIndexInformer) {
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { w.touched(obj) },
		UpdateFunc: func(oldObj, newObj any) {
			if !sameForSources(oldObj, newObj) {
				w.touched(newObj)
			}
		},
		DeleteFunc: func(obj any) { w.touched(obj) },
	})
}

// sameForSources reports whether an update changed nothing a source reads. Nodes are
// the case that matters: their status is rewritten every few seconds, and after strip
// only the addresses, labels and unschedulable are left to compare.
func sameForSources(oldObj, newObj any) bool {
	o, ok1 := oldObj.(*corev1.Node)
	n, ok2 := newObj.(*corev1.Node)
	if !ok1 || !ok2 {
		return false
	}
	return o.Spec.Unschedulable == n.Spec.Unschedulable && labels.Equals(o.Labels, n.Labels) &&
		slices.Equal(o.Status.Addresses, n.Status.Addresses) && labels.Equals(o.Annotations, n.Annotations)
}

// Run starts the informers and waits for the first full list of the built-in kinds;
// then it looks for the CRD-served kinds every CRDPoll until ctx ends. It returns once
// the built-in kinds are synced, or once those not synced have been refused by the API
// for listGrace (their absence keeps the snapshot incomplete and fails Synced), leaving
// the owned goroutines to stop with ctx.
func (w *Watcher) Run(ctx context.Context) error {
	for _, l := range w.typed {
		go l.inf.RunWithContext(ctx)
	}
	if err := w.waitTyped(ctx); err != nil {
		return err
	}
	confirming := w.discover(ctx)
	go func() {
		// A kind whose absence is being confirmed is looked for again sooner.
		next := func() time.Duration {
			if confirming {
				return min(w.cfg.CRDPoll, confirmPoll)
			}
			return w.cfg.CRDPoll
		}
		t := time.NewTimer(next())
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				w.mu.Lock()
				for _, k := range w.crds {
					if k.stop != nil {
						k.stop()
					}
				}
				w.mu.Unlock()
				return
			case <-t.C:
				confirming = w.discover(ctx)
				t.Reset(next())
			}
		}
	}()
	return nil
}

// discover starts an informer for every CRD-served kind the cluster now serves, and
// follows the kinds already watched: over months a CRD is upgraded (Istio's served
// versions move from v1alpha3 to v1) or removed, and an informer left on a version no
// longer served would list and fail forever, its store frozen at what it last saw.
//
// A kind counts as absent only after unservedPolls answers of 404 in a row, watched
// before or not; discovery errors leave it unknown (nothing deleted), and after
// discoveryFailPolls of them in a row fail Synced and send one Warning. discover reports
// whether some kind's absence is being confirmed, for the caller to poll sooner.
func (w *Watcher) discover(ctx context.Context) (confirming bool) {
	w.mu.Lock()
	asked := map[string]groupVersion{} // one discovery call per group/version per poll
	for _, k := range w.crds {
		version, err := w.served(k, asked)
		if err != nil {
			k.unserved = 0 // a row of 404s is broken by an error
			k.failing++
			k.failure = err
		} else {
			if k.failing >= discoveryFailPolls {
				w.log.Info("discovery answers again", "kind", k.kind, "group", k.group)
			}
			k.failing = 0
		}
		if k.informer != nil {
			switch {
			case err != nil || version == k.version:
				k.unserved = 0
				continue // what is watched is still served (or the cluster cannot say)
			case version == "":
				if k.unserved++; k.unserved < unservedPolls {
					confirming = true
					continue
				}
				w.log.Info("kind no longer served: its CRD was removed; its objects are gone",
					"kind", k.kind, "group", k.group, "version", k.version)
			default:
				w.log.Info("kind now served at another version: watching that one",
					"kind", k.kind, "group", k.group, "from", k.version, "to", version)
			}
			k.stop()
			k.informer, k.list, k.stop, k.logged = nil, nil, nil, false
			// A stopped informer sends no Delete events for the objects it held: the next
			// reconcile must read everything, not follow the changes it was told of.
			w.changes.all()
			w.notify()
			if version == "" {
				// Confirmed above: absent now, without another round of polls.
				k.absent, k.unknown = true, nil
				continue
			}
		}
		switch {
		case err != nil:
			if k.unknown == nil {
				w.log.Error("cannot tell whether the cluster serves a kind; its records are kept until it can",
					"kind", k.kind, "group", k.group, "err", err)
			}
			k.unknown = err
			continue
		case version == "":
			k.unknown = nil
			if k.unserved++; !k.absent && k.unserved < unservedPolls {
				// Unknown yet: one 404 may be an API server that has just restarted.
				confirming = true
				continue
			}
			k.absent = true
			if !k.logged {
				w.log.Info("kind skipped: its CRD is not installed; it is picked up when it is",
					"kind", k.kind, "group", k.group, "poll", w.cfg.CRDPoll)
				k.logged = true
			}
			continue
		}
		k.absent, k.unknown, k.version, k.unserved = false, nil, version, 0
		w.start(ctx, k)
		w.log.Info("watching kind", "kind", k.kind, "group", k.group, "version", version)
	}
	warned := w.discoveryWarned
	warning := w.discoveryWarning()
	recovered := warned && !w.discoveryWarned
	w.confirming = confirming
	w.mu.Unlock()
	// Outside mu: the callback's event reporter asks the Watcher for UIDs.
	if warning != "" {
		w.warn(ReasonDiscoveryFailing, warning)
	}
	if recovered && w.cfg.Resolve != nil {
		w.cfg.Resolve(ReasonDiscoveryFailing)
	}
	return confirming
}

// Settle waits, after Run, until no kind's absence is being confirmed: a kind the
// cluster answered 404 for is then watched or absent. A single reconcile (--once) calls
// it, or it would never delete the records of a kind whose CRD is not installed; it
// costs up to (unservedPolls-1)×min(CRDPoll, confirmPoll) when one is not.
func (w *Watcher) Settle(ctx context.Context) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		w.mu.Lock()
		confirming := w.confirming
		w.mu.Unlock()
		if !confirming {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("watch: waiting for CRD-served kinds to be confirmed absent: %w", context.Cause(ctx))
		case <-t.C:
		}
	}
}

// discoveryWarning returns the Warning to send, once, while some kind's discovery has
// failed for discoveryFailPolls polls in a row ("" otherwise), and allows another once
// none does. Under mu.
func (w *Watcher) discoveryWarning() string {
	var failing []string
	for _, k := range w.crds {
		if k.failing >= discoveryFailPolls {
			failing = append(failing, discoveryFailure(k).Error())
		}
	}
	if len(failing) == 0 {
		w.discoveryWarned = false
		return ""
	}
	if w.discoveryWarned {
		return ""
	}
	w.discoveryWarned = true
	msg := strings.Join(failing, "; ")
	w.log.Error("discovery keeps failing: /readyz fails and no record of these kinds is deleted until it answers", "why", msg)
	return msg
}

// discoveryFailure says what the failing discovery of k means for its records. Under mu.
func discoveryFailure(k *crdKind) error {
	if k.informer != nil {
		return fmt.Errorf("cannot tell whether the cluster still serves %s (%s) after %d polls: %w; it is still watched at %s",
			k.kind, k.group, k.failing, k.failure, k.version)
	}
	return fmt.Errorf("cannot tell whether the cluster serves %s (%s) after %d polls: %w; none of its records is deleted until it can",
		k.kind, k.group, k.failing, k.failure)
}

// groupVersion is one discovery answer: the resources of a group/version, or why not.
type groupVersion struct {
	list *metav1.APIResourceList
	err  error
}

// served returns the preferred version of k the cluster serves, "" when it serves none.
// asked holds the answers of this poll, by group/version.
func (w *Watcher) served(k *crdKind, asked map[string]groupVersion) (string, error) {
	for _, v := range k.versions {
		gv := k.group + "/" + v
		a, ok := asked[gv]
		if !ok {
			a.list, a.err = w.client.Discovery().ServerResourcesForGroupVersion(gv)
			asked[gv] = a
			if a.err != nil && !apierrors.IsNotFound(a.err) {
				w.cfg.Metrics.discoveryError(k.group)
			}
		}
		list, err := a.list, a.err
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("discover %s: %w", gv, err)
		}
		for _, r := range list.APIResources {
			if r.Name == k.resource {
				return v, nil
			}
		}
	}
	return "", nil
}

// start runs a dynamic informer for k whose store holds k's typed, stripped objects.
func (w *Watcher) start(ctx context.Context, k *crdKind) {
	gvr := schema.GroupVersionResource{Group: k.group, Version: k.version, Resource: k.resource}
	res := w.dyn.Resource(gvr).Namespace(w.cfg.Namespace)
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return res.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return res.Watch(ctx, opts)
		},
	}, &unstructured.Unstructured{}, 0, cache.Indexers{})
	_ = inf.SetTransform(func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		out, err := k.convert(u)
		if err != nil {
			// One object the typed form cannot hold must not stop the kind: it is
			// kept as a bare object, which no source publishes from, and logged.
			w.log.Error("cannot read object", "kind", k.kind, "namespace", u.GetNamespace(), "name", u.GetName(), "err", err)
			return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: u.GetNamespace(), Name: u.GetName(), UID: u.GetUID()}}, nil
		}
		return w.strip(out)
	})
	w.handle(inf)
	ictx, stop := context.WithCancel(ctx)
	k.informer, k.stop = inf, stop
	k.list = w.track(k.resource+"."+k.group, forbiddenHint(k.resource+"."+k.group, false), inf)
	go inf.RunWithContext(ictx)
}

// Synced reports whether every started informer has its first full list and discovery
// answers, and why not: an informer the API refuses to list, or a kind whose discovery
// has failed for discoveryFailPolls polls in a row.
func (w *Watcher) Synced() error {
	var errs []error
	for _, l := range w.typed {
		if err := l.notSynced(); err != nil {
			errs = append(errs, err)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range w.crds {
		switch {
		case k.failing >= discoveryFailPolls:
			errs = append(errs, discoveryFailure(k))
		case k.informer != nil:
			if err := k.list.notSynced(); err != nil {
				errs = append(errs, fmt.Errorf("%s (%s): %w", k.kind, k.group, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Snapshot returns the objects now cached. complete is false when some kind's objects
// are not all known (an informer still listing, or discovery failing): the caller must
// then keep records no object asks for, because the object may only be unread.
func (w *Watcher) Snapshot() (snap *source.Snapshot, complete bool) {
	snap = &source.Snapshot{}
	complete = true
	typed := func(st cache.Store) []any {
		if st == nil {
			return nil
		}
		return st.List()
	}
	snap.Services = appendAll[*corev1.Service](nil, typed(w.lists.services))
	snap.Ingresses = appendAll[*networkingv1.Ingress](nil, typed(w.lists.ingresses))
	snap.Nodes = appendAll[*corev1.Node](nil, typed(w.lists.nodes))
	snap.Namespaces = appendAll[*corev1.Namespace](nil, typed(w.lists.namespaces))
	snap.EndpointSlices = appendAll[*discoveryv1.EndpointSlice](nil, typed(w.lists.slices))
	for _, l := range w.typed {
		complete = complete && l.inf.HasSynced()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range w.crds {
		switch {
		case k.informer != nil:
			complete = complete && k.informer.HasSynced()
			k.add(snap, k.informer.GetStore().List())
		case k.unknown != nil || !k.absent:
			complete = false
		}
	}
	return snap, complete
}

// UID returns the UID of the cached object of kind (as sources name it) namespace/name,
// which events need for `kubectl describe` to show them; "" when not cached.
func (w *Watcher) UID(kind, namespace, name string) types.UID {
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	var stores []cache.Store
	switch kind {
	case "Service":
		stores = append(stores, w.lists.services)
	case "Ingress":
		stores = append(stores, w.lists.ingresses)
	default:
		w.mu.Lock()
		for _, k := range w.crds {
			if k.kind == kind && k.informer != nil {
				stores = append(stores, k.informer.GetStore())
			}
		}
		w.mu.Unlock()
	}
	for _, st := range stores {
		if st == nil {
			continue
		}
		if obj, ok, _ := st.GetByKey(key); ok {
			if m, ok := obj.(metav1.Object); ok {
				return m.GetUID()
			}
		}
	}
	return ""
}

// APIVersion returns the group/version events name for kind, "" when unknown.
func (w *Watcher) APIVersion(kind string) string {
	switch kind {
	case "Service":
		return "v1"
	case "Ingress":
		return "networking.k8s.io/v1"
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range w.crds {
		if k.kind == kind && k.version != "" {
			return k.group + "/" + k.version
		}
	}
	return ""
}
