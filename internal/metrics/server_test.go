package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

func TestHealthAndReadiness(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ready     func() error
		wantReady int
		wantBody  string
	}{
		{"no check", nil, http.StatusOK, "ok"},
		{"check passes", func() error { return nil }, http.StatusOK, "ok"},
		{"check fails", func() error { return errors.New("informers not synced: Ingress") },
			http.StatusServiceUnavailable, "not ready: informers not synced: Ingress\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := serve(t, New().Handler(tc.ready))
			// Liveness never depends on readiness: a pod that is not ready yet must not
			// be killed for it.
			if code, body := get(t, base+PathHealthz); code != http.StatusOK || body != "ok" {
				t.Errorf("healthz = %d %q, want 200 \"ok\"", code, body)
			}
			if code, body := get(t, base+PathReadyz); code != tc.wantReady || body != tc.wantBody {
				t.Errorf("readyz = %d %q, want %d %q", code, body, tc.wantReady, tc.wantBody)
			}
		})
	}
}

// TestReadinessIsCheckedAtEveryProbe: a replica becomes ready (first reconcile done)
// and may become unready again; the answer follows the check, not the first call.
func TestReadinessIsCheckedAtEveryProbe(t *testing.T) {
	var ready atomic.Bool
	base := serve(t, New().Handler(func() error {
		if !ready.Load() {
			return errors.New("first reconcile not done")
		}
		return nil
	}))
	for _, want := range []int{http.StatusServiceUnavailable, http.StatusOK, http.StatusServiceUnavailable} {
		if code, body := get(t, base+PathReadyz); code != want {
			t.Errorf("readyz = %d %q, want %d", code, body, want)
		}
		ready.Store(!ready.Load())
	}
}

// TestServeStopsWithContext: Serve returns nil once its context ends, and the port no
// longer answers.
func TestServeStopsWithContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, New().Handler(nil), nil) }()
	if code, _ := get(t, "http://"+addr+PathHealthz); code != http.StatusOK {
		t.Fatalf("healthz = %d before stop", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve after cancel = %v, want nil", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("port still accepts connections after Serve returned")
	}
}

// TestServeReportsFailure: a listener that cannot accept is an error, not a silent nil
// (the caller would run with no metrics and no probes).
func TestServeReportsFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if err := Serve(context.Background(), ln, New().Handler(nil), nil); err == nil {
		t.Error("Serve on a closed listener = nil, want an error")
	}
}

func TestOtherMethodsAreRefused(t *testing.T) {
	base := serve(t, New().Handler(nil))
	resp, err := http.Post(base+PathHealthz, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST %s = %d, want 405", PathHealthz, resp.StatusCode)
	}
}
