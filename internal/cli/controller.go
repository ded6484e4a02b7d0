package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/middleware"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/crossfade-io/crossfade/internal/awsconfig"
	"github.com/crossfade-io/crossfade/internal/cloudmap"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	lrroute53 "github.com/crossfade-io/crossfade/internal/cutover/lever/route53"
	"github.com/crossfade-io/crossfade/internal/cutover/levers"
	"github.com/crossfade-io/crossfade/internal/cutover/reconciler"
	"github.com/crossfade-io/crossfade/internal/metrics"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/cache"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/registry/crdstore"
)

// ControllerOptions are `crossfade controller`'s flags. Those external-dns also has keep
// its names and meanings, so an external-dns Deployment switches by changing its image
// and command.
type ControllerOptions struct {
	PublishOptions
	kubeconfig string
	// kubeQPS and kubeBurst bound the requests to the API server, as external-dns's
	// --kube-api-qps and --kube-api-burst (client-go's defaults): the CRD registry writes
	// one DNSRecord per record through them.
	kubeQPS, kubeBurst int
	// incremental re-plans only the names a change touched (controller.Config.Incremental).
	incremental bool
	// fullInterval is controller.Config.FullInterval.
	fullInterval time.Duration
	master       string
	sources      []string
	registryName string
	// crdNamespace holds the DNSRecords of --registry crd (--crd-registry-namespace).
	crdNamespace string
	interval     time.Duration
	once         bool
	events       bool

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

	// cutovers runs the cluster's Cutover objects (--cutovers), with cutover's runner
	// flags.
	cutovers bool
	cutover  CutoverRunnerFlags
	// cutoverLease is how long a dead replica keeps a Cutover's Lease
	// (--cutover-lease-duration): how long its cutover waits for another replica.
	cutoverLease time.Duration

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

// add defines the Cloud Map flags in fl.
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
func (c *cloudMapFlags) publisher(ctx context.Context, f *ControllerOptions, m *metrics.Metrics, log *slog.Logger) (*cloudmap.Publisher, error) {
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
	owner := f.registry.OwnerID
	cluster := c.cluster
	if cluster == "" {
		cluster = owner
	}
	p, err := cloudmap.New(cloudmap.Config{API: client, Identity: cloudmap.Identity{Owner: owner, Cluster: cluster, Namespaces: c.namespaces},
		Resync: f.resync, OperationTimeout: c.operationTimeout, DryRun: f.DryRun, Metrics: cm, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("--cloudmap: %w", err)
	}
	return p, nil
}

// CutoverRunnerFlags are the flags of what runs a cutover's steps that `crossfade cutover`
// and `crossfade controller --cutovers` share, defined here once so that both name and
// explain them alike. (The Cloud Map endpoint is each command's own --cloudmap-endpoint.)
type CutoverRunnerFlags struct {
	// DNSServers are the authoritative DNS servers (host:port) of dns gates that list none.
	DNSServers []string
	// ELBv2Endpoint and CloudWatchEndpoint are those APIs' URLs for a plan with spec.alb;
	// "" is the Route 53 endpoint's.
	ELBv2Endpoint, CloudWatchEndpoint string
}

// AddFlags defines --dns-server, --elbv2-endpoint and --cloudwatch-endpoint in fs.
func (o *CutoverRunnerFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.DNSServers, "dns-server", nil, "authoritative DNS servers (host:port) for dns gates that list none")
	fs.StringVar(&o.ELBv2Endpoint, "elbv2-endpoint", "", "ELBv2 API URL for a plan with spec.alb (default: --aws-endpoint's, e.g. the sandbox's)")
	fs.StringVar(&o.CloudWatchEndpoint, "cloudwatch-endpoint", "", "CloudWatch API URL for a plan with spec.alb, read by albTraffic gates and retire.cloudWatch (default: --aws-endpoint's, e.g. the sandbox's)")
}

// CheckCutoverRunnerFlags declares what the values of the flags CutoverRunnerFlags.AddFlags
// defined in fs must be.
func CheckCutoverRunnerFlags(fc *FlagChecks, fs *pflag.FlagSet) {
	fc.Want(fs, "dns-server", DNSServer)
	for _, name := range []string{"elbv2-endpoint", "cloudwatch-endpoint"} {
		fc.Want(fs, name, Optional(HTTPURL))
	}
}

// CheckControllerCutoverFlags declares what `crossfade controller`'s --cutovers and the
// runner flags that go with it must be: their values, and that they are given together.
func CheckControllerCutoverFlags(fc *FlagChecks, c *cobra.Command) {
	fl := c.Flags()
	CheckCutoverRunnerFlags(fc, fl)
	fc.Want(fl, "cutover-lease-duration", PositiveDuration)
	fc.Check(c, func() error {
		on, _ := fl.GetBool("cutovers")
		if !on {
			// A flag that configures nothing would read as if it did.
			for _, name := range []string{"dns-server", "elbv2-endpoint", "cloudwatch-endpoint", "cutover-lease-duration"} {
				if fl.Changed(name) {
					return fmt.Errorf("--%s: only with --cutovers, whose cutovers it configures", name)
				}
			}
			return nil
		}
		// A cutover runs for minutes to hours and moves traffic: neither one reconcile
		// nor a dry run can hold it.
		for _, name := range []string{"once", "dry-run"} {
			if v, _ := fl.GetBool(name); v {
				return fmt.Errorf("--cutovers: not with --%s: a cutover's steps are written and held for minutes to hours; run the controller without --%s", name, name)
			}
		}
		return nil
	})
}

// AddFlags defines `crossfade controller`'s flags in fl.
func (f *ControllerOptions) AddFlags(fl *pflag.FlagSet) {
	f.PublishOptions.AddFlags(fl)
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster, else $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&f.master, "master", "", "Kubernetes API server URL, overriding the kubeconfig's")
	fl.IntVar(&f.kubeQPS, "kube-api-qps", int(rest.DefaultQPS), "requests per second to the Kubernetes API server (sustained; as external-dns: raise it with --registry crd, which writes one DNSRecord per record)")
	fl.IntVar(&f.kubeBurst, "kube-api-burst", rest.DefaultBurst, "requests to the Kubernetes API server sent at once before --kube-api-qps applies")
	fl.StringSliceVar(&f.sources, "source", nil, "kinds to publish from (repeatable): "+strings.Join(controller.Sources, ", "))
	fl.StringVar(&f.registryName, "registry", "txt", "ownership registry: txt (TXT records in the zone) or crd (external-dns v0.23's DNSRecord objects)")
	fl.StringVar(&f.crdNamespace, "crd-registry-namespace", "", "namespace of the DNSRecords of --registry crd (default: the pod's namespace, else default)")
	fl.DurationVar(&f.interval, "interval", controller.DefaultInterval, "reconcile at least this often without events (free while the zone cache is fresh)")
	fl.BoolVar(&f.once, "once", false, "reconcile once and exit (no leader election)")
	fl.BoolVar(&f.events, "events", true, "accepted for external-dns compatibility: crossfade always reconciles on events")
	fl.BoolVar(&f.DryRun, "dry-run", false, "plan and log, send nothing")
	fl.DurationVar(&f.debounce, "debounce", controller.DefaultDebounce, "quiet time after an object change before reconciling")
	fl.BoolVar(&f.incremental, "incremental", true, "after a Service changes, re-read it alone and re-plan only its names (a full reconcile still runs every --full-reconcile-interval and for every change it cannot follow alone)")
	fl.DurationVar(&f.fullInterval, "full-reconcile-interval", controller.DefaultFullInterval, "with --incremental, read every object and re-plan every name at least this often (at least --interval); the reconciles between re-plan only what changed, at rest nothing")
	fl.DurationVar(&f.maxDelay, "max-delay", controller.DefaultMaxDelay, "longest wait for quiet after the first change")
	fl.DurationVar(&f.backoffBase, "reconcile-backoff-base", controller.DefaultBackoffBase, "the first retry of a failed reconcile (Route 53 or Cloud Map throttling, failing or down) comes within this; the wait doubles with each failure in a row, jittered, up to --reconcile-backoff-max, and changes that come meanwhile wait for its end")
	fl.DurationVar(&f.backoffMax, "reconcile-backoff-max", controller.DefaultBackoffMax, "cap of the wait after failed reconciles: the longest the controller is late once the API answers again")
	fl.DurationVar(&f.resync, "resync-interval", time.Hour, "re-list each zone this often even if nothing failed")
	fl.DurationVar(&f.crdPoll, "crd-poll-interval", controller.DefaultCRDPoll, "how often CRDs not installed yet are looked for")
	fl.StringVar(&f.metricsAddress, "metrics-address", ":7979", "address of /metrics, /healthz and /readyz")
	fl.DurationVar(&f.holdProbe, "hold-probe-interval", controller.DefaultHoldProbe, "how often each name where this controller publishes weighted records is asked (by DNS, from the zone's name servers: no Route 53 API call) whether a cutover holds it, so that the hold is confirmed for cutover release without waiting for --resync-interval; 0 turns probing off")
	fl.StringSliceVar(&f.holdProbeServers, "hold-probe-servers", nil, "host:port of the DNS servers asked by --hold-probe-interval instead of each zone's own name servers (repeatable; needed for private zones, and for a sandbox: with --aws-endpoint on this machine and no --hold-probe-servers, nothing is probed)")
	f.cloudMap.add(fl)
	fl.BoolVar(&f.cutovers, "cutovers", false, "also run every Cutover object (cutovers.crossfade.io) in --namespace (default: all) with the engine, levers and gates of 'crossfade cutover run', journaled in the object's status; "+
		"on every replica, without leader election: each Cutover has its own Lease, so one replica runs it and another resumes it from its status when that one dies")
	f.cutover.AddFlags(fl)
	fl.DurationVar(&f.cutoverLease, "cutover-lease-duration", statusstore.DefaultLeaseDuration, "with --cutovers: how long a Cutover's Lease stays its replica's without a renewal (renewed every third of it): a replica that dies mid-step holds its cutover this long before another resumes it from its status")
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
}

// ControllerEnv is what `crossfade controller` takes from its environment rather than
// its command line. The command reads it, so that nothing below the command does.
type ControllerEnv struct {
	// PodNamespace, PodName and PodUID name the controller's Pod (the downward API's
	// POD_NAMESPACE, POD_NAME, POD_UID); empty outside a pod.
	PodNamespace, PodName, PodUID string
	// Namespace is the pod's own namespace (its service account's), the Lease's when
	// --leader-election-namespace is not given; "" outside a pod.
	Namespace string
	// AWSEndpoint is the Route 53 endpoint the SDK takes from the environment
	// (AWS_ENDPOINT_URL_ROUTE_53, else AWS_ENDPOINT_URL), where --aws-endpoint is not given.
	AWSEndpoint string
	// Identity names this replica in the Lease.
	Identity string
	// Hostname is the machine's host name (a pod's name in a pod): with --cutovers, the
	// holder of the Cutovers' Leases when PodName is empty.
	Hostname string
}

// Config builds what controller.RunApp runs from: the Kubernetes client configuration,
// the metrics, the publishing parts over a zone cache, and the Cloud Map publisher.
func (f *ControllerOptions) Config(ctx context.Context, env ControllerEnv, log *slog.Logger) (controller.AppConfig, error) {
	restCfg, err := f.restConfig()
	if err != nil {
		return controller.AppConfig{}, err
	}
	m := metrics.New()
	f.route53.APIOptions = append(f.route53.APIOptions, m.AWSAPIOption())
	var zones *cache.Provider
	p, err := f.Build(ctx, log, func(dns *route53.Provider) provider.Provider {
		zones = cache.New(dns, cache.Config{Resync: f.resync, Logger: log})
		return zones
	})
	if err != nil {
		return controller.AppConfig{}, err
	}
	if err := f.crdRegistry(p, restCfg, env, log); err != nil {
		return controller.AppConfig{}, err
	}
	cm, err := f.cloudMap.publisher(ctx, f, m, log)
	if err != nil {
		return controller.AppConfig{}, err
	}
	// The endpoint as the SDK picks it: the flag, else the environment's.
	api := f.route53.Endpoint
	if api == "" {
		api = env.AWSEndpoint
	}
	leaseNamespace := f.leaseNamespace
	for _, ns := range []string{env.Namespace, "default"} {
		if leaseNamespace == "" {
			leaseNamespace = ns
		}
	}
	var cutovers controller.CutoverRunner
	if f.cutovers {
		rc, err := f.cutoverRunner(ctx, env, restCfg, log)
		if err != nil {
			return controller.AppConfig{}, err
		}
		cutovers = runCutovers(rc)
	}
	return controller.AppConfig{REST: restCfg, Sources: f.sources, Namespace: f.source.Namespace, Cutovers: cutovers,
		Syncer: p.Syncer, Source: p.Source, Zones: zones, Metrics: m, MetricsAddress: f.metricsAddress, CloudMap: cm,
		Debounce: f.debounce, MaxDelay: f.maxDelay, Interval: f.interval, CRDPoll: f.crdPoll, Incremental: f.incremental, FullInterval: f.fullInterval,
		BackoffBase: f.backoffBase, BackoffMax: f.backoffMax,
		HoldProbe: controller.HoldProbeConfig{Interval: f.holdProbe, Servers: f.holdProbeServers, APIEndpoint: api},
		Once:      f.once, LeaderElect: f.leaderElect,
		Leader: controller.LeaderConfig{Namespace: leaseNamespace, Name: f.leaseName, Identity: env.Identity,
			LeaseDuration: f.leaseDuration, RenewDeadline: f.renewDeadline, RetryPeriod: f.retryPeriod},
		Pod:   controller.PodReference(env.PodNamespace, env.PodName, env.PodUID),
		Owner: f.registry.OwnerID, DryRun: f.DryRun, Logger: log}, nil
}

// crdRegistry switches p to the CRD registry under --registry crd: ownership is read from
// and written to the DNSRecords of --crd-registry-namespace (else the pod's namespace,
// else default, as external-dns falls back to its current namespace) instead of TXT
// records, whose --txt-prefix, --txt-suffix and legacy form then mean nothing, as for
// external-dns.
func (f *ControllerOptions) crdRegistry(p *Parts, restCfg *rest.Config, env ControllerEnv, log *slog.Logger) error {
	if f.registryName != "crd" {
		return nil
	}
	if f.cutovers {
		// The cutover levers find a weighted group's members by their ownership TXT
		// records, which this registry does not write.
		return errors.New("--registry crd: --cutovers needs --registry txt: the cutover levers read ownership from TXT records")
	}
	ns := cmp.Or(f.crdNamespace, env.Namespace, "default")
	if f.crdNamespace == "" {
		log.Info("--crd-registry-namespace not given", "namespace", ns)
	}
	reg, err := registry.New(registry.Config{OwnerID: f.registry.OwnerID})
	if err != nil {
		return err
	}
	crd, err := crdstore.New(p.Syncer.Provider, crdstore.Config{REST: restCfg, Namespace: ns, Registry: reg, Logger: log})
	if err != nil {
		return fmt.Errorf("--registry crd: %w", err)
	}
	p.Syncer.Provider, p.Syncer.Registry = crd, crd.Registry()
	return nil
}

// cutoverRunner configures what runs the cluster's Cutover objects (--cutovers): the
// levers and gate clients of `crossfade cutover run`, built from the controller's AWS
// flags, and the replica's name as the holder of their Leases. Called after Build, so
// that f.route53 holds the SDK's retries and the metrics' API option.
func (f *ControllerOptions) cutoverRunner(ctx context.Context, env ControllerEnv, restCfg *rest.Config, log *slog.Logger) (reconciler.Config, error) {
	// The members' ownership records are found with the TXT affixes this controller
	// publishes with; no owner id is needed to read them.
	reg, err := registry.New(f.registry)
	if err != nil {
		return reconciler.Config{}, fmt.Errorf("--cutovers: %w", err)
	}
	r53 := f.cutoverRoute53(log)
	leverEnv := levers.Env{Registry: reg,
		AWS: func() (aws.Config, error) {
			return awsconfig.Load(ctx, awsconfig.Options{Region: r53.Region, MaxRetries: r53.MaxRetries, MaxBackoff: r53.MaxBackoff})
		},
		ELBv2:            cmp.Or(f.cutover.ELBv2Endpoint, r53.Endpoint),
		CloudWatch:       cmp.Or(f.cutover.CloudWatchEndpoint, r53.Endpoint),
		ServiceDiscovery: cmp.Or(f.cloudMap.endpoint, r53.Endpoint),
		DNS:              func() (lrroute53.DNS, error) { return route53.New(ctx, r53) }}
	return reconciler.Config{REST: restCfg, Namespace: f.source.Namespace, Identity: cmp.Or(env.PodName, env.Hostname, "crossfade"),
		Levers: levers.New(leverEnv), DNSServers: f.cutover.DNSServers, LeaseDuration: f.cutoverLease, Logger: log}, nil
}

// cutoverRoute53 is the configuration of the cutovers' Route 53 providers. The Route 53
// lever reads the zone live (not the publisher's cache) and is not limited by
// --domain-filter, --zone-id-filter or --aws-zone-type: a plan names its zone, as for
// `cutover run`.
func (f *ControllerOptions) cutoverRoute53(log *slog.Logger) route53.Config {
	return route53.Config{Endpoint: f.route53.Endpoint, Region: f.route53.Region, MaxRetries: f.route53.MaxRetries,
		MaxBackoff: f.route53.MaxBackoff, APIOptions: f.route53.APIOptions, Logger: log,
		// The publisher's bucket: the cutovers and the publisher keep within one rate. The
		// numbers stay beside it: with --aws-route53-rate negative there is no bucket
		// (nil), and a Config without one builds its own from them, so without them a
		// cutover would be paced at the default rate that the flag turned off.
		RequestsPerSecond: f.route53.RequestsPerSecond, Burst: f.route53.Burst, Limiter: Route53Limiter(&f.route53)}
}

// runCutovers is the controller's CutoverRunner over rc: a reconciler with its state in
// the directory the controller gives it, its Events sent by the controller's recorder and
// its series served on the controller's /metrics.
func runCutovers(rc reconciler.Config) controller.CutoverRunner {
	return func(ctx context.Context, env controller.CutoverEnv) error {
		rc.StateDir, rc.Events, rc.Metrics = env.StateDir, env.Events, env.Metrics
		r, err := reconciler.New(rc)
		if err != nil {
			return err
		}
		return r.Run(ctx)
	}
}

// restConfig builds the Kubernetes client configuration: --kubeconfig, else in-cluster,
// else the usual kubeconfig files.
func (f *ControllerOptions) restConfig() (*rest.Config, error) {
	cfg, err := f.loadRESTConfig()
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = float32(f.kubeQPS), f.kubeBurst
	return cfg, nil
}

// loadRESTConfig is the cluster and credentials restConfig starts from.
func (f *ControllerOptions) loadRESTConfig() (*rest.Config, error) {
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
	switch {
	case err == nil:
		return cfg, nil
	case f.kubeconfig == "":
		// The usual files ($KUBECONFIG, ~/.kube/config) were read: --kubeconfig "" named nothing.
		return nil, fmt.Errorf("no --kubeconfig given and not in a cluster: %w", err)
	case strings.Contains(err.Error(), f.kubeconfig):
		// clientcmd's error names the file ("stat PATH: …", "error loading config file
		// \"PATH\": …"): name it once.
		return nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	return nil, fmt.Errorf("--kubeconfig %q: %w", f.kubeconfig, err)
}

// NewControllerCommand is `crossfade controller` as its users see it: usage, help and
// flags (into o); CheckControllerFlags declares their checks once the command is in its
// tree. What it runs (RunE) is the caller's.
func NewControllerCommand(o *ControllerOptions) *cobra.Command {
	c := &cobra.Command{
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
	}
	o.AddFlags(c.Flags())
	_ = c.MarkFlagRequired("txt-owner-id")
	_ = c.MarkFlagRequired("source")
	return c
}
