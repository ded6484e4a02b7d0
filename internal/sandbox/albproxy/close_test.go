package albproxy

import (
	"context"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"
)

// TestCloseLeavesNothing runs traffic, health checks, a drain and a request in flight,
// then closes the proxy: its goroutines end and its ports are free again. There is no
// goleak dependency, so goroutines are counted, with patience for those that end
// asynchronously (connection readers).
func TestCloseLeavesNothing(t *testing.T) {
	settle := func() int { runtime.GC(); time.Sleep(20 * time.Millisecond); return runtime.NumGoroutine() }
	baseline := settle()

	a, b := newBackend(t, "a"), newBackend(t, "b")
	cfg := oneListener(forward("ga", 1, "gb", 1), nil, tgOf("ga", time.Minute, a), tgOf("gb", 0, b))
	cfg.LoadBalancers[0].Listeners = append(cfg.LoadBalancers[0].Listeners, Listener{ID: "l2", DefaultAction: forward("gb", 1)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := New(Options{})
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	waitHealth(t, p, "ga", StateHealthy, a.addr())
	waitHealth(t, p, "gb", StateHealthy, b.addr())
	tr := &http.Transport{Proxy: nil}
	c := &http.Client{Transport: tr}
	sendLoop(c, "http://"+p.Addr("l1")+"/", 200, 4)
	cfg.TargetGroups[0].Targets = nil // a drains for a minute
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	hanging := make(chan result, 1)
	go func() { hanging <- get(c, "http://"+p.Addr("l2")+"/?sleep=1m", "") }()
	for b.inflight.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	addrs := []string{p.Addr("l1"), p.Addr("l2")}

	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return within 5s")
	}
	if r := <-hanging; r.err == nil {
		t.Errorf("request in flight at Close: %+v, want its connection closed", r)
	}
	if err := p.Apply(cfg); err == nil {
		t.Error("Apply after Close succeeded")
	}
	for _, addr := range addrs {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("port %s not freed: %v", addr, err)
			continue
		}
		ln.Close()
	}

	tr.CloseIdleConnections()
	a.srv.Close()
	b.srv.Close()
	deadline := time.Now().Add(5 * time.Second)
	for n := settle(); n > baseline; n = settle() {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after Close, %d before:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
		}
	}
}

// TestContextEndCloses: when Start's context ends, the proxy closes itself.
func TestContextEndCloses(t *testing.T) {
	a := newBackend(t, "a")
	ctx, cancel := context.WithCancel(context.Background())
	p := New(Options{})
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(oneListener(forward("g", 1), nil, tgOf("g", 0, a))); err != nil {
		t.Fatal(err)
	}
	addr := p.Addr("l1")
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatal("listener still open 5s after the context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = p.Close()
}
