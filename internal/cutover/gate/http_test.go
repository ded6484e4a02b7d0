package gate

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// backend is one "cluster" of the test service on its own loopback address.
type backend struct {
	name      string
	status    atomic.Int64 // the status to answer with; 0 means 200
	delay     atomic.Int64 // nanoseconds to wait before answering
	failEvery atomic.Int64 // when n > 0, every n-th request gets 500
	served    atomic.Int64
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := b.served.Add(1)
	if d := time.Duration(b.delay.Load()); d > 0 {
		// Waits on the request's context too, so that closing the server ends it.
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set(ClusterHeader, b.name)
	status := int(b.status.Load())
	if k := b.failEvery.Load(); k > 0 && n%k == 0 {
		status = http.StatusInternalServerError
	}
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	fmt.Fprintf(w, "%s\n", b.name)
}

// serve runs h on ln until the test ends, and waits for the server to stop.
func serve(t *testing.T, ln net.Listener, h http.Handler, tlsCfg *tls.Config) {
	t.Helper()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, TLSConfig: tlsCfg}
	done := make(chan error, 1)
	go func() {
		if tlsCfg != nil {
			done <- srv.ServeTLS(ln, "", "")
		} else {
			done <- srv.Serve(ln)
		}
	}()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("server on %s: %v", ln.Addr(), err)
		}
	})
}

// listenPair listens on 127.0.0.10 and 127.0.0.20 on one port number, as two clusters
// behind one public name and port would, retrying when the second address has the port
// taken.
func listenPair(t *testing.T) (port int, blue, green net.Listener) {
	t.Helper()
	for range 20 {
		a, err := net.Listen("tcp", "127.0.0.10:0")
		if err != nil {
			t.Fatalf("listen 127.0.0.10: %v", err)
		}
		port = a.Addr().(*net.TCPAddr).Port
		b, err := net.Listen("tcp", net.JoinHostPort("127.0.0.20", strconv.Itoa(port)))
		if err == nil {
			return port, a, b
		}
		a.Close()
	}
	t.Fatal("no port free on both 127.0.0.10 and 127.0.0.20 after 20 tries")
	return 0, nil, nil
}

// fixture is a service on two clusters behind app.example.com, weighted 1:1 in a sandbox.
type fixture struct {
	zone        testZone
	port        int
	blue, green *backend
}

func startService(t *testing.T) fixture {
	t.Helper()
	z := startZone(t)
	port, lb, lg := listenPair(t)
	f := fixture{zone: z, port: port, blue: &backend{name: "blue"}, green: &backend{name: "green"}}
	serve(t, lb, f.blue, nil)
	serve(t, lg, f.green, nil)
	z.setWeighted(t, "app.example.com", "A",
		member{id: "blue", weight: 1, values: []string{"127.0.0.10"}},
		member{id: "green", weight: 1, values: []string{"127.0.0.20"}})
	return f
}

// gate is an HTTP gate spec for the fixture: public name through the sandbox's DNS, and
// each cluster directly.
func (f fixture) gate() spec.HTTPGate {
	return spec.HTTPGate{
		URL:      fmt.Sprintf("http://app.example.com:%d/", f.port),
		Resolver: f.zone.sb.DNSAddr(),
		Clusters: map[string]string{
			"blue":  fmt.Sprintf("http://127.0.0.10:%d/", f.port),
			"green": fmt.Sprintf("http://127.0.0.20:%d/", f.port),
		},
		Requests: 20,
		Timeout:  spec.Duration{Duration: 2 * time.Second},
	}
}

var blueToGreen = Step{Index: 1, From: "blue", To: "green", Weights: map[string]int64{"blue": 1, "green": 1}}

func check(t *testing.T, g spec.HTTPGate) Result {
	t.Helper()
	h, err := NewHTTP("http-1", g)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := h.Check(context.Background(), blueToGreen)
	t.Logf("%s: pass=%v err=%q detail: %s", time.Since(start).Round(time.Millisecond), r.Pass, r.Err, r.Detail)
	return r
}

func TestHTTPGateHealthy(t *testing.T) {
	f := startService(t)
	g := f.gate()
	g.Requests = 40 // both clusters seen through the name but with chance 2⁻³⁹
	// The median, not p99 (the slowest of 40): one scheduling hiccup on a loaded machine
	// must not fail the comparison.
	g.Latency = &spec.Latency{Percentile: 50, Max: spec.Duration{Duration: time.Second}}
	g.NoWorseThanFrom = true
	r := check(t, g)
	if !r.Pass || r.Err != "" {
		t.Fatalf("want pass: %+v", r)
	}
	for _, k := range []string{"public.cluster.blue", "public.cluster.green"} {
		if r.Values[k] == 0 {
			t.Errorf("%s = 0: the public name did not reach both clusters: %v", k, r.Values)
		}
	}
	if got := r.Values["public.cluster.blue"] + r.Values["public.cluster.green"]; got != 40 {
		t.Errorf("public requests served = %v, want 40", got)
	}
	for _, k := range []string{"public.success_ratio", "from.success_ratio", "to.success_ratio"} {
		if r.Values[k] != 1 {
			t.Errorf("%s = %v, want 1", k, r.Values[k])
		}
	}
	if r.Values["to.cluster.green"] != 40 || r.Values["from.cluster.blue"] != 40 {
		t.Errorf("direct probes reached the wrong cluster: %v", r.Values)
	}
	if _, ok := r.Values["to.p50_ms"]; !ok {
		t.Errorf("no to.p50_ms in %v", r.Values)
	}
}

// Without a resolver the system resolver is used; an IP literal needs none.
func TestHTTPGateSystemResolver(t *testing.T) {
	f := startService(t)
	r := check(t, spec.HTTPGate{URL: fmt.Sprintf("http://127.0.0.10:%d/", f.port), Requests: 5})
	if !r.Pass || r.Values["public.cluster.blue"] != 5 {
		t.Fatalf("want pass with 5 answers from blue: %+v", r)
	}
}

func TestHTTPGateFailures(t *testing.T) {
	f := startService(t)
	for _, tc := range []struct {
		name   string
		setup  func()
		gate   func(*spec.HTTPGate)
		detail []string
	}{
		{
			name:   "green answers 500",
			setup:  func() { f.green.status.Store(500) },
			detail: []string{"green (to): 0/20 ok, want ≥ 100% (20× HTTP 500)", "public: "},
		},
		{
			name:  "green slower than the latency bound",
			setup: func() { f.green.delay.Store(int64(250 * time.Millisecond)) },
			gate: func(g *spec.HTTPGate) {
				g.Requests = 8
				g.Latency = &spec.Latency{Percentile: 99, Max: spec.Duration{Duration: 100 * time.Millisecond}}
			},
			detail: []string{"green (to): p99 2", "ms > 100ms"},
		},
		{
			name:  "green slower than blue",
			setup: func() { f.green.delay.Store(int64(100 * time.Millisecond)) },
			gate: func(g *spec.HTTPGate) {
				g.Requests = 8
				g.NoWorseThanFrom = true
			},
			detail: []string{"green (to) slower than blue (from): p99 1", "ms > 1.2×"},
		},
		{
			name:  "green fails more often than blue",
			setup: func() { f.green.failEvery.Store(2) },
			gate: func(g *spec.HTTPGate) {
				g.URL = "" // so that every other request green sees is a direct one
				g.NoWorseThanFrom = true
				g.MinSuccessRatio = ptr(0.4)
			},
			detail: []string{"green (to) worse than blue (from): 10/20 ok vs 20/20"},
		},
		{
			name:  "timeout",
			setup: func() { f.green.delay.Store(int64(time.Second)) },
			gate: func(g *spec.HTTPGate) {
				g.Requests = 4
				g.Timeout = spec.Duration{Duration: 100 * time.Millisecond}
			},
			detail: []string{"green (to): 0/4 ok, want ≥ 100% (4× timeout after 100ms)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.green.status.Store(0)
			f.green.delay.Store(0)
			f.green.failEvery.Store(0)
			tc.setup()
			g := f.gate()
			if tc.gate != nil {
				tc.gate(&g)
			}
			r := check(t, g)
			if r.Pass || r.Err != "" {
				t.Fatalf("want a failure of the check (not of running it): %+v", r)
			}
			for _, s := range tc.detail {
				if !strings.Contains(r.Detail, s) {
					t.Errorf("Detail lacks %q: %s", s, r.Detail)
				}
			}
			problems, _, _ := strings.Cut(r.Detail, " — ")
			for _, p := range strings.Split(problems, "; ") {
				if strings.HasPrefix(p, "blue") {
					t.Errorf("blue is healthy but blamed: %s", p)
				}
			}
		})
	}
}

func TestHTTPGateUnresolvable(t *testing.T) {
	f := startService(t)
	g := f.gate()
	g.URL = fmt.Sprintf("http://nothing.example.com:%d/", f.port)
	g.Clusters = nil
	g.Requests = 2
	r := check(t, g)
	if r.Pass || !strings.Contains(r.Detail, "public: 0/2 ok") || !strings.Contains(r.Detail, "NXDOMAIN") {
		t.Fatalf("want a failure naming NXDOMAIN: %+v", r)
	}
}

// Over HTTPS the public probe dials the address the resolver gives but keeps the URL's
// host for SNI and certificate verification.
func TestHTTPGateTLSKeepsServerName(t *testing.T) {
	z := startZone(t)
	cert, pool := selfSigned(t, "app.example.com")
	ln, err := net.Listen("tcp", "127.0.0.10:0")
	if err != nil {
		t.Fatal(err)
	}
	var sni, host atomic.Value
	serve(t, ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sni.Store(r.TLS.ServerName)
		host.Store(r.Host)
	}), &tls.Config{Certificates: []tls.Certificate{cert}})
	z.setWeighted(t, "app.example.com", "A", member{id: "blue", weight: 1, values: []string{"127.0.0.10"}})
	port := ln.Addr().(*net.TCPAddr).Port
	h, err := NewHTTP("https", spec.HTTPGate{URL: fmt.Sprintf("https://app.example.com:%d/", port), Resolver: z.sb.DNSAddr(), Requests: 2})
	if err != nil {
		t.Fatal(err)
	}
	h.publicClient.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: pool}
	r := h.Check(context.Background(), blueToGreen)
	if !r.Pass {
		t.Fatalf("want pass: %+v", r)
	}
	if sni.Load() != "app.example.com" || host.Load() != fmt.Sprintf("app.example.com:%d", port) {
		t.Errorf("server saw SNI %v, Host %v; want the URL's host", sni.Load(), host.Load())
	}
}

// selfSigned makes a certificate for name and a pool that trusts it.
func selfSigned(t *testing.T, name string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
