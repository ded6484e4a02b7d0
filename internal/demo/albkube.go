package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"

	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/lbctest"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/ec2"
)

// The ALB demo on real clusters (demo --lever alb --kube): each cluster is a real
// kube-apiserver holding the app's Service, its Pods and its EndpointSlice, whose pods
// carry TEST-NET-1 addresses (192.0.2.0/24: the API server refuses loopback ones, and the
// sandbox never dials them: it maps each to the pod's loopback backend). When the AWS
// Load Balancer Controller is in the cache (`make test` builds it), each cluster runs its
// own, with its own --cluster-name, and a TargetGroupBinding binds the cluster's Service
// to its target group: the controller registers the targets, as in the field report.
// Without it the demo's own registrar (alb.go) stands in, registering the same addresses.

const (
	// albVPC is the demo's VPC, declared in the sandbox's EC2 on albPodCIDR (the pods'
	// addresses are in it, as with the VPC CNI); the target groups are in it, and each
	// controller's --aws-vpc-id names it.
	albVPC     = "vpc-demo"
	albPodCIDR = "192.0.2.0/24"
	// albPodPort is the pods' port: the Service's target port and the targets' port.
	albPodPort = 8080
	// albNode is the node the pods are scheduled on (no kubelet runs: the demo writes the
	// pods' status, as the test/lbc harness does).
	albNode = "node-1"
	// albBinding names each cluster's TargetGroupBinding.
	albBinding = serviceName
	// lbcRegisterTimeout bounds the wait for a controller's first registration: a failure
	// bound, it registers within seconds of starting.
	lbcRegisterTimeout = 2 * time.Minute
)

// albSubnets are the demo ALB's subnets, one per zone, declared in the sandbox's EC2.
var albSubnets = []ec2.Subnet{
	{ID: "subnet-demoa", VPCID: albVPC, CIDRBlock: "192.0.2.0/25", AvailabilityZone: "us-east-1a"},
	{ID: "subnet-demob", VPCID: albVPC, CIDRBlock: "192.0.2.128/25", AvailabilityZone: "us-east-1b"},
}

// albPodIPs are each cluster's pods' addresses, from TEST-NET-1.
var albPodIPs = map[string][]string{
	"blue":  {"192.0.2.11", "192.0.2.12"},
	"green": {"192.0.2.21", "192.0.2.22"},
}

// tgbResource is the controller's TargetGroupBinding kind.
var tgbResource = schema.GroupVersionResource{Group: "elbv2.k8s.aws", Version: "v1beta1", Resource: "targetgroupbindings"}

// lbcName names who registers a cluster's targets when its controller does.
func lbcName(id string) string {
	return fmt.Sprintf("AWS Load Balancer Controller %s (cluster %s)", lbctest.Version, id)
}

// registrarName names who registers a cluster's targets when the demo's registrar does.
func registrarName(id string) string { return fmt.Sprintf("the demo's own registrar (cluster %s)", id) }

// podAddrs gives cluster c's pods their TEST-NET-1 addresses at albPodPort, one per
// listener; its targets are these from then on.
func (c *albCluster) podAddrs(ips []string) error {
	if len(ips) != len(c.lns) {
		return fmt.Errorf("cluster %s: %d pod addresses for %d pods", c.id, len(ips), len(c.lns))
	}
	c.pods = nil
	for _, ip := range ips {
		a, err := netip.ParseAddr(ip)
		if err != nil {
			return fmt.Errorf("cluster %s: pod address %q: %w", c.id, ip, err)
		}
		c.pods = append(c.pods, netip.AddrPortFrom(a, albPodPort))
	}
	return nil
}

// addressMap maps each pod's address to its loopback backend, for the sandbox.
func (c *albCluster) addressMap() map[netip.AddrPort]netip.AddrPort {
	out := map[netip.AddrPort]netip.AddrPort{}
	for i, p := range c.pods {
		out[p] = netip.MustParseAddrPort(c.lns[i].Addr().String())
	}
	return out
}

// albEC2 is what the sandbox's EC2 must hold for the controllers: the VPC (the controller
// reads its CIDRs before it registers a pod), its subnets, and the pods' network
// interfaces with a security group.
func albEC2(ids []string) ec2.Document {
	doc := ec2.Document{
		VPCs:           []ec2.VPC{{ID: albVPC, CIDRBlock: albPodCIDR, Tags: map[string]string{"Name": "crossfade-demo"}}},
		Subnets:        albSubnets,
		SecurityGroups: []ec2.SecurityGroup{{ID: "sg-demopods", Name: "demo-pods", VPCID: albVPC}},
	}
	for _, id := range ids {
		doc.NetworkInterfaces = append(doc.NetworkInterfaces, ec2.NetworkInterface{ID: "eni-" + id + "pods", SubnetID: albSubnets[0].ID,
			PrivateIPs: albPodIPs[id], SecurityGroups: []string{"sg-demopods"}, Description: "pods of cluster " + id})
	}
	return doc
}

// albKube is the ALB demo's real clusters as set up: who registers each cluster's
// targets, and the controllers, once started.
type albKube struct {
	k *kube
	// registeredBy says, per cluster, who registers its targets (lbcName or registrarName).
	registeredBy map[string]string
	ctls         map[string]*lbctest.Controller
	log          *slog.Logger
}

// setupALBKube makes each cluster of k hold its app as a real cluster would (Service,
// ready Pods at TEST-NET-1 addresses, their EndpointSlice), maps those addresses to the
// pods' loopback backends in sb, declares the VPC, subnets and pod interfaces in sb's EC2,
// and, when the AWS Load Balancer Controller is in lbcDir (empty: the cache), installs its
// CRDs, binds each cluster's Service to its target group with a TargetGroupBinding and
// starts one controller per cluster; without it, it says so in one line and starts the
// demo's own registrar per cluster (goroutines of wg). It returns once every group holds
// exactly its cluster's pods. stop stops the controllers.
func setupALBKube(ctx context.Context, wg *sync.WaitGroup, k *kube, sb *sandbox.Sandbox, api elbAPI, alb *albSetup, clusters []*albCluster, lbcDir string, out io.Writer) (*albKube, error) {
	ak := &albKube{k: k, registeredBy: map[string]string{}, ctls: map[string]*lbctest.Controller{}, log: k.log}
	addrs := map[netip.AddrPort]netip.AddrPort{}
	var ids []string
	for _, c := range clusters {
		if err := c.podAddrs(albPodIPs[c.id]); err != nil {
			return ak, err
		}
		for p, b := range c.addressMap() {
			addrs[p] = b
		}
		ids = append(ids, c.id)
	}
	if err := sb.SetTargetAddresses(addrs); err != nil {
		return ak, fmt.Errorf("sandbox: map the pods' addresses: %w", err)
	}
	if err := sb.DeclareEC2(albEC2(ids)); err != nil {
		return ak, fmt.Errorf("sandbox: declare the demo's VPC: %w", err)
	}
	fmt.Fprintf(out, "sandbox: EC2 VPC %s (%s) with the pods' network interfaces; the pods' addresses map to their loopback backends, nothing else is dialled\n", albVPC, albPodCIDR)

	if lbcDir == "" {
		lbcDir = kubetest.BinDir()
	}
	binary, crds, lbcErr := lbctest.PathsIn(lbcDir)
	if lbcErr != nil {
		fmt.Fprintf(out, "demo --kube --lever alb: %s; the demo's own registrar registers each cluster's pods instead\n", strings.TrimPrefix(lbcErr.Error(), "lbctest: "))
	}
	for _, c := range clusters {
		kc := k.cluster(c.id)
		if kc == nil {
			return ak, fmt.Errorf("cluster %s: no API server", c.id)
		}
		if err := kc.deployPods(ctx, c); err != nil {
			return ak, err
		}
		fmt.Fprintf(out, "cluster %-5s app %s: Service %s/%s, pods %s (EndpointSlice; each mapped to its backend on %s)\n",
			c.id, c.version, serviceNamespace, serviceName, c.podList(), c.ip)
		if lbcErr != nil {
			ak.registeredBy[c.id] = registrarName(c.id)
			if err := c.register(ctx); err != nil {
				return ak, err
			}
			wg.Go(func() { c.registerLoop(ctx, albRegisterInterval) })
			continue
		}
		if err := lbctest.InstallCRDsFrom(ctx, kc.api.Config(), crds); err != nil {
			return ak, fmt.Errorf("cluster %s: the AWS Load Balancer Controller's CRDs: %w", c.id, err)
		}
		if err := kc.bindTargetGroup(ctx, alb.groups[c.id]); err != nil {
			return ak, err
		}
		ctl, err := lbctest.Launch(ctx, lbctest.Options{ClusterName: c.id, Endpoint: sb.APIURL(), Region: region, VPC: albVPC,
			Kubeconfig: kc.api.Kubeconfig, Dir: filepath.Join(k.dir, c.id, "aws-load-balancer-controller"), Binary: binary})
		if err != nil {
			return ak, fmt.Errorf("cluster %s: %w", c.id, err)
		}
		ak.ctls[c.id] = ctl
		ak.registeredBy[c.id] = lbcName(c.id)
		fmt.Fprintf(out, "cluster %-5s %s pid %d, TargetGroupBinding %s/%s: Service %s → target group %s, log %s\n",
			c.id, lbcName(c.id), ctl.Pid(), serviceNamespace, albBinding, serviceName, albGroupName(c.id), ctl.LogPath)
	}
	for _, c := range clusters {
		if err := ak.waitRegistered(ctx, api, c, alb.groups[c.id]); err != nil {
			return ak, err
		}
		fmt.Fprintf(out, "cluster %-5s targets %s registered into target group %s by %s\n", c.id, c.podList(), albGroupName(c.id), ak.registeredBy[c.id])
	}
	return ak, nil
}

// stop stops every controller (SIGTERM, then SIGKILL after a grace) and waits for them.
func (ak *albKube) stop() {
	var wg sync.WaitGroup
	for id, ctl := range ak.ctls {
		wg.Go(func() {
			if err := ctl.Stop(); err != nil {
				ak.log.Error("stop aws-load-balancer-controller", "cluster", id, "err", err)
			}
		})
	}
	wg.Wait()
}

// waitRegistered waits until c's target group holds exactly c's pods, and fails early,
// with the end of its log, if c's controller exits.
func (ak *albKube) waitRegistered(ctx context.Context, api elbAPI, c *albCluster, group string) error {
	ctx, cancel := context.WithTimeout(ctx, lbcRegisterTimeout)
	defer cancel()
	var want []string
	for _, t := range c.targets() {
		want = append(want, targetAddr(t))
	}
	slices.Sort(want)
	ctl := ak.ctls[c.id]
	var got []string
	for {
		var err error
		if got, err = groupTargets(ctx, api, group); err != nil && ctx.Err() == nil {
			return fmt.Errorf("target group %s: %w", albGroupName(c.id), err)
		}
		if slices.Equal(got, want) {
			return nil
		}
		if ctl != nil && ctl.Exited() {
			return fmt.Errorf("cluster %s: the AWS Load Balancer Controller exited before registering its targets; log %s (last lines):\n%s", c.id, ctl.LogPath, ctl.Tail(30))
		}
		select {
		case <-ctx.Done():
			if err := context.Cause(ctx); !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			msg := fmt.Sprintf("target group %s holds %v %s after its cluster's start, want %v (registered by %s)", albGroupName(c.id), got, lbcRegisterTimeout, want, ak.registeredBy[c.id])
			if ctl != nil {
				msg += fmt.Sprintf("; log %s (last lines):\n%s", ctl.LogPath, ctl.Tail(30))
			}
			return errors.New(msg)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// groupTargets lists a target group's targets as "IP:PORT", sorted.
func groupTargets(ctx context.Context, api elbAPI, group string) ([]string, error) {
	desc, err := api.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(group)})
	if err != nil {
		return nil, fmt.Errorf("describe target health: %w", err)
	}
	var out []string
	for _, d := range desc.TargetHealthDescriptions {
		if d.Target != nil {
			out = append(out, targetAddr(*d.Target))
		}
	}
	slices.Sort(out)
	return out, nil
}

// deployPods creates, in kc, namespace serviceNamespace, the app's ClusterIP Service
// selecting its pods, one Pod per pod of c (on albNode, Running and Ready at its
// TEST-NET-1 address, as a kubelet would report it) and the Service's EndpointSlice
// listing them ready, as the endpoint-slice controller would: no kubelet or
// controller-manager runs here.
func (kc *kubeCluster) deployPods(ctx context.Context, c *albCluster) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: serviceNamespace}}
	if _, err := kc.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("cluster %s: create namespace %s: %w", kc.id, serviceNamespace, err)
	}
	labels := map[string]string{"app": serviceName}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: serviceName, Namespace: serviceNamespace},
		Spec: corev1.ServiceSpec{Selector: labels,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(albPodPort), Protocol: corev1.ProtocolTCP}}},
	}
	if _, err := kc.client.CoreV1().Services(serviceNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("cluster %s: create Service %s/%s: %w", kc.id, serviceNamespace, serviceName, err)
	}
	var eps []discoveryv1.Endpoint
	for _, p := range c.pods {
		ip := p.Addr().String()
		name := serviceName + "-" + strings.ReplaceAll(ip, ".", "-")
		if err := kc.createPod(ctx, name, ip, labels); err != nil {
			return err
		}
		eps = append(eps, discoveryv1.Endpoint{
			Addresses:  []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: aws.Bool(true), Serving: aws.Bool(true), Terminating: aws.Bool(false)},
			NodeName:   aws.String(albNode),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: serviceNamespace, Name: name},
		})
	}
	tcp := corev1.ProtocolTCP
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: serviceName + "-demo", Namespace: serviceNamespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: serviceName, discoveryv1.LabelManagedBy: "crossfade-demo"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
		Ports:       []discoveryv1.EndpointPort{{Name: aws.String("http"), Port: aws.Int32(albPodPort), Protocol: &tcp}},
	}
	if _, err := kc.client.DiscoveryV1().EndpointSlices(serviceNamespace).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("cluster %s: create EndpointSlice %s/%s: %w", kc.id, serviceNamespace, slice.Name, err)
	}
	return nil
}

// createPod creates Pod name at ip on albNode and writes its status Running and Ready.
func (kc *kubeCluster) createPod(ctx context.Context, name, ip string, labels map[string]string) error {
	p, err := kc.client.CoreV1().Pods(serviceNamespace).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: serviceNamespace, Labels: labels},
		Spec: corev1.PodSpec{NodeName: albNode, Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: albPodPort}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("cluster %s: create Pod %s/%s: %w", kc.id, serviceNamespace, name, err)
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
	if _, err := kc.client.CoreV1().Pods(serviceNamespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("cluster %s: Pod %s/%s: set status: %w", kc.id, serviceNamespace, name, err)
	}
	return nil
}

// bindTargetGroup creates the TargetGroupBinding that binds the app's Service (port 80)
// to the target group at arn, ip targets. The fields the controller's mutating webhook
// would default from the target group (no webhook configuration is installed) are set as
// it would set them.
func (kc *kubeCluster) bindTargetGroup(ctx context.Context, arn string) error {
	dyn, err := dynamic.NewForConfig(kc.api.Config())
	if err != nil {
		return fmt.Errorf("cluster %s: client: %w", kc.id, err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "elbv2.k8s.aws/v1beta1",
		"kind":       "TargetGroupBinding",
		"metadata":   map[string]any{"name": albBinding, "namespace": serviceNamespace},
		"spec": map[string]any{
			"serviceRef":          map[string]any{"name": serviceName, "port": int64(80)},
			"targetGroupARN":      arn,
			"targetType":          "ip",
			"ipAddressType":       "ipv4",
			"vpcID":               albVPC,
			"targetGroupProtocol": "HTTP",
		},
	}}
	if _, err := dyn.Resource(tgbResource).Namespace(serviceNamespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("cluster %s: create TargetGroupBinding %s/%s: %w", kc.id, serviceNamespace, albBinding, err)
	}
	return nil
}

// hint is what --keep adds in the ALB demo on real clusters: per cluster, a kubectl
// command that shows its TargetGroupBinding (or its pods, when the demo registers them),
// and its controller's log.
func (ak *albKube) hint() string {
	var b strings.Builder
	for _, kc := range ak.k.clusters {
		if ctl := ak.ctls[kc.id]; ctl != nil {
			fmt.Fprintf(&b, "  %-12skubectl --kubeconfig %s --namespace %s get targetgroupbinding %s -o yaml\n", kc.id, kc.api.Kubeconfig, serviceNamespace, albBinding)
			fmt.Fprintf(&b, "  %-12s%s\n", kc.id+" log", ctl.LogPath)
			continue
		}
		fmt.Fprintf(&b, "  %-12skubectl --kubeconfig %s --namespace %s get pods,endpointslices -o wide\n", kc.id, kc.api.Kubeconfig, serviceNamespace)
	}
	return b.String()
}
