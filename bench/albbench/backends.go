package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// healthPath is what the albproxy health-checks; it is not counted as traffic.
const healthPath = "/healthz"

// backend is one small HTTP server on 127.0.0.1 answering every request with the same
// small body. It counts the requests it serves, so the report can show how each proxy
// spread them.
type backend struct {
	name   string
	group  string
	ln     net.Listener
	srv    *http.Server
	body   []byte
	served atomic.Int64
}

// startBackends starts two backends per target group, in the order groups are given.
func startBackends(groups []string, bodySize int) ([]*backend, error) {
	body := []byte(strings.Repeat("x", max(bodySize-1, 0)) + "\n")
	var out []*backend
	for _, g := range groups {
		for i := 1; i <= 2; i++ {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				closeBackends(out)
				return nil, fmt.Errorf("backend %s-%d: listen: %w", g, i, err)
			}
			b := &backend{name: fmt.Sprintf("%s-%d", g, i), group: g, ln: ln, body: body}
			b.srv = &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
			go func() { _ = b.srv.Serve(ln) }()
			out = append(out, b)
		}
	}
	return out, nil
}

// ServeHTTP answers the fixed body. The Content-Type is set so that net/http does not
// sniff the body on every request.
func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	if r.URL.Path == healthPath {
		_, _ = w.Write([]byte("ok\n"))
		return
	}
	b.served.Add(1)
	_, _ = w.Write(b.body)
}

func (b *backend) addr() string { return b.ln.Addr().String() }

// closeBackends shuts every backend down, closing its connections.
func closeBackends(bs []*backend) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for _, b := range bs {
		if err := b.srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("backend %s: %w", b.name, err))
			_ = b.srv.Close()
		}
	}
	return errors.Join(errs...)
}

// servedCounts reads every backend's request count, in backend order.
func servedCounts(bs []*backend) []int64 {
	out := make([]int64, len(bs))
	for i, b := range bs {
		out[i] = b.served.Load()
	}
	return out
}
