package demo

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/child"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/lbctest"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
	"github.com/crossfade-io/crossfade/internal/testenv"
)

// requireKube stops t unless the API servers demo --kube runs are built: a skip under
// -short or without them, a failure under CI=true (testenv.Missingf).
func requireKube(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs two kube-apiservers")
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if fi, err := os.Stat(filepath.Join(kubetest.BinDir(), name)); err != nil || fi.Mode()&0o111 == 0 {
			testenv.Missingf(t, "%s not built in %s: `make test` builds it (scripts/deps.sh test)", name, kubetest.BinDir())
		}
	}
}

// runALBKube runs demo --lever alb --kube with kc, short steps, and returns its result and
// output; the demo must succeed.
func runALBKube(t *testing.T, kc KubeConfig) (*Result, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a failure bound
	defer cancel()
	var out syncBuffer
	res, err := Run(ctx, Config{Lever: LeverALB, Kube: &kc, Pause: time.Second, Clients: 8, Interval: 50 * time.Millisecond, Out: &out})
	text := out.String()
	if err != nil {
		t.Fatalf("demo --lever alb --kube: %v\n%s", err, text)
	}
	t.Logf("the demo's output:\n%s", text)
	if res.Report == nil || res.Report.Outcome != "completed" || res.Failures != 0 || res.FinalWeights["blue"] != 0 || res.FinalWeights["green"] != 100 {
		t.Errorf("report %+v, final weights %v, %d failed requests; want completed at blue=0 green=100, 0 failed", res.Report, res.FinalWeights, res.Failures)
	}
	// The targets are the pods' TEST-NET-1 addresses in the clusters, not the loopback
	// backends: the sandbox reached the pods only through its address map.
	for id, want := range map[string][]string{"blue": {"192.0.2.11:8080", "192.0.2.12:8080"}, "green": {"192.0.2.21:8080", "192.0.2.22:8080"}} {
		if got := res.Targets[id]; !slices.Equal(got, want) {
			t.Errorf("target group of cluster %s holds %v, want its pods %v", id, got, want)
		}
	}
	return res, text
}

// TestALBKubeDemoWithController runs `crossfade demo --lever alb --kube` with the real AWS
// Load Balancer Controller: two kube-apiservers, one controller per cluster (its own
// --cluster-name) registering its Service's endpoints (192.0.2.x) into its target group
// through a TargetGroupBinding, and the cutover completing with 0 failed requests. The
// demo's own registrar never runs, so the pods in the groups were registered by the
// controllers; each controller's process is gone when Run returns.
func TestALBKubeDemoWithController(t *testing.T) {
	requireKube(t)
	lbctest.Require(t)
	res, text := runALBKube(t, KubeConfig{})
	for _, id := range []string{"blue", "green"} {
		want := "AWS Load Balancer Controller v3.2.2 (cluster " + id + ")"
		if res.RegisteredBy[id] != want {
			t.Errorf("cluster %s: targets registered by %q, want %q", id, res.RegisteredBy[id], want)
		}
		if line := "registered into target group app-" + id + " by " + want; !strings.Contains(text, line) {
			t.Errorf("the output does not say %q", line)
		}
	}
	for _, want := range []string{"TargetGroupBinding shop/app: Service app → target group app-blue",
		"targets registered by AWS Load Balancer Controller v3.2.2 (cluster blue) and AWS Load Balancer Controller v3.2.2 (cluster green)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	if strings.Contains(text, "own registrar") {
		t.Errorf("the demo's own registrar ran beside the controllers:\n%s", text)
	}
	pids := regexp.MustCompile(`AWS Load Balancer Controller v3\.2\.2 \(cluster \w+\) pid (\d+)`).FindAllStringSubmatch(text, -1)
	if len(pids) != 2 {
		t.Fatalf("the output names %d controller pids, want 2", len(pids))
	}
	for _, m := range pids {
		if pid, _ := strconv.Atoi(m[1]); child.GroupAlive(pid) {
			t.Errorf("controller pid %d still runs after the demo returned", pid)
		}
	}
}

// TestALBKubeDemoWithoutController: with no controller where the demo looks for it (an
// empty directory), demo --lever alb --kube still runs on the two real clusters, says in
// one line that the controller is not built and how to get it, registers the same pod
// addresses with its own registrar, and the cutover completes with 0 failed requests.
func TestALBKubeDemoWithoutController(t *testing.T) {
	requireKube(t)
	empty := t.TempDir()
	res, text := runALBKube(t, KubeConfig{LBCDir: empty})
	want := "demo --kube --lever alb: the AWS Load Balancer Controller is not built: aws-load-balancer-controller and " +
		lbctest.CRDsFile + " not in " + empty + ": `make test` builds it (scripts/deps.sh test, a few minutes once); the demo's own registrar registers each cluster's pods instead\n"
	if strings.Count(text, want) != 1 {
		t.Errorf("the output does not say once %q:\n%s", want, text)
	}
	for _, id := range []string{"blue", "green"} {
		if got := res.RegisteredBy[id]; got != "the demo's own registrar (cluster "+id+")" {
			t.Errorf("cluster %s: targets registered by %q, want the demo's own registrar", id, got)
		}
	}
	if strings.Contains(text, "TargetGroupBinding") {
		t.Errorf("the demo says it made a TargetGroupBinding without the controller:\n%s", text)
	}
}

// TestALBEC2: what the ALB demo on real clusters declares in the sandbox's EC2 is
// accepted, and holds every pod address in the VPC's CIDR (the controller registers a pod
// outside it with AvailabilityZone "all") on one network interface.
func TestALBEC2(t *testing.T) {
	sb := sandboxtest.Start(t)
	ids := []string{"blue", "green"}
	if err := sb.DeclareEC2(albEC2(ids)); err != nil {
		t.Fatalf("DeclareEC2: %v", err)
	}
	snap := sb.EC2().Snapshot()
	if len(snap.VPCs) != 1 || snap.VPCs[0].ID != albVPC {
		t.Fatalf("VPCs %+v, want %s", snap.VPCs, albVPC)
	}
	cidr := netip.MustParsePrefix(snap.VPCs[0].CIDRBlock)
	on := map[string]string{}
	for _, eni := range snap.NetworkInterfaces {
		for _, ip := range eni.PrivateIPs {
			on[ip] = eni.ID
		}
	}
	for _, id := range ids {
		for _, ip := range albPodIPs[id] {
			if !cidr.Contains(netip.MustParseAddr(ip)) {
				t.Errorf("cluster %s: pod %s is outside the VPC's %s", id, ip, cidr)
			}
			if on[ip] != "eni-"+id+"pods" {
				t.Errorf("cluster %s: pod %s is on interface %q, want eni-%spods", id, ip, on[ip], id)
			}
		}
	}
}

// TestALBKubeDemoInterrupted: Ctrl-C (the context cancelled) while the cutover runs ends
// demo --lever alb --kube with the context's error, every controller's process gone.
func TestALBKubeDemoInterrupted(t *testing.T) {
	requireKube(t)
	lbctest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a failure bound
	defer cancel()
	out := &lines{ch: make(chan string, 1000)}
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Config{Lever: LeverALB, Kube: &KubeConfig{}, Pause: time.Second, Clients: 4, Out: out})
		done <- err
	}()
	var printed []string
	var pids []int
	pidRE := regexp.MustCompile(`AWS Load Balancer Controller v3\.2\.2 \(cluster \w+\) pid (\d+)`)
	for running := true; running; {
		select {
		case l := <-out.ch:
			printed = append(printed, l)
			if m := pidRE.FindStringSubmatch(l); m != nil {
				pid, _ := strconv.Atoi(m[1])
				pids = append(pids, pid)
			}
			running = !strings.HasPrefix(l, "dashboard: ")
		case err := <-done:
			t.Fatalf("the demo ended before its cutover started: %v\n%s", err, strings.Join(printed, "\n"))
		}
	}
	cancel() // Ctrl-C
	go func() {
		for range out.ch {
		}
	}()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	if len(pids) != 2 {
		t.Fatalf("the output names controller pids %v, want 2:\n%s", pids, strings.Join(printed, "\n"))
	}
	for _, pid := range pids {
		if child.GroupAlive(pid) {
			t.Errorf("controller pid %d still runs after the demo returned", pid)
		}
	}
}

// TestALBKubeHint: --keep on real clusters names, per cluster, the kubectl command that
// shows its TargetGroupBinding and its controller's log, or, when the demo registered the
// pods itself, the command that shows the pods.
func TestALBKubeHint(t *testing.T) {
	k := &kube{clusters: []*kubeCluster{
		{id: "blue", api: &kubetest.Cluster{Kubeconfig: "/d/blue/kubeconfig"}},
		{id: "green", api: &kubetest.Cluster{Kubeconfig: "/d/green/kubeconfig"}},
	}}
	withLBC := &albKube{k: k, ctls: map[string]*lbctest.Controller{"blue": {LogPath: "/d/blue/lbc.log"}, "green": {LogPath: "/d/green/lbc.log"}}}
	without := &albKube{k: k, ctls: map[string]*lbctest.Controller{}}
	for _, tc := range []struct {
		name string
		ak   *albKube
		want []string
	}{
		{"controller", withLBC, []string{
			"  blue        kubectl --kubeconfig /d/blue/kubeconfig --namespace shop get targetgroupbinding app -o yaml\n",
			"  blue log    /d/blue/lbc.log\n",
			"  green       kubectl --kubeconfig /d/green/kubeconfig --namespace shop get targetgroupbinding app -o yaml\n",
		}},
		{"registrar", without, []string{
			"  green       kubectl --kubeconfig /d/green/kubeconfig --namespace shop get pods,endpointslices -o wide\n",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.ak.hint()
			for _, want := range tc.want {
				if !strings.Contains(got, want) {
					t.Errorf("hint lacks %q:\n%s", want, got)
				}
			}
		})
	}
}
