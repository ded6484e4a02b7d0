package albproxy

import (
	"math"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sendLoop sends n GET requests from `workers` goroutines and returns what each saw.
func sendLoop(c *http.Client, url string, n, workers int) []result {
	out := make([]result, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				out[i] = get(c, url, "")
			}
		})
	}
	wg.Wait()
	return out
}

// TestWeights sends 2,000 requests through forward actions of two groups and checks the
// share each group got against its weight. The count a group with share p gets is
// binomial(n, p); the test allows 5 standard deviations, sqrt(n·p·(1−p)), which a correct
// proxy exceeds about once in 1.7 million runs. 99/1 over 2,000: expect 20 ± 22;
// 50/50: 1,000 ± 112; 0/100: exactly 0.
func TestWeights(t *testing.T) {
	const n = 2000
	tests := []struct {
		name   string
		wa, wb int
	}{
		{"99/1", 99, 1},
		{"0/100", 0, 100},
		{"50/50", 50, 50},
		{"999/333", 999, 333},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := newBackend(t, "a"), newBackend(t, "b")
			p := startProxy(t, oneListener(forward("ga", tt.wa, "gb", tt.wb), nil, tgOf("ga", 0, a), tgOf("gb", 0, b)))
			waitHealth(t, p, "ga", StateHealthy, a.addr())
			waitHealth(t, p, "gb", StateHealthy, b.addr())

			res := sendLoop(newClient(t), "http://"+p.Addr("l1")+"/", n, 8)
			seen := map[string]uint64{}
			for _, r := range res {
				if r.err != nil || r.status != http.StatusOK {
					t.Fatalf("request failed: %+v", r)
				}
				seen[r.backend]++
			}
			share := float64(tt.wb) / float64(tt.wa+tt.wb)
			want := n * share
			tol := 5 * math.Sqrt(n*share*(1-share))
			if got := float64(seen["b"]); math.Abs(got-want) > tol {
				t.Errorf("group b got %v of %d requests, want %.0f ± %.1f (5σ)", got, n, want, tol)
			}
			// The proxy's own counts agree with what the clients saw.
			for id, name := range map[string]string{"ga": "a", "gb": "b"} {
				c := p.Counts(id)
				if c.Requests != seen[name] || c.Target2XX != seen[name] || c.TargetResponses != seen[name] {
					t.Errorf("Counts(%s) = %+v, clients saw %d", id, c, seen[name])
				}
			}
			var lbSum, gbSum uint64
			for _, bk := range p.Metrics(SeriesKey{LoadBalancer: "lb"}, time.Now().Add(-time.Minute), time.Now().Add(time.Minute)) {
				lbSum += bk.RequestCount
			}
			for _, bk := range p.Metrics(SeriesKey{LoadBalancer: "lb", TargetGroup: "gb"}, time.Now().Add(-time.Minute), time.Now().Add(time.Minute)) {
				gbSum += bk.HTTPCodeTarget2XX
			}
			wantKeys := []SeriesKey{{"lb", ""}, {"lb", "ga"}, {"lb", "gb"}}
			if keys := p.SeriesKeys(); !reflect.DeepEqual(keys, wantKeys) {
				t.Errorf("SeriesKeys() = %v, want %v", keys, wantKeys)
			}
			if lbSum != n || gbSum != seen["b"] {
				t.Errorf("metrics: load balancer %d requests (want %d), group gb %d 2XX (want %d)", lbSum, n, gbSum, seen["b"])
			}
		})
	}
}

// TestWeightChangeMidStream changes the weights from 100/0 to 0/100 while clients send
// requests: every request sent after Apply returned goes to the new group, none fails,
// and a slow request already at the old group finishes there.
func TestWeightChangeMidStream(t *testing.T) {
	a, b := newBackend(t, "a"), newBackend(t, "b")
	cfg := oneListener(forward("ga", 100, "gb", 0), nil, tgOf("ga", 0, a), tgOf("gb", 0, b))
	p := startProxy(t, cfg)
	waitHealth(t, p, "ga", StateHealthy, a.addr())
	waitHealth(t, p, "gb", StateHealthy, b.addr())
	c := newClient(t)
	url := "http://" + p.Addr("l1") + "/"

	slow := make(chan result, 1)
	go func() { slow <- get(c, url+"?sleep=300ms", "") }()
	for a.inflight.Load() == 0 {
		time.Sleep(time.Millisecond)
	}

	tr := startTraffic(c, url, 4, func(backend string) bool { return backend != "b" })
	time.Sleep(50 * time.Millisecond)
	cfg.LoadBalancers[0].Listeners[0].DefaultAction = forward("ga", 0, "gb", 100)
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	tr.switched.Store(true)
	time.Sleep(100 * time.Millisecond)
	tr.stopTraffic()

	if r := <-slow; r.err != nil || r.status != http.StatusOK || r.backend != "a" {
		t.Errorf("slow request in flight across the change: %+v, want 200 from a", r)
	}
	if len(tr.failures) > 0 {
		t.Errorf("%d requests failed, first %+v", len(tr.failures), tr.failures[0])
	}
	if tr.after == 0 || tr.afterOnGone > 0 {
		t.Errorf("%d of %d requests sent after Apply went to the old group", tr.afterOnGone, tr.after)
	}
}

// TestRules checks rule priority, host-header and path-pattern matching and the
// default action.
func TestRules(t *testing.T) {
	api, static, wild, def := newBackend(t, "api"), newBackend(t, "static"), newBackend(t, "wild"), newBackend(t, "def")
	rules := []Rule{ // deliberately not in priority order
		{ID: "api", Priority: 10, Conditions: []Condition{{Field: FieldHostHeader, Values: []string{"api.example.com", "api2.example.com"}}}, Action: forward("g-api", 1)},
		{ID: "wild", Priority: 20, Conditions: []Condition{
			{Field: FieldHostHeader, Values: []string{"*.Example.COM"}},
			{Field: FieldPathPattern, Values: []string{"/v?/*"}},
		}, Action: forward("g-wild", 1)},
		{ID: "static", Priority: 5, Conditions: []Condition{{Field: FieldPathPattern, Values: []string{"/static/*"}}}, Action: forward("g-static", 1)},
	}
	p := startProxy(t, oneListener(forward("g-def", 1), rules,
		tgOf("g-api", 0, api), tgOf("g-static", 0, static), tgOf("g-wild", 0, wild), tgOf("g-def", 0, def)))
	for _, g := range []struct {
		id string
		b  *backend
	}{{"g-api", api}, {"g-static", static}, {"g-wild", wild}, {"g-def", def}} {
		waitHealth(t, p, g.id, StateHealthy, g.b.addr())
	}
	c := newClient(t)
	base := "http://" + p.Addr("l1")
	tests := []struct {
		host, path, want string
	}{
		{"api.example.com", "/", "api"},
		{"api2.example.com", "/x", "api"},
		{"API.Example.com:8080", "/", "api"}, // host is case-insensitive, port ignored
		{"api.example.com", "/static/app.js", "static"},
		{"foo.example.com", "/v1/users", "wild"},
		{"FOO.EXAMPLE.COM", "/v2/", "wild"},
		{"foo.example.com", "/v12/users", "def"}, // ? is exactly one character
		{"example.com", "/v1/users", "def"},      // *. needs a label before the dot
		{"foo.example.com", "/STATIC/x", "def"},  // paths are case-sensitive
		{"x.test", "/static/x?q=1", "static"},    // the query is not part of the path
		{"x.test", "/x?p=/static/", "def"},
		{"x.test", "/", "def"},
	}
	for _, tt := range tests {
		t.Run(tt.host+tt.path, func(t *testing.T) {
			r := get(c, base+tt.path, tt.host)
			if r.err != nil || r.status != http.StatusOK || r.backend != tt.want {
				t.Errorf("got %+v, want 200 from %s", r, tt.want)
			}
		})
	}
	// ALB passes the client's Host on and adds X-Forwarded-For.
	if h := api.lastHost.Load(); h != "API.Example.com:8080" { // the last request the api group got
		t.Errorf("target saw Host %v, want the client's", h)
	}
	if xff, _ := def.lastXFF.Load().(string); xff != "127.0.0.1" {
		t.Errorf("target saw X-Forwarded-For %q, want 127.0.0.1", xff)
	}
}

// TestELBErrors checks the answers the proxy gives itself, and that they are counted as
// ELB 5xx while a target's own 500 is a target 5xx.
func TestELBErrors(t *testing.T) {
	refused := func() string { // a port nothing listens on
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}()
	failing := newBackend(t, "failing")
	failing.code.Store(http.StatusInternalServerError)
	slow := newBackend(t, "slow")

	noCheck := HealthCheck{Disabled: true}
	tests := []struct {
		name     string
		lb       LoadBalancer
		groups   []TargetGroup
		path     string
		want     int
		counts   Counts // of group "g", when it exists
		lbELB5XX uint64
	}{
		{name: "all weights zero", groups: []TargetGroup{{ID: "g"}},
			lb: LoadBalancer{Listeners: []Listener{{DefaultAction: forward("g", 0)}}}, want: 503, lbELB5XX: 1},
		{name: "no target", groups: []TargetGroup{{ID: "g"}},
			lb: LoadBalancer{Listeners: []Listener{{DefaultAction: forward("g", 1)}}}, want: 503,
			counts: Counts{Requests: 1, ELB503: 1}, lbELB5XX: 1},
		{name: "connection refused", groups: []TargetGroup{{ID: "g", Targets: []string{refused}, HealthCheck: noCheck}},
			lb: LoadBalancer{Listeners: []Listener{{DefaultAction: forward("g", 1)}}}, want: 502,
			counts: Counts{Requests: 1, ELB502: 1}, lbELB5XX: 1},
		{name: "idle timeout", groups: []TargetGroup{{ID: "g", Targets: []string{slow.addr()}, HealthCheck: noCheck}},
			lb:   LoadBalancer{IdleTimeout: 100 * time.Millisecond, Listeners: []Listener{{DefaultAction: forward("g", 1)}}},
			path: "/?sleep=2s", want: 504, counts: Counts{Requests: 1, ELB504: 1}, lbELB5XX: 1},
		{name: "target 500", groups: []TargetGroup{{ID: "g", Targets: []string{failing.addr()}, HealthCheck: noCheck}},
			lb:   LoadBalancer{Listeners: []Listener{{DefaultAction: forward("g", 1)}}},
			want: 500, counts: Counts{Requests: 1, Target5XX: 1, TargetResponses: 1}, lbELB5XX: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.lb.ID, tt.lb.Listeners[0].ID = "lb", "l1"
			p := startProxy(t, Config{LoadBalancers: []LoadBalancer{tt.lb}, TargetGroups: tt.groups})
			start := time.Now()
			r := get(newClient(t), "http://"+p.Addr("l1")+tt.path, "")
			if r.err != nil || r.status != tt.want {
				t.Fatalf("got %+v, want status %d", r, tt.want)
			}
			if tt.want == 504 && time.Since(start) > time.Second {
				t.Errorf("504 took %v, want about the 100ms idle timeout", time.Since(start))
			}
			c := p.Counts("g")
			c.PerTarget, c.TargetResponseTime = nil, 0
			if !reflect.DeepEqual(c, tt.counts) {
				t.Errorf("Counts(g) = %+v, want %+v", c, tt.counts)
			}
			var elb, reqs uint64
			for _, b := range p.Metrics(SeriesKey{LoadBalancer: "lb"}, start.Add(-time.Second), time.Now().Add(time.Second)) {
				elb += b.HTTPCodeELB5XX()
				reqs += b.RequestCount
			}
			if elb != tt.lbELB5XX || reqs != 1 {
				t.Errorf("load balancer metrics: %d ELB 5XX of %d requests, want %d of 1", elb, reqs, tt.lbELB5XX)
			}
		})
	}
}

// TestStickiness checks that the AWSALBTG cookie keeps a client on its group after a
// weight change until the stickiness duration ends, while new clients follow the weights.
func TestStickiness(t *testing.T) {
	a, b := newBackend(t, "a"), newBackend(t, "b")
	sticky := GroupStickiness{Enabled: true, Duration: time.Second}
	act := forward("ga", 100, "gb", 0)
	act.Stickiness = sticky
	cfg := oneListener(act, nil, tgOf("ga", 0, a), tgOf("gb", 0, b))
	p := startProxy(t, cfg)
	waitHealth(t, p, "ga", StateHealthy, a.addr())
	waitHealth(t, p, "gb", StateHealthy, b.addr())
	url := "http://" + p.Addr("l1") + "/"

	jar, _ := cookiejar.New(nil)
	stuck := newClient(t)
	stuck.Jar = jar
	if r := get(stuck, url, ""); r.backend != "a" {
		t.Fatalf("first request went to %q, want a", r.backend)
	}
	pinned := time.Now()
	var hasCookie bool
	for _, ck := range jar.Cookies(mustURL(t, url)) {
		hasCookie = hasCookie || ck.Name == CookieGroup
	}
	if !hasCookie {
		t.Fatal("no AWSALBTG cookie set")
	}

	act.TargetGroups = []WeightedTargetGroup{{TargetGroupID: "ga", Weight: 0}, {TargetGroupID: "gb", Weight: 100}}
	cfg.LoadBalancers[0].Listeners[0].DefaultAction = act
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	fresh := newClient(t)
	for i := range 20 {
		if r := get(stuck, url, ""); r.backend != "a" && time.Since(pinned) < 900*time.Millisecond {
			t.Fatalf("stuck client's request %d went to %q after the weight change, want a (cookie still valid)", i, r.backend)
		}
		if r := get(fresh, url, ""); r.backend != "b" {
			t.Fatalf("cookieless request %d went to %q, want b", i, r.backend)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.AddCookie(&http.Cookie{Name: CookieGroup, Value: "Z2E.AAAAAAAAAAAAAAAAAAAAAA"})
	if resp, err := fresh.Do(req); err != nil || resp.Header.Get("X-Backend") != "b" {
		t.Errorf("forged cookie: %v %v, want b", resp, err)
	} else {
		resp.Body.Close()
	}

	time.Sleep(time.Until(pinned.Add(1100 * time.Millisecond)))
	if r := get(stuck, url, ""); r.backend != "b" {
		t.Errorf("after the stickiness duration the client went to %q, want b", r.backend)
	}
}

func TestListenersComeAndGo(t *testing.T) {
	a := newBackend(t, "a")
	cfg := oneListener(forward("ga", 1), nil, tgOf("ga", 0, a))
	p := startProxy(t, cfg)
	first := p.Addr("l1")
	cfg.LoadBalancers[0].Listeners = append(cfg.LoadBalancers[0].Listeners, Listener{ID: "l2", DefaultAction: forward("ga", 1)})
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if p.Addr("l1") != first {
		t.Errorf("listener l1 moved from %s to %s on an unrelated Apply", first, p.Addr("l1"))
	}
	c := newClient(t)
	waitHealth(t, p, "ga", StateHealthy, a.addr())
	if r := get(c, "http://"+p.Addr("l2")+"/", ""); r.status != http.StatusOK {
		t.Fatalf("new listener: %+v", r)
	}
	cfg.LoadBalancers[0].Listeners = cfg.LoadBalancers[0].Listeners[1:]
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if p.Addr("l1") != "" {
		t.Errorf("removed listener still has address %s", p.Addr("l1"))
	}
	if conn, err := net.Dial("tcp", first); err == nil {
		conn.Close()
		t.Errorf("removed listener %s still accepts connections", first)
	}
	// A config the proxy cannot bind leaves everything as it was.
	bad := cfg
	bad.LoadBalancers = []LoadBalancer{{ID: "lb", Listeners: []Listener{cfg.LoadBalancers[0].Listeners[0], {ID: "l3", Addr: p.Addr("l2"), DefaultAction: forward("ga", 1)}}}}
	if err := p.Apply(bad); err == nil {
		t.Error("Apply with a listener on a port in use succeeded")
	}
	if r := get(c, "http://"+p.Addr("l2")+"/", ""); r.status != http.StatusOK {
		t.Errorf("after a failed Apply: %+v", r)
	}
	// A deleted target group is forgotten.
	if err := p.Apply(Config{}); err != nil {
		t.Fatal(err)
	}
	if h := p.TargetHealth("ga"); h != nil {
		t.Errorf("deleted group still reports %v", h)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
