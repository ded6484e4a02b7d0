package main

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/bench/internal/machine"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// txt is a TXT record set of the member's name with set identifier id and values.
func txt(name, id string, values ...string) *zones.RRSet {
	return &zones.RRSet{Name: zones.CanonicalName(name), Type: "TXT", SetIdentifier: id, Records: values}
}

func TestMemberConfirmations(t *testing.T) {
	const res = "service/kubebench/hold-app"
	owned := `"heritage=external-dns,external-dns/owner=kubebench,external-dns/resource=service/kubebench/hold-app"`
	confirmed := func(token string) string {
		return `"heritage=external-dns,external-dns/` + endpoint.ConfirmsHoldLabel + "=" + token + `,external-dns/owner=kubebench,external-dns/resource=service/kubebench/hold-app"`
	}
	a := &zones.RRSet{Name: "app.z.test.", Type: "A", SetIdentifier: "blue", Records: []string{"192.0.2.10"}}
	for _, tc := range []struct {
		name string
		sets []*zones.RRSet
		want []string
	}{
		{name: "nothing published", sets: []*zones.RRSet{a}, want: nil},
		{name: "owned, no hold", sets: []*zones.RRSet{a, txt("a-app.z.test", "blue", owned)}, want: []string{""}},
		{name: "the hold confirmed", sets: []*zones.RRSet{a, txt("a-app.z.test", "blue", confirmed("t0k3n"))}, want: []string{"t0k3n"}},
		{name: "two ownership records, one behind", sets: []*zones.RRSet{txt("a-app.z.test", "blue", confirmed("t0k3n")), txt("app.z.test", "blue", owned)},
			want: []string{"t0k3n", ""}},
		{name: "another member's record", sets: []*zones.RRSet{txt("a-app.z.test", "green", confirmed("t0k3n"))}, want: nil},
		{name: "another owner's record", sets: []*zones.RRSet{txt("a-app.z.test", "blue", strings.Replace(confirmed("x"), "owner=kubebench", "owner=other", 1))}, want: nil},
		{name: "another resource's record", sets: []*zones.RRSet{txt("a-app.z.test", "blue", strings.Replace(owned, "hold-app", "web", 1))}, want: nil},
		{name: "the authority record is no ownership record", sets: []*zones.RRSet{txt("_crossfade-weights.app.z.test", "",
			`"heritage=crossfade,crossfade/cutover=kubebench,crossfade/types=A,crossfade/runner=t0k3n@kubebench"`)}, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := memberConfirmations(tc.sets, "blue", res)
			if !slices.Equal(got, tc.want) {
				t.Errorf("memberConfirmations = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAllEqual(t *testing.T) {
	for _, tc := range []struct {
		vs   []string
		v    string
		want bool
	}{
		{nil, "", false}, // no ownership record: neither confirmed nor released
		{[]string{"t"}, "t", true},
		{[]string{"t", "t"}, "t", true},
		{[]string{"t", ""}, "t", false},
		{[]string{"", ""}, "", true},
		{[]string{"old"}, "new", false},
	} {
		if got := allEqual(tc.vs, tc.v); got != tc.want {
			t.Errorf("allEqual(%q, %q) = %v, want %v", tc.vs, tc.v, got, tc.want)
		}
	}
}

// TestAuthoritySet: the record the scenario writes is one a cutover's readers take for a
// hold of the member's A records by the sample's runner.
func TestAuthoritySet(t *testing.T) {
	set := authoritySet(registry.Authority{Name: "app.z.test", Cutover: holdCutover, Types: []string{"A"}, Runner: registry.Runner{Token: "kubebench-0-1", Host: "kubebench"}})
	if set.Name != "_crossfade-weights.app.z.test." || set.Type != "TXT" || set.TTL == nil || *set.TTL != 300 {
		t.Fatalf("set = %+v", set)
	}
	a, ok := registry.ParseAuthority(&endpoint.Endpoint{Name: strings.TrimSuffix(set.Name, "."), Type: set.Type, Targets: set.Records})
	if !ok || a.Name != "app.z.test" || a.HoldID() != "kubebench-0-1" || !slices.Equal(a.Types, []string{"A"}) {
		t.Errorf("parsed back as %+v (ok %v)", a, ok)
	}
}

func TestHoldTokensAreFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for s := range 100 {
		tok := holdToken(s, rng)
		if seen[tok] {
			t.Fatalf("token %s twice", tok)
		}
		seen[tok] = true
		// A token the registry would rewrite could never be confirmed as written.
		if got := (registry.Authority{Runner: registry.Runner{Token: tok}}).HoldID(); got != tok {
			t.Fatalf("token %q is confirmed as %q", tok, got)
		}
	}
}

func TestMetricsAddr(t *testing.T) {
	log := `{"time":"2026-11-27T19:24:53Z","level":"INFO","msg":"starting","version":"dev"}
not json at all
{"time":"2026-11-27T19:24:53Z","level":"INFO","msg":"serving metrics","addr":"127.0.0.1:41234","paths":["/metrics"]}
`
	if addr, ok := metricsAddr(log); !ok || addr != "127.0.0.1:41234" {
		t.Errorf("metricsAddr = %q, %v", addr, ok)
	}
	if _, ok := metricsAddr(`{"msg":"starting"}`); ok {
		t.Errorf("found an address in a log without one")
	}
}

func TestParseProbes(t *testing.T) {
	got, err := parseProbes(strings.NewReader(`# HELP crossfade_hold_probes_total DNS probes
# TYPE crossfade_hold_probes_total counter
crossfade_hold_probes_total{result="changed"} 2
crossfade_hold_probes_total{result="same"} 61
crossfade_reconciles_total{result="ok"} 9
`))
	if err != nil || !equalCounts(got, callCounts{"changed": 2, "same": 61}) {
		t.Errorf("parseProbes = %v, %v", got, err)
	}
	if _, err := parseProbes(strings.NewReader(`crossfade_hold_probes_total{result="same"} 1.5` + "\n")); err == nil {
		t.Errorf("a fractional count parsed")
	}
}

func TestRenderHoldReport(t *testing.T) {
	o, err := parseFlags([]string{"--tools", "crossfade", "--scenarios", "hold"})
	if err != nil {
		t.Fatal(err)
	}
	calls := callCounts{"ChangeResourceRecordSets ok": 1, "ListResourceRecordSets ok": 1}
	h := &holdRun{tool: tool{name: toolCrossfade, title: "crossfade", kind: kindCrossfade}, interval: 2 * time.Minute, synced: true, firstSync: time.Second,
		samples: []holdSample{
			{token: "kubebench-0-a", confirm: 90 * time.Second, drop: 30 * time.Second, confirmCalls: calls, dropCalls: calls},
			{token: "kubebench-1-b", confirm: 20 * time.Second, drop: 100 * time.Second, confirmCalls: calls, dropCalls: calls},
			{token: "kubebench-2-c", confirm: 130 * time.Second, drop: 60 * time.Second, confirmCalls: calls, dropCalls: calls},
		},
		idle: 3 * time.Minute, idleCalls: callCounts{}, held: 3 * time.Minute, heldCalls: callCounts{},
		probes: callCounts{"same": 10, "changed": 6}}
	rep := renderRun(o, environment{Info: machine.Info{CPUs: 2}, args: []string{"--tools", "crossfade", "--scenarios", "hold"}}, nil, h, nil, nil)
	for _, want := range []string{
		"## crossfade controller: confirming a cutover's hold (issue 25)",
		"| holds confirmed (not confirmed within 6m0s) | 3 (0) |",
		"| hold written → confirmed in the member's ownership record: min / median / max (goal < 5m0s) | 20.0 s / 90.0 s / 130.0 s ✓ |",
		"| hold deleted → confirmation gone: min / median / max | 30.0 s / 60.0 s / 100.0 s |",
		"| Route 53 API calls per hold, write → 10s after the confirmation | 2 per sample (3 samples: ChangeResourceRecordSets ok ×3, ListResourceRecordSets ok ×3) |",
		"(180.0 s in all, goal 0) | 0 ✓: none |",
		"| DNS probes of the name during the samples, by result | 16: changed ×6, same ×10 |",
		"| --hold-probe-interval / --resync-interval | 2m0s (default) / 1h (default) |",
		"| `kubebench-1-b` | 20.0 s | 100.0 s |",
		"go run ./bench/kubebench --tools crossfade --scenarios hold",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}

	// A hold confirmed after the goal, or not at all, is no ✓.
	h.samples[2].confirm = 0
	h.missed = 1
	if rep := renderRun(o, environment{}, nil, h, nil, nil); !strings.Contains(rep, "| 20.0 s / 20.0 s / 90.0 s ✗ |") || !strings.Contains(rep, "| 2 (1) |") {
		t.Errorf("a missed hold passes:\n%s", rep)
	}
}

// TestLatencies picks one latency out of every sample that measured it, in order.
func TestLatencies(t *testing.T) {
	h := &holdRun{samples: []holdSample{
		{confirm: 3 * time.Second, drop: 0},
		{confirm: 0, drop: 2 * time.Second},
		{confirm: time.Second, drop: 4 * time.Second},
	}}
	for _, tc := range []struct {
		name string
		of   func(holdSample) time.Duration
		want []time.Duration
	}{
		{"confirmations", func(s holdSample) time.Duration { return s.confirm }, []time.Duration{3 * time.Second, time.Second}},
		{"releases", func(s holdSample) time.Duration { return s.drop }, []time.Duration{2 * time.Second, 4 * time.Second}},
		{"none measured", func(holdSample) time.Duration { return 0 }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := h.latencies(tc.of); !slices.Equal(got, tc.want) {
				t.Errorf("latencies = %v, want %v", got, tc.want)
			}
		})
	}
}
