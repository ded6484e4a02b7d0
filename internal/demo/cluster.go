package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/source"
	"github.com/crossfade-io/crossfade/internal/source/manifest"
)

// cluster is one simulated cluster: an HTTP backend on its own loopback address serving
// its app version, and a publisher that syncs its own manifests directory into the zone
// under its own owner id and set identifier, as its in-cluster crossfade would.
type cluster struct {
	id, version, ip string
	port            int
	// weight is the weight its manifests ask for.
	weight    int64
	manifests string
	srv       *http.Server
	ln        net.Listener
	served    atomic.Int64
	syncer    *controller.Syncer
	src       *source.Source
	log       *slog.Logger
	out       io.Writer
	// conflicts is the last number of conflicts the publisher reported, to log changes only.
	conflicts int
}

// serviceManifest is what the cluster's manifests directory holds: a LoadBalancer
// Service whose annotations ask for its member of the weighted name.
const serviceManifest = `apiVersion: v1
kind: Service
metadata:
  name: app
  namespace: shop
  annotations:
    external-dns.alpha.kubernetes.io/hostname: %s
    external-dns.alpha.kubernetes.io/set-identifier: %s
    external-dns.alpha.kubernetes.io/aws-weight: "%d"
    external-dns.alpha.kubernetes.io/ttl: "%d"
spec:
  type: LoadBalancer
  ports: [{name: http, port: %d}]
status:
  loadBalancer:
    ingress: [{ip: %s}]
`

// startCluster listens on ip:port (port 0 picks one), writes the cluster's manifests
// under dir, and serves the app.
func startCluster(dns provider.Provider, dir, id, version, ip string, port int, weight int64, ttl int, out io.Writer, log *slog.Logger) (*cluster, error) {
	reg, err := registry.New(registry.Config{OwnerID: id})
	if err != nil {
		return nil, err
	}
	src, err := source.New(source.Config{})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(port)))
	if err != nil {
		return nil, fmt.Errorf("cluster %s: listen %s:%d: %w", id, ip, port, err)
	}
	c := &cluster{id: id, version: version, ip: ip, port: ln.Addr().(*net.TCPAddr).Port, weight: weight, ln: ln, src: src, log: log.With("cluster", id), out: out}
	// The manifest names the port just bound.
	if err := c.writeManifests(dir, ttl); err != nil {
		ln.Close()
		return nil, err
	}
	// The publisher's own logs (a conflict at every sync) would drown the demo's output;
	// publishLoop says what matters once.
	c.syncer = &controller.Syncer{Provider: dns, Registry: reg, Policy: changes.Sync, Logger: slog.New(slog.DiscardHandler)}
	c.srv = &http.Server{Handler: appHandler(id, version, &c.served), ReadHeaderTimeout: 5 * time.Second}
	return c, nil
}

// appHandler is a cluster's app: "/" answers its version and names the cluster in
// X-Crossfade-Cluster, counted in served; /metrics exposes that count for the retire
// check; /healthz answers 200 uncounted, for the ALB's health checks.
func appHandler(id, version string, served *atomic.Int64) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# HELP demo_requests_total Requests the app served.\n# TYPE demo_requests_total counter\ndemo_requests_total{cluster=%q} %d\n", id, served.Load())
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		w.Header().Set("X-Crossfade-Cluster", id)
		fmt.Fprintf(w, "app %s from cluster %s\n", version, id)
	})
	return mux
}

// writeManifests writes the cluster's Service into its manifests directory under dir.
func (c *cluster) writeManifests(dir string, ttl int) error {
	c.manifests = filepath.Join(dir, c.id, "manifests")
	if err := os.MkdirAll(c.manifests, 0o755); err != nil {
		return fmt.Errorf("cluster %s: %w", c.id, err)
	}
	svc := fmt.Sprintf(serviceManifest, appName, c.id, c.weight, ttl, c.port, c.ip)
	if err := os.WriteFile(filepath.Join(c.manifests, "service.yaml"), []byte(svc), 0o644); err != nil {
		return fmt.Errorf("cluster %s: %w", c.id, err)
	}
	return nil
}

// serve runs the backend until close.
func (c *cluster) serve() error {
	if err := c.srv.Serve(c.ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("cluster %s: %w", c.id, err)
	}
	return nil
}

func (c *cluster) close() error { return c.srv.Close() }

// url is the backend's address, bypassing DNS.
func (c *cluster) url(path string) string {
	return fmt.Sprintf("http://%s%s", net.JoinHostPort(c.ip, fmt.Sprint(c.port)), path)
}

// publish syncs the cluster's manifests into the zone once.
func (c *cluster) publish(ctx context.Context) (*controller.Report, error) {
	loaded, err := manifest.Load(c.manifests)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.id, err)
	}
	res := c.src.Endpoints(loaded.Snapshot)
	// A manifest edited into a mistake while the demo runs costs nothing published.
	keep := controller.Keep{Resources: res.Held, All: len(loaded.Errors) > 0}
	rep, err := c.syncer.SyncKeeping(ctx, res.Endpoints, keep)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: sync: %w", c.id, err)
	}
	return rep, rep.Err()
}

// publishLoop syncs every interval until ctx is done, logging when the publisher starts
// or stops being held back by the cutover's weight authority.
func (c *cluster) publishLoop(ctx context.Context, interval time.Duration) {
	every(ctx, interval, interval, func() {
		rep, err := c.publish(ctx)
		if err != nil {
			if ctx.Err() == nil {
				c.log.Warn("publish", "err", err)
			}
			return
		}
		conflicts := rep.Conflicts()
		if len(conflicts) != c.conflicts && len(conflicts) > 0 {
			reasons := make([]string, len(conflicts))
			for i, cf := range conflicts {
				reasons[i] = cf.Reason
			}
			// Once per change, not every sync: this is the point of the weight authority.
			fmt.Fprintf(c.out, "%s publisher (owner %s): %s\n", time.Now().UTC().Format("15:04:05"), c.id, strings.Join(reasons, "; "))
		}
		c.conflicts = len(conflicts)
	})
}
