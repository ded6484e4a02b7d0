package rbac_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/registry/crdstore"
)

// crdRegistryCases prove registry: crd's rules sufficient and minimal: the controller
// run with the rendered --registry crd flags (its DNSRecords in the world's namespace)
// publishes, updates and deletes records with their DNSRecords without a refusal, and
// without any grant registry: crd adds meets a refusal of it. The other grants were
// proven by "minimal" and "per-source".
func crdRegistryCases(t *testing.T, s *shared, helm string) []testCase {
	t.Helper()
	sources := []string{controller.SourceService}
	rel := renderWith(t, helm, releaseNamespace, sources, "--set", "registry=crd")
	if !slices.Contains(rel.registryArgs, "--registry=crd") {
		t.Fatalf("registry: crd rendered no --registry=crd: registry args %q", rel.registryArgs)
	}
	checkRules(t, rel)
	cases := []testCase{{"sufficient", func(t *testing.T) time.Duration {
		return sufficientCase(t, s, rel, sources, "crdreg-ok")
	}}}
	for i, a := range grants(rel, false) {
		if a.group != crdstore.Resource.Group || !strings.HasPrefix(a.resource, crdstore.Resource.Resource) {
			continue
		}
		cases = append(cases, testCase{a.String(), func(t *testing.T) time.Duration {
			return minimalCase(t, s, rel, sources, a, fmt.Sprintf("crdreg-%02d", i))
		}})
	}
	if len(cases) == 1 {
		t.Fatalf("registry: crd rendered no DNSRecord rule: %+v", rel.clusterRole.Rules)
	}
	return cases
}

// addCRDRegistry, when rel's Deployment runs the CRD registry, runs the world's
// controller with it, its DNSRecords in the world's namespace.
func (w *world) addCRDRegistry(rel *release) {
	if len(rel.registryArgs) > 0 {
		w.registryArgs = []string{"--registry=crd", "--crd-registry-namespace=" + w.ns}
	}
}

// crdRegistrySteps are the scenario's steps under --registry crd (none otherwise): web's
// record has a Programmed DNSRecord; web's address changes and so do its record and its
// DNSRecord; np is deleted and so are its record and DNSRecord. Between them they use
// every grant: list, create, update, delete and the status update.
func (w *world) crdRegistrySteps(ctx context.Context) []cutoverStep {
	if w.registryArgs == nil {
		return nil
	}
	d := w.domain
	objects := w.dyn.Resource(crdstore.Resource).Namespace(w.ns)
	dnsRecord := func(name string, want func(u *unstructured.Unstructured) bool) func() (bool, string, error) {
		return func() (bool, string, error) {
			l, err := objects.List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, "", err
			}
			var seen []string
			for i, u := range l.Items {
				dns, _, _ := unstructured.NestedString(u.Object, "spec", "endpoint", "dnsName")
				seen = append(seen, u.GetName()+" "+dns)
				if dns == name && want(&l.Items[i]) {
					return true, "", nil
				}
			}
			return false, "DNSRecords: " + strings.Join(seen, ", "), nil
		}
	}
	programmed := func(targets ...string) func(u *unstructured.Unstructured) bool {
		return func(u *unstructured.Unstructured) bool {
			got, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "endpoint", "targets")
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" && m["reason"] == "Programmed" {
					return slices.Equal(got, targets)
				}
			}
			return false
		}
	}
	record := func(want string, present bool) func() (bool, string, error) {
		return func() (bool, string, error) {
			got, err := w.records(ctx)
			return slices.Contains(got, want) == present, "zone holds:\n" + strings.Join(got, "\n"), err
		}
	}
	core := w.admin.CoreV1()
	return []cutoverStep{
		{"web's DNSRecord Programmed", dnsRecord("web."+d, programmed("192.0.2.10"))},
		{"web's address changed", func() (bool, string, error) {
			svc, err := core.Services(w.ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.11"}}
			_, err = core.Services(w.ns).UpdateStatus(ctx, svc, metav1.UpdateOptions{})
			return err == nil, "", err
		}},
		{"web's record updated", record("web."+d+" A 192.0.2.11", true)},
		{"web's DNSRecord updated", dnsRecord("web."+d, programmed("192.0.2.11"))},
		{"np deleted", func() (bool, string, error) {
			err := core.Services(w.ns).Delete(ctx, "np", metav1.DeleteOptions{})
			return err == nil, "", err
		}},
		{"np's record deleted", record("np."+d+" A "+nodeIP, false)},
		{"np's DNSRecord deleted", func() (bool, string, error) {
			ok, state, err := dnsRecord("np."+d, func(*unstructured.Unstructured) bool { return true })()
			return !ok, state, err
		}},
	}
}
