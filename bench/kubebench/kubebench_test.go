package main

import (
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/bench/internal/machine"
	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/testenv"
)

func TestCallCountsSince(t *testing.T) {
	before := callCounts{"ListHostedZones ok": 3, "ListResourceRecordSets ok": 1, "ChangeResourceRecordSets ok": 35}
	after := callCounts{"ListHostedZones ok": 5, "ListResourceRecordSets ok": 68, "ChangeResourceRecordSets ok": 35, "GetChange ok": 2}
	got := after.since(before)
	want := callCounts{"ListHostedZones ok": 2, "ListResourceRecordSets ok": 67, "GetChange ok": 2}
	if !equalCounts(got, want) {
		t.Errorf("since = %v, want %v", got, want)
	}
	if got.total() != 71 {
		t.Errorf("total = %d, want 71", got.total())
	}
	if s := got.String(); s != "GetChange ok ×2, ListHostedZones ok ×2, ListResourceRecordSets ok ×67" {
		t.Errorf("String = %q", s)
	}
	if s := after.since(after).String(); s != "none" {
		t.Errorf("no calls: String = %q, want none", s)
	}
}

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	fifty := make([]int, 50)
	for i := range fifty {
		fifty[i] = 50 - i // unsorted on purpose
	}
	for _, tc := range []struct {
		name    string
		samples []time.Duration
		p       float64
		want    time.Duration
		ok      bool
	}{
		{"none", nil, 50, 0, false},
		{"one", ms(7), 99, 7 * time.Millisecond, true},
		{"median of odd count", ms(30, 10, 20), 50, 20 * time.Millisecond, true},
		{"median of even count is the lower middle", ms(40, 10, 30, 20), 50, 20 * time.Millisecond, true},
		{"p99 of 50 is the largest", ms(fifty...), 99, 50 * time.Millisecond, true},
		{"p50 of 50 is the 25th", ms(fifty...), 50, 25 * time.Millisecond, true},
		{"p100 is the largest", ms(3, 9, 1), 100, 9 * time.Millisecond, true},
		{"p0 is out of range", ms(3), 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := percentile(tc.samples, tc.p)
			if got != tc.want || ok != tc.ok {
				t.Errorf("percentile(%v, %v) = %v, %v; want %v, %v", tc.samples, tc.p, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestRatio(t *testing.T) {
	for _, tc := range []struct {
		cf, other  float64
		want       string
		comparable bool
	}{
		{1, 8.4, "8.4×", true},
		{2, 1, "0.5×", true},
		{0, 350, "∞", true},
		{0, 0, "= (both 0)", false},
	} {
		s, _, comparable := ratio(tc.cf, tc.other)
		if s != tc.want || comparable != tc.comparable {
			t.Errorf("ratio(%v, %v) = %q, %v; want %q, %v", tc.cf, tc.other, s, comparable, tc.want, tc.comparable)
		}
	}
}

// TestAddressesNeverCollide: a change-to-answer sample must set an address no Service
// already has, or the DNS server would "answer" before the tool did anything.
func TestAddressesNeverCollide(t *testing.T) {
	lb := map[string]bool{}
	for i := range 1000 {
		ip := loadBalancerIP(i)
		if !strings.HasPrefix(ip, "192.0.2.") || strings.HasSuffix(ip, ".0") || strings.HasSuffix(ip, ".255") {
			t.Fatalf("loadBalancerIP(%d) = %s: want a host of 192.0.2.0/24", i, ip)
		}
		lb[ip] = true
	}
	seen := map[string]int{}
	for s := range 1000 {
		ip := changedIP(s)
		if lb[ip] {
			t.Fatalf("changedIP(%d) = %s is also a load-balancer address", s, ip)
		}
		if !strings.HasPrefix(ip, "198.51.100.") && !strings.HasPrefix(ip, "203.0.113.") {
			t.Fatalf("changedIP(%d) = %s: want TEST-NET-2 or -3", s, ip)
		}
		if prev, ok := seen[ip]; ok && s-prev < 254 {
			t.Fatalf("changedIP(%d) = changedIP(%d) = %s: consecutive samples must differ", s, prev, ip)
		}
		seen[ip] = s
	}
}

func TestHasA(t *testing.T) {
	answer := func(rcode int, ips ...string) *dns.Msg {
		m := new(dns.Msg)
		m.SetQuestion("svc-1.crossfade.kubebench.test.", dns.TypeA)
		m.Rcode = rcode
		for _, ip := range ips {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: "svc-1.crossfade.kubebench.test.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300},
				A: net.ParseIP(ip)})
		}
		return m
	}
	for _, tc := range []struct {
		name string
		resp *dns.Msg
		want bool
	}{
		{"the new address", answer(dns.RcodeSuccess, "198.51.100.1"), true},
		{"among others", answer(dns.RcodeSuccess, "192.0.2.1", "198.51.100.1"), true},
		{"still the old one", answer(dns.RcodeSuccess, "192.0.2.1"), false},
		{"NXDOMAIN", answer(dns.RcodeNameError), false},
		{"SERVFAIL with a stray record", answer(dns.RcodeServerFailure, "198.51.100.1"), false},
		{"no response", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hasA(tc.resp, "198.51.100.1"); got != tc.want {
				t.Errorf("hasA = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
		check   func(options) bool
	}{
		{name: "defaults are the full run", check: func(o options) bool {
			return o.services == 10000 && o.idle == 5*time.Minute && o.samples == 50 && slices.Equal(o.tools, toolNames)
		}},
		{name: "a quick run", args: []string{"--services", "1000", "--idle", "30s", "--samples", "5"}, check: func(o options) bool {
			return o.services == 1000 && o.idle == 30*time.Second && o.samples == 5
		}},
		{name: "tools in the order asked", args: []string{"--tools", "external-dns-events, crossfade"}, check: func(o options) bool {
			return slices.Equal(o.tools, []string{toolExternalDNSEvents, toolCrossfade})
		}},
		{name: "unknown tool", args: []string{"--tools", "crossfade,kube-dns"}, wantErr: `unknown tool "kube-dns"`},
		{name: "tool twice", args: []string{"--tools", "crossfade,crossfade"}, wantErr: "twice"},
		{name: "no services", args: []string{"--services", "0"}, wantErr: "--services 0"},
		{name: "more Services than cluster IPs", args: []string{"--services", "70000"}, wantErr: "service CIDR"},
		{name: "stray argument", args: []string{"now"}, wantErr: "unexpected arguments"},
		{name: "both scenarios and the cluster's defaults", check: func(o options) bool {
			return slices.Equal(o.scenarios, []string{scenarioServices, scenarioCluster}) && o.podsPerService == 3 && o.nodes == 20 &&
				o.clusterHold == 70*time.Second && o.has(scenarioCluster) && o.has(scenarioServices)
		}},
		{name: "cluster scenario alone", args: []string{"--scenarios", "cluster", "--pods-per-service", "5", "--nodes", "50"}, check: func(o options) bool {
			return slices.Equal(o.scenarios, []string{scenarioCluster}) && !o.has(scenarioServices) && o.podsPerService == 5 && o.nodes == 50
		}},
		{name: "scenarios run in their fixed order", args: []string{"--scenarios", " cluster, services "}, check: func(o options) bool {
			return slices.Equal(o.scenarios, []string{scenarioServices, scenarioCluster})
		}},
		{name: "the hold scenario at the controller's defaults", args: []string{"--tools", "crossfade", "--scenarios", "hold"}, check: func(o options) bool {
			return slices.Equal(o.scenarios, []string{scenarioHold}) && o.holdSamples == 3 && o.holdProbe == 0 && o.holdTimeout == 6*time.Minute
		}},
		{name: "hold runs between services and cluster", args: []string{"--scenarios", "cluster,hold,services"}, check: func(o options) bool {
			return slices.Equal(o.scenarios, []string{scenarioServices, scenarioHold, scenarioCluster})
		}},
		{name: "hold without crossfade", args: []string{"--tools", "external-dns", "--scenarios", "hold"}, wantErr: "measures crossfade only"},
		{name: "no hold samples", args: []string{"--scenarios", "hold", "--hold-samples", "0"}, wantErr: "--hold-samples 0"},
		{name: "unknown scenario", args: []string{"--scenarios", "services,pods"}, wantErr: `unknown scenario "pods"`},
		{name: "scenario twice", args: []string{"--scenarios", "cluster,cluster"}, wantErr: "twice"},
		{name: "no scenario", args: []string{"--scenarios", " , "}, wantErr: "want one or more"},
		{name: "no Pods per Service", args: []string{"--pods-per-service", "0"}, wantErr: "--pods-per-service 0"},
		{name: "more Pods per Service than one slice holds", args: []string{"--pods-per-service", "101"}, wantErr: "--pods-per-service 101"},
		{name: "no Nodes", args: []string{"--nodes", "0"}, wantErr: "--nodes 0"},
		{name: "too many Nodes", args: []string{"--nodes", "5001"}, wantErr: "--nodes 5001"},
		{name: "negative hold", args: []string{"--cluster-hold", "-1s"}, wantErr: "--cluster-hold"},
		{name: "more Pods than the Pod network holds", args: []string{"--services", "30000", "--pods-per-service", "3"}, wantErr: "10.244.0.0/16 holds 65534"},
		{name: "the Pod network's limit only binds the cluster scenario", args: []string{"--services", "30000", "--pods-per-service", "3", "--scenarios", "services"},
			check: func(o options) bool { return o.services == 30000 }},
		{name: "the whole Pod network", args: []string{"--services", "32767", "--pods-per-service", "2"}, check: func(o options) bool {
			return o.layout().pods() == maxPods
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(o) {
				t.Errorf("options = %+v", o)
			}
		})
	}
}

func TestRenderReport(t *testing.T) {
	o, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := (options{tools: []string{toolCrossfade}}).selectTools()
	if err != nil {
		t.Fatal(err)
	}
	ext := tool{name: toolExternalDNS, title: "external-dns (default)", kind: kindExternalDNS}
	evt := tool{name: toolExternalDNSEvents, title: "external-dns --events", kind: kindExternalDNS, events: true}
	results := []*result{
		{tool: tools[0], synced: true, firstSync: 1500 * time.Millisecond, peakRSS: 80 << 20, idle: 5 * time.Minute, idleCalls: callCounts{},
			samples: []time.Duration{300 * time.Millisecond, 400 * time.Millisecond}},
		{tool: ext, synced: true, firstSync: 36 * time.Second, peakRSS: 160 << 20, idle: 5 * time.Minute,
			idleCalls: callCounts{"ListResourceRecordSets ok": 335, "ListHostedZones ok": 10},
			samples:   []time.Duration{20 * time.Second, 58 * time.Second}},
		{tool: evt, err: errTest},
	}
	rep := renderReport(o, environment{Info: machine.Info{CPUs: 2}, args: []string{"--idle", "5m"}}, results)
	for _, want := range []string{
		"| first sync: process start → all 10,000 records in the zone (goal < 10s) | 1.50 s ✓ | 36.0 s | n/a (failed) | 24.0× / — ✓ |",
		"| peak RSS, VmHWM at the end (goal < 150 MiB) | 80 MiB ✓ | 160 MiB | n/a (failed) | 2.0× / — ✗ |",
		"| Route 53 API calls in a 5m0s idle window (goal 0) | 0 ✓ | 345 | n/a (failed) | ∞ / — ✓ |",
		"| change → DNS answer, p99 (goal < 1s) | 400 ms ✓ | 58.0 s | n/a (failed) | 145.0× / — ✓ |",
		"| error |  |  | the tool broke |",
		"go run ./bench/kubebench --idle 5m",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
}

var errTest = errorString("the tool broke\nsecond line")

type errorString string

func (e errorString) Error() string { return string(e) }

func TestReproduce(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "go run ./bench/kubebench"},
		{[]string{"--services", "1000", "--idle", "30s"}, "go run ./bench/kubebench --services 1000 --idle 30s"},
		{[]string{"--tools", "crossfade, external-dns"}, "go run ./bench/kubebench --tools 'crossfade, external-dns'"},
		{[]string{"--out", "/tmp/a.md", "--keep", "--services", "1000", "-cpuprofile=/tmp/c", "--memprofile", "m"},
			"go run ./bench/kubebench --services 1000"},
	} {
		if got := reproduce(tc.args); got != tc.want {
			t.Errorf("reproduce(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestRunLeavesNothingRunning runs the benchmark for real on a few Services (crossfade,
// and external-dns --events when it is built), every scenario (hold with a 300 ms probe),
// and checks the report has every number and that no process it started outlives it.
func TestRunLeavesNothingRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd, kube-apiserver and the controllers")
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		// As kubetest.Start: CI builds them, so there their absence is a failure.
		testenv.File(t, filepath.Join(kubetest.BinDir(), name), "`make test` builds it (scripts/deps.sh test)")
	}
	o, err := parseFlags([]string{"--services", "20", "--idle", "2s", "--settle", "1s", "--samples", "2", "--sample-gap", "100ms",
		"--tools", "crossfade", "--nodes", "3", "--pods-per-service", "2", "--cluster-hold", "1s",
		"--scenarios", "services,hold,cluster", "--hold-samples", "1", "--hold-probe-interval", "300ms"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(o.externalDNS); err == nil {
		o.tools = append(o.tools, toolExternalDNSEvents)
	}
	// Everything run writes (the crossfade binary, etcd's data, the kubeconfig) is under
	// this dir, so a process still running with it in its command line is a leak.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// KUBEBENCH_CROSSFADE names a crossfade binary built before, for a checkout whose
	// source others are editing meanwhile.
	if o.crossfade = os.Getenv("KUBEBENCH_CROSSFADE"); o.crossfade == "" {
		if o.crossfade, err = buildCrossfade(t.Context(), tmp, discard()); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	if err := runTo(t.Context(), o, discard(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	rep := out.String()
	if strings.Contains(rep, "n/a (failed)") {
		t.Errorf("a measurement failed:\n%s", rep)
	}
	if !strings.Contains(rep, "| Route 53 API calls in a 2s idle window (goal 0) | 0 ✓ |") {
		t.Errorf("crossfade made Route 53 calls while idle, or the row is missing:\n%s", rep)
	}
	// The hold scenario: the controller confirmed the hold and dropped the confirmation
	// after the release, and made no Route 53 call while nothing changed.
	// The cluster scenario ran too: the API server took every fixture (a Pod or slice it
	// refused would have failed the run), and every tool synced over them.
	for _, want := range []string{
		"| holds confirmed (not confirmed within 6m0s) | 1 (0) |",
		"goal 0) | 0 ✓: none |",
		"| Route 53 API calls while the hold is confirmed, nothing changing",
		"## crossfade controller vs external-dns in a cluster: 20 LoadBalancer Services, 40 Running Pods, 20 EndpointSlices, 3 Nodes",
		"| CPU time at the first sync (user + system) |",
		"40 Pods, 2 per Service, in ",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
	if left := processesMentioning(tmp); len(left) > 0 {
		t.Errorf("still running after run returned: %q", left)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// processesMentioning returns the command lines of the running processes that mention
// dir in one of their arguments.
func processesMentioning(dir string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(b), dir) {
			continue
		}
		out = append(out, e.Name()+": "+strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " "))
	}
	return out
}

// TestSampleGapSpreadsOverTheCycle: the pauses between samples must cover a periodic
// tool's whole cycle, or every change lands at the same point of it (right after a sync)
// and waits as long as it can.
func TestSampleGapSpreadsOverTheCycle(t *testing.T) {
	for _, tc := range []struct {
		name        string
		base, cycle time.Duration
	}{
		{"external-dns at its 1 m interval", time.Second, time.Minute},
		{"external-dns --events", time.Second, 5 * time.Second},
		{"crossfade, no cycle", time.Second, 0},
		{"no base", 0, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 1))
			span := max(tc.base, tc.cycle)
			lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
			for range 1000 {
				g := sampleGap(tc.base, tc.cycle, rng)
				if g < tc.base || g >= tc.base+span {
					t.Fatalf("gap %s outside [%s, %s)", g, tc.base, tc.base+span)
				}
				lo, hi = min(lo, g), max(hi, g)
			}
			// 1,000 uniform draws leave no tenth of the span uncovered at either end.
			if lo-tc.base > span/10 || tc.base+span-hi > span/10 {
				t.Errorf("gaps %s … %s do not cover [%s, %s)", lo, hi, tc.base, tc.base+span)
			}
		})
	}
	if g := sampleGap(0, 0, rand.New(rand.NewPCG(1, 1))); g != 0 {
		t.Errorf("no base and no cycle: gap %s, want 0", g)
	}
}

// equalCounts reports whether a and b hold the same counts.
func equalCounts(a, b callCounts) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
