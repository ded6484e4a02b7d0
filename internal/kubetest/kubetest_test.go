package kubetest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/crossfade-io/crossfade/internal/child"
)

// TestCluster starts a real etcd + kube-apiserver, uses it as a client would (a Service
// through the typed client, the kubeconfig file, a CRD and an object of it), then checks
// that the subtest's cleanup stopped both process groups and removed their files.
func TestCluster(t *testing.T) {
	var (
		pids []int
		dir  string
	)
	ok := t.Run("use", func(t *testing.T) {
		c := Start(t)
		pids = []int{c.etcd.Pid(), c.apiserver.Pid()}
		dir = c.dir
		ctx := t.Context()

		cs := c.Clientset(t)
		want := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: metav1.NamespaceDefault},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": "web"},
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
			},
		}
		if _, err := cs.CoreV1().Services(metav1.NamespaceDefault).Create(ctx, want, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Service: %v", err)
		}

		// Read it back through the kubeconfig file, as a command given --kubeconfig would.
		cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
		if err != nil {
			t.Fatalf("kubeconfig %s: %v", c.Kubeconfig, err)
		}
		fromFile, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fromFile.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get Service through the kubeconfig: %v", err)
		}
		if len(got.Spec.Ports) != 1 || got.Spec.Ports[0].Port != 80 || got.Spec.Ports[0].TargetPort.IntValue() != 8080 {
			t.Errorf("Service ports read back = %+v, want one port 80 → 8080", got.Spec.Ports)
		}
		// The API server allocates the cluster IP from --service-cluster-ip-range.
		if ip, err := netip.ParseAddr(got.Spec.ClusterIP); err != nil || !netip.MustParsePrefix("10.96.0.0/16").Contains(ip) {
			t.Errorf("Service cluster IP = %q, want one allocated from 10.96.0.0/16", got.Spec.ClusterIP)
		}

		c.InstallCRDs(t, filepath.Join("testdata", "widgets-crd.yaml"))
		dyn, err := dynamic.NewForConfig(c.Config())
		if err != nil {
			t.Fatal(err)
		}
		widgets := dyn.Resource(schema.GroupVersionResource{Group: "kubetest.crossfade.io", Version: "v1", Resource: "widgets"}).Namespace(metav1.NamespaceDefault)
		widget := func(name string, size int64) *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "kubetest.crossfade.io/v1",
				"kind":       "Widget",
				"metadata":   map[string]any{"name": name},
				"spec":       map[string]any{"size": size},
			}}
		}
		if _, err := widgets.Create(ctx, widget("small", 3), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Widget: %v", err)
		}
		w, err := widgets.Get(ctx, "small", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get Widget: %v", err)
		}
		if size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size"); size != 3 {
			t.Errorf("Widget spec.size read back = %d, want 3", size)
		}
		// The CRD's schema is enforced: the API server validates, not just stores.
		if _, err := widgets.Create(ctx, widget("empty", 0), metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("create Widget with spec.size 0 (minimum 1): err = %v, want Invalid", err)
		}
	})
	if pids == nil {
		if ok {
			t.Skip("the cluster did not start: see the subtest")
		}
		return
	}
	for _, pid := range pids {
		if child.GroupAlive(pid) {
			t.Errorf("process group %d still has a process after the subtest's cleanup", pid)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("cluster directory %s still there after cleanup (stat: %v)", dir, err)
	}
}

func TestReadyzOK(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   bool
	}{
		{"ready", 200, "ok", true},
		{"not ready lists passing checks", 500, "[+]ping ok\n[+]log ok\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\nreadyz check failed\n", false},
		{"verbose listing with 200", 200, "[+]ping ok\n[+]etcd ok\nreadyz check passed\n", false},
		{"ok body with an error status", 503, "ok", false},
		{"empty", 200, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := readyzOK(tc.status, []byte(tc.body)); got != tc.want {
				t.Errorf("readyzOK(%d, %q) = %v, want %v", tc.status, tc.body, got, tc.want)
			}
		})
	}
}

// stopRecorder is a testing.TB whose Skip and Fatal record the message and end the
// goroutine, as the real ones do, so that requireBinaries' verdict can be checked.
type stopRecorder struct {
	testing.TB
	skipped, failed string
}

func (r *stopRecorder) Helper()           {}
func (r *stopRecorder) Skip(args ...any)  { r.skipped = fmt.Sprint(args...); runtime.Goexit() }
func (r *stopRecorder) Fatal(args ...any) { r.failed = fmt.Sprint(args...); runtime.Goexit() }

func TestRequireBinaries(t *testing.T) {
	for _, tc := range []struct {
		name        string
		present     []string // executable files in the directory
		plain       []string // files without the executable bit
		ci          bool
		wantSkip    string // substring of the skip message; "" for no skip
		wantFailure string // substring of the failure; "" for no failure
	}{
		{name: "both built", present: []string{"etcd", "kube-apiserver"}},
		{name: "both built, CI", present: []string{"etcd", "kube-apiserver"}, ci: true},
		{name: "none, developer", wantSkip: "etcd and kube-apiserver not built in"},
		{name: "none, CI", ci: true, wantFailure: "under CI=true a missing prerequisite fails"},
		{name: "apiserver missing, developer", present: []string{"etcd"}, wantSkip: "`make test` builds them"},
		{name: "apiserver missing, CI", present: []string{"etcd"}, ci: true, wantFailure: "kube-apiserver not built"},
		{name: "not executable, CI", present: []string{"etcd"}, plain: []string{"kube-apiserver"}, ci: true, wantFailure: "kube-apiserver not built"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range tc.present {
				if err := os.WriteFile(filepath.Join(dir, name), nil, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, name := range tc.plain {
				if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("CI", map[bool]string{true: "true"}[tc.ci])
			r := &stopRecorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				requireBinaries(r, dir)
			}()
			<-done
			if got := r.skipped; (tc.wantSkip == "") != (got == "") || !strings.Contains(got, tc.wantSkip) {
				t.Errorf("skip = %q, want one containing %q", got, tc.wantSkip)
			}
			if got := r.failed; (tc.wantFailure == "") != (got == "") || !strings.Contains(got, tc.wantFailure) {
				t.Errorf("failure = %q, want one containing %q", got, tc.wantFailure)
			}
		})
	}
}

func TestReadCRDs(t *testing.T) {
	const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %s
spec: {}
`
	for _, tc := range []struct {
		name      string
		file      string // name, which sets the format by its extension
		content   string
		wantNames []string
		wantErr   string
	}{
		{name: "one", file: "a.yaml", content: fmt.Sprintf(crd, "a.example.com"), wantNames: []string{"a.example.com"}},
		{name: "several with empty documents", file: "a.yaml",
			content:   "---\n" + fmt.Sprintf(crd, "a.example.com") + "---\n# nothing\n---\n" + fmt.Sprintf(crd, "b.example.com"),
			wantNames: []string{"a.example.com", "b.example.com"}},
		{name: "json", file: "a.json",
			content:   `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"j.example.com"}}`,
			wantNames: []string{"j.example.com"}},
		{name: "another kind", file: "a.yaml",
			content: fmt.Sprintf(crd, "a.example.com") + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n",
			wantErr: `document 2: v1, Kind=Service "web" is not an apiextensions.k8s.io/v1 CustomResourceDefinition`},
		{name: "old API version", file: "a.yaml",
			content: strings.Replace(fmt.Sprintf(crd, "a.example.com"), "/v1", "/v1beta1", 1),
			wantErr: "is not an apiextensions.k8s.io/v1 CustomResourceDefinition"},
		{name: "no name", file: "a.yaml", content: "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n", wantErr: "without metadata.name"},
		{name: "empty", file: "a.yaml", content: "# nothing\n", wantErr: "no CustomResourceDefinition"},
		{name: "not YAML", file: "a.yaml", content: "kind: [", wantErr: "document 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.file)
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			crds, err := readCRDs(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("readCRDs: err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("readCRDs: %v", err)
			}
			var names []string
			for _, c := range crds {
				names = append(names, c.GetName())
			}
			if fmt.Sprint(names) != fmt.Sprint(tc.wantNames) {
				t.Errorf("CRDs read = %v, want %v", names, tc.wantNames)
			}
		})
	}
}

func TestCRDEstablished(t *testing.T) {
	cond := func(typ, status string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": "R", "message": "M"}
	}
	conditions := func(conds ...any) map[string]any { return map[string]any{"conditions": conds} }
	for _, tc := range []struct {
		name    string
		status  map[string]any // nil: no status at all
		want    bool
		wantErr bool
	}{
		{name: "no status yet"},
		// What the API server returns right after the create.
		{name: "conditions null", status: map[string]any{"conditions": nil}},
		{name: "names accepted, not yet established", status: conditions(cond("NamesAccepted", "True"), cond("Established", "False"))},
		{name: "established", status: conditions(cond("NamesAccepted", "True"), cond("Established", "True")), want: true},
		{name: "names conflict", status: conditions(cond("NamesAccepted", "False"), cond("Established", "False")), wantErr: true},
		{name: "conditions not a list", status: map[string]any{"conditions": "Established"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{}}
			if tc.status != nil {
				u.Object["status"] = tc.status
			}
			got, err := crdEstablished(u)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("crdEstablished = %v, %v; want %v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestServingPKI checks that a client holding the CA accepts the serving certificate for
// every address a test may dial.
func TestServingPKI(t *testing.T) {
	caPEM, certPEM, keyPEM, err := servingPKI()
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatalf("serving certificate and key do not pair: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA PEM holds no certificate")
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"127.0.0.1", "::1", "localhost", "kubernetes.default.svc"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
			t.Errorf("verify for %s: %v", name, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "example.com"}); err == nil {
		t.Error("verify for example.com succeeded; the certificate should name only loopback and the in-cluster names")
	}
}

// TestPortTaken runs each real server on a port another process holds, as happens when
// a port Start picked is taken before the server binds it, and checks that the failure
// is recognised as one Start retries on other ports.
func TestPortTaken(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd and kube-apiserver; not under -short")
	}
	bin := BinDir()
	requireBinaries(t, bin)
	for _, server := range []string{etcdBinary, apiserverBinary} {
		t.Run(server, func(t *testing.T) {
			dir := t.TempDir()
			held, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer held.Close()
			port := held.Addr().(*net.TCPAddr).Port
			free, err := freePorts(1)
			if err != nil {
				t.Fatal(err)
			}
			var args []string
			switch server {
			case etcdBinary:
				args = etcdArgs(dir, "http://"+held.Addr().String(), "http://127.0.0.1:"+strconv.Itoa(free[0]))
			case apiserverBinary:
				f, err := writeFiles(dir)
				if err != nil {
					t.Fatal(err)
				}
				// No etcd: the server binds its port before it needs one.
				args = apiserverArgs(dir, "http://127.0.0.1:"+strconv.Itoa(free[0]), port, f)
			}
			p, err := startProcess(filepath.Join(bin, server), filepath.Join(dir, server+".log"), args...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.stop() })
			ctx, cancel := context.WithTimeout(t.Context(), startTimeout)
			defer cancel()
			err = poll(ctx, p, server+" to exit", func(context.Context) (bool, error) { return false, nil })
			if !errors.Is(err, errPortTaken) {
				t.Fatalf("%s on a taken port: err = %v, want one wrapping errPortTaken", server, err)
			}
		})
	}
}
