// Package controllertest runs `crossfade controller` as a process for tests, as it runs in
// a cluster: the binary built from this checkout once per test binary, its JSON log kept
// (and shown when the test fails), its metrics address read from the log, and the process
// killed when the test ends.
package controllertest

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary builds cmd/crossfade once per test binary and returns its path. Cleanup removes it.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "crossfade-test-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "crossfade")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/crossfade-io/crossfade/cmd/crossfade").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err: err, out: string(out)}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + ": " + e.out }

// Cleanup removes the binary Binary built; call it from TestMain after m.Run.
func Cleanup() {
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
}

// Main is the TestMain of a package whose tests run the binary: it runs the tests, then
// Cleanup, and exits with the tests' status.
func Main(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// Options say which cluster and Route 53 API a controller runs against.
type Options struct {
	// Name names the process in failure logs.
	Name string
	// Kubeconfig is the cluster's kubeconfig file.
	Kubeconfig string
	// Route53URL is the Route 53 API, e.g. a sandbox's APIURL.
	Route53URL string
	// Args are the controller's other flags (--source, --txt-owner-id, …).
	Args []string
	// Env are extra environment variables (KEY=value), after the test's own.
	Env []string
}

// Process is a running `crossfade controller`.
type Process struct {
	// Cmd is the process; Done is closed once it exited and was reaped.
	Cmd  *exec.Cmd
	Done chan struct{}
	// Metrics is the host:port of /metrics, /healthz and /readyz.
	Metrics string
	name    string
	mu      sync.Mutex
	log     strings.Builder
}

var metricsLine = regexp.MustCompile(`"msg":"serving metrics".*"addr":"([^"]+)"`)

// Start runs the controller with JSON debug logs, metrics on a free loopback port and dummy
// AWS credentials, and returns once it serves metrics. It is killed when t ends.
func Start(t testing.TB, o Options) *Process {
	t.Helper()
	base := []string{"controller", "--kubeconfig", o.Kubeconfig, "--aws-endpoint", o.Route53URL, "--aws-region", "us-east-1",
		"--metrics-address", "127.0.0.1:0", "--log-format", "json", "--log-level", "debug"}
	cmd := exec.Command(Binary(t), append(base, o.Args...)...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true")
	cmd.Env = append(cmd.Env, o.Env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Process{Cmd: cmd, name: o.Name, Done: make(chan struct{})}
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
		close(p.Done)
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("%s log:\n%s", p.name, p.Log())
		}
	})
	select {
	case p.Metrics = <-addr:
	case <-p.Done:
		t.Fatalf("%s exited at start:\n%s", o.Name, p.Log())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no metrics address logged in 30s:\n%s", o.Name, p.Log())
	}
	return p
}

// Log returns what the process logged so far.
func (p *Process) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// Kill sends SIGKILL and waits for the exit.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.Done
}

// Stop sends SIGTERM (as Kubernetes does) and waits up to 40 s for the exit.
func (p *Process) Stop(t testing.TB) {
	t.Helper()
	_ = p.Cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.Done:
	case <-time.After(40 * time.Second):
		t.Fatalf("%s did not exit 40s after SIGTERM:\n%s", p.name, p.Log())
	}
}

// Get fetches path from the metrics address and returns status and body.
func (p *Process) Get(t testing.TB, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + p.Metrics + path)
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

// Metric returns the value of the /metrics sample line that starts with series, or -1.
func (p *Process) Metric(t testing.TB, series string) float64 {
	t.Helper()
	_, body := p.Get(t, "/metrics")
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

// WaitReconciles waits until the controller has finished at least n reconciles, as its
// crossfade_reconciles_total counts them, and fails the test after d.
func (p *Process) WaitReconciles(t testing.TB, n int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		got := p.Metric(t, `crossfade_reconciles_total{result="ok"}`) + p.Metric(t, `crossfade_reconciles_total{result="error"}`)
		if got >= float64(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v reconciles in %s, want %d:\n%s", p.name, got, d, n, p.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
