package main

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/crossfade-io/crossfade/bench/internal/machine"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

var (
	podNamePattern = regexp.MustCompile(`^svc-[0-9]+-[` + safeAlphabet + `]{10}-[` + safeAlphabet + `]{5}$`)
	podNetwork     = netip.MustParsePrefix("10.244.0.0/16")
	at             = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
)

// layouts are the shapes the fixture tests run over: the default full size, the extremes
// the flags allow, and small ones.
var layouts = []struct {
	name string
	l    clusterLayout
}{
	{"default: 10,000 Services × 3 Pods on 20 Nodes", clusterLayout{services: 10000, podsPerService: 3, nodes: 20}},
	{"one of each", clusterLayout{services: 1, podsPerService: 1, nodes: 1}},
	{"more Pods per Service than Nodes", clusterLayout{services: 50, podsPerService: maxPodsPerService, nodes: 7}},
	{"the whole Pod network", clusterLayout{services: maxPods / 2, podsPerService: 2, nodes: maxNodes}},
}

// TestPodFixtures: every Pod has a deterministic, unique name as a ReplicaSet gives it,
// the labels its Service selects, a unique address inside 10.244.0.0/16, one of the
// Nodes, and a Running status that agrees with it.
func TestPodFixtures(t *testing.T) {
	for _, tc := range layouts {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.l
			if l.pods() > maxPods {
				t.Fatalf("layout has %d Pods, more than the %d addresses", l.pods(), maxPods)
			}
			nodes := map[string]int{}
			for n := range l.nodes {
				nodes[nodeName(n)] = n
			}
			names := map[string]bool{}
			ips := map[netip.Addr]string{}
			// The big layouts are checked on a stride of Services (names and addresses of
			// every Pod, the whole objects of some).
			full := max(1, l.services/200)
			for i := range l.services {
				selector := labels.SelectorFromSet(serviceObject(i, "z.test", shape{selector: true}).Spec.Selector)
				onNodes := map[string]bool{}
				for r := range l.podsPerService {
					k := l.podIndex(i, r)
					name := podName(i, r)
					if names[name] {
						t.Fatalf("pod name %s twice", name)
					}
					names[name] = true
					if !podNamePattern.MatchString(name) || !strings.HasPrefix(name, replicaSetName(i)+"-") {
						t.Fatalf("podName(%d, %d) = %q: want %s-<5 chars>", i, r, name, replicaSetName(i))
					}
					ip := podIP(k)
					if !podNetwork.Contains(ip) || ip == podNetwork.Addr() || ip == netip.MustParseAddr("10.244.255.255") {
						t.Fatalf("podIP(%d) = %s: want a host address of %s", k, ip, podNetwork)
					}
					if other, ok := ips[ip]; ok {
						t.Fatalf("pod %s has %s, as %s has", name, ip, other)
					}
					ips[ip] = name
					if i%full != 0 {
						continue
					}
					p := l.pod(i, r)
					if p.Name != name || p.Namespace != namespace || !selector.Matches(labels.Set(p.Labels)) ||
						p.Labels[templateHashLabel] != templateHash(i) {
						t.Fatalf("pod %s/%s labels %v: not selected by svc-%d or wrong hash", p.Namespace, p.Name, p.Labels, i)
					}
					if own := p.OwnerReferences; len(own) != 1 || own[0].Kind != "ReplicaSet" || own[0].Name != replicaSetName(i) || !*own[0].Controller {
						t.Fatalf("pod %s owner references %+v: want its ReplicaSet as controller", name, own)
					}
					c := p.Spec.Containers
					if len(c) != 1 || len(c[0].Env) != 5 || c[0].LivenessProbe == nil || c[0].ReadinessProbe == nil ||
						len(c[0].VolumeMounts) != 1 || len(p.Spec.Volumes) != 1 || c[0].VolumeMounts[0].Name != p.Spec.Volumes[0].Name ||
						len(p.Spec.Tolerations) != 2 || p.Spec.ServiceAccountName == "" {
						t.Fatalf("pod %s spec is not a Deployment's pod: %+v", name, p.Spec)
					}
					n, ok := nodes[p.Spec.NodeName]
					if !ok {
						t.Fatalf("pod %s on %q, not one of the %d Nodes", name, p.Spec.NodeName, l.nodes)
					}
					if onNodes[p.Spec.NodeName] && l.podsPerService <= l.nodes {
						t.Fatalf("two Pods of svc-%d on %s", i, p.Spec.NodeName)
					}
					onNodes[p.Spec.NodeName] = true

					st := l.podStatus(i, r, at)
					if st.Phase != corev1.PodRunning || st.PodIP != ip.String() || len(st.PodIPs) != 1 || st.PodIPs[0].IP != st.PodIP ||
						st.HostIP != nodeInternalIP(n).String() || len(st.HostIPs) != 1 || st.HostIPs[0].IP != st.HostIP ||
						st.QOSClass != corev1.PodQOSBurstable || st.StartTime == nil {
						t.Fatalf("pod %s status %+v: want Running at %s on %s", name, st, ip, nodeInternalIP(n))
					}
					if len(st.Conditions) != 5 {
						t.Fatalf("pod %s: %d conditions, want 5", name, len(st.Conditions))
					}
					for _, c := range st.Conditions {
						if c.Status != corev1.ConditionTrue {
							t.Fatalf("pod %s condition %s is %s", name, c.Type, c.Status)
						}
					}
					cs := st.ContainerStatuses
					if len(cs) != 1 || cs[0].Name != c[0].Name || !cs[0].Ready || !*cs[0].Started || cs[0].State.Running == nil ||
						cs[0].Image != c[0].Image || !strings.HasPrefix(cs[0].ContainerID, "containerd://") || !strings.Contains(cs[0].ImageID, "@sha256:") {
						t.Fatalf("pod %s container status %+v: want its container running and ready", name, cs)
					}
				}
			}
			if len(ips) != l.pods() {
				t.Errorf("%d distinct addresses for %d Pods", len(ips), l.pods())
			}
		})
	}
}

// TestFixturesAreDeterministic: the same arguments build the same objects, so a run can
// rebuild a Pod for its EndpointSlice and two runs create the same cluster.
func TestFixturesAreDeterministic(t *testing.T) {
	l := clusterLayout{services: 10000, podsPerService: 3, nodes: 20}
	for _, tc := range []struct {
		name string
		a, b func() any
	}{
		{"pod", func() any { return l.pod(9999, 2) }, func() any { return l.pod(9999, 2) }},
		{"pod status", func() any { return l.podStatus(42, 1, at) }, func() any { return l.podStatus(42, 1, at) }},
		{"node", func() any { return l.node(19, at) }, func() any { return l.node(19, at) }},
		{"endpoint slice", func() any { return l.endpointSlice(7, l.runningPods(7, fakeUIDs(l)), at) },
			func() any { return l.endpointSlice(7, l.runningPods(7, fakeUIDs(l)), at) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, errA := json.Marshal(tc.a())
			b, errB := json.Marshal(tc.b())
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			if string(a) != string(b) {
				t.Errorf("built twice, differs:\n%s\n%s", a, b)
			}
		})
	}
	if podName(3, 0) == podName(3, 1) || templateHash(3) == templateHash(4) {
		t.Errorf("names do not vary: %s %s %s %s", podName(3, 0), podName(3, 1), templateHash(3), templateHash(4))
	}
}

// fakeUIDs stands for the UIDs the API server gives the layout's Pods.
func fakeUIDs(l clusterLayout) []types.UID {
	uids := make([]types.UID, l.pods())
	for k := range uids {
		uids[k] = types.UID(uuidOf("test-pod", k))
	}
	return uids
}

// TestEndpointSliceMatchesPods: a Service's slice has one ready endpoint per Pod, with
// the Pod's address, Node, zone and a reference to it, and names its Service.
func TestEndpointSliceMatchesPods(t *testing.T) {
	for _, tc := range layouts[:3] {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.l
			uids := fakeUIDs(l)
			names := map[string]bool{}
			for i := range l.services {
				pods := l.runningPods(i, uids)
				s := l.endpointSlice(i, pods, at)
				if names[s.Name] || !strings.HasPrefix(s.Name, serviceName(i)+"-") {
					t.Fatalf("slice name %q: twice, or not after its Service", s.Name)
				}
				names[s.Name] = true
				if s.Namespace != namespace || s.Labels[discoveryv1.LabelServiceName] != serviceName(i) ||
					s.Labels[discoveryv1.LabelManagedBy] == "" || s.AddressType != discoveryv1.AddressTypeIPv4 {
					t.Fatalf("slice %s: labels %v, address type %s", s.Name, s.Labels, s.AddressType)
				}
				if len(s.Ports) != 1 || *s.Ports[0].Name != pods[0].Spec.Containers[0].Ports[0].Name ||
					*s.Ports[0].Port != pods[0].Spec.Containers[0].Ports[0].ContainerPort {
					t.Fatalf("slice %s ports %+v do not match the container's", s.Name, s.Ports)
				}
				if len(s.Endpoints) != l.podsPerService {
					t.Fatalf("slice %s: %d endpoints for %d Pods", s.Name, len(s.Endpoints), l.podsPerService)
				}
				for r, ep := range s.Endpoints {
					k := l.podIndex(i, r)
					want := podIP(k).String()
					ref := ep.TargetRef
					if len(ep.Addresses) != 1 || ep.Addresses[0] != want || ref == nil || ref.Kind != "Pod" ||
						ref.Name != podName(i, r) || ref.Namespace != namespace || ref.UID != uids[k] {
						t.Fatalf("slice %s endpoint %d = %+v: want pod %s at %s", s.Name, r, ep, podName(i, r), want)
					}
					n := l.podNode(k)
					if *ep.NodeName != nodeName(n) || *ep.Zone != nodeZone(n) {
						t.Fatalf("slice %s endpoint %d on %s in %s: want %s in %s", s.Name, r, *ep.NodeName, *ep.Zone, nodeName(n), nodeZone(n))
					}
					if !*ep.Conditions.Ready || !*ep.Conditions.Serving || *ep.Conditions.Terminating {
						t.Fatalf("slice %s endpoint %d conditions %+v: want ready and serving", s.Name, r, ep.Conditions)
					}
				}
			}
		})
	}
}

// TestNodeFixtures: Nodes have unique EKS-style names and addresses, and the status a
// kubelet reports.
func TestNodeFixtures(t *testing.T) {
	for _, nodes := range []int{1, 20, maxNodes} {
		t.Run(fmt.Sprint(nodes), func(t *testing.T) {
			l := clusterLayout{services: 1, podsPerService: 1, nodes: nodes}
			seen := map[string]bool{}
			for i := range nodes {
				name := nodeName(i)
				if seen[name] {
					t.Fatalf("node name %s twice", name)
				}
				seen[name] = true
				if got := l.zoneOfNode(name); got != nodeZone(i) {
					t.Fatalf("zoneOfNode(%s) = %q, want %q", name, got, nodeZone(i))
				}
				if i%97 != 0 && i != nodes-1 {
					continue
				}
				n := l.node(i, at)
				addr := map[corev1.NodeAddressType]string{}
				for _, a := range n.Status.Addresses {
					addr[a.Type] = a.Address
				}
				if n.Name != name || addr[corev1.NodeInternalIP] != nodeInternalIP(i).String() || addr[corev1.NodeHostName] != name ||
					addr[corev1.NodeExternalIP] != nodeExternalIP(i).String() {
					t.Fatalf("node %d: name %s, addresses %v", i, n.Name, addr)
				}
				if n.Labels["topology.kubernetes.io/zone"] != nodeZone(i) || n.Labels["node.kubernetes.io/instance-type"] == "" {
					t.Fatalf("node %s labels %v", name, n.Labels)
				}
				if len(n.Status.Conditions) != 5 || len(n.Status.Images) != 10 || n.Status.NodeInfo.KubeletVersion == "" ||
					n.Status.Capacity.Pods().IsZero() || n.Status.Allocatable.Cpu().IsZero() {
					t.Fatalf("node %s status %+v", name, n.Status)
				}
			}
		})
	}
	l := clusterLayout{services: 1, podsPerService: 1, nodes: 20}
	for _, name := range []string{"", "node-1", nodeName(20), "ip-10-0-0-9.ec2.internal"} {
		if z := l.zoneOfNode(name); z != "" {
			t.Errorf("zoneOfNode(%q) = %q, want none", name, z)
		}
	}
}

// TestDropZone: a zone with records is emptied and deleted, so the next scenario's zone of
// the same name is the only one.
func TestDropZone(t *testing.T) {
	sb := sandboxtest.Start(t)
	store := sb.Store()
	z, _, err := store.CreateZone("crossfade."+zoneSuffix, "drop-test", "", false)
	if err != nil {
		t.Fatal(err)
	}
	ttl := int64(300)
	var changes []zones.Change
	for i := range 1200 {
		changes = append(changes,
			zones.Change{Action: zones.Create, Set: zones.RRSet{Name: hostname(i, z.Name), Type: "A", TTL: &ttl, Records: []string{loadBalancerIP(i)}}},
			zones.Change{Action: zones.Create, Set: zones.RRSet{Name: "a-" + hostname(i, z.Name), Type: "TXT", TTL: &ttl, Records: []string{`"heritage=external-dns,external-dns/owner=kubebench,external-dns/resource=service/kubebench/` + serviceName(i) + `"`}}})
	}
	for len(changes) > 0 {
		n := min(len(changes), 200)
		if _, err := store.Apply(z.ID, "", changes[:n]); err != nil {
			t.Fatal(err)
		}
		changes = changes[n:]
	}
	if err := dropZone(store, z.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Zone(z.ID); err == nil {
		t.Errorf("zone %s still there", z.ID)
	}
	if err := dropZone(store, z.ID); err == nil {
		t.Errorf("dropping a dropped zone: no error")
	}
}

func TestRenderClusterReport(t *testing.T) {
	o, err := parseFlags([]string{"--scenarios", "cluster"})
	if err != nil {
		t.Fatal(err)
	}
	cf := tool{name: toolCrossfade, title: "crossfade", kind: kindCrossfade}
	ext := tool{name: toolExternalDNS, title: "external-dns (default)", kind: kindExternalDNS}
	evt := tool{name: toolExternalDNSEvents, title: "external-dns --events", kind: kindExternalDNS, events: true}
	run := &clusterRun{
		fixtures: &clusterFixtures{layout: o.layout(),
			nodes:  objectStats{count: 20, bytes: 20 * 7000, bytesNoManaged: 20 * 5000, took: 200 * time.Millisecond},
			pods:   objectStats{count: 30000, bytes: 30000 * 6000, bytesNoManaged: 30000 * 4000, took: 100 * time.Second},
			slices: objectStats{count: 10000, bytes: 10000 * 1500, bytesNoManaged: 10000 * 1000, took: 10 * time.Second}},
		results: []*result{
			{tool: cf, scenario: scenarioCluster, synced: true, firstSync: 2 * time.Second, syncCPU: time.Second, peakRSS: 130 << 20, idle: 70 * time.Second, idleCalls: callCounts{}},
			{tool: ext, scenario: scenarioCluster, synced: true, firstSync: 40 * time.Second, syncCPU: 8 * time.Second, peakRSS: 520 << 20, idle: 70 * time.Second,
				idleCalls: callCounts{"ListResourceRecordSets ok": 67, "ListHostedZones ok": 2}},
			{tool: evt, scenario: scenarioCluster, err: errTest},
		},
	}
	rep := renderRun(o, environment{Info: machine.Info{CPUs: 2}, args: []string{"--scenarios", "cluster"}}, nil, nil, nil, run)
	for _, want := range []string{
		"## crossfade controller vs external-dns in a cluster: 10,000 LoadBalancer Services, 30,000 Running Pods, 10,000 EndpointSlices, 20 Nodes",
		"| first sync: process start → all 10,000 records in the zone (goal < 10s) | 2.00 s ✓ | 40.0 s | n/a (failed) | 20.0× / — ✓ |",
		"| peak RSS, VmHWM 1m20s after the first sync (goal < 150 MiB) | 130 MiB ✓ | 520 MiB | n/a (failed) | 4.0× / — ✓ |",
		"| CPU time at the first sync (user + system) | 1.00 s | 8.00 s | n/a (failed) | 8.0× / — ✓ |",
		"| Route 53 calls in the 1m10s hold | 0: none | 69: ListHostedZones ok ×2, ListResourceRecordSets ok ×67 | n/a |",
		"30,000 Pods, 3 per Service, in 100.0 s, 6,000 bytes each on average (4,000)",
		"20 Nodes in 200 ms, 7,000 bytes each on average (5,000)",
		"10,000 EndpointSlices, one per Service, in 10.0 s, 1,500 bytes each on average (1,000)",
		"go run ./bench/kubebench --scenarios cluster",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
	if strings.Contains(rep, "change → DNS answer") || strings.Contains(rep, "## crossfade controller vs external-dns: ") {
		t.Errorf("cluster-only report has the services scenario's rows:\n%s", rep)
	}

	failed := renderRun(o, environment{}, []*result{}, nil, nil, &clusterRun{err: errTest})
	if !strings.Contains(failed, "Creating the cluster's objects failed, so no tool ran: the tool broke") ||
		!strings.Contains(failed, "## crossfade controller vs external-dns: 10,000 LoadBalancer Services") {
		t.Errorf("failed fixtures not reported, or the services section missing:\n%s", failed)
	}
}
