package dashboard

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
)

// healthResult is what a targetHealth gate reports: healthy and registered targets per
// group it checked (the groups the step gives weight to).
func healthResult(groups map[string][2]int) gate.Result {
	r := gate.Result{Gate: "healthy", Kind: gate.KindTargetHealth, Pass: true, Values: map[string]float64{}}
	for _, id := range slices.Sorted(maps.Keys(groups)) {
		h := groups[id]
		r.Values[id+".healthy"], r.Values[id+".targets"] = float64(h[0]), float64(h[1])
		r.Detail += fmt.Sprintf("%s: %d healthy of %d targets; ", id, h[0], h[1])
		if h[0] < 2 {
			r.Pass = false
		}
	}
	return r
}

// trafficResult is what an albTraffic gate reports after counting n requests, green's
// share of them green (0..1); pending when it has not judged yet.
func trafficResult(green float64, n int, pending bool) gate.Result {
	r := gate.Result{Gate: "traffic", Kind: gate.KindALBTraffic, Pass: true, Pending: pending,
		Detail: fmt.Sprintf("green %.1f%% of %d requests", 100*green, n),
		Values: map[string]float64{"requests": float64(n), "window_s": 2, "blue.requests": float64(n) * (1 - green),
			"green.requests": float64(n) * green, "green.expected": green, "blue.errors_5xx": 0}}
	if n > 0 {
		r.Values["blue.share"], r.Values["green.share"] = 1-green, green
	}
	return r
}

func TestGroupHealth(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]float64
		want   []GroupHealth
	}{
		{"two groups, sorted", map[string]float64{"green.healthy": 1, "green.targets": 2, "blue.healthy": 2, "blue.targets": 2},
			[]GroupHealth{{Group: "blue", Healthy: 2, Targets: 2}, {Group: "green", Healthy: 1, Targets: 2}}},
		{"a group at weight 0 is not checked", map[string]float64{"green.healthy": 2, "green.targets": 3},
			[]GroupHealth{{Group: "green", Healthy: 2, Targets: 3}}},
		{"cluster names with dots", map[string]float64{"eks-1.31.healthy": 0, "eks-1.31.targets": 4},
			[]GroupHealth{{Group: "eks-1.31", Healthy: 0, Targets: 4}}},
		{"a third cluster's group by its own name", map[string]float64{"shop-red.healthy": 1, "shop-red.targets": 1},
			[]GroupHealth{{Group: "shop-red", Healthy: 1, Targets: 1}}},
		{"healthy without targets is no reading", map[string]float64{"blue.healthy": 2}, nil},
		{"other values", map[string]float64{"requests": 5, ".healthy": 1, ".targets": 1}, nil},
		{"nil", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := groupHealth(tc.values); !slices.Equal(got, tc.want) {
				t.Errorf("groupHealth(%v) = %+v, want %+v", tc.values, got, tc.want)
			}
		})
	}
}

func TestALBShares(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]float64
		want   map[string]float64
	}{
		{"both groups", trafficResult(0.1, 200, false).Values, map[string]float64{"blue": 90, "green": 10}},
		{"no request counted yet", trafficResult(0.1, 0, true).Values, map[string]float64{}},
		{"a third group's values are not from's or to's", map[string]float64{"red.share": 0.5, "blue.share": 0.5},
			map[string]float64{"blue": 50}},
		{"nil", nil, map[string]float64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := albShares(tc.values, "blue", "green"); !maps.Equal(got, tc.want) {
				t.Errorf("albShares(%v) = %v, want %v", tc.values, got, tc.want)
			}
		})
	}
}

// TestLever: SetLever names the lever; without it, the first gate that judges one lever
// only tells it, and a lever once known is not changed by a gate.
func TestLever(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   string
		gates []gate.Result
		want  string
	}{
		{"unknown", "", []gate.Result{httpResult(true, "ok", 1, 1), {Gate: "p", Kind: gate.KindPrometheus, Pass: true}}, ""},
		{"set", cutover.LeverALB, nil, "alb"},
		{"a targetHealth gate", "", []gate.Result{healthResult(map[string][2]int{"blue": {2, 2}})}, "alb"},
		{"an albTraffic gate", "", []gate.Result{trafficResult(0, 10, true)}, "alb"},
		{"a dns gate", "", []gate.Result{dnsResult(1, 0)}, "route53"},
		{"set wins", cutover.LeverRoute53, []gate.Result{trafficResult(0, 10, true)}, "route53"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRecorder("shop", "blue", "green")
			if tc.set != "" {
				r.SetLever(tc.set)
			}
			r.Event(cutover.Event{Phase: cutover.PhaseHolding, Step: 0, Total: 2, Weights: weights(100, 0), Gates: tc.gates})
			if got := getState(t, r.Handler()).Lever; got != tc.want {
				t.Errorf("lever %q, want %q", got, tc.want)
			}
		})
	}
}

// TestObserveShares: between consecutive observations, each cluster's share of the
// requests that landed, in percent; no point where none landed.
func TestObserveShares(t *testing.T) {
	for _, tc := range []struct {
		name string
		obs  []Traffic
		want []map[string]float64
	}{
		{"one observation, no share", []Traffic{{At: t0, Requests: map[string]int64{"blue": 5}}}, nil},
		{"split", []Traffic{{At: t0, Requests: map[string]int64{"blue": 10}},
			{At: t0.Add(2 * time.Second), Requests: map[string]int64{"blue": 100, "green": 10}, Failures: 50}},
			[]map[string]float64{{"blue": 90, "green": 10}}},
		{"no request landed: no point", []Traffic{{At: t0, Requests: map[string]int64{"blue": 10}},
			{At: t0.Add(time.Second), Requests: map[string]int64{"blue": 10}, Failures: 3},
			{At: t0.Add(2 * time.Second), Requests: map[string]int64{"blue": 10, "green": 4}}},
			[]map[string]float64{{"blue": 0, "green": 100}}},
		{"counter reset counts as 0", []Traffic{{At: t0, Requests: map[string]int64{"blue": 50, "green": 50}},
			{At: t0.Add(time.Second), Requests: map[string]int64{"blue": 3, "green": 60}}},
			[]map[string]float64{{"blue": 0, "green": 100}}},
		{"a third cluster", []Traffic{{At: t0, Requests: map[string]int64{}},
			{At: t0.Add(time.Second), Requests: map[string]int64{"blue": 1, "green": 2, "red": 1}}},
			[]map[string]float64{{"blue": 25, "green": 50, "red": 25}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecorder("x", "blue", "green", func() time.Time { return t0 })
			for _, o := range tc.obs {
				r.Observe(o)
			}
			s := getState(t, r.Handler())
			var got []map[string]float64
			for _, p := range s.Series.ClientShares {
				got = append(got, p.Values)
			}
			if !slices.EqualFunc(got, tc.want, maps.Equal) {
				t.Errorf("client shares %v, want %v", got, tc.want)
			}
		})
	}
}

// TestALBState feeds the events the engine sends for an ALB cutover 0 → 10 → 50 → 100 %
// (targetHealth and albTraffic gates, clients observing) and checks, through the API,
// what the ALB view shows at chosen moments: the lever, the weights written, the request
// shares CloudWatch measured and the clients saw, and each group's health as last
// checked (a group at weight 0 is not checked, so it keeps its last reading).
func TestALBState(t *testing.T) {
	c := &clock{now: t0}
	r := newRecorder("demo-alb", "blue", "green", c.Now)
	h := r.Handler()
	counts := map[string]int64{"blue": 0, "green": 0}
	r.Observe(Traffic{At: c.Now(), Requests: maps.Clone(counts)})
	type moment struct {
		weights    map[string]float64
		cloudWatch map[string]float64 // the last albShares point
		clients    map[string]float64 // the last clientShares point
		health     []GroupHealth      // without gate and time
		pending    bool               // the traffic gate's latest result
	}
	got := map[int]moment{}
	for i, green := range []int64{0, 10, 50, 100} {
		w := weights(100-green, green)
		// Before the write the engine prechecks the weights about to be written: the
		// targetHealth gate checks the groups they give weight to.
		checked := map[string][2]int{}
		for id, v := range w {
			if v > 0 {
				checked[id] = [2]int{2, 2}
			}
		}
		r.Event(cutover.Event{Phase: cutover.PhaseWriting, Step: i, Total: 4, Weights: w, Message: fmt.Sprintf("step %d of 4", i+1),
			Gates: []gate.Result{healthResult(checked)}})
		for k := range 2 {
			c.tick()
			counts["blue"] += 100 - green
			counts["green"] += green
			r.Observe(Traffic{At: c.Now(), Requests: maps.Clone(counts)})
			// The first check has counted too few requests to judge.
			traffic := trafficResult(float64(green)/100, 60+100*k, k == 0)
			r.Event(cutover.Event{Phase: cutover.PhaseHolding, Step: i, Total: 4, Weights: w, Left: time.Duration(1-k) * time.Second,
				Gates: []gate.Result{healthResult(checked), traffic}})
		}
		s := getState(t, h)
		m := moment{weights: s.Series.Weights[len(s.Series.Weights)-1].Values,
			cloudWatch: s.Series.ALBShares[len(s.Series.ALBShares)-1].Values,
			clients:    s.Series.ClientShares[len(s.Series.ClientShares)-1].Values}
		for _, gh := range s.TargetHealth {
			if gh.Gate != "healthy" || gh.At.IsZero() {
				t.Errorf("step %d: health %+v names no gate or time", i+1, gh)
			}
			m.health = append(m.health, GroupHealth{Group: gh.Group, Healthy: gh.Healthy, Targets: gh.Targets})
		}
		for _, g := range s.Gates {
			if g.Gate == "traffic" {
				m.pending = g.Pending
			}
		}
		if s.Lever != cutover.LeverALB {
			t.Errorf("step %d: lever %q, want alb (told by its gates)", i+1, s.Lever)
		}
		got[i] = m
	}
	r.Event(cutover.Event{Phase: cutover.PhaseDone, Message: "cutover completed", Total: 4, Weights: weights(0, 100)})

	both := []GroupHealth{{Group: "blue", Healthy: 2, Targets: 2}, {Group: "green", Healthy: 2, Targets: 2}}
	for _, tc := range []struct {
		step int
		want moment
	}{
		{0, moment{weights: map[string]float64{"blue": 100, "green": 0}, cloudWatch: map[string]float64{"blue": 100, "green": 0},
			clients: map[string]float64{"blue": 100, "green": 0}, health: both[:1]}},
		{1, moment{weights: map[string]float64{"blue": 90, "green": 10}, cloudWatch: map[string]float64{"blue": 90, "green": 10},
			clients: map[string]float64{"blue": 90, "green": 10}, health: both}},
		{2, moment{weights: map[string]float64{"blue": 50, "green": 50}, cloudWatch: map[string]float64{"blue": 50, "green": 50},
			clients: map[string]float64{"blue": 50, "green": 50}, health: both}},
		// At 0/100 blue is no longer checked: it keeps its reading from step 3.
		{3, moment{weights: map[string]float64{"blue": 0, "green": 100}, cloudWatch: map[string]float64{"blue": 0, "green": 100},
			clients: map[string]float64{"blue": 0, "green": 100}, health: both}},
	} {
		t.Run(fmt.Sprintf("step %d", tc.step+1), func(t *testing.T) {
			g := got[tc.step]
			if !maps.Equal(g.weights, tc.want.weights) || !maps.Equal(g.cloudWatch, tc.want.cloudWatch) || !maps.Equal(g.clients, tc.want.clients) {
				t.Errorf("weights %v, CloudWatch %v, clients %v; want %v, %v, %v", g.weights, g.cloudWatch, g.clients,
					tc.want.weights, tc.want.cloudWatch, tc.want.clients)
			}
			if !slices.Equal(g.health, tc.want.health) {
				t.Errorf("target health %+v, want %+v", g.health, tc.want.health)
			}
			if g.pending {
				t.Errorf("the traffic gate's latest result is pending; its second check judged")
			}
		})
	}

	s := getState(t, h)
	// Every albTraffic check that counted requests is a point, judged or pending: 2 a step.
	if n := len(s.Series.ALBShares); n != 8 {
		t.Errorf("%d CloudWatch share points, want 8", n)
	}
	if n := len(s.Series.DNSShares); n != 0 {
		t.Errorf("%d DNS share points in an ALB cutover", n)
	}
	// blue's last check was at step 3, green's at step 4's last.
	at := map[string]time.Time{}
	for _, gh := range s.TargetHealth {
		at[gh.Group] = gh.At
	}
	if !at["blue"].Before(at["green"]) {
		t.Errorf("blue checked at %s, green at %s: blue's reading should be older (weight 0 at the last step)", at["blue"], at["green"])
	}
}

// TestPendingGate: a pending pass is reported as such; a judged one and a failure are not.
func TestPendingGate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		g       gate.Result
		pending bool
		errors  int
	}{
		{"pending", trafficResult(0.1, 20, true), true, 0},
		{"judged", trafficResult(0.1, 200, false), false, 0},
		{"failed", gate.Result{Gate: "traffic", Kind: gate.KindALBTraffic, Detail: "share off"}, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRecorder("shop", "blue", "green")
			r.Event(cutover.Event{Phase: cutover.PhaseHolding, Step: 1, Total: 4, Weights: weights(90, 10), Gates: []gate.Result{tc.g}})
			s := getState(t, r.Handler())
			if len(s.Gates) != 1 || s.Gates[0].Pending != tc.pending || len(s.Errors) != tc.errors {
				t.Errorf("gates %+v, errors %+v; want pending %v and %d errors", s.Gates, s.Errors, tc.pending, tc.errors)
			}
		})
	}
}
