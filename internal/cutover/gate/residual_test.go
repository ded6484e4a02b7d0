package gate

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

func TestResidualRateFromCounter(t *testing.T) {
	var total atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "# TYPE app_requests_total counter\napp_requests_total{code=\"200\"} %d\napp_requests_total{code=\"500\"} 1\n# TYPE up gauge\nup 1\n", total.Load())
	}))
	defer srv.Close()
	r, err := NewResidual(spec.Retire{Metrics: srv.URL + "/metrics", Counter: "app_requests_total"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	total.Store(100)
	if _, ok, err := r.Rate(ctx); ok || err != nil {
		t.Fatalf("first scrape: ok %t, %v; want only a baseline", ok, err)
	}
	time.Sleep(200 * time.Millisecond)
	total.Store(120)
	rate, ok, err := r.Rate(ctx)
	if !ok || err != nil || rate < 50 || rate > 110 {
		t.Errorf("20 requests in ~0.2 s: rate %.1f/s ok %t err %v", rate, ok, err)
	}
	total.Store(5) // the process restarted
	if _, ok, err := r.Rate(ctx); ok || err != nil {
		t.Errorf("after a counter reset: ok %t, %v; want a new baseline", ok, err)
	}
	time.Sleep(100 * time.Millisecond)
	if rate, ok, _ := r.Rate(ctx); !ok || rate != 0 {
		t.Errorf("no requests: rate %v ok %t, want 0", rate, ok)
	}

	for _, tc := range []struct{ counter, want string }{
		{"missing_total", "no metric missing_total"},
		{"up", "up is a GAUGE, want a counter"},
	} {
		r, _ := NewResidual(spec.Retire{Metrics: srv.URL + "/metrics", Counter: tc.counter})
		if _, _, err := r.Rate(ctx); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("counter %s: %v, want %q", tc.counter, err, tc.want)
		}
	}
}

// TestResidualRateNotACount: a counter scraped as NaN or ±Inf is an error, never a rate (nor
// a baseline that every later rate would be computed from).
func TestResidualRateNotACount(t *testing.T) {
	var value atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "# TYPE app_requests_total counter\napp_requests_total %s\n", value.Load())
	}))
	defer srv.Close()
	ctx := context.Background()
	for _, v := range []string{"NaN", "+Inf", "-Inf"} {
		r, err := NewResidual(spec.Retire{Metrics: srv.URL + "/metrics", Counter: "app_requests_total"})
		if err != nil {
			t.Fatal(err)
		}
		value.Store("100")
		if _, ok, err := r.Rate(ctx); ok || err != nil {
			t.Fatalf("%s: first scrape: ok %t, %v; want only a baseline", v, ok, err)
		}
		value.Store(v)
		if rate, ok, err := r.Rate(ctx); ok || err == nil || !strings.Contains(err.Error(), "not a count") {
			t.Errorf("counter %s: rate %v ok %t err %v; want an error saying it is not a count", v, rate, ok, err)
		}
	}
}
