package controller

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/metrics"
	"github.com/crossfade-io/crossfade/internal/source"
)

// TestBackoffSchedule: the waits after failures in a row double from base up to max, each
// drawn from the upper half of its ceiling, and a success starts over from base.
func TestBackoffSchedule(t *testing.T) {
	s := time.Second
	cases := []struct {
		name      string
		base, max time.Duration
		rand      float64
		// steps: "f" a failure (its wait is the next want), "s" a success.
		steps string
		want  []time.Duration
	}{
		{"defaults, lowest draw", 0, 0, 0, "ffffffffffff",
			[]time.Duration{s / 2, s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, 64 * s, 128 * s, 150 * s, 150 * s, 150 * s}},
		{"defaults, highest draw", 0, 0, 0.999, "fff",
			[]time.Duration{999500 * time.Microsecond, 1999 * time.Millisecond, 3998 * time.Millisecond}},
		{"middle draw", 100 * time.Millisecond, time.Second, 0.5, "fffff",
			[]time.Duration{75 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond, 600 * time.Millisecond, 750 * time.Millisecond}},
		{"a success starts over", s, time.Minute, 0, "fffsff",
			[]time.Duration{s / 2, s, 2 * s, s / 2, s}},
		{"max below base is base", 10 * s, s, 0, "fff",
			[]time.Duration{5 * s, 5 * s, 5 * s}},
		{"max not a power of two of base", 3 * s, 10 * s, 0, "ffff",
			[]time.Duration{1500 * time.Millisecond, 3 * s, 5 * s, 5 * s}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBackoff(c.base, c.max, func() float64 { return c.rand })
			var got []time.Duration
			for _, step := range c.steps {
				if step == 's' {
					b.succeed()
					continue
				}
				got = append(got, b.fail())
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %d waits, want %d", len(got), len(c.want))
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("wait after failure %d: %v, want %v (all: %v)", i+1, got[i], c.want[i], got)
				}
			}
		})
	}
}

// TestBackoffNeverOverflows: however long the failures last, the ceiling stays at max.
func TestBackoffNeverOverflows(t *testing.T) {
	b := newBackoff(time.Second, DefaultBackoffMax, func() float64 { return 0.999999 })
	for n := range 10_000 {
		d := b.fail()
		if d <= 0 || d > DefaultBackoffMax {
			t.Fatalf("wait after %d failures: %v, want in (0, %v]", n+1, d, DefaultBackoffMax)
		}
	}
}

// TestBackoffMaxStarts: the bound on reconciles (and so listings of a failing zone) in a
// window is the count of floors that fit in it, the first reconcile at its start.
func TestBackoffMaxStarts(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name      string
		base, max time.Duration
		window    time.Duration
		want      int
	}{
		{"no time", 100 * ms, time.Second, 0, 1},
		{"just before the first floor", 100 * ms, time.Second, 49 * ms, 1},
		{"the first floor", 100 * ms, time.Second, 50 * ms, 2},
		// floors 50, 100, 200, 400, 500, 500…: sums 50, 150, 350, 750, 1250, 1750
		{"into the cap", 100 * ms, time.Second, 1750 * ms, 7},
		{"the issue's minute, defaults", DefaultBackoffBase, DefaultBackoffMax, time.Minute, 7},
		{"the issue's minute, old behaviour's cadence", 400 * ms, 400 * ms, time.Minute, 301},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := newBackoff(c.base, c.max, nil).maxStarts(c.window); got != c.want {
				t.Errorf("maxStarts(%v) = %d, want %d", c.window, got, c.want)
			}
		})
	}
}

// signals is an objects source whose Changed channel the test fills, as the Watcher's is
// filled (one pending signal at most).
type signals struct{ c chan struct{} }

func (s signals) Changed() <-chan struct{}           { return s.c }
func (s signals) Snapshot() (*source.Snapshot, bool) { return &source.Snapshot{}, true }

// TestWaitBackoffCoalesces: during a backoff, a change, the interval's tick and a hold's
// change start nothing; when it ends, wait returns once, with all of them taken as read
// (one reconcile answers them), and a stop ends the backoff at once.
func TestWaitBackoffCoalesces(t *testing.T) {
	cases := []struct {
		name                  string
		change, tick, holding bool
		stop                  bool
	}{
		{name: "a change", change: true},
		{name: "the tick", tick: true},
		{name: "a hold", holding: true},
		{name: "all three", change: true, tick: true, holding: true},
		{name: "nothing: the retry alone"},
		{name: "a stop during the backoff", change: true, tick: true, holding: true, stop: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs := signals{c: make(chan struct{}, 1)}
			holds := NewHoldProber(HoldProbeConfig{APIEndpoint: "http://127.0.0.1:1"})
			ctl, err := New(objs, Config{Syncer: &Syncer{}, Source: &source.Source{}, Holds: holds})
			if err != nil {
				t.Fatal(err)
			}
			tick := make(chan time.Time, 1)
			retry := make(chan time.Time)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan bool)
			go func() { done <- ctl.waitBackoff(ctx, tick, retry) }()
			if c.change {
				objs.c <- struct{}{}
			}
			if c.tick {
				tick <- time.Now()
			}
			if c.holding {
				holds.changed <- struct{}{}
			}
			// Whatever wait does with them, it does at once; a wait that reconciles on them
			// returns here.
			select {
			case got := <-done:
				t.Fatalf("wait returned %v during the backoff", got)
			case <-time.After(50 * time.Millisecond):
			}
			if c.stop {
				cancel()
				if <-done {
					t.Fatal("wait reported true after a stop")
				}
				return
			}
			retry <- time.Now()
			if !<-done {
				t.Fatal("wait reported false at the end of the backoff")
			}
			for name, pending := range map[string]bool{"change": len(objs.c) > 0, "tick": len(tick) > 0, "hold": len(holds.changed) > 0} {
				if pending {
					t.Errorf("a %s that came during the backoff is still pending: it would start a second reconcile", name)
				}
			}
		})
	}
}

// TestWaitHealthyUnchanged: without a backoff, a change still waits for quiet and a tick
// or a hold still returns at once.
func TestWaitHealthyUnchanged(t *testing.T) {
	objs := signals{c: make(chan struct{}, 1)}
	holds := NewHoldProber(HoldProbeConfig{APIEndpoint: "http://127.0.0.1:1"})
	ctl, err := New(objs, Config{Syncer: &Syncer{}, Source: &source.Source{}, Holds: holds, Debounce: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tick := make(chan time.Time, 1)
	for _, send := range []func(){
		func() { objs.c <- struct{}{} },
		func() { tick <- time.Now() },
		func() { holds.changed <- struct{}{} },
	} {
		send()
		if !ctl.wait(context.Background(), tick) {
			t.Fatal("wait reported false without a stop")
		}
	}
}

// TestBackoffMetricsExposed: the failures and the backoff are on /metrics under their
// names, the backoff back at 0 after a success.
func TestBackoffMetricsExposed(t *testing.T) {
	m := metrics.New()
	bm, err := NewBackoffMetrics(m.Registry())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewBackoffMetrics(m.Registry()); err == nil {
		t.Error("registering the backoff's series twice: no error")
	}
	scrape := func() string {
		rec := httptest.NewRecorder()
		m.Handler(func() error { return nil }).ServeHTTP(rec, httptest.NewRequest("GET", metrics.PathMetrics, nil))
		b, _ := io.ReadAll(rec.Result().Body)
		return string(b)
	}
	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"healthy", func() {}, []string{NameReconcileFailures + " 0", NameReconcileBackoff + " 0"}},
		{"one failure", func() { bm.failed(1500 * time.Millisecond) }, []string{NameReconcileFailures + " 1", NameReconcileBackoff + " 1.5"}},
		{"two failures", func() { bm.failed(3 * time.Second) }, []string{NameReconcileFailures + " 2", NameReconcileBackoff + " 3"}},
		{"a success", func() { bm.succeeded() }, []string{NameReconcileFailures + " 2", NameReconcileBackoff + " 0"}},
	}
	for _, st := range steps {
		st.do()
		body := scrape()
		for _, w := range st.want {
			if !strings.Contains(body, "\n"+w+"\n") {
				t.Errorf("%s: /metrics has no line %q", st.name, w)
			}
		}
	}
	var none *BackoffMetrics // a controller without metrics
	none.failed(time.Second)
	none.succeeded()
}
