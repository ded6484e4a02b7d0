package main

// The cluster scenario's fixtures: the Nodes, Pods and EndpointSlices that a real cluster
// has behind its LoadBalancer Services. No scheduler, controller-manager or kubelet runs
// against the test API server, so kubebench writes these objects as they would: a Node as
// an EKS node's kubelet registers it, a Pod as a Deployment's ReplicaSet creates it and
// then its kubelet reports it Running, an EndpointSlice as the EndpointSlice controller
// writes it. The builders are pure (the same arguments give the same object), so the tests
// can check names, addresses and the slices' endpoints without an API server.

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// Limits of the layout's address plans.
const (
	// maxPods is how many Pod IPs 10.244.0.0/16 holds: every address but the network's
	// and the broadcast address.
	maxPods = 1<<16 - 2
	// maxNodes keeps the nodes' 10.0.0.0/16 and 198.18.0.0/15 plans simple, and is the
	// largest cluster Kubernetes supports.
	maxNodes = 5000
	// maxPodsPerService keeps a Service's Pods on one EndpointSlice (the EndpointSlice
	// controller starts a new one at 100 endpoints).
	maxPodsPerService = 100
)

// Labels and annotations the fixtures carry, as the Kubernetes controllers set them.
const (
	appLabel                = "app"
	templateHashLabel       = "pod-template-hash"
	containerName           = "app"
	containerPortName       = "http"
	containerPort           = 80
	sliceManagedByValue     = "endpointslice-controller.k8s.io"
	serviceAccountMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// awsZones are the availability zones the Nodes are spread over, with their zone IDs.
var awsZones = []struct{ name, id string }{
	{"us-east-1a", "use1-az1"}, {"us-east-1b", "use1-az2"}, {"us-east-1c", "use1-az4"},
}

// clusterLayout is the shape of the cluster scenario: how many Services, Pods behind each
// and Nodes. The i-th Service's r-th Pod is the k-th Pod overall, k = i*podsPerService+r;
// it runs on Node k mod nodes (so one Service's Pods land on different Nodes) and has the
// (k+1)-th address of 10.244.0.0/16.
type clusterLayout struct {
	services, podsPerService, nodes int
}

// pods is the number of Pods in the layout.
func (l clusterLayout) pods() int { return l.services * l.podsPerService }

// podIndex is the overall index k of the i-th Service's r-th Pod.
func (l clusterLayout) podIndex(i, r int) int { return i*l.podsPerService + r }

// podNode is the index of the Node that Pod k runs on.
func (l clusterLayout) podNode(k int) int { return k % l.nodes }

// podIP is Pod k's address: 10.244.0.1 upwards in creation order, one flat pool as the
// AWS VPC CNI hands out addresses (a per-node /24 would not hold the 1,500 Pods per Node
// of 30,000 Pods on 20 Nodes).
func podIP(k int) netip.Addr {
	n := k + 1
	return netip.AddrFrom4([4]byte{10, 244, byte(n >> 8), byte(n)})
}

// nodeInternalIP is the i-th Node's VPC address, 10.0.0.10 upwards.
func nodeInternalIP(i int) netip.Addr {
	n := i + 10
	return netip.AddrFrom4([4]byte{10, 0, byte(n >> 8), byte(n)})
}

// nodeExternalIP is the i-th Node's public address, from 198.18.0.0/15 (RFC 2544, for
// benchmarks: nothing ever connects to it).
func nodeExternalIP(i int) netip.Addr {
	n := i + 10
	return netip.AddrFrom4([4]byte{198, 18, byte(n >> 8), byte(n)})
}

// nodeName is the i-th Node's name, its private DNS name as EKS names nodes:
// ip-10-0-0-10.ec2.internal.
func nodeName(i int) string {
	a := nodeInternalIP(i).As4()
	return fmt.Sprintf("ip-%d-%d-%d-%d.ec2.internal", a[0], a[1], a[2], a[3])
}

// nodeZone is the availability zone of the i-th Node.
func nodeZone(i int) string { return awsZones[i%len(awsZones)].name }

// safeAlphabet is what Kubernetes draws generated names and pod-template-hash values
// from (k8s.io/apimachinery/pkg/util/rand: no vowels, no confusable digits).
const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// digest is a deterministic stand-in for a random value: the SHA-256 of what it is for.
func digest(parts ...any) [32]byte { return sha256.Sum256(fmt.Appendf(nil, "%q", parts)) }

// uint64Of is the first 8 bytes of digest(parts...) as a number.
func uint64Of(parts ...any) uint64 {
	d := digest(parts...)
	return binary.BigEndian.Uint64(d[:8])
}

// hexOf is n hex digits of digest(parts...), n ≤ 64.
func hexOf(n int, parts ...any) string {
	d := digest(parts...)
	return hex.EncodeToString(d[:])[:n]
}

// uuidOf formats digest(parts...) as a version-4 UUID, as the API server's UIDs look.
func uuidOf(parts ...any) string {
	h := []byte(hexOf(32, parts...))
	h[12] = '4'
	return fmt.Sprintf("%s-%s-%s-%s-%s", h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])
}

// safeToken encodes v as n characters of safeAlphabet, the last digit first. Distinct v
// below 27^n give distinct tokens.
func safeToken(v uint64, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = safeAlphabet[v%uint64(len(safeAlphabet))]
		v /= uint64(len(safeAlphabet))
	}
	return string(b)
}

// tokenSpace5 is how many 5-character tokens there are: 27^5.
const tokenSpace5 = 27 * 27 * 27 * 27 * 27

// token5 is a deterministic 5-character generated-name suffix for what parts name.
func token5(parts ...any) string {
	return safeToken(uint64Of(parts...)%tokenSpace5, 5)
}

// templateHash is the pod-template-hash of the i-th Service's Deployment: 10 characters,
// as the Deployment controller's hash of the pod template looks.
func templateHash(i int) string {
	return safeToken(uint64Of("pod-template", i), 10)
}

// replicaSetName is the name of the i-th Service's Deployment's ReplicaSet.
func replicaSetName(i int) string { return serviceName(i) + "-" + templateHash(i) }

// podName is the r-th Pod of the i-th Service: the ReplicaSet's name, "-" and 5
// characters. The suffixes of one ReplicaSet's Pods step through the token space by a
// stride prime to 27^5, so they never collide.
func podName(i, r int) string {
	base := uint64Of("pod", i) % tokenSpace5
	const stride = 1_000_003 // not a multiple of 3: a generator of Z/27^5
	return replicaSetName(i) + "-" + safeToken((base+uint64(r)*stride)%tokenSpace5, 5)
}

// image is the i-th Service's container image: its own repository in the account's ECR.
func image(i int) string {
	return fmt.Sprintf("123456789012.dkr.ecr.us-east-1.amazonaws.com/%s:v1.%d.%d", serviceName(i), i%7, i%13)
}

// imageDigest is the sha256 digest image(i) resolves to.
func imageDigest(i int) string { return "sha256:" + hexOf(64, "image", i) }

func ptrTo[T any](v T) *T { return &v }

// node builds the i-th Node as an EKS managed node group's m5.4xlarge node registers
// itself, status included (a Node may be created with its status), with heartbeats at at.
func (l clusterLayout) node(i int, at time.Time) *corev1.Node {
	name := nodeName(i)
	zone := awsZones[i%len(awsZones)]
	instance := "i-0" + hexOf(16, "instance", i)
	internal, external := nodeInternalIP(i).String(), nodeExternalIP(i).String()
	e := nodeExternalIP(i).As4()
	beat := metav1.NewTime(at.Truncate(time.Second))
	since := metav1.NewTime(at.Add(-72 * time.Hour).Truncate(time.Second))
	q := resource.MustParse
	cond := func(typ corev1.NodeConditionType, status corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: typ, Status: status, LastHeartbeatTime: beat, LastTransitionTime: since, Reason: reason, Message: msg}
	}
	images := []corev1.ContainerImage{
		{Names: []string{"602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni@sha256:" + hexOf(64, "cni"), "602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni:v1.19.0-eksbuild.1"}, SizeBytes: 47934417},
		{Names: []string{"602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni-init@sha256:" + hexOf(64, "cni-init"), "602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni-init:v1.19.0-eksbuild.1"}, SizeBytes: 61478130},
		{Names: []string{"602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon/aws-network-policy-agent@sha256:" + hexOf(64, "npa"), "602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon/aws-network-policy-agent:v1.1.5-eksbuild.1"}, SizeBytes: 35123672},
		{Names: []string{"602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/kube-proxy@sha256:" + hexOf(64, "kube-proxy"), "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/kube-proxy:v1.31.3-minimal-eksbuild.2"}, SizeBytes: 37462853},
		{Names: []string{"602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/coredns@sha256:" + hexOf(64, "coredns"), "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/coredns:v1.11.4-eksbuild.2"}, SizeBytes: 23897104},
		{Names: []string{"602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/aws-ebs-csi-driver@sha256:" + hexOf(64, "ebs"), "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/aws-ebs-csi-driver:v1.37.0"}, SizeBytes: 116732549},
		{Names: []string{"602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/csi-node-driver-registrar@sha256:" + hexOf(64, "registrar"), "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/csi-node-driver-registrar:v2.12.0-eks-1-31-7"}, SizeBytes: 15016462},
		{Names: []string{"602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/livenessprobe@sha256:" + hexOf(64, "liveness"), "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/livenessprobe:v2.14.0-eks-1-31-7"}, SizeBytes: 14657198},
		{Names: []string{"602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/pause@sha256:" + hexOf(64, "pause"), "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/pause:3.5"}, SizeBytes: 298689},
		{Names: []string{"123456789012.dkr.ecr.us-east-1.amazonaws.com/" + serviceName(i) + "@" + imageDigest(i), image(i)}, SizeBytes: 58312906},
	}
	return &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"beta.kubernetes.io/arch":                       "amd64",
				"beta.kubernetes.io/instance-type":              "m5.4xlarge",
				"beta.kubernetes.io/os":                         "linux",
				"eks.amazonaws.com/capacityType":                "ON_DEMAND",
				"eks.amazonaws.com/nodegroup":                   "general-20261101",
				"eks.amazonaws.com/nodegroup-image":             "ami-0" + hexOf(16, "ami"),
				"eks.amazonaws.com/sourceLaunchTemplateId":      "lt-0" + hexOf(16, "lt"),
				"eks.amazonaws.com/sourceLaunchTemplateVersion": "1",
				"failure-domain.beta.kubernetes.io/region":      "us-east-1",
				"failure-domain.beta.kubernetes.io/zone":        zone.name,
				"k8s.io/cloud-provider-aws":                     hexOf(32, "cluster"),
				"kubernetes.io/arch":                            "amd64",
				"kubernetes.io/hostname":                        name,
				"kubernetes.io/os":                              "linux",
				"node.kubernetes.io/instance-type":              "m5.4xlarge",
				"topology.ebs.csi.aws.com/zone":                 zone.name,
				"topology.k8s.aws/zone-id":                      zone.id,
				"topology.kubernetes.io/region":                 "us-east-1",
				"topology.kubernetes.io/zone":                   zone.name,
			},
			Annotations: map[string]string{
				"alpha.kubernetes.io/provided-node-ip":                   internal,
				"csi.volume.kubernetes.io/nodeid":                        `{"ebs.csi.aws.com":"` + instance + `"}`,
				"node.alpha.kubernetes.io/ttl":                           "0",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
			},
		},
		Spec: corev1.NodeSpec{ProviderID: "aws:///" + zone.name + "/" + instance},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU: q("16"), corev1.ResourceEphemeralStorage: q("104845292Ki"), "hugepages-1Gi": q("0"),
				"hugepages-2Mi": q("0"), corev1.ResourceMemory: q("64453364Ki"), corev1.ResourcePods: q("234"),
			},
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU: q("15890m"), corev1.ResourceEphemeralStorage: q("95551679124"), "hugepages-1Gi": q("0"),
				"hugepages-2Mi": q("0"), corev1.ResourceMemory: q("62026484Ki"), corev1.ResourcePods: q("234"),
			},
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeNetworkUnavailable, corev1.ConditionFalse, "RouteCreated", "RouteController created a route"),
				cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: internal},
				{Type: corev1.NodeExternalIP, Address: external},
				{Type: corev1.NodeInternalDNS, Address: name},
				{Type: corev1.NodeHostName, Address: name},
				{Type: corev1.NodeExternalDNS, Address: fmt.Sprintf("ec2-%d-%d-%d-%d.compute-1.amazonaws.com", e[0], e[1], e[2], e[3])},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID:               hexOf(32, "machine", i),
				SystemUUID:              "ec2" + uuidOf("system", i)[3:],
				BootID:                  uuidOf("boot", i),
				KernelVersion:           "5.10.228-219.884.amzn2.x86_64",
				OSImage:                 "Amazon Linux 2",
				ContainerRuntimeVersion: "containerd://1.7.23",
				KubeletVersion:          "v1.31.4-eks-aeac579",
				OperatingSystem:         "linux",
				Architecture:            "amd64",
			},
			Images: images,
		},
	}
}

// pod builds the i-th Service's r-th Pod as its Deployment's ReplicaSet creates it, bound
// to its Node (as the scheduler would bind it), without status: the API server sets
// Pending, and podStatus is what the kubelet reports next.
func (l clusterLayout) pod(i, r int) *corev1.Pod {
	svc := serviceName(i)
	rs := replicaSetName(i)
	name := podName(i, r)
	token := "kube-api-access-" + token5("kube-api-access", i, r)
	q := resource.MustParse
	probe := func(path string, delay, period int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: path, Port: intstr.FromString(containerPortName), Scheme: corev1.URISchemeHTTP}},
			InitialDelaySeconds: delay, PeriodSeconds: period, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3,
		}
	}
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}
	}
	notReady := int64(300)
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, GenerateName: rs + "-", Namespace: namespace,
			Labels: map[string]string{appLabel: svc, templateHashLabel: templateHash(i)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
				UID: types.UID(uuidOf("replicaset", i)), Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  containerName,
				Image: image(i),
				Ports: []corev1.ContainerPort{{Name: containerPortName, ContainerPort: containerPort, Protocol: corev1.ProtocolTCP}},
				Env: []corev1.EnvVar{
					{Name: "SERVICE_NAME", Value: svc},
					{Name: "LOG_LEVEL", Value: "info"},
					{Name: "LISTEN_ADDR", Value: ":" + strconv.Itoa(containerPort)},
					{Name: "POD_NAME", ValueFrom: field("metadata.name")},
					{Name: "POD_IP", ValueFrom: field("status.podIP")},
				},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("256Mi")},
				},
				LivenessProbe:            probe("/healthz", 10, 10),
				ReadinessProbe:           probe("/ready", 5, 5),
				VolumeMounts:             []corev1.VolumeMount{{Name: token, ReadOnly: true, MountPath: serviceAccountMountPath}},
				TerminationMessagePath:   corev1.TerminationMessagePathDefault,
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullIfNotPresent,
			}},
			// What the ServiceAccount admission plugin adds (the test API server runs
			// without it): the projected service-account token, CA and namespace.
			Volumes: []corev1.Volume{{Name: token, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: ptrTo(int32(0o644)),
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptrTo(int64(3607)), Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
						FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				},
			}}}},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptrTo(int64(30)),
			DNSPolicy:                     corev1.DNSClusterFirst,
			ServiceAccountName:            "default",
			DeprecatedServiceAccount:      "default",
			NodeName:                      nodeName(l.podNode(l.podIndex(i, r))),
			SecurityContext:               &corev1.PodSecurityContext{},
			SchedulerName:                 corev1.DefaultSchedulerName,
			// The DefaultTolerationSeconds admission plugin's two.
			Tolerations: []corev1.Toleration{
				{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &notReady},
				{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &notReady},
			},
			Priority:           ptrTo(int32(0)),
			EnableServiceLinks: ptrTo(true),
			PreemptionPolicy:   ptrTo(corev1.PreemptLowerPriority),
		},
	}
}

// podStatus is the status the kubelet reports for the i-th Service's r-th Pod once its
// container runs and is ready, the Pod having started at at.
func (l clusterLayout) podStatus(i, r int, at time.Time) corev1.PodStatus {
	k := l.podIndex(i, r)
	start := at.Truncate(time.Second)
	t := func(d time.Duration) metav1.Time { return metav1.NewTime(start.Add(d)) }
	cond := func(typ corev1.PodConditionType, d time.Duration) corev1.PodCondition {
		return corev1.PodCondition{Type: typ, Status: corev1.ConditionTrue, LastTransitionTime: t(d)}
	}
	hostIP, ip := nodeInternalIP(l.podNode(k)).String(), podIP(k).String()
	return corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			cond(corev1.PodReadyToStartContainers, 2*time.Second),
			cond(corev1.PodInitialized, 0),
			cond(corev1.PodReady, 8*time.Second),
			cond(corev1.ContainersReady, 8*time.Second),
			cond(corev1.PodScheduled, 0),
		},
		HostIP:    hostIP,
		HostIPs:   []corev1.HostIP{{IP: hostIP}},
		PodIP:     ip,
		PodIPs:    []corev1.PodIP{{IP: ip}},
		StartTime: ptrTo(t(0)),
		ContainerStatuses: []corev1.ContainerStatus{{
			Name:        containerName,
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t(3 * time.Second)}},
			Ready:       true,
			Image:       image(i),
			ImageID:     "123456789012.dkr.ecr.us-east-1.amazonaws.com/" + serviceName(i) + "@" + imageDigest(i),
			ContainerID: "containerd://" + hexOf(64, "container", i, r),
			Started:     ptrTo(true),
			VolumeMounts: []corev1.VolumeMountStatus{{Name: "kube-api-access-" + token5("kube-api-access", i, r),
				MountPath: serviceAccountMountPath, ReadOnly: true, RecursiveReadOnly: ptrTo(corev1.RecursiveReadOnlyDisabled)}},
		}},
		QOSClass: corev1.PodQOSBurstable,
	}
}

// endpointSlice builds the i-th Service's EndpointSlice as the EndpointSlice controller
// writes it, with one endpoint per Pod in pods (each with its UID and status), ready and
// serving. The owner reference names the Service with a fixed UID: the slice outlives the
// Services, which are created anew for every tool, and no garbage collector runs.
func (l clusterLayout) endpointSlice(i int, pods []*corev1.Pod, at time.Time) *discoveryv1.EndpointSlice {
	svc := serviceName(i)
	eps := make([]discoveryv1.Endpoint, 0, len(pods))
	for _, p := range pods {
		node := p.Spec.NodeName
		eps = append(eps, discoveryv1.Endpoint{
			Addresses:  []string{p.Status.PodIP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptrTo(true), Serving: ptrTo(true), Terminating: ptrTo(false)},
			NodeName:   &node,
			Zone:       ptrTo(l.zoneOfNode(node)),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		})
	}
	return &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{
			Name: svc + "-" + token5("endpointslice", i), GenerateName: svc + "-", Namespace: namespace,
			Labels: map[string]string{
				discoveryv1.LabelServiceName: svc,
				discoveryv1.LabelManagedBy:   sliceManagedByValue,
			},
			Annotations: map[string]string{
				"endpoints.kubernetes.io/last-change-trigger-time": at.UTC().Truncate(time.Second).Format(time.RFC3339),
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc,
				UID: types.UID(uuidOf("service", i)), Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)}},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
		Ports: []discoveryv1.EndpointPort{{Name: ptrTo(containerPortName), Protocol: ptrTo(corev1.ProtocolTCP),
			Port: ptrTo(int32(containerPort))}},
	}
}

// zoneOfNode is the availability zone of the Node named name, "" for a name that is not
// one of the layout's.
func (l clusterLayout) zoneOfNode(name string) string {
	var a [4]int
	if _, err := fmt.Sscanf(name, "ip-%d-%d-%d-%d.ec2.internal", &a[0], &a[1], &a[2], &a[3]); err != nil {
		return ""
	}
	i := a[2]<<8 + a[3] - 10
	if i < 0 || i >= l.nodes || nodeName(i) != name {
		return ""
	}
	return nodeZone(i)
}

// objectStats sums up one kind of fixture: how many, their JSON size as the API server
// returned them (what it stores, managed fields included) and without the managed fields
// (what an informer that strips them keeps), and how long creating them took.
type objectStats struct {
	count, bytes, bytesNoManaged int64
	took                         time.Duration
}

// avg is the average JSON size of one object, 0 when there are none.
func (s objectStats) avg() int64 {
	if s.count == 0 {
		return 0
	}
	return s.bytes / s.count
}

// avgNoManaged is the average JSON size of one object without its managed fields.
func (s objectStats) avgNoManaged() int64 {
	if s.count == 0 {
		return 0
	}
	return s.bytesNoManaged / s.count
}

// sizer accumulates objectStats from several goroutines.
type sizer struct{ count, bytes, bytesNoManaged atomic.Int64 }

// add measures one object as the API server returned it. typeMeta is set on it first:
// typed clients drop apiVersion and kind when they decode, the stored object has them.
func (s *sizer) add(obj interface {
	metav1.Object
	runtime.Object
}, gvk schema.GroupVersionKind) error {
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	b, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("marshal %s: %w", obj.GetName(), err)
	}
	managed := obj.GetManagedFields()
	obj.SetManagedFields(nil)
	stripped, err := json.Marshal(obj)
	obj.SetManagedFields(managed)
	if err != nil {
		return fmt.Errorf("marshal %s: %w", obj.GetName(), err)
	}
	s.count.Add(1)
	s.bytes.Add(int64(len(b)))
	s.bytesNoManaged.Add(int64(len(stripped)))
	return nil
}

func (s *sizer) stats(took time.Duration) objectStats {
	return objectStats{count: s.count.Load(), bytes: s.bytes.Load(), bytesNoManaged: s.bytesNoManaged.Load(), took: took}
}

// clusterFixtures is what createCluster made, for the report.
type clusterFixtures struct {
	layout              clusterLayout
	nodes, pods, slices objectStats
}

// took is how long creating every fixture took.
func (f *clusterFixtures) took() time.Duration { return f.nodes.took + f.pods.took + f.slices.took }

// createCluster creates the layout's Nodes, then its Pods (each created, then set Running
// through the status subresource as its kubelet would), then one EndpointSlice per
// Service, with workers concurrent requests. The Services come later, per tool. It returns
// what it made so far also on error.
func createCluster(ctx context.Context, kube kubernetes.Interface, l clusterLayout, workers int, log *slog.Logger) (*clusterFixtures, error) {
	fx := &clusterFixtures{layout: l}

	var ns sizer
	began := time.Now()
	err := parallel(ctx, l.nodes, workers, func(ctx context.Context, i int) error {
		want := l.node(i, time.Now())
		got, err := kube.CoreV1().Nodes().Create(ctx, want, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create node %s: %w", want.Name, err)
		}
		if got.Status.NodeInfo.KubeletVersion == "" {
			// The API server dropped the status on create: report it as the kubelet does.
			got.Status = want.Status
			if got, err = kube.CoreV1().Nodes().UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("node %s: set status: %w", want.Name, err)
			}
		}
		return ns.add(got, corev1.SchemeGroupVersion.WithKind("Node"))
	})
	fx.nodes = ns.stats(time.Since(began))
	if err != nil {
		return fx, err
	}
	log.Info("nodes created", "nodes", l.nodes, "took", fx.nodes.took.Round(time.Millisecond), "avg_json_bytes", fx.nodes.avg())

	// The slices need the Pods' UIDs, which only the API server knows.
	uids := make([]types.UID, l.pods())
	var ps sizer
	began = time.Now()
	err = parallel(ctx, l.pods(), workers, func(ctx context.Context, k int) error {
		i, r := k/l.podsPerService, k%l.podsPerService
		created, err := kube.CoreV1().Pods(namespace).Create(ctx, l.pod(i, r), metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create pod %s/%s: %w", namespace, podName(i, r), err)
		}
		created.Status = l.podStatus(i, r, time.Now())
		running, err := kube.CoreV1().Pods(namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("pod %s/%s: set status Running: %w", namespace, created.Name, err)
		}
		uids[k] = running.UID
		return ps.add(running, corev1.SchemeGroupVersion.WithKind("Pod"))
	})
	fx.pods = ps.stats(time.Since(began))
	if err != nil {
		return fx, err
	}
	log.Info("pods created and running", "pods", l.pods(), "took", fx.pods.took.Round(time.Millisecond), "avg_json_bytes", fx.pods.avg())

	var ss sizer
	began = time.Now()
	err = parallel(ctx, l.services, workers, func(ctx context.Context, i int) error {
		slice := l.endpointSlice(i, l.runningPods(i, uids), time.Now())
		got, err := kube.DiscoveryV1().EndpointSlices(namespace).Create(ctx, slice, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create endpointslice %s/%s: %w", namespace, slice.Name, err)
		}
		return ss.add(got, discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"))
	})
	fx.slices = ss.stats(time.Since(began))
	if err != nil {
		return fx, err
	}
	log.Info("endpointslices created", "endpointslices", l.services, "took", fx.slices.took.Round(time.Millisecond), "avg_json_bytes", fx.slices.avg())
	return fx, nil
}

// runningPods rebuilds the i-th Service's Pods as they stand once Running, with the UIDs
// the API server gave them (uids is indexed by podIndex), for its EndpointSlice.
func (l clusterLayout) runningPods(i int, uids []types.UID) []*corev1.Pod {
	pods := make([]*corev1.Pod, l.podsPerService)
	for r := range pods {
		p := l.pod(i, r)
		p.UID = uids[l.podIndex(i, r)]
		p.Status = l.podStatus(i, r, time.Time{})
		pods[r] = p
	}
	return pods
}
