package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// namespace holds the benchmark's Services. Nothing else in the API server has any: the
// kubernetes Service in default is ClusterIP and publishes nothing.
const namespace = "kubebench"

// annotation keys, under the prefix both tools read by default (external-dns v0.21.0 reads
// only this one).
const (
	hostnameAnnotation = "external-dns.alpha.kubernetes.io/hostname"
	targetAnnotation   = "external-dns.alpha.kubernetes.io/target"
)

// serviceName is the name of the i-th Service, and the first label of its hostname.
func serviceName(i int) string { return fmt.Sprintf("svc-%d", i) }

// hostname is the i-th Service's record name in zone (no final dot).
func hostname(i int, zone string) string { return serviceName(i) + "." + zone }

// loadBalancerIP is the address the i-th Service's load balancer gets: 192.0.2.1 to
// 192.0.2.254 (TEST-NET-1, RFC 5737), wrapping. Only DNS records ever hold it: nothing
// connects to it.
func loadBalancerIP(i int) string {
	return netip.AddrFrom4([4]byte{192, 0, 2, byte(1 + i%254)}).String()
}

// changedIP is the target a change-to-answer sample sets: an address from TEST-NET-2 or
// -3 (RFC 5737), never equal to any loadBalancerIP, so the new answer is unmistakable.
func changedIP(sample int) string {
	third := byte(100) // 198.51.100.0/24
	first, second := byte(198), byte(51)
	if sample/254%2 == 1 {
		first, second, third = 203, 0, 113 // 203.0.113.0/24
	}
	return netip.AddrFrom4([4]byte{first, second, third, byte(1 + sample%254)}).String()
}

// ensureNamespace creates the benchmark's namespace if it is not there.
func ensureNamespace(ctx context.Context, kube kubernetes.Interface) error {
	_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", namespace, err)
	}
	return nil
}

// createServices creates n LoadBalancer Services svc-0 … svc-(n-1) (serviceObject), and
// sets each one's load-balancer status as a cloud controller would (none runs here).
func createServices(ctx context.Context, kube kubernetes.Interface, n int, zone string, workers int, sh shape) error {
	return parallel(ctx, n, workers, func(ctx context.Context, i int) error {
		svc, err := kube.CoreV1().Services(namespace).Create(ctx, serviceObject(i, zone, sh), metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create service %s/%s: %w", namespace, serviceName(i), err)
		}
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: loadBalancerIP(i)}}
		if _, err := kube.CoreV1().Services(namespace).UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("service %s/%s: set load-balancer status: %w", namespace, svc.Name, err)
		}
		return nil
	})
}

// shape says what each Service carries besides its hostname annotation.
type shape struct {
	// selector selects the Pods labelled app=svc-N (the cluster scenario's).
	selector bool
	// bystanders adds the annotations a Service installed by Helm behind the AWS Load
	// Balancer Controller typically carries, which neither tool reads (--bystanders).
	bystanders bool
}

// bystanderAnnotations are a Helm-installed NLB Service's annotations that no DNS
// controller reads (the release's name and namespace are per Service in real clusters;
// here they carry the Service's name).
func bystanderAnnotations(name string) map[string]string {
	return map[string]string{
		"meta.helm.sh/release-name":                                             name,
		"meta.helm.sh/release-namespace":                                        namespace,
		"service.beta.kubernetes.io/aws-load-balancer-type":                     "external",
		"service.beta.kubernetes.io/aws-load-balancer-nlb-target-type":          "ip",
		"service.beta.kubernetes.io/aws-load-balancer-scheme":                   "internet-facing",
		"service.beta.kubernetes.io/aws-load-balancer-healthcheck-path":         "/healthz",
		"service.beta.kubernetes.io/aws-load-balancer-additional-resource-tags": "team=" + name + ",env=prod,cost-center=cc-1234",
	}
}

// serviceObject is the i-th LoadBalancer Service, whose hostname annotation names
// svc-N.<zone>, shaped by sh. It allocates no node ports: 30,000–32,767 would run out
// long before 10,000 Services.
func serviceObject(i int, zone string, sh shape) *corev1.Service {
	no := false
	ann := map[string]string{hostnameAnnotation: hostname(i, zone)}
	if sh.bystanders {
		maps.Copy(ann, bystanderAnnotations(serviceName(i)))
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: serviceName(i), Namespace: namespace, Annotations: ann},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, AllocateLoadBalancerNodePorts: &no,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	if sh.selector {
		svc.Spec.Selector = map[string]string{appLabel: serviceName(i)}
	}
	return svc
}

// deleteServices deletes the Services svc-0 … svc-(n-1) (the API has no delete-collection
// for Services) and waits until the API server lists none, so the next tool starts on
// exactly its own Services.
func deleteServices(ctx context.Context, kube kubernetes.Interface, n, workers int) error {
	svcs := kube.CoreV1().Services(namespace)
	err := parallel(ctx, n, workers, func(ctx context.Context, i int) error {
		if err := svcs.Delete(ctx, serviceName(i), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete service %s/%s: %w", namespace, serviceName(i), err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		list, err := svcs.List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return fmt.Errorf("list services in %s: %w", namespace, err)
		}
		if len(list.Items) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("services in %s still listed: %w", namespace, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// setTarget sets the i-th Service's target annotation to ip in one merge patch: one API
// request, so the change lands at a well-defined moment.
func setTarget(ctx context.Context, kube kubernetes.Interface, i int, ip string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{targetAnnotation: ip}}})
	if err != nil {
		return err
	}
	if _, err := kube.CoreV1().Services(namespace).Patch(ctx, serviceName(i), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("service %s/%s: set %s=%s: %w", namespace, serviceName(i), targetAnnotation, ip, err)
	}
	return nil
}

// parallel calls f for 0 … n-1 from workers goroutines and returns the first error; the
// others stop taking work once one fails or ctx ends.
func parallel(ctx context.Context, n, workers int, f func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}
