package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/testenv"
)

// The lines `crossfade demo --kube --keep` prints that the test reads.
var (
	kubeAPILine        = regexp.MustCompile(`^cluster (\w+)\s+kube-apiserver (https://\S+), kubeconfig (\S+) \(`)
	kubeControllerLine = regexp.MustCompile(`^cluster (\w+)\s+crossfade controller pid (\d+) `)
	kubeRoute53Hint    = regexp.MustCompile(`^  Route 53 .*--endpoint-url (\S+) .*--hosted-zone-id (\S+)$`)
	kubePlanHint       = regexp.MustCompile(`^  plan file   (\S+)$`)
	// kubeHeld is a Warning event the demo prints, which a controller posted on its
	// Service after re-reading the zone: it holds the weight the cutover wrote.
	kubeHeld = regexp.MustCompile(`^\S+ cluster (\w+) controller \(owner \w+\): Service shop/app DNSRecordConflict: .*held by cutover demo: the source asks for weight (\d+), the zone holds (\d+)\b`)
)

// kubeDemoCluster is what the test learns of one cluster from the demo's output.
type kubeDemoCluster struct {
	apiURL, kubeconfig string
	controllerPID      string
}

// TestDemoKube runs `crossfade demo --kube --keep` as a user does and checks it against
// the real servers it started: two kube-apiservers answered, each holding the app's
// Service; each cluster's controller published its member from that Service (owner =
// cluster id, resource = the Service, address = the Service's load balancer); the cutover
// completed; after it, each controller re-read the zone and held the cutover's weights
// (a Warning event on its Service, posted in its API server) instead of reverting them to
// its Service's; and Ctrl-C stopped everything: exit 0, the API servers' ports closed, no
// process left that runs from the demo's directory, the directory gone.
func TestDemoKube(t *testing.T) {
	needKubeBinaries(t)
	demo := startDemo(t, "--kube", "--keep", "--pause", "1s", "--log-level", "warn")
	lines, exited, stderr := demo.lines, demo.exited, demo.stderr
	var mu sync.Mutex
	var seen []string
	output := func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(seen, "\n")
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("demo output:\n%s\nstderr:\n%s", output(), stderr.String())
		}
	})

	clusters := map[string]*kubeDemoCluster{}
	clusterOf := func(id string) *kubeDemoCluster {
		if clusters[id] == nil {
			clusters[id] = &kubeDemoCluster{}
		}
		return clusters[id]
	}
	var endpointURL, zoneID, planFile string
	held := map[string][2]string{} // cluster → the last weights it held: source's, zone's
	read := func(l string) {
		mu.Lock()
		seen = append(seen, l)
		mu.Unlock()
		if m := kubeAPILine.FindStringSubmatch(l); m != nil {
			c := clusterOf(m[1])
			c.apiURL, c.kubeconfig = m[2], m[3]
		}
		if m := kubeControllerLine.FindStringSubmatch(l); m != nil {
			clusterOf(m[1]).controllerPID = m[2]
		}
		if m := kubeRoute53Hint.FindStringSubmatch(l); m != nil {
			endpointURL, zoneID = m[1], m[2]
		}
		if m := kubePlanHint.FindStringSubmatch(l); m != nil {
			planFile = m[1]
		}
		if m := kubeHeld.FindStringSubmatch(l); m != nil {
			held[m[1]] = [2]string{m[2], m[3]}
		}
	}
	// until reads the demo's lines until cond holds.
	until := func(what string, d time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.After(d) // a failure bound: the demo takes well under a minute here
		for !cond() {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the demo ended before %s: %v", what, <-exited)
				}
				read(l)
			case <-deadline:
				t.Fatalf("no %s within %s", what, d)
			}
		}
	}
	until("--keep hint with the clusters' kubectl lines", 4*time.Minute, func() bool { return strings.Contains(output(), "  green log   ") })

	text := output()
	for _, want := range []string{
		"cutover demo: completed",
		"demo: OK — every step passed, the final split is blue=0 green=100",
		"retire: blue retirable",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if passed := regexp.MustCompile(`(?m)^\s+step \d of 4\s+.*\bpassed\b`).FindAllString(text, -1); len(passed) != 4 {
		t.Errorf("%d steps passed in the report, want 4", len(passed))
	}
	if endpointURL == "" || planFile == "" {
		t.Fatal("the --keep hint names no Route 53 endpoint or plan file")
	}
	demoDir := filepath.Dir(planFile)

	// Two API servers, each holding its cluster's Service with the annotations of its
	// member and the load-balancer address the demo gave it.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ids := []string{"blue", "green"}
	clients := map[string]kubernetes.Interface{}
	lbIP := map[string]string{}
	for _, id := range ids {
		c := clusters[id]
		if c == nil || c.apiURL == "" || c.controllerPID == "" {
			t.Fatalf("cluster %s: the demo printed no API server or controller: %+v", id, c)
		}
		if !strings.HasPrefix(c.kubeconfig, demoDir+string(filepath.Separator)) {
			t.Errorf("cluster %s: kubeconfig %s is outside the demo's directory %s", id, c.kubeconfig, demoDir)
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
		if err != nil {
			t.Fatalf("cluster %s: %v", id, err)
		}
		if cfg.Host != c.apiURL {
			t.Errorf("cluster %s: kubeconfig server %s, the demo printed %s", id, cfg.Host, c.apiURL)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		clients[id] = cs
		svc, err := cs.CoreV1().Services("shop").Get(ctx, "app", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("cluster %s: the app's Service in the API server at %s: %v", id, c.apiURL, err)
		}
		if got := svc.Annotations["external-dns.alpha.kubernetes.io/set-identifier"]; got != id {
			t.Errorf("cluster %s: Service set-identifier %q, want %q", id, got, id)
		}
		if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || len(svc.Status.LoadBalancer.Ingress) != 1 {
			t.Fatalf("cluster %s: Service is %s with load balancer %+v, want one LoadBalancer address", id, svc.Spec.Type, svc.Status.LoadBalancer)
		}
		lbIP[id] = svc.Status.LoadBalancer.Ingress[0].IP
	}
	if clusters["blue"].apiURL == clusters["green"].apiURL {
		t.Errorf("both clusters use one API server, %s", clusters["blue"].apiURL)
	}

	// Each controller published its member from its Service.
	dns, err := route53.New(ctx, route53.Config{Endpoint: endpointURL, Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	if err != nil {
		t.Fatal(err)
	}
	members := func() map[string]*endpoint.Endpoint {
		t.Helper()
		return kubeDemoMembers(t, ctx, dns, zoneID)
	}
	for id, m := range members() {
		if !slices.Contains(ids, id) {
			t.Errorf("the zone holds a member %s of no cluster", id)
			continue
		}
		if m.Owner() != id || m.Resource() != "service/shop/app" || !slices.Equal(m.Targets, endpoint.Targets{lbIP[id]}) {
			t.Errorf("member %s: owner %q, resource %q, targets %v; want owner %s, service/shop/app, %s (the Service's load balancer)",
				id, m.Owner(), m.Resource(), m.Targets, id, lbIP[id])
		}
	}
	if n := len(members()); n != 2 {
		t.Errorf("the zone holds %d members, want 2", n)
	}

	// After the cutover each controller re-reads the zone, keeps the weight the cutover
	// wrote and says so on its Service: its Service asks for the old weight, the zone
	// keeps the new one.
	final := map[string][2]string{"blue": {"100", "0"}, "green": {"0", "100"}}
	until("both controllers holding the final weights", 2*time.Minute, func() bool {
		return held["blue"] == final["blue"] && held["green"] == final["green"]
	})
	for _, id := range ids {
		events, err := clients[id].CoreV1().Events("shop").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("the source asks for weight %s, the zone holds %s", final[id][0], final[id][1])
		if !slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.Type == corev1.EventTypeWarning && e.Reason == "DNSRecordConflict" && e.InvolvedObject.Name == "app" && strings.Contains(e.Message, want)
		}) {
			t.Errorf("cluster %s: no Warning event %q on Service shop/app in its API server", id, want)
		}
	}
	// Read after the events: whatever those reconciles wrote has landed.
	for id, m := range members() {
		if w := fmt.Sprint(m.Policy.Weight); w != final[id][1] {
			t.Errorf("member %s has weight %s after its controller reconciled, want the cutover's %s", id, w, final[id][1])
		}
	}

	// What runs from the demo's directory now, to be gone after Ctrl-C: etcd and
	// kube-apiserver of each cluster and its controller.
	if runtime.GOOS == "linux" {
		procs := processesUsing(t, demoDir)
		running := strings.Join(procs, "\n")
		count := map[string]int{}
		for _, p := range procs {
			// "pid: program args…": the program's name, and crossfade's command.
			f := strings.Fields(p)
			prog := filepath.Base(f[1])
			if prog == "crossfade" && len(f) > 2 {
				prog += " " + f[2]
			}
			count[prog]++
		}
		for _, want := range []string{"etcd", "kube-apiserver", "crossfade controller"} {
			if count[want] != 2 {
				t.Errorf("%d %s processes run from %s, want 2 (one per cluster):\n%s", count[want], want, demoDir, running)
			}
		}
		for _, id := range ids {
			if !strings.Contains(running, clusters[id].controllerPID+": ") {
				t.Errorf("cluster %s: controller pid %s is not running from %s:\n%s", id, clusters[id].controllerPID, demoDir, running)
			}
		}
	}

	// Ctrl-C stops everything.
	demo.interrupt(t, 2*time.Minute) // a failure bound: the controllers stop in a second
	for _, id := range ids {
		u, err := url.Parse(clusters[id].apiURL)
		if err != nil {
			t.Fatal(err)
		}
		if conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second); err == nil {
			conn.Close()
			t.Errorf("cluster %s: the API server's port %s still accepts connections", id, u.Host)
		}
	}
	if left := processesUsing(t, demoDir); len(left) > 0 {
		t.Errorf("processes left running from %s:\n%s", demoDir, strings.Join(left, "\n"))
	}
	if _, err := os.Stat(demoDir); !os.IsNotExist(err) {
		t.Errorf("the demo left %s behind: %v", demoDir, err)
	}
}

// TestDemoKubeWithoutBinaries: with an empty cache, demo --kube exits 1 at once with a
// message saying what builds the binaries.
func TestDemoKubeWithoutBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the crossfade binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, crossfadeBinary(t), "demo", "--kube")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("demo --kube without binaries: %v, want exit status 1\n%s", err, out)
	}
	for _, want := range []string{"etcd and kube-apiserver not built in", "`make test` builds them (scripts/deps.sh test)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "sandbox:") {
		t.Errorf("the demo started before finding the binaries missing:\n%s", out)
	}
}

// needKubeBinaries skips (fails under CI=true, as kubetest.Start does) unless `make test`
// has built etcd and kube-apiserver.
func needKubeBinaries(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs two kube-apiservers: not under -short")
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		path := filepath.Join(kubetest.BinDir(), name)
		if fi, err := os.Stat(path); err != nil || fi.Mode()&0o111 == 0 {
			testenv.Missingf(t, "%s not built: `make test` builds it (scripts/deps.sh test)", path)
		}
	}
}

// kubeDemoMembers reads the weighted members of app.demo.crossfade.test, by set
// identifier, labelled with their owners.
func kubeDemoMembers(t *testing.T, ctx context.Context, dns *route53.Provider, zoneID string) map[string]*endpoint.Endpoint {
	t.Helper()
	zones, err := dns.Zones(ctx)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Config{OwnerID: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*endpoint.Endpoint{}
	for _, z := range zones {
		if z.ID != zoneID {
			continue
		}
		recs, err := dns.Records(ctx, z)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reg.Read(recs).Records {
			if r.Name == "app.demo.crossfade.test" && r.Type == endpoint.TypeA {
				out[r.SetIdentifier] = r
			}
		}
		return out
	}
	t.Fatalf("no zone %s at the sandbox: %+v", zoneID, zones)
	return nil
}

// processesUsing lists the processes whose command line names dir (etcd's data dir,
// kube-apiserver's cert dir, a controller's kubeconfig all lie under the demo's
// directory). Linux only: elsewhere it finds none.
func processesUsing(t *testing.T, dir string) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		if cmdline := string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})); strings.Contains(cmdline, dir) {
			out = append(out, filepath.Base(filepath.Dir(p))+": "+cmdline)
		}
	}
	return out
}
