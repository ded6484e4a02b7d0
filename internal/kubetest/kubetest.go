// Package kubetest starts a real Kubernetes API for tests: etcd and kube-apiserver, built
// from the Go module proxy at pinned versions by `make test` (scripts/deps.sh test) into
// ${XDG_CACHE_HOME:-$HOME/.cache}/crossfade/bin, run on free loopback ports with
// generated certificates, a static admin token and a generated service-account key.
//
// There is no controller-manager or scheduler: the API stores, validates, defaults and
// admits objects (a Service gets its cluster IP, a CRD becomes Established), but nothing
// acts on them. A test that needs what a controller would write (a Service's load-balancer
// status, EndpointSlices) writes it itself.
package kubetest

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/crossfade-io/crossfade/internal/testenv"
)

// The binaries Start runs, as scripts/deps.sh names them in BinDir.
const (
	etcdBinary      = "etcd"
	apiserverBinary = "kube-apiserver"
)

const (
	// startTimeout bounds one attempt to bring the pair up. It is a failure bound, not
	// an expectation: the pair is ready in seconds, but a loaded 2-core machine running
	// several suites at once can take much longer.
	startTimeout = 2 * time.Minute
	// portAttempts is how often Start tries again when a port it picked was taken by
	// another process between picking and binding.
	portAttempts = 3
	// pollInterval is how often readiness is polled.
	pollInterval = 50 * time.Millisecond
)

// AdminUser is the user Token authenticates as; it is in system:masters.
const AdminUser = "kubetest-admin"

// errPortTaken marks a start that failed only because a picked port was taken meanwhile.
var errPortTaken = errors.New("a picked port was taken before the server bound it")

// Cluster is a running etcd + kube-apiserver pair owned by one test. Start returns it;
// the test's cleanup stops both processes and removes their files.
type Cluster struct {
	// URL is the API server's address, https://127.0.0.1:PORT.
	URL string
	// Kubeconfig is the path of a kubeconfig file for AdminUser (server, CA, token), for
	// clients that take --kubeconfig.
	Kubeconfig string
	// Token is AdminUser's bearer token.
	Token string
	// CA is the PEM certificate that signed the API server's serving certificate.
	CA []byte

	config          *rest.Config
	dir             string
	etcd, apiserver *process
	// apiserverArgs are kube-apiserver's arguments, for RestartAPIServer.
	apiserverArgs []string
}

// Start runs etcd and kube-apiserver for t and returns once the API is really ready:
// /readyz answers exactly "ok" and namespace default exists. Both processes are stopped
// (their process groups killed) and their files removed when t ends, whether it passed,
// failed or stopped half-way through Start.
//
// Start skips under -short. If the binaries are missing it fails the test under CI=true
// and skips it otherwise, saying that `make test` builds them.
func Start(t testing.TB) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("kubetest: starts etcd and kube-apiserver; not under -short")
	}
	requireBinaries(t, BinDir())
	began := time.Now()
	c, err := Launch(t.Context(), t.TempDir())
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kubetest: kube-apiserver log (last lines):\n%s", c.apiserver.Tail(30))
			t.Logf("kubetest: etcd log (last lines):\n%s", c.etcd.Tail(30))
		}
		if err := c.Stop(); err != nil {
			t.Errorf("kubetest: %v", err)
		}
	})
	t.Logf("kubetest: etcd + kube-apiserver ready at %s in %s", c.URL, time.Since(began).Round(time.Millisecond))
	return c
}

// Launch runs etcd and kube-apiserver from BinDir with their files under work, for
// programs that are not tests (benchmarks, `crossfade demo --kube`), and returns once the
// API is ready, as Start does. The caller must Stop the cluster; a failed Launch leaves
// nothing running.
func Launch(ctx context.Context, work string) (*Cluster, error) {
	bin := BinDir()
	if missing := missingBinaries(bin); len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s not built in %s: `make test` builds them (scripts/deps.sh test)", ErrNotBuilt, strings.Join(missing, " and "), bin)
	}
	var err error
	for attempt := 1; attempt <= portAttempts; attempt++ {
		var c *Cluster
		c, err = launch(ctx, bin, filepath.Join(work, strconv.Itoa(attempt)))
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	return nil, err
}

// ErrNotBuilt is Launch's error when etcd or kube-apiserver is not in BinDir.
var ErrNotBuilt = errors.New("kubetest: binaries not built")

// Stop kills both servers and waits for them to exit.
func (c *Cluster) Stop() error {
	return errors.Join(c.apiserver.stop(), c.etcd.stop())
}

// BinDir is where `make test` builds etcd and kube-apiserver:
// ${XDG_CACHE_HOME:-$HOME/.cache}/crossfade/bin, spelled as scripts/deps.sh spells it
// (os.UserCacheDir differs from it outside Linux).
func BinDir() string {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "crossfade", "bin")
}

// requireBinaries stops the test unless etcd and kube-apiserver are in dir
// (testenv.Missing): a failure under CI=true (CI builds them, so their absence is a broken
// setup that must not pass as a skip), else a skip that tells the developer how to get them.
func requireBinaries(t testing.TB, dir string) {
	t.Helper()
	missing := missingBinaries(dir)
	if len(missing) == 0 {
		return
	}
	testenv.Missingf(t, "kubetest: %s not built in %s: `make test` builds them (scripts/deps.sh test)", strings.Join(missing, " and "), dir)
}

// missingBinaries names the servers not built in dir.
func missingBinaries(dir string) []string {
	var missing []string
	for _, name := range []string{etcdBinary, apiserverBinary} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	return missing
}

// launch makes one attempt to bring the pair up in dir. A failed attempt stops its
// processes at once, so that a retry does not run beside them and nothing is left.
func launch(ctx context.Context, bin, dir string) (c *Cluster, err error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()

	f, err := writeFiles(dir)
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	apiPort := ports[2]

	var started []*process
	defer func() {
		if err != nil {
			for _, p := range started {
				_ = p.stop() // a failure to stop is reported by the cleanup
			}
		}
	}()
	etcd, err := startProcess(filepath.Join(bin, etcdBinary), filepath.Join(dir, "etcd.log"), etcdArgs(dir, etcdURL, peerURL)...)
	if err != nil {
		return nil, err
	}
	started = append(started, etcd)
	if err := waitEtcd(ctx, etcd, etcdURL); err != nil {
		return nil, err
	}
	args := apiserverArgs(dir, etcdURL, apiPort, f)
	apiserver, err := startProcess(filepath.Join(bin, apiserverBinary), filepath.Join(dir, "kube-apiserver.log"), args...)
	if err != nil {
		return nil, err
	}
	started = append(started, apiserver)

	c = &Cluster{
		URL:        "https://127.0.0.1:" + strconv.Itoa(apiPort),
		Kubeconfig: filepath.Join(dir, "kubeconfig"),
		Token:      f.token,
		CA:         f.caPEM,
		dir:        dir,
		etcd:       etcd,
		apiserver:  apiserver,

		apiserverArgs: args,
	}
	c.config = &rest.Config{
		Host:            c.URL,
		BearerToken:     c.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.CA},
		// No client-side rate limit: tests create their fixtures at full speed. A
		// component under test that takes this config sets its own limits.
		QPS: -1,
	}
	if err := c.waitReady(ctx); err != nil {
		return nil, err
	}
	if err := c.writeKubeconfig(); err != nil {
		return nil, err
	}
	return c, nil
}

// etcdArgs runs a one-member etcd with its data under dir.
func etcdArgs(dir, clientURL, peerURL string) []string {
	return []string{
		"--name=kubetest",
		"--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=kubetest=" + peerURL,
		// The data is thrown away with the test: fsync buys nothing and costs seconds
		// on a disk shared with other suites.
		"--unsafe-no-fsync",
		"--log-level=warn",
	}
}

// apiserverArgs runs kube-apiserver on 127.0.0.1:port over the etcd at etcdURL, with
// the credentials in f.
func apiserverArgs(dir, etcdURL string, port int, f files) []string {
	return []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		// The address written into the kubernetes Service's endpoints; loopback, which
		// Endpoints validation refuses, so that reconciler is off.
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + filepath.Join(dir, "apiserver-certs"),
		"--tls-cert-file=" + f.servingCert,
		"--tls-private-key-file=" + f.servingKey,
		"--token-auth-file=" + f.tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + f.saPublic,
		"--service-account-signing-key-file=" + f.saPrivate,
		// Room for the 10,000 Services of the controller benchmark.
		"--service-cluster-ip-range=10.96.0.0/16",
		// Nothing creates the default ServiceAccount without a controller-manager, and
		// this admission plugin would refuse every Pod for the lack of it.
		"--disable-admission-plugins=ServiceAccount",
		"--allow-privileged=true",
	}
}

// RestartAPIServer kills kube-apiserver and starts it again on the same port over the
// same etcd, and returns once it is ready again: what a control-plane upgrade or a crash
// does to every client, which must come through it without losing what etcd holds.
func (c *Cluster) RestartAPIServer(t testing.TB) {
	t.Helper()
	c.StopAPIServer(t)
	c.StartAPIServer(t)
}

// StopAPIServer kills kube-apiserver, leaving etcd running; StartAPIServer brings it back.
// Between the two, clients meet a refused connection, as during a control-plane restart.
func (c *Cluster) StopAPIServer(t testing.TB) {
	t.Helper()
	if err := c.apiserver.stop(); err != nil {
		t.Fatalf("kubetest: stop kube-apiserver: %v", err)
	}
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, on the same port over the
// same etcd, and returns once it is ready.
func (c *Cluster) StartAPIServer(t testing.TB) {
	t.Helper()
	log := filepath.Join(c.dir, "kube-apiserver.log")
	ctx, cancel := context.WithTimeout(t.Context(), startTimeout)
	defer cancel()
	// The killed server's port is free at once (no connection of its listener lingers),
	// but a start can still lose it to a port picked by another test meanwhile: that is
	// reported, not retried on another port, since every client holds this URL.
	p, err := startProcess(filepath.Join(BinDir(), apiserverBinary), log, c.apiserverArgs...)
	if err != nil {
		t.Fatalf("kubetest: restart kube-apiserver: %v", err)
	}
	c.apiserver = p
	if err := c.waitReady(ctx); err != nil {
		t.Fatalf("kubetest: restart kube-apiserver: %v", err)
	}
}

// Config returns a new client configuration for AdminUser; the caller may change it.
func (c *Cluster) Config() *rest.Config {
	return rest.CopyConfig(c.config)
}

// Clientset returns a typed client for AdminUser.
func (c *Cluster) Clientset(t testing.TB) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatalf("kubetest: clientset for %s: %v", c.URL, err)
	}
	return cs
}

// waitEtcd waits until etcd reports itself healthy.
func waitEtcd(ctx context.Context, etcd *process, url string) error {
	client := &http.Client{Timeout: 5 * time.Second}
	return poll(ctx, etcd, "etcd /health", func(ctx context.Context) (bool, error) {
		body, status, err := get(ctx, client, url+"/health", "")
		if err != nil || status != http.StatusOK {
			return false, nil
		}
		var health struct {
			Health string `json:"health"`
		}
		return json.Unmarshal(body, &health) == nil && health.Health == "true", nil
	})
}

// waitReady waits until /readyz answers exactly "ok" and namespace default exists: the
// API server creates that namespace in a post-start hook, and clients assume it.
func (c *Cluster) waitReady(ctx context.Context) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.CA)
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	defer client.CloseIdleConnections()
	err := poll(ctx, c.apiserver, "kube-apiserver /readyz", func(ctx context.Context) (bool, error) {
		body, status, err := get(ctx, client, c.URL+"/readyz", c.Token)
		if status == http.StatusUnauthorized {
			// A static token is known from the first request served: waiting won't help.
			return false, fmt.Errorf("the API server refuses the admin token: %s", body)
		}
		return err == nil && readyzOK(status, body), nil
	})
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		return fmt.Errorf("clientset for %s: %w", c.URL, err)
	}
	return poll(ctx, c.apiserver, "namespace default", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, nil
	})
}

// readyzOK says whether a /readyz answer means ready. Only a 200 with the body "ok"
// does: a not-ready server answers 500 with a list in which most checks read
// "[+]… ok", so looking for "ok" in the body is not enough.
func readyzOK(status int, body []byte) bool {
	return status == http.StatusOK && string(body) == "ok"
}

// poll calls ready every pollInterval until it reports true, fails, ctx ends, or p exits;
// the error then names what was awaited and, if p exited, ends with its log.
func poll(ctx context.Context, p *process, what string, ready func(context.Context) (bool, error)) error {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		ok, err := ready(ctx)
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w\n%s log (last lines):\n%s", what, context.Cause(ctx), p.name, p.Tail(40))
		case <-p.Done():
			return p.exitError(what)
		case <-tick.C:
		}
	}
}

// get fetches url, with a bearer token if one is given.
func get(ctx context.Context, client *http.Client, url, token string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return body, resp.StatusCode, err
}

// freePorts picks n distinct free loopback ports. They are held open together so that
// they differ, then released for the servers to bind; another process may take one
// meanwhile, which Start detects and retries.
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

// files are the generated credentials and the paths they were written to.
type files struct {
	caPEM               []byte
	token               string
	servingCert         string
	servingKey          string
	tokens              string
	saPublic, saPrivate string
}

// writeFiles generates the credentials the API server starts with and writes them
// under dir.
func writeFiles(dir string) (files, error) {
	var f files
	pki := filepath.Join(dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return f, fmt.Errorf("credentials: %w", err)
	}
	ca, cert, key, err := servingPKI()
	if err != nil {
		return f, err
	}
	saPriv, saPub, err := serviceAccountKey()
	if err != nil {
		return f, err
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return f, fmt.Errorf("admin token: %w", err)
	}
	f = files{
		caPEM:       ca,
		token:       hex.EncodeToString(secret),
		servingCert: filepath.Join(pki, "apiserver.crt"),
		servingKey:  filepath.Join(pki, "apiserver.key"),
		tokens:      filepath.Join(pki, "tokens.csv"),
		saPublic:    filepath.Join(pki, "sa.pub"),
		saPrivate:   filepath.Join(pki, "sa.key"),
	}
	for path, data := range map[string][]byte{
		filepath.Join(pki, "ca.crt"): ca,
		f.servingCert:                cert,
		f.servingKey:                 key,
		f.tokens:                     []byte(tokenFile(f.token)),
		f.saPublic:                   saPub,
		f.saPrivate:                  saPriv,
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return f, fmt.Errorf("credentials: %w", err)
		}
	}
	return f, nil
}

// tokenFile is the --token-auth-file line for AdminUser: token,user,uid,"groups".
func tokenFile(token string) string {
	return fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", token, AdminUser, AdminUser)
}

// writeKubeconfig writes c.Kubeconfig for AdminUser.
func (c *Cluster) writeKubeconfig() error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubetest"] = &clientcmdapi.Cluster{Server: c.URL, CertificateAuthorityData: c.CA}
	cfg.AuthInfos[AdminUser] = &clientcmdapi.AuthInfo{Token: c.Token}
	cfg.Contexts["kubetest"] = &clientcmdapi.Context{Cluster: "kubetest", AuthInfo: AdminUser, Namespace: metav1.NamespaceDefault}
	cfg.CurrentContext = "kubetest"
	if err := clientcmd.WriteToFile(*cfg, c.Kubeconfig); err != nil {
		return fmt.Errorf("kubeconfig %s: %w", c.Kubeconfig, err)
	}
	return nil
}
