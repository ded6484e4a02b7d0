// Package controller_test runs `crossfade controller` as a process against a real
// kube-apiserver (internal/kubetest) and the sandbox's Route 53 API, as it runs in a
// cluster.
package controller_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/crossfade-io/crossfade/internal/controllertest"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

func TestMain(m *testing.M) { controllertest.Main(m) }

// proc is a running `crossfade controller`.
type proc = controllertest.Process

// startController runs the controller against kubeconfig's cluster and sb with the given
// extra flags; it is killed when the test ends.
func startController(t *testing.T, name, kubeconfig string, sb *sandbox.Sandbox, args ...string) *proc {
	t.Helper()
	return controllertest.Start(t, controllertest.Options{Name: name, Kubeconfig: kubeconfig, Route53URL: sb.APIURL(), Args: args})
}

// zone creates a hosted zone in the sandbox and returns a provider reading it.
func zone(t *testing.T, sb *sandbox.Sandbox, name string) (provider.Provider, provider.Zone) {
	t.Helper()
	return route53test.Zone(t, sb, name)
}

// records renders the zone's record sets as "name type [set] targets", sorted.
func records(t *testing.T, p provider.Provider, z provider.Zone) []string {
	t.Helper()
	return controllertest.Records(t, p, z)
}

// eventually polls cond every 100 ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	controllertest.Eventually(t, d, what, cond)
}

// hasRecord returns a condition: the zone holds a set rendered as want.
func hasRecord(t *testing.T, p provider.Provider, z provider.Zone, want string) func() (bool, string) {
	return func() (bool, string) {
		got := records(t, p, z)
		return slices.Contains(got, want), strings.Join(got, "\n")
	}
}

// lbService is a LoadBalancer Service with annotations, whose load balancer has ip.
func lbService(t *testing.T, kc kubernetes.Interface, name, ip string, ann map[string]string) *corev1.Service {
	t.Helper()
	return kubetest.LoadBalancerService(t, kc, name, ip, ann, nil)
}

// annotate sets one annotation on a Service.
func annotate(t *testing.T, kc kubernetes.Interface, name, key, value string) {
	t.Helper()
	ctx := context.Background()
	svc, err := kc.CoreV1().Services("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Annotations[key] = value
	if _, err := kc.CoreV1().Services("default").Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

const alpha = "external-dns.alpha.kubernetes.io/"

var deleteNow = metav1.DeleteOptions{}

// env is one cluster and one sandbox with the zone example.com.
type env struct {
	kc     *kubetest.Cluster
	client kubernetes.Interface
	sb     *sandbox.Sandbox
	dns    provider.Provider
	zone   provider.Zone
}

// setup starts a kube-apiserver and a sandbox holding example.com; both stop with t.
func setup(t *testing.T) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a kube-apiserver")
	}
	e := &env{kc: kubetest.Start(t), sb: sandboxtest.Start(t)}
	e.client = e.kc.Clientset(t)
	e.dns, e.zone = zone(t, e.sb, "example.com")
	return e
}
