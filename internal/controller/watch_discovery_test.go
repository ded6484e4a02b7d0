package controller

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/crossfade-io/crossfade/internal/kubetest"
)

const dnsEndpointCRD = "../../deploy/crds/dnsendpoints.externaldns.k8s.io.yaml"

var dnsEndpointsGVR = schema.GroupVersionResource{Group: "externaldns.k8s.io", Version: "v1alpha1", Resource: "dnsendpoints"}

// unstructuredDNSEndpoint is a DNSEndpoint default/name asking for host.
func unstructuredDNSEndpoint(name, host string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSEndpoint",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec": map[string]any{"endpoints": []any{map[string]any{
			"dnsName": host, "recordType": "A", "targets": []any{"192.0.2.1"}}}},
	}}
}

// TestWatcherUnservedKindNeedsPolls: on a real kube-apiserver, a CRD-served kind the
// cluster does not serve at the Watcher's first poll (as an API server that has just
// restarted answers for CRD groups) is unknown, its snapshot incomplete so that none of
// its records is deleted, until unservedPolls polls in a row found it not served; a CRD
// installed before that is watched, never absent.
func TestWatcherUnservedKindNeedsPolls(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	for _, install := range []bool{false, true} {
		name := "never installed"
		if install {
			name = "installed after the first poll"
		}
		t.Run(name, func(t *testing.T) {
			kube := kubetest.Start(t)
			ctx := t.Context()
			dyn := dynamic.NewForConfigOrDie(kube.Config())
			// Polls are made by hand below: the ticker's never comes.
			w, err := NewWatcher(kube.Clientset(t), dyn, WatchConfig{Sources: []string{SourceCRD}, CRDPoll: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Run(ctx); err != nil { // the first poll
				t.Fatal(err)
			}
			if _, complete := w.Snapshot(); complete {
				t.Fatal("one poll answered 404 and the kind counts as absent: its records would be deleted")
			}
			if install {
				kube.InstallCRDs(t, dnsEndpointCRD)
				time.Sleep(2 * time.Second) // the API server refuses objects of a CRD younger than this (kubetest.InstallCRDs)
				if _, err := dyn.Resource(dnsEndpointsGVR).Namespace("default").Create(ctx, unstructuredDNSEndpoint("web", "web.example.com"), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				for range unservedPolls {
					w.discover(ctx)
				}
				deadline := time.Now().Add(20 * time.Second)
				for {
					snap, complete := w.Snapshot()
					if complete && len(snap.DNSEndpoints) == 1 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("after the CRD was installed: %d DNSEndpoints, complete %v; want 1, complete", len(snap.DNSEndpoints), complete)
					}
					time.Sleep(50 * time.Millisecond)
				}
				return
			}
			for poll := 2; poll < unservedPolls; poll++ {
				w.discover(ctx)
				if _, complete := w.Snapshot(); complete {
					t.Fatalf("%d polls answered 404 and the kind counts as absent", poll)
				}
			}
			w.discover(ctx)
			if _, complete := w.Snapshot(); !complete {
				t.Fatalf("%d polls in a row answered 404 and the kind is still unknown", unservedPolls)
			}
			if err := w.Synced(); err != nil {
				t.Fatalf("Synced: %v", err)
			}
		})
	}
}

// TestWatcherSettle: a single reconcile (--once) waits with Settle until a kind the
// cluster answered 404 for is confirmed absent, so that it can delete the records of a
// kind whose CRD is not installed, which one 404 no longer allows.
func TestWatcherSettle(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	kube := kubetest.Start(t)
	ctx := t.Context()
	w, err := NewWatcher(kube.Clientset(t), dynamic.NewForConfigOrDie(kube.Config()),
		WatchConfig{Sources: []string{SourceCRD}, CRDPoll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if _, complete := w.Snapshot(); !complete {
		t.Fatal("after Settle the kind whose CRD is not installed is still unknown: --once would never delete its records")
	}
}

// TestWatcherAPIServerRestartDeletesNothing: a controller's Watcher runs while its API
// server goes away (every connection refused) and comes back answering 404 for CRD groups
// for a moment, as a restarted kube-apiserver does until it has read its CRDs; a second
// Watcher starts in that moment, as a controller restarted with the API server does.
// Neither ever offers a complete snapshot without the DNSEndpoint that exists throughout.
func TestWatcherAPIServerRestartDeletesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	kube := clusterWithDNSEndpoint(t)
	ctx := t.Context()
	api := startTCPProxy(t, kube.URL)
	cfg := kube.Config()
	cfg.Host = "https://" + api.addr
	watcher := func(notFound int32) (*Watcher, *flakyDiscovery) {
		t.Helper()
		cs := kubernetes.NewForConfigOrDie(cfg)
		disc := &flakyDiscovery{DiscoveryInterface: cs.Discovery(), gv: dnsEndpointsGVR.GroupVersion().String()}
		disc.notFound.Store(notFound)
		w, err := NewWatcher(flakyClient{Interface: cs, disc: disc}, dynamic.NewForConfigOrDie(cfg),
			WatchConfig{Sources: []string{SourceCRD}, CRDPoll: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return w, disc
	}
	sampler := sampleSnapshots(t)
	defer sampler.stop()
	watch := sampler.add

	running, disc := watcher(0)
	if err := running.Run(ctx); err != nil {
		t.Fatal(err)
	}
	waitComplete(t, running, "before the restart")
	watch(running)

	api.down()
	time.Sleep(time.Second) // many polls, each refused
	// Back, answering 404 for the group for fewer polls than make it absent.
	disc.notFound.Store(unservedPolls - 1)
	api.up()
	restarted, _ := watcher(unservedPolls - 1)
	watch(restarted)
	if err := restarted.Run(ctx); err != nil {
		t.Fatal(err)
	}
	waitComplete(t, running, "the running Watcher after the restart")
	waitComplete(t, restarted, "the Watcher started during the restart")
	sampler.check()
}

// snapshotSampler samples, every 5 ms until stopped, the Snapshot of every Watcher added,
// as a reconciler would read it, and keeps the first complete snapshot without the one
// DNSEndpoint: a reconcile reading it would delete the DNSEndpoint's records.
type snapshotSampler struct {
	t        *testing.T
	mu       sync.Mutex
	watchers []*Watcher
	bad      atomic.Value
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

func sampleSnapshots(t *testing.T) *snapshotSampler {
	s := &snapshotSampler{t: t}
	ctx, cancel := context.WithCancel(t.Context())
	s.cancel = cancel
	s.wg.Go(func() {
		for ctx.Err() == nil {
			s.mu.Lock()
			for i, w := range s.watchers {
				if snap, complete := w.Snapshot(); complete && len(snap.DNSEndpoints) != 1 {
					s.bad.CompareAndSwap(nil, fmt.Sprintf("watcher %d: a complete snapshot with %d DNSEndpoints, want 1: its records would be deleted", i, len(snap.DNSEndpoints)))
				}
			}
			s.mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	})
	return s
}

// add samples w too.
func (s *snapshotSampler) add(w *Watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchers = append(s.watchers, w)
}

// stop ends the sampling; it may be called more than once.
func (s *snapshotSampler) stop() {
	s.cancel()
	s.wg.Wait()
}

// check stops the sampling and fails the test if a bad snapshot was seen.
func (s *snapshotSampler) check() {
	s.t.Helper()
	s.stop()
	if b := s.bad.Load(); b != nil {
		s.t.Fatal(b)
	}
}

// clusterWithDNSEndpoint starts a kube-apiserver serving the DNSEndpoint CRD, with one
// DNSEndpoint, default/web, that the restart tests require every complete snapshot to hold.
func clusterWithDNSEndpoint(t *testing.T) *kubetest.Cluster {
	t.Helper()
	kube := kubetest.Start(t)
	kube.InstallCRDs(t, dnsEndpointCRD)
	time.Sleep(2 * time.Second) // the API server refuses objects of a CRD younger than this (kubetest.InstallCRDs)
	if _, err := dynamic.NewForConfigOrDie(kube.Config()).Resource(dnsEndpointsGVR).Namespace("default").
		Create(t.Context(), unstructuredDNSEndpoint("web", "web.example.com"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return kube
}

// waitComplete waits until w's snapshot is complete with the one DNSEndpoint.
func waitComplete(t *testing.T, w *Watcher, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		snap, complete := w.Snapshot()
		if complete && len(snap.DNSEndpoints) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d DNSEndpoints, complete %v; want 1, complete (Synced: %v)", what, len(snap.DNSEndpoints), complete, w.Synced())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tcpProxy forwards loopback connections to an API server; down refuses and cuts every
// connection, as a stopped API server does, and up accepts again on the same address.
type tcpProxy struct {
	t      *testing.T
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

func startTCPProxy(t *testing.T, apiURL string) *tcpProxy {
	u, err := url.Parse(apiURL)
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{t: t, target: u.Host, conns: map[net.Conn]bool{}}
	p.up()
	t.Cleanup(func() { p.down(); p.wg.Wait() })
	return p
}

func (p *tcpProxy) up() {
	addr := p.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Go(func() { p.serve(c) })
		}
	})
}

func (p *tcpProxy) serve(c net.Conn) {
	b, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // went down meanwhile
		p.mu.Unlock()
		c.Close()
		b.Close()
		return
	}
	p.conns[c], p.conns[b] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(b, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, b); done <- struct{}{} }()
	<-done
	c.Close()
	b.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, b)
	p.mu.Unlock()
}

func (p *tcpProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
}

// TestWatcherDiscoveryFailing: on a real kube-apiserver whose discovery of the
// DNSEndpoint group keeps failing (an aggregated APIService claims the group and its
// backend is unavailable: 503), the kind stays unknown (nothing deleted); after
// discoveryFailPolls polls Synced fails naming the kind, the group and the error, every
// failed call is counted, and one Warning is sent however long it lasts. Once discovery
// answers again, Synced passes.
func TestWatcherDiscoveryFailing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	kube := kubetest.Start(t)
	ctx := t.Context()
	client := kube.Clientset(t)
	dyn := dynamic.NewForConfigOrDie(kube.Config())
	apiServices := dyn.Resource(schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"})
	if _, err := apiServices.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1alpha1.externaldns.k8s.io"},
		"spec": map[string]any{"group": "externaldns.k8s.io", "version": "v1alpha1",
			"service":               map[string]any{"namespace": "default", "name": "nowhere", "port": int64(443)},
			"insecureSkipTLSVerify": true, "groupPriorityMinimum": int64(1000), "versionPriority": int64(15)},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The aggregator takes a moment to route the group; until then it is a plain 404.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := client.Discovery().ServerResourcesForGroupVersion("externaldns.k8s.io/v1alpha1")
		if err != nil && !apierrors.IsNotFound(err) {
			t.Logf("discovery of the group fails: %v", err)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("discovery of the APIService's group still answers %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	reg := prometheus.NewRegistry()
	m, err := NewWatchMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var warnings, resolved []string
	var warnMu sync.Mutex
	w, err := NewWatcher(client, dyn, WatchConfig{Sources: []string{SourceCRD}, CRDPoll: time.Hour, Metrics: m,
		Warn: func(reason, message string) {
			warnMu.Lock()
			defer warnMu.Unlock()
			warnings = append(warnings, reason+": "+message)
		},
		Resolve: func(reason string) {
			warnMu.Lock()
			defer warnMu.Unlock()
			resolved = append(resolved, reason)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); err != nil { // poll 1
		t.Fatal(err)
	}
	for poll := 2; poll < discoveryFailPolls; poll++ {
		w.discover(ctx)
	}
	if err := w.Synced(); err != nil {
		t.Fatalf("Synced failed after %d failing polls, fewer than the bound: %v", discoveryFailPolls-1, err)
	}
	for range 3 { // the bound, and more: still one Warning
		w.discover(ctx)
	}
	err = w.Synced()
	if err == nil {
		t.Fatalf("Synced passes after %d polls whose discovery failed", discoveryFailPolls+2)
	}
	for _, want := range []string{"DNSEndpoint", "externaldns.k8s.io", "unable to handle the request"} {
		if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(want)) {
			t.Errorf("Synced = %q: does not name %q", err, want)
		}
	}
	if _, complete := w.Snapshot(); complete {
		t.Error("snapshot complete while discovery fails: records of the kind would be deleted")
	}
	if got, want := testutil.ToFloat64(m.discoveryErrors.WithLabelValues("externaldns.k8s.io")), float64(discoveryFailPolls+2); got != want {
		t.Errorf("%s{group=externaldns.k8s.io} = %v, want %v", NameDiscoveryErrors, got, want)
	}
	warnMu.Lock()
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], ReasonDiscoveryFailing+": ") || !strings.Contains(warnings[0], "DNSEndpoint") {
		t.Errorf("warnings = %q, want one %s naming DNSEndpoint", warnings, ReasonDiscoveryFailing)
	}
	if len(resolved) != 0 {
		t.Errorf("resolved %q while discovery still fails", resolved)
	}
	warnMu.Unlock()

	// Discovery answers again (a 404 now): ready, still not absent after one poll.
	if err := apiServices.Delete(ctx, "v1alpha1.externaldns.k8s.io", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		_, err := client.Discovery().ServerResourcesForGroupVersion("externaldns.k8s.io/v1alpha1")
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("discovery of the group after the APIService's removal: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.discover(ctx)
	if err := w.Synced(); err != nil {
		t.Fatalf("Synced after discovery answers again: %v", err)
	}
	warnMu.Lock()
	if !slices.Equal(resolved, []string{ReasonDiscoveryFailing}) {
		t.Errorf("resolved %q after discovery answers again, want [%s]: its next failure would not be reported for %v", resolved, ReasonDiscoveryFailing, DefaultReemit)
	}
	warnMu.Unlock()
	if _, complete := w.Snapshot(); complete {
		t.Error("one 404 after the errors and the kind counts as absent")
	}
}

// TestWatcherForbiddenListDoesNotStall: on a real kube-apiserver, a Watcher with
// --cloudmap and sources [ingress] run as a user whose ClusterRole grants Ingresses but
// not Services or EndpointSlices (the chart's role before it learnt --cloudmap) does not
// wait forever for the informers it cannot list: Run returns, the Ingresses are in the
// snapshot (so they publish), the snapshot is incomplete (so nothing is deleted), Synced
// names what is refused and what to grant, and one Warning says so.
func TestWatcherForbiddenListDoesNotStall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	kube := kubetest.Start(t)
	ctx := t.Context()
	admin := kube.Clientset(t)
	const user = "crossfade-ingress-only"
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: []string{"get", "list", "watch"}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pathType := networkingv1.PathTypePrefix
	if _, err := admin.NetworkingV1().Ingresses("default").Create(ctx, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "web.example.com", IngressRuleValue: networkingv1.IngressRuleValue{
			HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &pathType,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := kube.Config()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	client := kubernetes.NewForConfigOrDie(cfg)
	if _, err := client.CoreV1().Services("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("the restricted user lists Services: %v", err)
	}

	var warnings []string
	var warnMu sync.Mutex
	w, err := NewWatcher(client, dynamic.NewForConfigOrDie(cfg), WatchConfig{Sources: []string{SourceIngress}, CloudMap: true,
		Warn: func(reason, message string) {
			warnMu.Lock()
			defer warnMu.Unlock()
			warnings = append(warnings, reason+": "+message)
		}})
	if err != nil {
		t.Fatal(err)
	}
	// A failure bound, not an expectation: Run returns listGrace after the refusals.
	runCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := w.Run(runCtx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	snap, complete := w.Snapshot()
	if complete {
		t.Error("snapshot complete without Services and EndpointSlices: records would be deleted")
	}
	if len(snap.Ingresses) != 1 || snap.Ingresses[0].Name != "web" {
		t.Errorf("snapshot Ingresses = %d, want the one Ingress: its records would not publish", len(snap.Ingresses))
	}
	err = w.Synced()
	if err == nil {
		t.Fatal("Synced passes while Services cannot be listed")
	}
	for _, want := range []string{"cannot list services: forbidden", "cannot list endpointslices: forbidden", "ClusterRole lacks list/watch on services", "--cloudmap"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Synced = %q: does not say %q", err, want)
		}
	}
	warnMu.Lock()
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], ReasonCannotList+": ") || !strings.Contains(warnings[0], "services") {
		t.Errorf("warnings = %q, want one %s naming services", warnings, ReasonCannotList)
	}
	warnMu.Unlock()
}
