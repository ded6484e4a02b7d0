package dashboard

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"sync"
	"time"
)

//go:embed assets
var assets embed.FS

// Handler serves the page at "/", its assets under /assets/, and the state at
// /api/v1/state.
func (r *Recorder) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, req *http.Request) {
		http.ServeFileFS(w, req, static, "index.html")
	})
	mux.HandleFunc("GET /api/v1/state", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(r.snapshot())
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
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", nil, fmt.Errorf("dashboard: address %q: want a loopback address such as 127.0.0.1:8080", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("dashboard: listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
	}()
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
		return <-done
	})
	return "http://" + ln.Addr().String() + "/", wait, nil
}
