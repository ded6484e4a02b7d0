// Package lbc runs the real AWS Load Balancer Controller (internal/lbctest; `make test`
// builds it) on real kube-apiservers (internal/kubetest) against the crossfade sandbox's
// ELBv2 and EC2 APIs, as the field report ran it: target groups made outside the clusters,
// each cluster's TargetGroupBinding registering its Service's ready endpoints.
//
// There is no kubelet: a "pod" is a Pod object given a node and a status by the test, and
// its Service's EndpointSlice is written by the test, as the endpoint-slice controller
// would. Pod addresses come from 192.0.2.0/24 (TEST-NET-1), which the API server accepts
// and the sandbox never dials: it maps each registered IP:port to a loopback backend.
package lbc

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/lbctest"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/ec2"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

const (
	// ns is where every test's objects live.
	ns = "shop"
	// appPort is the pods' port: the target port of the Service and of the targets.
	appPort = 8080
	// convergeWithin bounds the wait for the controller to reconcile what a test changed;
	// a failure bound, not a measurement (a reconcile takes well under a second, a loaded
	// 2-core machine much longer).
	convergeWithin = 90 * time.Second
	pollEvery      = 100 * time.Millisecond
)

// tgbResource is the TargetGroupBinding kind the controller's CRDs add.
var tgbResource = schema.GroupVersionResource{Group: "elbv2.k8s.aws", Version: "v1beta1", Resource: "targetgroupbindings"}

// cluster is one real API server with the real controller on it.
type cluster struct {
	name string
	kube *kubetest.Cluster
	cs   kubernetes.Interface
	dyn  dynamic.Interface
	lbc  *lbctest.Controller
}

// newCluster starts a kube-apiserver, namespace ns in it, and the controller with
// --cluster-name name, its AWS APIs at endpoint.
func newCluster(t *testing.T, name, endpoint string) *cluster {
	t.Helper()
	lbctest.Require(t) // before minutes of kube-apiserver
	k := kubetest.Start(t)
	c := &cluster{name: name, kube: k, cs: k.Clientset(t)}
	var err error
	if c.dyn, err = dynamic.NewForConfig(k.Config()); err != nil {
		t.Fatalf("cluster %s: dynamic client: %v", name, err)
	}
	if _, err := c.cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("cluster %s: namespace %s: %v", name, ns, err)
	}
	c.lbc = lbctest.Start(t, k, lbctest.Options{ClusterName: name, Endpoint: endpoint})
	return c
}

// service creates Service app (ClusterIP, or NodePort for instance targets: the
// controller registers nodes at the Service's node port) selecting pods labelled app=app.
func (c *cluster) service(t *testing.T, app string, nodePort bool) *corev1.Service {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": app},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(appPort), Protocol: corev1.ProtocolTCP}},
		},
	}
	if nodePort {
		svc.Spec.Type = corev1.ServiceTypeNodePort
	}
	got, err := c.cs.CoreV1().Services(ns).Create(t.Context(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("cluster %s: Service %s: %v", c.name, app, err)
	}
	return got
}

// scale makes app's ready pods exactly those at ips: it creates the missing Pods (on node
// node-1, Running and Ready, as a kubelet would report them), deletes the others, and
// writes the Service's EndpointSlice listing them, as the endpoint-slice controller would.
func (c *cluster) scale(t *testing.T, app string, ips ...string) {
	t.Helper()
	ctx := t.Context()
	pods, err := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatalf("cluster %s: list pods of %s: %v", c.name, app, err)
	}
	have := map[string]bool{}
	for _, p := range pods.Items {
		if !slices.Contains(ips, p.Status.PodIP) {
			if err := c.cs.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: aws.Int64(0)}); err != nil {
				t.Fatalf("cluster %s: delete pod %s: %v", c.name, p.Name, err)
			}
			continue
		}
		have[p.Status.PodIP] = true
	}
	var eps []discoveryv1.Endpoint
	for _, ip := range ips {
		name := podName(app, ip)
		if !have[ip] {
			c.pod(t, app, name, ip)
		}
		eps = append(eps, discoveryv1.Endpoint{
			Addresses:  []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: aws.Bool(true), Serving: aws.Bool(true), Terminating: aws.Bool(false)},
			NodeName:   aws.String("node-1"),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: name},
		})
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: app + "-slice", Namespace: ns,
			Labels: map[string]string{discoveryv1.LabelServiceName: app, discoveryv1.LabelManagedBy: "lbc-test"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
		Ports:       []discoveryv1.EndpointPort{{Port: aws.Int32(appPort), Protocol: ptr(corev1.ProtocolTCP)}},
	}
	esc := c.cs.DiscoveryV1().EndpointSlices(ns)
	old, err := esc.Get(ctx, slice.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = esc.Create(ctx, slice, metav1.CreateOptions{})
	case err == nil:
		slice.ResourceVersion = old.ResourceVersion
		_, err = esc.Update(ctx, slice, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatalf("cluster %s: EndpointSlice of %s: %v", c.name, app, err)
	}
}

// pod creates Pod name of app at ip, Running and Ready.
func (c *cluster) pod(t *testing.T, app, name, ip string) {
	t.Helper()
	ctx := t.Context()
	p, err := c.cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app",
			Ports: []corev1.ContainerPort{{ContainerPort: appPort}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("cluster %s: pod %s: %v", c.name, name, err)
	}
	now := metav1.Now()
	p.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, StartTime: &now,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
	}
	if _, err := c.cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("cluster %s: pod %s status: %v", c.name, name, err)
	}
}

// node creates a Ready Node whose providerID names EC2 instance id in zone, as the AWS
// cloud provider sets it; the controller registers instance targets by that id.
func (c *cluster) node(t *testing.T, name, zone, id, ip string) {
	t.Helper()
	ctx := t.Context()
	n, err := c.cs.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelTopologyZone: zone}},
		Spec:       corev1.NodeSpec{ProviderID: "aws:///" + zone + "/" + id},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("cluster %s: node %s: %v", c.name, name, err)
	}
	n.Status = corev1.NodeStatus{
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}},
	}
	if _, err := c.cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("cluster %s: node %s status: %v", c.name, name, err)
	}
}

// binding creates TargetGroupBinding name binding Service app's port 80 to the target
// group at arn. The fields the controller's mutating webhook would default from the
// target group (no webhook configuration is installed) are set as it would set them.
func (c *cluster) binding(t *testing.T, name, app, arn, targetType string, multiCluster bool) {
	t.Helper()
	c.bindingWith(t, name, app, arn, targetType, multiCluster, nil)
}

// bindingWith is binding with spec.networking set to networking (nil: none).
func (c *cluster) bindingWith(t *testing.T, name, app, arn, targetType string, multiCluster bool, networking map[string]any) {
	t.Helper()
	spec := map[string]any{
		"serviceRef":          map[string]any{"name": app, "port": int64(80)},
		"targetGroupARN":      arn,
		"targetType":          targetType,
		"ipAddressType":       "ipv4",
		"vpcID":               lbctest.DefaultVPC,
		"targetGroupProtocol": "HTTP",
	}
	if multiCluster {
		spec["multiClusterTargetGroup"] = true
	}
	if networking != nil {
		spec["networking"] = networking
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "elbv2.k8s.aws/v1beta1",
		"kind":       "TargetGroupBinding",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       spec,
	}}
	if _, err := c.dyn.Resource(tgbResource).Namespace(ns).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("cluster %s: TargetGroupBinding %s: %v", c.name, name, err)
	}
}

// podName is the name of app's pod at ip.
func podName(app, ip string) string {
	return app + "-" + strings.ReplaceAll(ip, ".", "-")
}

func ptr[T any](v T) *T { return &v }

// elbClient is an ELBv2 client on the sandbox, as an operator's Terraform would use.
func elbClient(sb *sandbox.Sandbox) *elbv2.Client {
	return elbv2.New(elbv2.Options{Region: lbctest.DefaultRegion, BaseEndpoint: aws.String(sb.APIURL()),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
}

// targetGroup creates target group name (HTTP on appPort, in lbctest.DefaultVPC, health
// check /healthz every 5 s, healthy after 2) of the given target type, outside any cluster.
func targetGroup(t *testing.T, api *elbv2.Client, name string, targetType elbtypes.TargetTypeEnum) string {
	t.Helper()
	out, err := api.CreateTargetGroup(t.Context(), &elbv2.CreateTargetGroupInput{Name: aws.String(name), Protocol: elbtypes.ProtocolEnumHttp,
		Port: aws.Int32(appPort), VpcId: aws.String(lbctest.DefaultVPC), TargetType: targetType,
		HealthCheckPath: aws.String("/healthz"), HealthCheckIntervalSeconds: aws.Int32(5), HealthCheckTimeoutSeconds: aws.Int32(2),
		HealthyThresholdCount: aws.Int32(2)})
	if err != nil {
		t.Fatalf("CreateTargetGroup %s: %v", name, err)
	}
	return aws.ToString(out.TargetGroups[0].TargetGroupArn)
}

// targets lists the target group's targets as "ID:PORT", sorted.
func targets(t *testing.T, api *elbv2.Client, arn string) []string {
	t.Helper()
	out, err := api.DescribeTargetHealth(t.Context(), &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(arn)})
	if err != nil {
		t.Fatalf("DescribeTargetHealth %s: %v", arn, err)
	}
	var got []string
	for _, d := range out.TargetHealthDescriptions {
		got = append(got, fmt.Sprintf("%s:%d", aws.ToString(d.Target.Id), aws.ToInt32(d.Target.Port)))
	}
	slices.Sort(got)
	return got
}

// waitTargets waits until the target group's targets are exactly want ("ID:PORT"); on
// failure it says what the group held and what the recorder saw fail.
func waitTargets(t *testing.T, api *elbv2.Client, arn string, rec *lbctest.Recorder, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	deadline := time.Now().Add(convergeWithin)
	for {
		got := targets(t, api, arn)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			var failed []string
			if rec != nil {
				for _, c := range rec.Failed() {
					if f := c.String() + " " + c.Message; !slices.Contains(failed, f) {
						failed = append(failed, f)
					}
				}
			}
			t.Fatalf("target group %s: targets %v after %s, want %v; failed AWS calls:\n%s", arn, got, convergeWithin, want, strings.Join(failed, "\n"))
		}
		time.Sleep(pollEvery)
	}
}

// logCalls logs every AWS call the recorder saw, by outcome, with counts.
func logCalls(t *testing.T, rec *lbctest.Recorder) {
	t.Helper()
	sum := rec.Summary()
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range sum {
			if !yield(k) {
				return
			}
		}
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %4d  %s\n", sum[k], k)
	}
	params := map[string]bool{}
	for _, c := range rec.Calls() {
		if k := c.Service + " " + c.Operation + " " + c.Params.Encode(); !params[k] {
			params[k] = true
			fmt.Fprintf(&b, "  call: %s\n", k)
		}
	}
	seen := map[string]bool{}
	for _, c := range rec.Failed() {
		if k := c.String() + " " + c.Message; !seen[k] {
			seen[k] = true
			fmt.Fprintf(&b, "  failed: %s\n", k)
		}
	}
	t.Logf("AWS calls of the controller(s):\n%s", b.String())
}

// startSandbox starts the sandbox in process for t, with the EC2 of an EKS cluster's VPC
// declared: VPC lbctest.DefaultVPC on 192.0.2.0/24 (the pods' addresses are in it, as with
// the VPC CNI), a subnet in each of two zones, and the instances the nodes of node() are.
//
// It is the first step of every test here, so it also skips a test under -short, and
// stops it (testenv.Missing) when the controller is not built, before anything starts.
func startSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: real kube-apiservers and the AWS Load Balancer Controller; not under -short")
	}
	lbctest.Require(t)
	sb := sandboxtest.Start(t)
	err := sb.DeclareEC2(ec2.Document{
		VPCs: []ec2.VPC{{ID: lbctest.DefaultVPC, CIDRBlock: "192.0.2.0/24"}},
		Subnets: []ec2.Subnet{
			{ID: "subnet-1", VPCID: lbctest.DefaultVPC, CIDRBlock: "192.0.2.0/25", AvailabilityZone: "us-east-1a"},
			{ID: "subnet-2", VPCID: lbctest.DefaultVPC, CIDRBlock: "192.0.2.128/25", AvailabilityZone: "us-east-1b"},
		},
		Instances: []ec2.Instance{
			{ID: "i-0000000000000001a", SubnetID: "subnet-1", PrivateIP: "192.0.2.101", State: ec2.StateRunning},
			{ID: "i-0000000000000002b", SubnetID: "subnet-2", PrivateIP: "192.0.2.202", State: ec2.StateRunning},
		},
	})
	if err != nil {
		t.Fatalf("sandbox: declare EC2: %v", err)
	}
	return sb
}

// ip4 parses a 192.0.2.x address; a test's typo fails loudly.
func ip4(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil || !netip.MustParsePrefix("192.0.2.0/24").Contains(a) {
		t.Fatalf("%q is not a TEST-NET-1 (192.0.2.0/24) address", s)
	}
	return a
}
