package albproxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// backend is a real HTTP server on 127.0.0.1 that names itself in every answer. Its
// health check answer and its serving status can be changed while it runs.
type backend struct {
	name       string
	srv        *httptest.Server
	healthCode atomic.Int64 // status of GET /health; 0 means 200
	healthWait atomic.Int64 // nanoseconds GET /health waits before answering
	code       atomic.Int64 // status of every other request; 0 means 200
	hcPassed   atomic.Int64 // health checks answered 200
	hcFailed   atomic.Int64 // health checks answered otherwise
	served     atomic.Int64 // requests other than health checks
	inflight   atomic.Int64
	lastHost   atomic.Value // Host header of the last request
	lastXFF    atomic.Value // X-Forwarded-For of the last request
}

func newBackend(t testing.TB, name string) *backend {
	t.Helper()
	b := &backend{name: name}
	b.srv = httptest.NewServer(http.HandlerFunc(b.handle))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *backend) addr() string { return b.srv.Listener.Addr().String() }

func (b *backend) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/health" {
		if d := time.Duration(b.healthWait.Load()); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		code := int(b.healthCode.Load())
		if code == 0 {
			code = http.StatusOK
		}
		if code == http.StatusOK {
			b.hcPassed.Add(1)
		} else {
			b.hcFailed.Add(1)
		}
		w.WriteHeader(code)
		return
	}
	b.served.Add(1)
	b.inflight.Add(1)
	defer b.inflight.Add(-1)
	b.lastHost.Store(r.Host)
	b.lastXFF.Store(r.Header.Get("X-Forwarded-For"))
	if d, err := time.ParseDuration(r.URL.Query().Get("sleep")); err == nil {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	code := int(b.code.Load())
	if code == 0 {
		code = http.StatusOK
	}
	w.Header().Set("X-Backend", b.name)
	w.WriteHeader(code)
	_, _ = io.WriteString(w, b.name)
}

// fastHC is a health check quick enough for tests: a 30 ms interval.
var fastHC = HealthCheck{Path: "/health", Interval: 30 * time.Millisecond, Timeout: 20 * time.Millisecond,
	HealthyThreshold: 2, UnhealthyThreshold: 3}

// startProxy starts a proxy with cfg applied; the test's cleanup closes it.
func startProxy(t testing.TB, cfg Config) *Proxy {
	t.Helper()
	p := New(Options{})
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	return p
}

// tgOf builds a target group of the backends with the fast health check.
func tgOf(id string, delay time.Duration, bs ...*backend) TargetGroup {
	tg := TargetGroup{ID: id, HealthCheck: fastHC, DeregistrationDelay: delay}
	for _, b := range bs {
		tg.Targets = append(tg.Targets, b.addr())
	}
	return tg
}

// forward builds a forward action from alternating group IDs and weights.
func forward(pairs ...any) ForwardAction {
	var a ForwardAction
	for i := 0; i < len(pairs); i += 2 {
		a.TargetGroups = append(a.TargetGroups, WeightedTargetGroup{TargetGroupID: pairs[i].(string), Weight: pairs[i+1].(int)})
	}
	return a
}

// oneListener is a config of one load balancer "lb" with one listener "l1".
func oneListener(def ForwardAction, rules []Rule, groups ...TargetGroup) Config {
	return Config{
		LoadBalancers: []LoadBalancer{{ID: "lb", Listeners: []Listener{{ID: "l1", Addr: "127.0.0.1:0", Rules: rules, DefaultAction: def}}}},
		TargetGroups:  groups,
	}
}

// newClient returns a client whose idle connections the test's cleanup closes.
func newClient(t testing.TB) *http.Client {
	t.Helper()
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// result is what a client saw for one request.
type result struct {
	status  int
	backend string
	err     error
}

func get(c *http.Client, url, host string) result {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return result{err: err}
	}
	if host != "" {
		req.Host = host
	}
	resp, err := c.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return result{status: resp.StatusCode, backend: resp.Header.Get("X-Backend")}
}

// waitHealth waits until every listed target of the group is in state.
func waitHealth(t testing.TB, p *Proxy, groupID string, state State, targets ...string) map[string]Health {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		h := p.TargetHealth(groupID)
		ok := true
		for _, tg := range targets {
			if h[tg].State != state {
				ok = false
			}
		}
		if ok {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s: targets %v not %s within 5s: %v", groupID, targets, state, h)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// traffic is clients sending GET url in a loop while a test changes the proxy under them:
// it keeps the requests that failed and counts, of those sent after switched was set, how
// many there were and how many a backend the switch should have taken away (wrong) served.
type traffic struct {
	switched atomic.Bool // set by the test once its change has been applied
	stop     chan struct{}
	wg       sync.WaitGroup

	mu          sync.Mutex
	failures    []result
	after       int // requests sent after switched
	afterOnGone int // of those, answered by a backend wrong names
}

// startTraffic starts clients goroutines sending through c until stopTraffic.
func startTraffic(c *http.Client, url string, clients int, wrong func(backend string) bool) *traffic {
	tr := &traffic{stop: make(chan struct{})}
	for range clients {
		tr.wg.Go(func() {
			for {
				select {
				case <-tr.stop:
					return
				default:
				}
				sentAfter := tr.switched.Load()
				r := get(c, url, "")
				tr.mu.Lock()
				if r.err != nil || r.status != http.StatusOK {
					tr.failures = append(tr.failures, r)
				}
				if sentAfter {
					tr.after++
					if wrong(r.backend) {
						tr.afterOnGone++
					}
				}
				tr.mu.Unlock()
			}
		})
	}
	return tr
}

// stopTraffic stops the clients and waits for them, so that the counts are final.
func (tr *traffic) stopTraffic() {
	close(tr.stop)
	tr.wg.Wait()
}
