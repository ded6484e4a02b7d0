package kubetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// LoadBalancerService creates a LoadBalancer Service (port 80) in the default namespace
// with the given annotations and labels, and writes its load balancer's address ip into
// its status, as the cloud controller would: none runs here. It returns the Service as
// its status was written.
func LoadBalancerService(t testing.TB, client kubernetes.Interface, name, ip string, annotations, labels map[string]string) *corev1.Service {
	t.Helper()
	ctx := t.Context()
	svc, err := client.CoreV1().Services(metav1.NamespaceDefault).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, Annotations: annotations, Labels: labels},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: create Service default/%s: %v", name, err)
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
	svc, err = client.CoreV1().Services(metav1.NamespaceDefault).UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("kubetest: Service default/%s: set status.loadBalancer.ingress to %s: %v", name, ip, err)
	}
	return svc
}

// ServiceManifest renders a LoadBalancer Service in default (port 80) whose load
// balancer's status.loadBalancer.ingress entry is ingress ("ip: 10.0.0.1" or
// "hostname: lb.example.com"), with external-dns annotations given as key, value pairs
// (keys without the external-dns.alpha.kubernetes.io/ prefix), for a command reading
// manifests instead of an API server.
func ServiceManifest(name, ingress string, annotations ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata:\n  name: %s\n  namespace: default\n  annotations:\n", name)
	for i := 0; i+1 < len(annotations); i += 2 {
		fmt.Fprintf(&b, "    external-dns.alpha.kubernetes.io/%s: %q\n", annotations[i], annotations[i+1])
	}
	fmt.Fprintf(&b, "spec:\n  type: LoadBalancer\n  ports:\n  - port: 80\nstatus:\n  loadBalancer:\n    ingress:\n    - %s\n", ingress)
	return b.String()
}

// WriteManifests writes each document into its own file (00.yaml, 01.yaml, …) of a fresh
// directory and returns the directory.
func WriteManifests(t testing.TB, docs ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i, d := range docs {
		path := filepath.Join(dir, fmt.Sprintf("%02d.yaml", i))
		if err := os.WriteFile(path, []byte(d), 0o644); err != nil {
			t.Fatalf("kubetest: write manifest %s: %v", path, err)
		}
	}
	return dir
}
