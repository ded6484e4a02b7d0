package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

// measured is a target whose best run reached qps using cpu of server time over 10 s.
func measured(r role, name string, qps float64, cpu time.Duration) *target {
	return &target{name: name, role: r, kind: "k", runs: []perfResult{
		{qps: qps / 2, serverCPU: cpu, runTime: 10 * time.Second},
		{qps: qps, serverCPU: cpu, runTime: 10 * time.Second},
	}}
}

func defaultOptions(t *testing.T, args ...string) options {
	t.Helper()
	o, err := parseFlags(args)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestEvalRatios(t *testing.T) {
	o := defaultOptions(t)
	all := []*target{
		measured(roleWeighted, "sw", 120000, 10*time.Second), // 1 core
		measured(rolePlain, "sp", 135000, 10*time.Second),    // 1 core
		measured(roleCoreDNS, "cd", 65000, 20*time.Second),   // 2 cores
		measured(roleKnot, "kn", 150000, 10*time.Second),     // 1 core
	}
	type want struct {
		label   string
		value   float64
		perCore float64
		met     bool
	}
	for _, tc := range []struct {
		name    string
		targets []*target
		want    []want
	}{
		{name: "all servers", targets: all, want: []want{
			{"sandbox plain / CoreDNS", 135000.0 / 65000, (135000.0 / 1) / (65000.0 / 2), true},
			{"sandbox plain / Knot", 0.9, 0.9, true},
			{"sandbox weighted / Knot", 0.8, 0.8, true},
		}},
		{name: "no coredns", targets: []*target{all[0], all[1], all[3]}, want: []want{
			{"sandbox plain / Knot", 0.9, 0.9, true},
			{"sandbox weighted / Knot", 0.8, 0.8, true},
		}},
		{name: "below goals", targets: []*target{
			measured(roleWeighted, "sw", 100000, 10*time.Second),
			measured(rolePlain, "sp", 90000, 10*time.Second),
			measured(roleCoreDNS, "cd", 65000, 10*time.Second),
			measured(roleKnot, "kn", 150000, 10*time.Second),
		}, want: []want{
			{"sandbox plain / CoreDNS", 90000.0 / 65000, 90000.0 / 65000, false},
			{"sandbox plain / Knot", 0.6, 0.6, false},
			{"sandbox weighted / Knot", 100000.0 / 150000, 100000.0 / 150000, false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := evalRatios(ratios(o), tc.targets)
			if len(got) != len(tc.want) {
				t.Fatalf("%d ratios, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.label != w.label || math.Abs(g.value-w.value) > 1e-9 || !g.perCoreOK ||
					math.Abs(g.perCore-w.perCore) > 1e-9 || g.met() != w.met {
					t.Errorf("ratio %d = %s %.4f (per core %.4f, ok %v, met %v), want %s %.4f (per core %.4f, met %v)",
						i, g.label, g.value, g.perCore, g.perCoreOK, g.met(), w.label, w.value, w.perCore, w.met)
				}
			}
			err := goalErrors(got)
			var failing []string
			for _, w := range tc.want {
				if !w.met {
					failing = append(failing, w.label)
				}
			}
			if (err != nil) != (len(failing) > 0) {
				t.Fatalf("goalErrors = %v, want errors for %v", err, failing)
			}
			for _, f := range failing {
				if !strings.Contains(err.Error(), f+" qps ratio") {
					t.Errorf("goalErrors %q does not name %q", err, f)
				}
			}
		})
	}
}

// TestGoalFlags checks the goals issue 32 sets are the defaults, that a goal of 0 is no
// goal, and that -min-ratio still reads the weighted ratio.
func TestGoalFlags(t *testing.T) {
	o := defaultOptions(t)
	if o.goalCoreDNS != 1.5 || o.goalKnotPlain != 0.85 || o.goalKnotWeighted != 0.8 || o.enforceGoals || o.noCoreDNS {
		t.Errorf("defaults: %+v", o)
	}
	o = defaultOptions(t, "-goal-knot-plain", "0", "-goal-coredns", "3")
	res := evalRatios(ratios(o), []*target{
		measured(roleWeighted, "sw", 70000, time.Second),
		measured(rolePlain, "sp", 10000, time.Second),
		measured(roleCoreDNS, "cd", 10000, time.Second),
		measured(roleKnot, "kn", 100000, time.Second),
	})
	if err := goalErrors(res); err == nil || strings.Contains(err.Error(), "sandbox plain / Knot") ||
		!strings.Contains(err.Error(), "-goal-coredns") || !strings.Contains(err.Error(), "-goal-knot-weighted") {
		t.Errorf("goalErrors = %v, want CoreDNS and weighted Knot below goal, plain Knot without one", err)
	}
	if r := weightedRatio(res); math.Abs(r-0.7) > 1e-9 {
		t.Errorf("weightedRatio = %v, want 0.7", r)
	}
	if _, err := parseFlags([]string{"-goal-coredns", "-1"}); err == nil {
		t.Error("-goal-coredns -1 accepted")
	}
}

// TestTimeoutCoversServers checks the default bound grows with the servers measured, so a
// four-server run is not cut off by a bound made for two.
func TestTimeoutCoversServers(t *testing.T) {
	four := defaultOptions(t, "-duration", "60s")
	three := defaultOptions(t, "-duration", "60s", "-no-coredns")
	if four.servers() != 4 || three.servers() != 3 {
		t.Fatalf("servers: %d, %d; want 4, 3", four.servers(), three.servers())
	}
	// Every throughput and latency run of every server, each with dnsperf's drain.
	need := func(o options) time.Duration {
		return time.Duration(o.servers()) * (time.Duration(o.rounds)*(o.duration+5*time.Second) + o.latencyLength + 5*time.Second)
	}
	for _, o := range []options{four, three} {
		if o.timeout < need(o) {
			t.Errorf("%d servers: timeout %s < %s of runs", o.servers(), o.timeout, need(o))
		}
	}
}

func TestRenderReportRatios(t *testing.T) {
	o := defaultOptions(t)
	targets := []*target{
		measured(roleWeighted, "crossfade sandbox (weighted)", 100000, 10*time.Second),
		measured(rolePlain, "crossfade sandbox (plain)", 140000, 10*time.Second),
		measured(roleKnot, "Knot DNS 3.2.6", 150000, 10*time.Second),
	}
	out := renderReport(o, environment{}, targets, evalRatios(ratios(o), targets), apiStats{})
	for _, want := range []string{
		"CoreDNS was not run (-no-coredns).",
		"| sandbox plain / Knot | **0.93** | 0.93 | ≥ 0.85: met |",
		"| sandbox weighted / Knot | **0.67** | 0.67 | ≥ 0.80: NOT met |",
		"| crossfade sandbox (plain) | k | 140,000 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "sandbox plain / CoreDNS") {
		t.Errorf("report has a CoreDNS ratio without CoreDNS:\n%s", out)
	}
}
