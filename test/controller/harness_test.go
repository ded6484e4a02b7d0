// Package controller_test runs `crossfade controller` as a process against a real
// kube-apiserver (internal/kubetest) and the sandbox's Route 53 API, as it runs in a
// cluster.
package controller_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsr53 "github.com/aws/aws-sdk-go-v2/service/route53"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds cmd/crossfade once per test run.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "crossfade-controller-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "crossfade")
		out, err := exec.Command("go", "build", "-o", binPath, "../../cmd/crossfade").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// proc is a running `crossfade controller`.
type proc struct {
	t       *testing.T
	cmd     *exec.Cmd
	name    string
	metrics string // host:port of /metrics
	mu      sync.Mutex
	log     strings.Builder
	done    chan struct{}
}

var metricsLine = regexp.MustCompile(`"msg":"serving metrics".*"addr":"([^"]+)"`)

// startController runs the controller with the given extra flags; it is killed when the
// test ends.
func startController(t *testing.T, name, kubeconfig string, sb *sandbox.Sandbox, args ...string) *proc {
	t.Helper()
	base := []string{"controller", "--kubeconfig", kubeconfig, "--aws-endpoint", sb.APIURL(), "--aws-region", "us-east-1",
		"--metrics-address", "127.0.0.1:0", "--log-format", "json", "--log-level", "debug"}
	cmd := exec.Command(binary(t), append(base, args...)...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, name: name, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stderr)
		lines.Buffer(make([]byte, 1<<20), 1<<20)
		for lines.Scan() {
			line := lines.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if m := metricsLine.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s log:\n%s", p.name, p.logText())
		}
	})
	select {
	case p.metrics = <-addr:
	case <-p.done:
		t.Fatalf("%s exited at start:\n%s", name, p.logText())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no metrics address logged in 30s:\n%s", name, p.logText())
	}
	return p
}

func (p *proc) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// stop sends SIGTERM and waits for the exit.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(40 * time.Second):
		t.Fatalf("%s did not exit 40s after SIGTERM:\n%s", p.name, p.logText())
	}
}

// zone creates a hosted zone in the sandbox and returns a provider reading it.
func zone(t *testing.T, sb *sandbox.Sandbox, name string) (provider.Provider, provider.Zone) {
	t.Helper()
	out, err := route53test.Client(sb).CreateHostedZone(context.Background(), &awsr53.CreateHostedZoneInput{
		Name: aws.String(name), CallerReference: aws.String(name + time.Now().String())})
	if err != nil {
		t.Fatal(err)
	}
	p := route53test.New(t, sb)
	zones, err := p.Zones(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range zones {
		if strings.HasSuffix(aws.ToString(out.HostedZone.Id), z.ID) || z.ID == aws.ToString(out.HostedZone.Id) {
			return p, z
		}
	}
	t.Fatalf("zone %s not listed after create: %v", name, zones)
	return nil, provider.Zone{}
}

// records renders the zone's record sets as "name type [set] targets", sorted.
func records(t *testing.T, p provider.Provider, z provider.Zone) []string {
	t.Helper()
	recs, err := p.Records(context.Background(), z)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, render(r))
	}
	slices.Sort(out)
	return out
}

func render(r *endpoint.Endpoint) string {
	s := r.Name + " " + r.Type
	if r.SetIdentifier != "" {
		s += " [" + r.SetIdentifier + "]"
	}
	return s + " " + strings.Join(r.Targets, ",")
}

// eventually polls cond every 100 ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s; last state:\n%s", what, d, last)
}

// hasRecord returns a condition: the zone holds a set rendered as want.
func hasRecord(t *testing.T, p provider.Provider, z provider.Zone, want string) func() (bool, string) {
	return func() (bool, string) {
		got := records(t, p, z)
		return slices.Contains(got, want), strings.Join(got, "\n")
	}
}

// lbService is a LoadBalancer Service with annotations, whose load balancer has ip.
func lbService(t *testing.T, kc kubernetes.Interface, name, ip string, ann map[string]string) *corev1.Service {
	t.Helper()
	ctx := context.Background()
	svc, err := kc.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: ann},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// No cloud controller runs: set the load balancer's address as it would.
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
	svc, err = kc.CoreV1().Services("default").UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// annotate sets one annotation on a Service.
func annotate(t *testing.T, kc kubernetes.Interface, name, key, value string) {
	t.Helper()
	ctx := context.Background()
	svc, err := kc.CoreV1().Services("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Annotations[key] = value
	if _, err := kc.CoreV1().Services("default").Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

const alpha = "external-dns.alpha.kubernetes.io/"

var deleteNow = metav1.DeleteOptions{}

// get fetches path from the controller's metrics address and returns status and body.
func (p *proc) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + p.metrics + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// metric returns the value of the sample line of /metrics that starts with series, or -1.
func (p *proc) metric(t *testing.T, series string) float64 {
	t.Helper()
	_, body := p.get(t, "/metrics")
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatalf("metric %s: %v", line, err)
			}
			return v
		}
	}
	return -1
}

// env is one cluster and one sandbox with the zone example.com.
type env struct {
	kc     *kubetest.Cluster
	client kubernetes.Interface
	sb     *sandbox.Sandbox
	dns    provider.Provider
	zone   provider.Zone
}

// setup starts a kube-apiserver and a sandbox holding example.com; both stop with t.
func setup(t *testing.T) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a kube-apiserver")
	}
	e := &env{kc: kubetest.Start(t), sb: sandboxtest.Start(t)}
	e.client = e.kc.Clientset(t)
	e.dns, e.zone = zone(t, e.sb, "example.com")
	return e
}
