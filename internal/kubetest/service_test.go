package kubetest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// TestServiceManifest decodes what ServiceManifest renders as the API would: a
// LoadBalancer Service in default with the prefixed annotations and the ingress given.
func TestServiceManifest(t *testing.T) {
	for _, tc := range []struct {
		name, ingress string
		annotations   []string
		want          map[string]string
		wantIngress   corev1.LoadBalancerIngress
	}{
		{"by ip", "ip: 127.0.0.10", []string{"hostname", "app.example.com", "aws-weight", "1"},
			map[string]string{"external-dns.alpha.kubernetes.io/hostname": "app.example.com", "external-dns.alpha.kubernetes.io/aws-weight": "1"},
			corev1.LoadBalancerIngress{IP: "127.0.0.10"}},
		{"by hostname, values quoted", "hostname: lb.example.com", []string{"hostname", "*.example.com,b.example.com", "alias", "true"},
			map[string]string{"external-dns.alpha.kubernetes.io/hostname": "*.example.com,b.example.com", "external-dns.alpha.kubernetes.io/alias": "true"},
			corev1.LoadBalancerIngress{Hostname: "lb.example.com"}},
		{"odd key left out", "ip: 10.0.0.1", []string{"hostname", "x.example.com", "ttl"},
			map[string]string{"external-dns.alpha.kubernetes.io/hostname": "x.example.com"},
			corev1.LoadBalancerIngress{IP: "10.0.0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var svc corev1.Service
			doc := ServiceManifest("app", tc.ingress, tc.annotations...)
			if err := yaml.UnmarshalStrict([]byte(doc), &svc); err != nil {
				t.Fatalf("decode:\n%s\n%v", doc, err)
			}
			if svc.Kind != "Service" || svc.Name != "app" || svc.Namespace != metav1.NamespaceDefault || svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
				t.Errorf("kind %q name %q namespace %q type %q", svc.Kind, svc.Name, svc.Namespace, svc.Spec.Type)
			}
			if len(svc.Annotations) != len(tc.want) {
				t.Errorf("annotations %v, want %v", svc.Annotations, tc.want)
			}
			for k, v := range tc.want {
				if svc.Annotations[k] != v {
					t.Errorf("annotation %s = %q, want %q", k, svc.Annotations[k], v)
				}
			}
			if ing := svc.Status.LoadBalancer.Ingress; len(ing) != 1 || ing[0].IP != tc.wantIngress.IP || ing[0].Hostname != tc.wantIngress.Hostname {
				t.Errorf("ingress %+v, want %+v", ing, tc.wantIngress)
			}
		})
	}
}

// TestWriteManifests: each document in its own file, in order, nothing else.
func TestWriteManifests(t *testing.T) {
	docs := []string{"a: 1\n", "b: 2\n", "c: 3\n"}
	dir := WriteManifests(t, docs...)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(docs) {
		t.Fatalf("%d files, want %d", len(entries), len(docs))
	}
	for i, want := range docs {
		b, err := os.ReadFile(filepath.Join(dir, entries[i].Name()))
		if err != nil {
			t.Fatal(err)
		}
		if entries[i].Name() != []string{"00.yaml", "01.yaml", "02.yaml"}[i] || string(b) != want {
			t.Errorf("file %d: %s holds %q, want %q", i, entries[i].Name(), b, want)
		}
	}
}

// TestLoadBalancerService creates the Service in a real API server and reads it back:
// the annotations and labels as given, and the load balancer's address in its status.
func TestLoadBalancerService(t *testing.T) {
	c := Start(t)
	client := c.Clientset(t)
	ann := map[string]string{"external-dns.alpha.kubernetes.io/hostname": "app.example.com"}
	labels := map[string]string{"team": "blue"}
	got := LoadBalancerService(t, client, "app", "127.0.0.10", ann, labels)
	if got.Status.LoadBalancer.Ingress[0].IP != "127.0.0.10" {
		t.Errorf("returned status %+v", got.Status)
	}
	svc, err := client.CoreV1().Services(metav1.NamespaceDefault).Get(t.Context(), "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Annotations["external-dns.alpha.kubernetes.io/hostname"] != "app.example.com" || svc.Labels["team"] != "blue" {
		t.Errorf("stored Service: type %q annotations %v labels %v", svc.Spec.Type, svc.Annotations, svc.Labels)
	}
	if ing := svc.Status.LoadBalancer.Ingress; len(ing) != 1 || ing[0].IP != "127.0.0.10" {
		t.Errorf("stored ingress %+v, want one entry with IP 127.0.0.10", ing)
	}
}

// TestDecodeManifests: documents in order, empty ones skipped, a broken one named by its
// place in the stream.
func TestDecodeManifests(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
		want         []string // kind/name
		wantErr      string
	}{
		{"two documents and empty ones", "---\n# only a comment\n---\nkind: ServiceAccount\nmetadata: {name: a}\n---\n\n---\nkind: Role\nmetadata: {name: b}\n",
			[]string{"ServiceAccount/a", "Role/b"}, ""},
		{"JSON", `{"kind": "Service", "metadata": {"name": "c"}}`, []string{"Service/c"}, ""},
		{"nothing", "", nil, ""},
		{"broken second document", "kind: A\nmetadata: {name: a}\n---\nkind: [\n", nil, "document 2: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := DecodeManifests(strings.NewReader(tc.stream))
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one starting %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("decoded %q, want %q", got, tc.want)
			}
		})
	}
}
