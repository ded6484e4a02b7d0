package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/aws/smithy-go/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/record"

	"github.com/crossfade-io/crossfade/internal/cloudmap"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/metrics"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/cache"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
)

// controllerFlags are `crossfade controller`'s flags. Those external-dns also has keep
// its names and meanings, so an external-dns Deployment switches by changing its image
// and command.
type controllerFlags struct {
	publishFlags
	kubeconfig string
	master     string
	sources    []string
	registry   string
	interval   time.Duration
	once       bool
	events     bool

	debounce       time.Duration
	maxDelay       time.Duration
	resync         time.Duration
	crdPoll        time.Duration
	metricsAddress string
	// holdProbe and holdProbeServers configure the cutover hold prober
	// (controller.HoldProber): how often, and whom to ask instead of each zone's own
	// name servers.
	holdProbe        time.Duration
	holdProbeServers []string
	// backoffBase and backoffMax shape the wait after a failed reconcile
	// (controller.Config.BackoffBase, BackoffMax).
	backoffBase, backoffMax time.Duration

	cloudMap cloudMapFlags

	leaderElect    bool
	leaseNamespace string
	leaseName      string
	leaseDuration  time.Duration
	renewDeadline  time.Duration
	retryPeriod    time.Duration
}

// cloudMapFlags turn on and point the Cloud Map publisher.
type cloudMapFlags struct {
	enabled          bool
	endpoint         string
	cluster          string
	namespaces       []string
	operationTimeout time.Duration
}

func (c *cloudMapFlags) add(fl *pflag.FlagSet) {
	fl.BoolVar(&c.enabled, "cloudmap", false, "also register each ready endpoint of Services annotated "+cloudmap.AnnotationService+" as a Cloud Map instance")
	fl.StringVar(&c.endpoint, "cloudmap-endpoint", "", "Cloud Map API URL (default: --aws-endpoint's, e.g. the sandbox's; else AWS's)")
	fl.StringVar(&c.cluster, "cloudmap-cluster-id", "", "value of the instances' "+cloudmap.AttrCluster+" attribute, which clients select this cluster by (default: --txt-owner-id)")
	fl.StringSliceVar(&c.namespaces, "cloudmap-namespace", nil, "only these Cloud Map namespaces (repeatable); each is searched for this owner's instances from the start, even when no Service names it any more")
	fl.DurationVar(&c.operationTimeout, "cloudmap-operation-timeout", cloudmap.DefaultOperationTimeout, "longest wait for one registration or deregistration to leave PENDING")
}

// publisher builds the Cloud Map publisher the flags ask for; nil when --cloudmap is off.
// Its instances are owned by the --txt-owner-id, and its cache is re-listed every
// --resync-interval, as the zones are.
func (c *cloudMapFlags) publisher(ctx context.Context, f *controllerFlags, m *metrics.Metrics, log *slog.Logger) (*cloudmap.Publisher, error) {
	if !c.enabled {
		return nil, nil
	}
	cm, err := cloudmap.NewMetrics(m.Registry())
	if err != nil {
		return nil, err
	}
	endpoint := c.endpoint
	if endpoint == "" {
		endpoint = f.route53.Endpoint
	}
	client, err := cloudmap.NewClient(ctx, cloudmap.ClientConfig{Endpoint: endpoint, Region: f.route53.Region, MaxRetries: f.route53.MaxRetries,
		APIOptions: []func(*middleware.Stack) error{cm.APIOption()}})
	if err != nil {
		return nil, err
	}
	owner := f.publishFlags.registry.OwnerID
	cluster := c.cluster
	if cluster == "" {
		cluster = owner
	}
	p, err := cloudmap.New(cloudmap.Config{API: client, Identity: cloudmap.Identity{Owner: owner, Cluster: cluster, Namespaces: c.namespaces},
		Resync: f.resync, OperationTimeout: c.operationTimeout, DryRun: f.dryRun, Metrics: cm, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("--cloudmap: %w", err)
	}
	return p, nil
}

// ignoredFlags say why some external-dns flags change nothing in crossfade (see
// acceptExternalDNSFlags; the others are warned about as having no such setting).
var ignoredFlags = map[string]string{
	"min-event-sync-interval":   "crossfade debounces events itself (--debounce, --max-delay)",
	"txt-cache-interval":        "crossfade caches zones between reconciles and re-lists every --resync-interval",
	"aws-batch-change-size":     "batches follow Route 53's limits",
	"aws-batch-change-interval": "batches are written back to back",
	"request-timeout":           "client-go's defaults apply",
}

func newControllerCmd(g *globalFlags) *cobra.Command {
	f := &controllerFlags{}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Publish records from the cluster's live objects, continuously (a drop-in for external-dns)",
		Long: `controller watches Services, Ingresses, DNSEndpoints, Istio Gateways/VirtualServices and
Gateway API routes in one cluster and keeps the zones holding the records they ask for, as
external-dns does and with its flags and annotations. It reconciles when objects change
(debounced), keeps each zone's records cached between reconciles, and calls no DNS API while
nothing changes. Invalid objects and conflicts get a Warning event on the object; their
records are kept, never deleted. With several replicas, one leads (a coordination.k8s.io
Lease) and writes.

With --cloudmap it also registers each ready endpoint of the Services annotated
crossfade.io/cloudmap-service: <namespace>/<service> as an AWS Cloud Map instance carrying
the cluster id, a version and the Service's attributes, and never touches an instance it
did not register.

External-dns flags that mean nothing to crossfade are accepted with a warning; any
other unknown flag is refused (exit status 2).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := g.logger()
			warnIgnoredFlags(log, cmd.Flags())
			return f.run(cmd.Context(), log)
		},
	}
	fl := cmd.Flags()
	f.add(fl)
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster, else $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&f.master, "master", "", "Kubernetes API server URL, overriding the kubeconfig's")
	fl.StringSliceVar(&f.sources, "source", nil, "kinds to publish from (repeatable): "+strings.Join(controller.Sources, ", "))
	fl.StringVar(&f.registry, "registry", "txt", "ownership registry: txt (the only one crossfade writes)")
	fl.DurationVar(&f.interval, "interval", controller.DefaultInterval, "reconcile at least this often without events (free while the zone cache is fresh)")
	fl.BoolVar(&f.once, "once", false, "reconcile once and exit (no leader election)")
	fl.BoolVar(&f.events, "events", true, "accepted for external-dns compatibility: crossfade always reconciles on events")
	fl.BoolVar(&f.dryRun, "dry-run", false, "plan and log, send nothing")
	fl.DurationVar(&f.debounce, "debounce", controller.DefaultDebounce, "quiet time after an object change before reconciling")
	fl.DurationVar(&f.maxDelay, "max-delay", controller.DefaultMaxDelay, "longest wait for quiet after the first change")
	fl.DurationVar(&f.backoffBase, "reconcile-backoff-base", controller.DefaultBackoffBase, "the first retry of a failed reconcile (Route 53 or Cloud Map throttling, failing or down) comes within this; the wait doubles with each failure in a row, jittered, up to --reconcile-backoff-max, and changes that come meanwhile wait for its end")
	fl.DurationVar(&f.backoffMax, "reconcile-backoff-max", controller.DefaultBackoffMax, "cap of the wait after failed reconciles: the longest the controller is late once the API answers again")
	fl.DurationVar(&f.resync, "resync-interval", time.Hour, "re-list each zone this often even if nothing failed")
	fl.DurationVar(&f.crdPoll, "crd-poll-interval", controller.DefaultCRDPoll, "how often CRDs not installed yet are looked for")
	fl.StringVar(&f.metricsAddress, "metrics-address", ":7979", "address of /metrics, /healthz and /readyz")
	fl.DurationVar(&f.holdProbe, "hold-probe-interval", controller.DefaultHoldProbe, "how often each name where this controller publishes weighted records is asked (by DNS, from the zone's name servers: no Route 53 API call) whether a cutover holds it, so that the hold is confirmed for cutover release without waiting for --resync-interval; 0 turns probing off")
	fl.StringSliceVar(&f.holdProbeServers, "hold-probe-servers", nil, "host:port of the DNS servers asked by --hold-probe-interval instead of each zone's own name servers (repeatable; needed for private zones, and for a sandbox: with --aws-endpoint on this machine and no --hold-probe-servers, nothing is probed)")
	f.cloudMap.add(fl)
	fl.BoolVar(&f.leaderElect, "leader-elect", true, "elect one writing replica through a coordination.k8s.io Lease")
	fl.StringVar(&f.leaseNamespace, "leader-election-namespace", "", "namespace of the Lease (default: the pod's, else default)")
	fl.StringVar(&f.leaseName, "leader-election-id", "crossfade-controller", "name of the Lease")
	fl.DurationVar(&f.leaseDuration, "leader-election-lease-duration", controller.DefaultLeaseDuration, "how long a lease lasts unrenewed")
	fl.DurationVar(&f.renewDeadline, "leader-election-renew-deadline", controller.DefaultRenewDeadline, "how long the leader tries to renew before giving up")
	fl.DurationVar(&f.retryPeriod, "leader-election-retry-period", controller.DefaultRetryPeriod, "how often replicas try to acquire or renew")
	fl.BoolVar(&f.source.IgnoreHostnameAnnotation, "ignore-hostname-annotation", false, "ignore the hostname annotation")
	fl.BoolVar(&f.source.IgnoreIngressTLSSpec, "ignore-ingress-tls-spec", false, "ignore Ingress spec.tls hosts")
	fl.BoolVar(&f.source.IgnoreIngressRulesSpec, "ignore-ingress-rules-spec", false, "ignore Ingress spec.rules hosts")
	fl.StringSliceVar(&f.source.IngressClassNames, "ingress-class", nil, "only Ingresses of these classes (repeatable)")
	fl.BoolVar(&f.source.PublishInternal, "publish-internal-services", false, "publish ClusterIP Services' cluster IPs")
	fl.StringVar(&f.source.GatewayNamespace, "gateway-namespace", "", "only Gateway API Gateways in this namespace")
	fl.StringVar(&f.source.GatewayName, "gateway-name", "", "only routes attached to Gateways of this name")
	fl.StringVar(&f.source.GatewayLabelFilter, "gateway-label-filter", "", "only Gateway API Gateways whose labels match")
	_ = cmd.MarkFlagRequired("txt-owner-id")
	_ = cmd.MarkFlagRequired("source")
	return cmd
}

// acceptExternalDNSFlags defines, hidden, every external-dns flag that c (the controller,
// already under its root, whose persistent flags count as its own) does not define, so that
// an external-dns command line parses; any other unknown flag stays a usage error. Boolean
// ones take kingpin's --no-NAME form too.
func acceptExternalDNSFlags(c *cobra.Command) {
	fl := c.Flags()
	known := func(name string) bool { return fl.Lookup(name) != nil || c.InheritedFlags().Lookup(name) != nil }
	for name, boolean := range externalDNSFlags {
		names := []string{name}
		// --no-NAME of a flag crossfade defines stays unknown: ignoring it could ignore
		// what the line means, and pflag has no --no- form to honour it with.
		if boolean && !known(name) {
			names = append(names, "no-"+name)
		}
		for _, n := range names {
			if known(n) {
				continue
			}
			why := ignoredFlags[n]
			if why == "" {
				why = "crossfade has no such setting"
			}
			if boolean {
				fl.Bool(n, false, "external-dns flag, accepted and ignored: "+why)
			} else {
				fl.StringArray(n, nil, "external-dns flag, accepted and ignored: "+why)
			}
			_ = fl.MarkHidden(n)
			_ = fl.SetAnnotation(n, externalDNSOnly, []string{why})
		}
	}
}

// externalDNSOnly annotates the flags acceptExternalDNSFlags defined.
const externalDNSOnly = "crossfade.io/external-dns-only"

// warnIgnoredFlags logs each external-dns flag given that crossfade accepts but ignores.
func warnIgnoredFlags(log *slog.Logger, fl *pflag.FlagSet) {
	fl.Visit(func(f *pflag.Flag) {
		if why, ok := f.Annotations[externalDNSOnly]; ok {
			log.Warn("flag accepted for external-dns compatibility and ignored", "flag", "--"+f.Name, "why", why[0])
		}
	})
}

// controllerGCPercent is the controller's GOGC when the environment sets none. Its heap is
// mostly informer caches, long-lived and idle between changes, so the Go default (100:
// let the heap grow to twice what is live before collecting) mostly holds garbage of the
// first lists and reconciles. At 50 a 10,000-Service cluster peaks at a sixth less
// memory, for collections that cost little while the controller idles (BENCHMARKS.md,
// "In a cluster"); Prometheus sets its own default the same way.
const controllerGCPercent = 50

func (f *controllerFlags) run(ctx context.Context, log *slog.Logger) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(controllerGCPercent)
	}
	var sources []string
	for _, s := range f.sources {
		if slices.Contains(controller.Sources, s) {
			sources = append(sources, s)
			continue
		}
		log.Warn("source not supported by crossfade, ignored", "source", s, "supported", controller.Sources)
	}
	restCfg, err := f.restConfig()
	if err != nil {
		return err
	}
	// Built-in kinds travel as protobuf, as kube-controller-manager's do: decoding
	// 10,000 objects of a first list allocates a fraction of what JSON does. The
	// dynamic client reads CRDs, which the API server serves as JSON only.
	typedCfg := rest.CopyConfig(restCfg)
	typedCfg.ContentType = runtime.ContentTypeProtobuf
	typedCfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	client, err := kubernetes.NewForConfig(typedCfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}

	m := metrics.New()
	f.route53.APIOptions = append(f.route53.APIOptions, m.AWSAPIOption())
	var zones *cache.Provider
	p, err := f.build(ctx, log, func(dns *route53.Provider) provider.Provider {
		zones = cache.New(dns, cache.Config{Resync: f.resync, Logger: log})
		return zones
	})
	if err != nil {
		return err
	}
	// A name the provider refuses is not resent at every reconcile (each resend would
	// also re-list its zone): it waits a minute, then two, … up to an hour, or until its
	// object changes.
	p.syncer.Refusals = &controller.Refusals{}
	p.syncer.QuietConflicts = true
	keep := p.source.ReadsAnnotation
	if f.cloudMap.enabled {
		keep = func(k string) bool { return p.source.ReadsAnnotation(k) || cloudmap.ReadsAnnotation(k) }
	}
	watchMetrics, err := controller.NewWatchMetrics(m.Registry())
	if err != nil {
		return err
	}
	// The Watcher's warnings (discovery failing, kinds it may not list) are the
	// controller's own problems; events is set below, before w.Run can warn.
	var events *controller.EventReporter
	w, err := controller.NewWatcher(client, dyn, controller.WatchConfig{Sources: sources, Namespace: f.source.Namespace,
		CRDPoll: f.crdPoll, CloudMap: f.cloudMap.enabled, KeepAnnotation: keep, Logger: log, Metrics: watchMetrics,
		Warn:    func(reason, message string) { events.WarnController(reason, message) },
		Resolve: func(reason string) { events.ResolveController(reason, "") }})
	if err != nil {
		return fmt.Errorf("--source: %w", err)
	}

	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "crossfade"})

	var drop []string
	if !slices.Contains(sources, controller.SourceService) {
		drop = append(drop, "Service")
	}
	if !slices.Contains(sources, controller.SourceIngress) {
		drop = append(drop, "Ingress")
	}
	events = controller.NewEventReporter(recorder, w, 0, log)
	// The controller's own problems (deletions held by the guard) are Warning events on
	// its Pod, named by the downward API; run outside a pod, they are only logged.
	if ref := controller.PodReference(os.Getenv("POD_NAMESPACE"), os.Getenv("POD_NAME"), os.Getenv("POD_UID")); ref != nil {
		events.SetController(ref)
	} else {
		log.Info("POD_NAME or POD_NAMESPACE not set (not run in a pod): the controller's own warnings, such as held deletions, are logged but sent as no event")
	}
	held, err := metrics.NewDeletionsHeld(m.Registry())
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	obs := controller.NewMetricsObserver(m, held)
	m.SetCacheAges(func() map[string]time.Duration { return obs.ByName(zones.Ages()) })
	ctlCfg := controller.Config{Syncer: p.syncer, Source: p.source, DropKinds: drop,
		Debounce: f.debounce, MaxDelay: f.maxDelay, Interval: f.interval,
		Events: events, Observer: obs, Logger: log}
	if f.holdProbe > 0 {
		probes := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "crossfade_hold_probes_total",
			Help: "DNS probes of names with weighted records for a cutover's authority record, by result: same, changed (the zone is listed again), error."},
			[]string{"result"})
		if err := m.Registry().Register(probes); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		// The endpoint as the SDK picks it: the flag, else the environment's.
		api := f.route53.Endpoint
		for _, env := range []string{"AWS_ENDPOINT_URL_ROUTE_53", "AWS_ENDPOINT_URL"} {
			if api == "" {
				api = os.Getenv(env)
			}
		}
		ctlCfg.Holds = controller.NewHoldProber(controller.HoldProbeConfig{Interval: f.holdProbe, Servers: f.holdProbeServers, APIEndpoint: api,
			Invalidate: zones.Invalidate, Observe: func(r string) { probes.WithLabelValues(r).Inc() }, Logger: log})
	}
	backoff, err := controller.NewBackoffMetrics(m.Registry())
	if err != nil {
		return err
	}
	ctlCfg.BackoffBase, ctlCfg.BackoffMax, ctlCfg.BackoffMetrics = f.backoffBase, f.backoffMax, backoff
	cm, err := f.cloudMap.publisher(ctx, f, m, log)
	if err != nil {
		return err
	}
	if cm != nil {
		ctlCfg.CloudMap = cm
	}
	ctl, err := controller.New(w, ctlCfg)
	if err != nil {
		return err
	}

	// Ready once every informer has its first list and, on the leader, the first
	// reconcile is done; a standby is ready, so that a rollout does not wait on it.
	ready := func() error { return obs.Ready(w.Synced) }
	ln, err := net.Listen("tcp", f.metricsAddress)
	if err != nil {
		return fmt.Errorf("--metrics-address %q: %w", f.metricsAddress, err)
	}
	// The server stops when run returns (after --once too), and run waits for it.
	serveCtx, stopServing := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- metrics.Serve(serveCtx, ln, m.Handler(ready), log) }()
	defer func() {
		stopServing()
		<-served
	}()
	log.Info("serving metrics", "addr", ln.Addr().String(), "paths", []string{metrics.PathMetrics, metrics.PathHealthz, metrics.PathReadyz})
	log.Info("starting", "sources", sources, "owner", f.publishFlags.registry.OwnerID, "cloudmap", f.cloudMap.enabled, "dry_run", f.dryRun)
	if err := w.Run(ctx); err != nil {
		return err
	}
	if f.once || !f.leaderElect {
		obs.SetLeading(true)
	}
	if f.once {
		// A kind answered 404 once is not yet absent (the API server may be restarting):
		// the one reconcile waits until it is, or is watched.
		if err := w.Settle(ctx); err != nil {
			return err
		}
		_, err := ctl.ReconcileOnce(ctx)
		return err
	}
	if !f.leaderElect {
		return ctl.Run(ctx)
	}
	err = controller.Lead(ctx, controller.LeaderConfig{Client: client, Namespace: f.leaseNamespaceOrDefault(),
		Name: f.leaseName, Identity: identity(), LeaseDuration: f.leaseDuration, RenewDeadline: f.renewDeadline,
		RetryPeriod: f.retryPeriod, OnLeading: obs.SetLeading, Logger: log},
		func(ctx context.Context) { _ = ctl.Run(ctx) })
	if errors.Is(err, controller.ErrLeadershipLost) {
		log.Error("lost the lease: exiting so that only the new leader writes")
	}
	return err
}

// restConfig builds the Kubernetes client configuration: --kubeconfig, else in-cluster,
// else the usual kubeconfig files.
func (f *controllerFlags) restConfig() (*rest.Config, error) {
	if f.kubeconfig == "" && f.master == "" {
		if cfg, err := rest.InClusterConfig(); err == nil {
			return cfg, nil
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f.kubeconfig != "" {
		rules.ExplicitPath = f.kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{ClusterInfo: clientcmdapi.Cluster{Server: f.master}}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %q: %w", f.kubeconfig, err)
	}
	return cfg, nil
}

func (f *controllerFlags) leaseNamespaceOrDefault() string {
	if f.leaseNamespace != "" {
		return f.leaseNamespace
	}
	if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
		if ns := strings.TrimSpace(string(b)); ns != "" {
			return ns
		}
	}
	return "default"
}

// identity names this replica in the Lease: the pod's name (its host name in a pod) and
// a random suffix, so a restarted pod never mistakes the old holder for itself.
func identity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "crossfade"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return host + "_" + hex.EncodeToString(b[:])
}
