// Package lbctest runs the real AWS Load Balancer Controller for tests: the binary and its
// CRDs built by `make test` (scripts/deps.sh test) into ${XDG_CACHE_HOME:-$HOME/.cache}/crossfade/bin,
// started as a child process against a kubetest API server and an AWS API endpoint (the
// crossfade sandbox), on free loopback ports, with static fake credentials and the EC2
// instance metadata service off, so that it never talks to anything but loopback.
package lbctest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/crossfade-io/crossfade/internal/child"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/testenv"
)

// Version is the controller release scripts/deps.sh builds (its LBC_VERSION).
const Version = "v3.2.2"

// Binary is the controller's file name in kubetest.BinDir.
const Binary = "aws-load-balancer-controller"

// CRDsFile is the name scripts/deps.sh gives the controller's CRDs
// (helm/aws-load-balancer-controller/crds/crds.yaml of its module) in kubetest.BinDir.
const CRDsFile = "aws-load-balancer-controller-crds-" + Version + ".yaml"

// Defaults of Options.
const (
	DefaultRegion = "us-east-1"
	DefaultVPC    = "vpc-1"
)

// ServiceIDs are the AWS SDK service IDs the controller makes clients for
// (pkg/aws/provider/default_aws_clients_provider.go, and ec2imds for the instance
// metadata): every one is pointed at the test's endpoint, so that a call to any of them
// lands there (and fails there if the sandbox does not serve it) instead of leaving the
// machine.
var ServiceIDs = []string{
	"Elastic Load Balancing v2", "EC2", "STS", "ACM", "WAFV2", "WAF Regional", "Shield",
	"Resource Groups Tagging API", "Global Accelerator", "ec2imds",
}

const (
	// readyTimeout bounds the wait for the controller's /readyz; a failure bound, not an
	// expectation: it is ready in about a second, but a loaded 2-core machine running
	// several suites can take much longer.
	readyTimeout = 2 * time.Minute
	// stopGrace is how long the controller has to exit after SIGTERM before it is killed.
	stopGrace = 10 * time.Second
	// portAttempts is how often Start tries again when a port it picked was taken by
	// another process between picking and binding.
	portAttempts = 3
	// logTail is how much of the controller's log a failed test shows.
	logTail      = 80
	pollInterval = 50 * time.Millisecond
)

// Options configure one controller.
type Options struct {
	// ClusterName is --cluster-name; required (two clusters' controllers differ by it).
	ClusterName string
	// Endpoint is the URL every AWS service is reached at (the sandbox's API URL);
	// required, and it must be a loopback URL.
	Endpoint string
	// Region is --aws-region; empty: DefaultRegion.
	Region string
	// VPC is --aws-vpc-id; empty: DefaultVPC.
	VPC string
	// LogLevel is --log-level (info or debug); empty: info.
	LogLevel string
	// Args are more flags, after the ones Start sets (a later flag wins).
	Args []string
	// Kubeconfig is --kubeconfig, the cluster the controller reconciles; Launch requires
	// it, Start sets it to its cluster's.
	Kubeconfig string
	// Dir is where the controller's webhook certificate and log are written; Launch
	// requires it, Start uses a temporary directory of the test's when it is empty.
	Dir string
	// Binary is the controller to run; empty: the one in kubetest.BinDir() (Paths).
	Binary string
}

// Controller is a running controller, owned by the test that started it (Start) or by
// Launch's caller, who stops it (Stop).
type Controller struct {
	// LogPath is the file holding its output.
	LogPath string
	// MetricsURL serves its Prometheus metrics, http://127.0.0.1:PORT/metrics.
	MetricsURL string
	// Args are the flags it was started with.
	Args []string

	proc *child.Process
}

// Require returns the paths of the controller binary and its CRDs, or stops t: a failure
// under CI=true (CI builds them, so their absence is a broken setup that must not pass as
// a skip), else a skip that says how to get them.
func Require(t testing.TB) (binary, crds string) {
	t.Helper()
	binary, crds, err := Paths()
	if err != nil {
		testenv.Missing(t, err.Error())
	}
	return binary, crds
}

// ErrNotBuilt is Paths' error when the controller or its CRDs are not in kubetest.BinDir.
var ErrNotBuilt = errors.New("lbctest: the AWS Load Balancer Controller is not built")

// Paths returns the paths of the controller binary and its CRDs, or an error wrapping
// ErrNotBuilt naming what is missing and how to get it.
func Paths() (binary, crds string, err error) { return PathsIn(kubetest.BinDir()) }

// PathsIn is Paths for a controller built into dir instead of kubetest.BinDir().
func PathsIn(dir string) (binary, crds string, err error) {
	binary, crds = filepath.Join(dir, Binary), filepath.Join(dir, CRDsFile)
	var missing []string
	if fi, err := os.Stat(binary); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		missing = append(missing, Binary)
	}
	if fi, err := os.Stat(crds); err != nil || fi.IsDir() {
		missing = append(missing, CRDsFile)
	}
	if len(missing) > 0 {
		return "", "", fmt.Errorf("%w: %s not in %s: `make test` builds it (scripts/deps.sh test, a few minutes once)", ErrNotBuilt, strings.Join(missing, " and "), dir)
	}
	return binary, crds, nil
}

// tgbResource is the controller's TargetGroupBinding kind, which InstallCRDs checks for.
var tgbResource = schema.GroupVersionResource{Group: "elbv2.k8s.aws", Version: "v1beta1", Resource: "targetgroupbindings"}

// InstallCRDs installs the controller's CRDs (TargetGroupBinding, IngressClassParams and
// the rest of its crds.yaml) into c and returns once they are Established. A cluster that
// already serves TargetGroupBindings is left as it is.
func InstallCRDs(t testing.TB, c *kubetest.Cluster) {
	t.Helper()
	_, crds := Require(t)
	if err := InstallCRDsFrom(t.Context(), c.Config(), crds); err != nil {
		t.Fatalf("lbctest: cluster %s: %v", c.URL, err)
	}
}

// crdResource is where CustomResourceDefinitions live, handled as unstructured objects.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crdTimeout bounds the wait for the CRDs to be Established: a failure bound, they are
// within a second or two.
const crdTimeout = time.Minute

// InstallCRDsFrom is InstallCRDs without a test: it creates the CRDs in the file crds (the
// controller's crds.yaml) in the cluster cfg reaches and returns once every one is
// Established. A cluster that already serves TargetGroupBindings is left as it is.
func InstallCRDsFrom(ctx context.Context, cfg *rest.Config, crds string) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("dynamic client for %s: %w", cfg.Host, err)
	}
	client := dyn.Resource(crdResource)
	_, err = client.Get(ctx, tgbResource.Resource+"."+tgbResource.Group, metav1.GetOptions{})
	switch {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("CRD %s.%s: %w", tgbResource.Resource, tgbResource.Group, err)
	}
	f, err := os.Open(crds)
	if err != nil {
		return fmt.Errorf("the controller's CRDs: %w", err)
	}
	defer f.Close()
	objs, err := kubetest.DecodeManifests(f)
	if err != nil {
		return fmt.Errorf("the controller's CRDs %s: %w", crds, err)
	}
	ctx, cancel := context.WithTimeout(ctx, crdTimeout)
	defer cancel()
	for _, obj := range objs {
		if obj.GetKind() != "CustomResourceDefinition" {
			return fmt.Errorf("the controller's CRDs %s: %s %s is not a CustomResourceDefinition", crds, obj.GetKind(), obj.GetName())
		}
		if _, err := client.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create CRD %s: %w", obj.GetName(), err)
		}
	}
	for _, obj := range objs {
		name := obj.GetName()
		err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
			got, err := client.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not Established within %s: %w", name, crdTimeout, err)
		}
	}
	return nil
}

// Start installs the controller's CRDs into c (InstallCRDs), starts the controller on it
// with o, and returns once its /readyz answers 200. It is stopped (SIGTERM, then SIGKILL
// after a grace) and waited for when t ends, whether it passed or failed; a failed test
// shows the end of its log.
func Start(t testing.TB, c *kubetest.Cluster, o Options) *Controller {
	t.Helper()
	binary, _ := Require(t)
	if o.Binary == "" {
		o.Binary = binary
	}
	o.Kubeconfig = c.Kubeconfig
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	InstallCRDs(t, c)
	ctl, err := Launch(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("lbctest: aws-load-balancer-controller of cluster %s, log %s (last lines):\n%s", o.ClusterName, ctl.LogPath, ctl.proc.Tail(logTail))
		}
		if err := ctl.Stop(); err != nil {
			t.Errorf("lbctest: cluster %s: %v", o.ClusterName, err)
		}
	})
	t.Logf("lbctest: aws-load-balancer-controller %s ready for cluster %s (log %s)", Version, o.ClusterName, ctl.LogPath)
	return ctl
}

// check says what in o Launch cannot run with.
func (o Options) check() error {
	if o.ClusterName == "" {
		return errors.New("lbctest: Options.ClusterName is empty")
	}
	if err := checkEndpoint(o.Endpoint); err != nil {
		return fmt.Errorf("lbctest: Options.Endpoint: %w", err)
	}
	if o.Kubeconfig == "" {
		return errors.New("lbctest: Options.Kubeconfig is empty")
	}
	if o.Dir == "" {
		return errors.New("lbctest: Options.Dir is empty")
	}
	return nil
}

// Launch starts the controller with o (its CRDs already installed: InstallCRDsFrom) and
// returns once its /readyz answers 200, its log in o.Dir. The caller owns it: Stop stops
// it (its process also gets SIGKILL should the caller's process die first). ctx bounds
// the start only. On error nothing is left running.
func Launch(ctx context.Context, o Options) (*Controller, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	binary := o.Binary
	if binary == "" {
		var err error
		if binary, _, err = Paths(); err != nil {
			return nil, err
		}
	}
	certDir := filepath.Join(o.Dir, "webhook-certs")
	if err := WriteWebhookCert(certDir); err != nil {
		return nil, fmt.Errorf("lbctest: cluster %s: %w", o.ClusterName, err)
	}
	var ctl *Controller
	var err error
	for attempt := 1; attempt <= portAttempts; attempt++ {
		ctl, err = launch(ctx, binary, filepath.Join(o.Dir, "controller-"+strconv.Itoa(attempt)+".log"), o.Kubeconfig, certDir, o)
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("lbctest: cluster %s: %w", o.ClusterName, err)
	}
	return ctl, nil
}

// Pid is the controller's process id.
func (ctl *Controller) Pid() int { return ctl.proc.Pid() }

// Stop sends the controller SIGTERM, kills it if it has not exited within a grace, and
// waits for it; later calls return the first one's result. A controller that had already
// exited on its own is an error (with the end of its log): it was meant to run until now.
func (ctl *Controller) Stop() error {
	exited := ctl.proc.Exited()
	if err := ctl.proc.Stop(stopGrace); err != nil {
		return err
	}
	if exited {
		return ctl.proc.ExitError()
	}
	return nil
}

// Exited reports whether the controller has exited.
func (ctl *Controller) Exited() bool { return ctl.proc.Exited() }

// Tail returns the last n lines of the controller's log.
func (ctl *Controller) Tail(n int) string { return ctl.proc.Tail(n) }

// errPortTaken marks a start that failed only because a picked port was taken meanwhile.
var errPortTaken = errors.New("a picked port was taken before the controller bound it")

// launch starts the controller once with its log at logPath and waits for its /readyz.
// A failed attempt leaves nothing running.
func launch(ctx context.Context, binary, logPath, kubeconfig, certDir string, o Options) (*Controller, error) {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	metrics := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	health := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
	args := Args(o, kubeconfig, certDir, metrics, health, ports[2])
	cmd := exec.Command(binary, args...)
	cmd.Env = Env(os.Environ())
	p, err := child.StartWith(cmd, logPath, child.Options{Name: "aws-load-balancer-controller (cluster " + o.ClusterName + ")"})
	if err != nil {
		return nil, err
	}
	ctl := &Controller{LogPath: logPath, MetricsURL: "http://" + metrics + "/metrics", Args: args, proc: p}
	if err := waitReady(ctx, p, "http://"+health+"/readyz"); err != nil {
		_ = p.Kill() // the error says why it is being stopped
		if strings.Contains(p.Tail(logTail), "address already in use") {
			return nil, errors.Join(errPortTaken, err)
		}
		return nil, err
	}
	return ctl, nil
}

// Args are the controller's flags for o: the kubetest cluster's kubeconfig, every AWS
// service at o.Endpoint, the add-ons that call other AWS services off, metrics and health
// on the given loopback addresses, the webhook on webhookPort with the certificate in
// certDir, and no leader election (one replica per cluster).
func Args(o Options, kubeconfig, certDir, metricsAddr, healthAddr string, webhookPort int) []string {
	region, vpc, level := o.Region, o.VPC, o.LogLevel
	if region == "" {
		region = DefaultRegion
	}
	if vpc == "" {
		vpc = DefaultVPC
	}
	if level == "" {
		level = "info"
	}
	endpoints := make([]string, 0, len(ServiceIDs))
	for _, id := range ServiceIDs {
		endpoints = append(endpoints, id+"="+o.Endpoint)
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--cluster-name=" + o.ClusterName,
		"--aws-region=" + region,
		"--aws-vpc-id=" + vpc,
		"--aws-api-endpoints=" + strings.Join(endpoints, ","),
		// Shield and WAF are ALB add-ons the controller manages for Ingresses; off, it
		// never calls those APIs.
		"--enable-shield=false",
		"--enable-waf=false",
		"--enable-wafv2=false",
		"--metrics-bind-addr=" + metricsAddr,
		"--health-probe-bind-addr=" + healthAddr,
		// The webhook server has a port flag but no host flag: controller-runtime binds
		// it on every interface. Nothing calls it: no webhook configuration is installed.
		"--webhook-bind-port=" + strconv.Itoa(webhookPort),
		"--webhook-cert-dir=" + certDir,
		"--enable-leader-election=false",
		// A failed reconcile is retried with an exponential backoff of up to 1000 s by
		// default; a test waiting for a binding to converge after the sandbox learns what
		// was missing should not wait minutes.
		"--targetgroupbinding-max-exponential-backoff-delay=5s",
		"--log-level=" + level,
	}
	return append(args, o.Args...)
}

// Env is the controller's environment: env without AWS settings that would point it
// elsewhere (a profile, a role, other endpoints), with static fake credentials and the
// EC2 instance metadata service off, so that the SDK never calls 169.254.169.254.
func Env(env []string) []string {
	out := make([]string, 0, len(env)+5)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "NODENAME=") {
			out = append(out, kv)
		}
	}
	return append(out,
		"AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test",
		"AWS_EC2_METADATA_DISABLED=true",
		// No shared config or credentials file of the developer's is read.
		"AWS_CONFIG_FILE="+os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE="+os.DevNull,
	)
}

// checkEndpoint accepts only an http(s) URL on a loopback address: the controller must
// not reach anything else.
func checkEndpoint(endpoint string) error {
	if endpoint == "" {
		return errors.New("empty: the URL of the AWS APIs (the sandbox's API URL)")
	}
	rest, ok := strings.CutPrefix(endpoint, "http://")
	if !ok {
		if rest, ok = strings.CutPrefix(endpoint, "https://"); !ok {
			return fmt.Errorf("%q: not an http:// or https:// URL", endpoint)
		}
	}
	host, _, _ := strings.Cut(rest, "/")
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q: not a loopback address: tests talk only to loopback", endpoint)
	}
	return nil
}

// waitReady polls url until it answers 200, ctx ends, or p exits.
func waitReady(ctx context.Context, p *child.Process, url string) error {
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w; log (last lines):\n%s", url, context.Cause(ctx), p.Tail(logTail))
		case <-p.Done():
			return fmt.Errorf("waiting for %s: %w", url, p.ExitError())
		case <-tick.C:
		}
	}
}

// freePorts picks n distinct free loopback ports, held open together so that they differ;
// another process may take one before the controller binds it, which Start retries.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
