package dashboard

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/crossfade-io/crossfade/internal/loopback"
)

//go:embed assets
var assets embed.FS

// Handler serves the page at "/", its assets under /assets/, and the state at
// /api/v1/state.
func (r *Recorder) Handler() http.Handler {
	mux := http.NewServeMux()
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		// Cannot happen: "assets" is embedded above, so the build guarantees it.
		static = assets
	}
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, req *http.Request) {
		http.ServeFileFS(w, req, static, "index.html")
	})
	mux.HandleFunc("GET /api/v1/state", func(w http.ResponseWriter, _ *http.Request) {
		// Encode first, so that a failure is a clean 500, not half a document; and
		// without HTML escaping, so that a detail reads "0.03 > 0.01" to curl too.
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r.snapshot()); err != nil {
			slog.Error("dashboard: encode state", "err", err)
			http.Error(w, "dashboard: encode state: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(b.Bytes())
	})
	return mux
}

// Serve listens on addr, which must be a loopback address (the page shows a production
// change: it is not for the network), serves h until ctx is done, and returns the page's
// URL once listening. wait blocks until the server has stopped.
func Serve(ctx context.Context, addr string, h http.Handler) (url string, wait func() error, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", nil, fmt.Errorf("dashboard: address %q: %w", addr, err)
	}
	if !loopback.Listen(host) {
		return "", nil, fmt.Errorf("dashboard: address %q is not a loopback address: the dashboard is served on loopback only (e.g. 127.0.0.1:8080)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("dashboard: listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: loopbackHosts(h), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		} else if err != nil {
			err = fmt.Errorf("dashboard: serve %s: %w", ln.Addr(), err)
		}
		served <- err
	}()
	// This goroutine owns the server: it stops it when ctx is done.
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
	}()
	wait = sync.OnceValue(func() error {
		<-stopped
		return <-served
	})
	return "http://" + ln.Addr().String() + "/", wait, nil
}

// loopbackHosts refuses requests whose Host is not a loopback name, so that a web page
// elsewhere cannot read the state through DNS rebinding (its name pointed at 127.0.0.1).
func loopbackHosts(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !loopback.Name(loopback.Host(req.Host)) {
			http.Error(w, "dashboard: served to loopback names only", http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, req)
	})
}
