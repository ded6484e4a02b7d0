package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/crossfade-io/crossfade/internal/child"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// KubeConfig runs the demo's two clusters as real Kubernetes API servers (demo --kube):
// each is an etcd + kube-apiserver pair from the binaries `make test` builds
// (internal/kubetest), holding the app's LoadBalancer Service, with its own
// `crossfade controller` publishing the cluster's member from that Service. The cutover
// is declarative there: green's controller also runs Cutover objects (--cutovers), and
// the demo applies its plan as one and follows it (kubecutover.go).
//
// With --lever alb the clusters hold the app's pods instead, registered into their target
// groups by the AWS Load Balancer Controller that `make test` builds when it is there
// (albkube.go); no crossfade controller runs.
type KubeConfig struct {
	// Crossfade is the crossfade binary that runs each cluster's controller; cmd passes
	// its own executable, so the controllers are the very code the demo shows. The DNS
	// lever's only.
	Crossfade string
	// LBCDir is where the ALB demo looks for the AWS Load Balancer Controller and its
	// CRDs; empty: kubetest.BinDir(), where `make test` builds them.
	LBCDir string
}

const (
	// serviceNamespace and serviceName name the app's Service in each cluster, as the
	// simulated clusters' manifests do.
	serviceNamespace = "shop"
	serviceName      = "app"
	// serviceResource is the resource label the controllers write for it.
	serviceResource = "service/" + serviceNamespace + "/" + serviceName
	// annotationPrefix is the one most clusters use today (external-dns before 0.22).
	annotationPrefix = "external-dns.alpha.kubernetes.io/"

	// controllerInterval is the controllers' --interval and --resync-interval: they re-read
	// the zone every few seconds while the cutover changes it, so the demo shows them
	// holding the cutover's weights (safety rule 3) instead of merely not looking. In a
	// cluster the defaults (1 m, 1 h) apply.
	controllerInterval = 2 * time.Second
	// publishTimeout bounds the wait for the controllers' first records. It is a failure
	// bound: they publish within a second or two of starting.
	publishTimeout = 2 * time.Minute
	// stopGrace is how long a controller may take to exit after SIGTERM before it is
	// killed: its own grace for the batch in flight is 25 s.
	stopGrace = 30 * time.Second
)

// kube is the demo's two real clusters: their API servers and, once started, their
// controllers.
type kube struct {
	cfg      KubeConfig
	dir      string
	clusters []*kubeCluster
	log      *slog.Logger
}

// kubeCluster is one simulated cluster's real control plane.
type kubeCluster struct {
	id     string
	api    *kubetest.Cluster
	client kubernetes.Interface
	// app is the cluster's backend, set by publish; ctl its controller.
	app *cluster
	ctl *child.Process
}

// startKube launches one etcd + kube-apiserver per cluster id, side by side, under dir,
// and returns once every API is ready. Without the binaries it fails at once, saying how
// to build them, and starts nothing. On error nothing is left running.
func startKube(ctx context.Context, cfg KubeConfig, dir string, ids []string, out io.Writer, log *slog.Logger) (*kube, error) {
	k := &kube{cfg: cfg, dir: dir, log: log}
	errs := make([]error, len(ids))
	k.clusters = make([]*kubeCluster, len(ids))
	began := time.Now()
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			api, err := kubetest.Launch(ctx, filepath.Join(dir, id, "kube"))
			if err != nil {
				errs[i] = err
				return
			}
			k.clusters[i] = &kubeCluster{id: id, api: api}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if errors.Is(err, kubetest.ErrNotBuilt) {
			k.close()
			// Both clusters say the same: once is enough.
			return nil, fmt.Errorf("demo --kube runs real kube-apiservers: %w; plain `crossfade demo` (make demo) needs only Go", err)
		}
		if err != nil {
			k.close()
			return nil, fmt.Errorf("cluster %s: %w", ids[i], err)
		}
	}
	took := time.Since(began).Round(100 * time.Millisecond)
	for _, kc := range k.clusters {
		client, err := kubernetes.NewForConfig(kc.api.Config())
		if err != nil {
			k.close()
			return nil, fmt.Errorf("cluster %s: client: %w", kc.id, err)
		}
		kc.client = client
		fmt.Fprintf(out, "cluster %-5s kube-apiserver %s, kubeconfig %s (etcd + kube-apiserver ready in %s)\n", kc.id, kc.api.URL, kc.api.Kubeconfig, took)
	}
	return k, nil
}

// publish creates each cluster's Service for its backend, starts its controller, and
// waits until every controller has published its member from its Service. The
// controllers are left running: stopControllers (or close) stops them.
func (k *kube) publish(ctx context.Context, apps []*cluster, apiURL, dnsAddr string, dns *route53.Provider, out io.Writer) error {
	for _, c := range apps {
		kc := k.cluster(c.id)
		if kc == nil {
			return fmt.Errorf("cluster %s: no API server", c.id)
		}
		kc.app = c
		if err := kc.createService(ctx); err != nil {
			return err
		}
		fmt.Fprintf(out, "cluster %-5s app %s at %s, Service %s/%s: LoadBalancer %s, %sset-identifier %s, %saws-weight %d\n",
			c.id, c.version, c.url("/"), serviceNamespace, serviceName, c.ip, annotationPrefix, c.id, annotationPrefix, c.weight)
		logPath := filepath.Join(k.dir, c.id, "controller.log")
		args, runs := controllerArgs(kc.api.Kubeconfig, apiURL, dnsAddr, c.id), ""
		if c.id == cutoverCluster {
			// The CRD first, so that the controller runs Cutovers from its start.
			if err := kc.installCRD(ctx); err != nil {
				return err
			}
			args, runs = append(args, cutoverArgs(dnsAddr)...), " --cutovers"
		}
		ctl, err := startController(k.cfg.Crossfade, args, controllerEnv(), logPath)
		if err != nil {
			return fmt.Errorf("cluster %s: %w", c.id, err)
		}
		kc.ctl = ctl
		fmt.Fprintf(out, "cluster %-5s crossfade controller pid %d (owner %s, --source service%s), log %s\n", c.id, ctl.Pid(), c.id, runs, logPath)
	}
	members, err := k.waitPublished(ctx, dns)
	if err != nil {
		return err
	}
	for _, kc := range k.clusters {
		m := members[kc.id]
		fmt.Fprintf(out, "cluster %-5s its controller published %s %s [%s] %s weight %d (owner %s, from %s)\n",
			kc.id, m.Name, m.Type, m.SetIdentifier, strings.Join(m.Targets, ","), m.Policy.Weight, m.Owner(), m.Resource())
	}
	return nil
}

func (k *kube) cluster(id string) *kubeCluster {
	for _, kc := range k.clusters {
		if kc != nil && kc.id == id {
			return kc
		}
	}
	return nil
}

// appService is the app's Service in cluster c, annotated as the cluster's member of the
// weighted name, with the load-balancer status a cloud controller would give it: the
// backend's address. No node port is allocated: nothing routes to nodes here.
func appService(c *cluster) *corev1.Service {
	noNodePorts := false
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: serviceName, Namespace: serviceNamespace, Annotations: map[string]string{
			annotationPrefix + "hostname":       appName,
			annotationPrefix + "set-identifier": c.id,
			annotationPrefix + "aws-weight":     strconv.FormatInt(c.weight, 10),
			annotationPrefix + "ttl":            strconv.Itoa(ttl),
		}},
		Spec: corev1.ServiceSpec{
			Type:                          corev1.ServiceTypeLoadBalancer,
			AllocateLoadBalancerNodePorts: &noNodePorts,
			Ports:                         []corev1.ServicePort{{Name: "http", Port: int32(c.port)}},
		},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{
			Ingress: []corev1.LoadBalancerIngress{{IP: c.ip}},
		}},
	}
}

// createService creates the namespace and the app's Service, then writes the Service's
// status, as a cloud controller would (none runs here): a create ignores the status.
func (kc *kubeCluster) createService(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: serviceNamespace}}
	if _, err := kc.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("cluster %s: create namespace %s: %w", kc.id, serviceNamespace, err)
	}
	want := appService(kc.app)
	svc, err := kc.client.CoreV1().Services(serviceNamespace).Create(ctx, want, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("cluster %s: create Service %s/%s: %w", kc.id, serviceNamespace, serviceName, err)
	}
	svc.Status = want.Status
	if _, err := kc.client.CoreV1().Services(serviceNamespace).UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("cluster %s: Service %s/%s: set status.loadBalancer: %w", kc.id, serviceNamespace, serviceName, err)
	}
	return nil
}

// controllerArgs is the command line of one cluster's controller, as a Deployment would
// run it (owner id = cluster id), pointed at the cluster's API and the sandbox: its
// Route 53 API, and its DNS server (dnsAddr), which the controller asks whether a cutover
// holds a name; the zone's own NS records name AWS's servers, off this machine.
func controllerArgs(kubeconfig, apiURL, dnsAddr, owner string) []string {
	return []string{"controller",
		"--kubeconfig", kubeconfig,
		"--source", "service",
		"--domain-filter", zoneName,
		"--txt-owner-id", owner,
		"--aws-endpoint", apiURL,
		"--aws-region", region,
		"--hold-probe-servers", dnsAddr,
		// One replica: nothing to elect.
		"--leader-elect=false",
		// Two controllers on one machine: not the default :7979, which both would want.
		"--metrics-address", "127.0.0.1:0",
		"--interval", controllerInterval.String(),
		"--resync-interval", controllerInterval.String(),
	}
}

// cutoverArgs are what the cutover cluster's controller adds to controllerArgs: it also
// runs the cluster's Cutover objects, its dns gates asking the sandbox's DNS server
// (dnsAddr), the zone's name servers being AWS's, off this machine.
func cutoverArgs(dnsAddr string) []string {
	return []string{"--cutovers", "--dns-server", dnsAddr}
}

// waitPublished waits until the zone holds every cluster's member as its controller
// publishes it from its Service, and returns the members by cluster id.
func (k *kube) waitPublished(ctx context.Context, dns *route53.Provider) (map[string]*endpoint.Endpoint, error) {
	ctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	reg, err := registry.New(registry.Config{OwnerID: "crossfade-demo"}) // reads every owner's records
	if err != nil {
		return nil, err
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		members, err := readMembers(ctx, dns, reg)
		var problems []string
		if err != nil {
			problems = append(problems, err.Error())
		}
		for _, kc := range k.clusters {
			if p := memberProblem(members[kc.id], kc.app); p != "" {
				problems = append(problems, fmt.Sprintf("cluster %s: %s", kc.id, p))
			}
			select {
			case <-kc.ctl.Done():
				return nil, fmt.Errorf("cluster %s: its controller exited (%v) before publishing; log %s (last lines):\n%s", kc.id, kc.ctl.Err(), kc.ctl.LogPath, child.Tail(kc.ctl.LogPath, 30))
			default:
			}
		}
		if len(problems) == 0 {
			return members, nil
		}
		select {
		case <-ctx.Done():
			var logs strings.Builder
			for _, kc := range k.clusters {
				fmt.Fprintf(&logs, "\ncluster %s controller log %s (last lines):\n%s", kc.id, kc.ctl.LogPath, child.Tail(kc.ctl.LogPath, 20))
			}
			return nil, fmt.Errorf("the controllers did not publish within %s (%w): %s%s", publishTimeout, context.Cause(ctx), strings.Join(problems, "; "), logs.String())
		case <-tick.C:
		}
	}
}

// readMembers reads the weighted members of the demo's name, by set identifier, labelled
// with their owners.
func readMembers(ctx context.Context, dns *route53.Provider, reg *registry.TXT) (map[string]*endpoint.Endpoint, error) {
	zones, err := dns.Zones(ctx)
	if err != nil {
		return nil, fmt.Errorf("zone %s: %w", zoneName, err)
	}
	out := map[string]*endpoint.Endpoint{}
	for _, z := range zones {
		if z.Name != zoneName {
			continue
		}
		recs, err := dns.Records(ctx, z)
		if err != nil {
			return nil, fmt.Errorf("zone %s: %w", zoneName, err)
		}
		for _, r := range reg.Read(recs).Records {
			if r.Name == appName && r.Type == endpoint.TypeA {
				out[r.SetIdentifier] = r
			}
		}
	}
	return out, nil
}

// memberProblem says how m, the zone's member of c's set identifier, differs from what
// c's controller publishes from c's Service; "" when it does not.
func memberProblem(m *endpoint.Endpoint, c *cluster) string {
	switch {
	case m == nil:
		return "no member " + c.id + " yet"
	case m.Owner() != c.id:
		return fmt.Sprintf("member %s is owned by %q, not by its controller (owner %s)", c.id, m.Owner(), c.id)
	case m.Resource() != serviceResource:
		return fmt.Sprintf("member %s comes from %q, not from %s", c.id, m.Resource(), serviceResource)
	case !slices.Equal(m.Targets, endpoint.Targets{c.ip}):
		return fmt.Sprintf("member %s points at %v, not at the Service's load balancer %s", c.id, m.Targets, c.ip)
	case m.Policy.Kind != endpoint.Weighted || m.Policy.Weight != c.weight:
		return fmt.Sprintf("member %s has %s, not weight %d", c.id, m.Policy, c.weight)
	}
	return ""
}

// watchEvents prints every Warning event the controllers post on the clusters' app
// Services (a conflict, such as a weight held by the cutover, or an invalid annotation)
// until ctx ends, as `kubectl get events` would show them.
func (k *kube) watchEvents(ctx context.Context, out io.Writer) {
	var wg sync.WaitGroup
	for _, kc := range k.clusters {
		wg.Go(func() { kc.watchEvents(ctx, out) })
	}
	wg.Wait()
}

func (kc *kubeCluster) watchEvents(ctx context.Context, out io.Writer) {
	factory := informers.NewSharedInformerFactoryWithOptions(kc.client, 0, informers.WithNamespace(serviceNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("involvedObject.name", serviceName).String()
		}))
	inf := factory.Core().V1().Events().Informer()
	// Only new events: a count going up is the same problem again, already shown.
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if e, ok := obj.(*corev1.Event); ok && e.Type == corev1.EventTypeWarning {
			fmt.Fprintf(out, "%s cluster %s controller (owner %s): %s %s/%s %s: %s\n", time.Now().UTC().Format("15:04:05"),
				kc.id, kc.id, e.InvolvedObject.Kind, e.InvolvedObject.Namespace, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}})
	if err != nil {
		return
	}
	factory.Start(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
}

// hint is what --keep adds for the clusters: a kubectl command per cluster that shows the
// Service and the events its controller posted on it.
func (k *kube) hint() string {
	var b strings.Builder
	for _, kc := range k.clusters {
		fmt.Fprintf(&b, "  %-12skubectl --kubeconfig %s --namespace %s describe service %s\n", kc.id, kc.api.Kubeconfig, serviceNamespace, serviceName)
	}
	k.kubeHint(&b, cutoverName)
	for _, kc := range k.clusters {
		if kc.ctl != nil {
			fmt.Fprintf(&b, "  %-12s%s\n", kc.id+" log", kc.ctl.LogPath)
		}
	}
	return b.String()
}

// stopControllers stops every controller (SIGTERM, then SIGKILL after stopGrace) and
// waits for them to exit.
func (k *kube) stopControllers() {
	var wg sync.WaitGroup
	for _, kc := range k.clusters {
		if kc != nil && kc.ctl != nil {
			wg.Go(func() {
				if err := kc.ctl.Stop(stopGrace); err != nil {
					k.log.Error("stop controller", "cluster", kc.id, "err", err)
				}
			})
		}
	}
	wg.Wait()
}

// close stops the controllers, then the API servers (kube-apiserver and etcd).
func (k *kube) close() {
	k.stopControllers()
	for _, kc := range k.clusters {
		if kc == nil {
			continue
		}
		if err := kc.api.Stop(); err != nil {
			k.log.Error("stop kube-apiserver", "cluster", kc.id, "err", err)
		}
	}
}
