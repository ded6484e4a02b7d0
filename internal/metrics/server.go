package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Paths the Handler serves.
const (
	PathMetrics = "/metrics"
	PathHealthz = "/healthz"
	PathReadyz  = "/readyz"
)

// ShutdownTimeout is how long Serve lets requests in flight finish once its context ends,
// before it closes their connections.
const ShutdownTimeout = 5 * time.Second

// Handler serves:
//
//   - /metrics: the metrics in Prometheus' text format;
//   - /healthz: 200 "ok" while the process can answer at all (a liveness probe);
//   - /readyz: 200 "ok" when ready returns nil, else 503 "not ready: " and its error. What
//     "ready" means is the caller's: e.g. informers synced and, on the leader, the first
//     reconcile done; a standby replica is ready too. A nil ready is always ready.
//
// ready is called on every probe, concurrently with everything else: it must be cheap
// and safe for concurrent use.
func (m *Metrics) Handler(ready func() error) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+PathMetrics, promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		// One collector that fails must not blank the whole scrape.
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg, // counts promhttp_metric_handler_errors_total
	}))
	mux.HandleFunc("GET "+PathHealthz, func(w http.ResponseWriter, _ *http.Request) {
		plain(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET "+PathReadyz, func(w http.ResponseWriter, _ *http.Request) {
		if ready != nil {
			if err := ready(); err != nil {
				plain(w, http.StatusServiceUnavailable, "not ready: "+err.Error()+"\n")
				return
			}
		}
		plain(w, http.StatusOK, "ok")
	})
	return mux
}

// plain answers with a text body. "ok" has no newline, as kube-apiserver writes it, so
// a probe or script may compare the body exactly.
func plain(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// Serve answers on ln with h until ctx ends, then lets requests in flight finish for up
// to ShutdownTimeout and returns nil. It returns early with an error if serving fails.
// It closes ln; every goroutine it starts has ended when it returns. log receives the
// HTTP server's own errors (nil discards them).
func Serve(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		// Requests get their own context: the server's shutdown, not ctx, ends them.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("metrics server: requests still in flight at shutdown, closing them", "addr", ln.Addr().String(), "err", err)
		_ = srv.Close()
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	}
	return nil
}
