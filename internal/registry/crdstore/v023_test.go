package crdstore_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/registry/crdstore"
	"github.com/crossfade-io/crossfade/internal/testenv"
)

// v023Binary is external-dns v0.23.0 as scripts/deps.sh builds it.
const v023Binary = "external-dns-v0.23.0"

// TestRealV023 runs the real external-dns v0.23.0 with --registry crd (one --once run at
// a time, so that nothing runs between the steps): it publishes a Service's record and
// writes its DNSRecord; crossfade's CRD registry with the same owner id finds that
// DNSRecord under the name it computes and makes 0 changes; crossfade then updates that
// record and creates another, with their DNSRecords; and v0.23 run again finds everything
// up to date. It skips (fails under CI=true) without $bin/external-dns-v0.23.0.
//
// It runs the binary itself rather than through internal/externaldnstest, which always
// passes --registry=txt (a flag v0.23's parser refuses to see twice).
func TestRealV023(t *testing.T) {
	bin := filepath.Join(kubetest.BinDir(), v023Binary)
	if _, err := os.Stat(bin); err != nil {
		testenv.Missingf(t, "%s not built: `make test` builds it (scripts/deps.sh test): %v", bin, err)
	}
	const ns = "v023"
	w := newWorld(t)
	w.fresh(t, ns)
	core := w.kc.Clientset(t).CoreV1()
	service := func(name, ip string) {
		t.Helper()
		svc, err := core.Services("default").Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			svc, err = core.Services("default").Create(t.Context(), &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"external-dns.kubernetes.io/hostname": name + ".example.com"}},
				Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}},
			}, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
		if _, err := core.Services("default").UpdateStatus(t.Context(), svc, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	externalDNS := func() string {
		t.Helper()
		// A failure bound only: a run takes a few seconds.
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "--once", "--source=service", "--provider=aws", "--policy=sync",
			"--registry=crd", "--crd-registry-namespace="+ns, "--txt-owner-id=blue", "--kubeconfig="+w.kc.Kubeconfig,
			"--domain-filter=example.com", "--metrics-address=127.0.0.1:0")
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "AWS_ENDPOINT_URL=" + w.sbURL, "AWS_ACCESS_KEY_ID=test",
			"AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("external-dns v0.23.0: %v\n%s", err, out)
		}
		return string(out)
	}
	desired := func(targets map[string]string) []*endpoint.Endpoint {
		var out []*endpoint.Endpoint
		for name, ip := range targets {
			out = append(out, &endpoint.Endpoint{Name: name + ".example.com", Type: "A", Targets: endpoint.Targets{ip},
				Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/" + name}})
		}
		return out
	}

	service("app", "192.0.2.10")
	externalDNS()
	u := w.object(t, ns, crdstore.ObjectName(endpoint.Key{Name: "app.example.com", Type: "A"}))
	if u == nil {
		t.Fatalf("no DNSRecord %s: v0.23 names its objects otherwise than crdstore.ObjectName", crdstore.ObjectName(endpoint.Key{Name: "app.example.com", Type: "A"}))
	}
	if got := readyReason(u); got != "True/Programmed" || u.GetLabels()["externaldns.k8s.io/owner"] != "blue" {
		t.Fatalf("v0.23's DNSRecord: Ready %s, labels %v", got, u.GetLabels())
	}
	before := w.zoneRecords(t)
	_, s := w.registry(t, ns, "blue")
	rep := sync(t, s, desired(map[string]string{"app": "192.0.2.10"})...)
	if got := summary(rep); got != (changes.Summary{}) || applied(rep) != 0 || len(rep.Conflicts()) != 0 || rep.Err() != nil {
		t.Fatalf("adopting v0.23's zone: %+v, %d batches, conflicts %v, err %v; want 0 changes", got, applied(rep), rep.Conflicts(), rep.Err())
	}
	if after := w.zoneRecords(t); !slices.Equal(before, after) {
		t.Fatalf("zone changed:\n%v\n%v", before, after)
	}

	service("app", "192.0.2.11")
	service("two", "192.0.2.20")
	rep = sync(t, s, desired(map[string]string{"app": "192.0.2.11", "two": "192.0.2.20"})...)
	if got := summary(rep); got.Create != 1 || got.Update != 1 || rep.Err() != nil {
		t.Fatalf("crossfade's update and create: %+v, %v", got, rep.Err())
	}
	want := []string{"app.example.com A 192.0.2.11", "two.example.com A 192.0.2.20"}
	if out := externalDNS(); !strings.Contains(out, "All records are already up to date") {
		t.Errorf("v0.23 after crossfade's writes did not find everything up to date:\n%s", out)
	}
	if got := w.zoneRecords(t); !slices.Equal(got, want) {
		t.Errorf("zone after v0.23's run = %v, want %v", got, want)
	}
	if u := w.object(t, ns, crdstore.ObjectName(endpoint.Key{Name: "two.example.com", Type: "A"})); u == nil {
		t.Error("no DNSRecord for crossfade's two.example.com")
	} else if targets, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "endpoint", "targets"); !slices.Equal(targets, []string{"192.0.2.20"}) {
		t.Errorf("two's DNSRecord targets = %v after v0.23's run", targets)
	}
}
