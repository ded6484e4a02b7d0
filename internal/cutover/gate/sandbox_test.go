package gate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// member is one weighted record set of a test zone.
type member struct {
	id     string
	weight int64
	values []string
}

// testZone is example.com in a sandbox started for the test and closed after it.
type testZone struct {
	sb     *sandbox.Sandbox
	zoneID string
}

func startZone(t *testing.T) testZone {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a sandbox (a real authoritative DNS server); not in -short")
	}
	sb := sandboxtest.Start(t)
	z, _, err := sb.Store().CreateZone("example.com", "ref-"+t.Name(), "", false)
	if err != nil {
		t.Fatalf("create zone: %v", err)
	}
	return testZone{sb: sb, zoneID: z.ID}
}

// dnsGate is a DNS gate dns-1 asking z's server 400 samples, judged to a tolerance of 0.1.
func (z testZone) dnsGate(t *testing.T) *DNS {
	t.Helper()
	tol := 0.1
	d, err := NewDNS("dns-1", spec.DNSGate{Servers: []string{z.sb.DNSAddr()}, Samples: 400, Tolerance: &tol})
	if err != nil {
		t.Fatalf("dns gate on %s: %v", z.sb.DNSAddr(), err)
	}
	return d
}

// setWeighted writes name's weighted members in one batch, as the engine's lever would,
// and returns the gate's view of the record.
func (z testZone) setWeighted(t *testing.T, name, typ string, ms ...member) Record {
	t.Helper()
	rec := Record{Name: name, Type: typ, Members: map[string][]string{}}
	var changes []zones.Change
	for _, m := range ms {
		w, ttl := m.weight, int64(60)
		changes = append(changes, zones.Change{Action: zones.Upsert, Set: zones.RRSet{
			Name: name, Type: typ, SetIdentifier: m.id, Weight: &w, TTL: &ttl, Records: m.values,
		}})
		rec.Members[m.id] = slices.Clone(m.values)
	}
	if _, err := z.sb.Store().Apply(z.zoneID, "", changes); err != nil {
		t.Fatalf("apply weights for %s: %v", name, err)
	}
	return rec
}

func weightsOf(ms ...member) map[string]int64 {
	w := map[string]int64{}
	for _, m := range ms {
		w[m.id] = m.weight
	}
	return w
}

func TestDNSGateAgainstSandbox(t *testing.T) {
	z := startZone(t)
	blue := member{id: "blue", values: []string{"192.0.2.10"}}
	green := member{id: "green", values: []string{"192.0.2.20", "192.0.2.21"}}
	with := func(m member, w int64) member { m.weight = w; return m }

	for _, tc := range []struct {
		name    string
		written []member         // in the zone
		claimed map[string]int64 // in the step; nil means as written
		record  string           // queried name; default app.example.com
		pass    bool
		detail  []string
		// match is a pattern the detail must match, for measured numbers that vary run to run.
		match string
		// blueBelow bounds blue's measured share, proving the gate read the zone, not the claim.
		blueBelow float64
	}{
		{
			name:    "1:3 written and measured",
			written: []member{with(blue, 1), with(green, 3)},
			pass:    true,
			detail:  []string{"blue", "(want 25%)", "green", "(want 75%)"},
		},
		{
			name:    "step claims 1:1, zone has 1:3",
			written: []member{with(blue, 1), with(green, 3)},
			claimed: map[string]int64{"blue": 1, "green": 1},
			// Blue's true share is 25 % (σ ≈ 2.2 % over 400 answers); 40 % is ~7σ away.
			match:     `app\.example\.com/A: share off by more than 10%: blue \d+(\.\d+)?% vs 50% written, green \d+(\.\d+)?% vs 50% written \(400 answers\)`,
			blueBelow: 0.40,
		},
		{
			name:    "0:0 splits evenly",
			written: []member{with(blue, 0), with(green, 0)},
			pass:    true,
			detail:  []string{"(want 50%)"},
		},
		{
			name:    "all to green",
			written: []member{with(blue, 0), with(green, 255)},
			pass:    true,
			detail:  []string{"blue 0% (want 0%)", "green 100% (want 100%)"},
		},
		{
			name:    "a name with no records answers empty",
			written: []member{with(blue, 1), with(green, 1)},
			record:  "missing.example.com",
			detail:  []string{"missing.example.com/A: 200 of 200 answers empty (e.g. NXDOMAIN from 127.0.0.1:"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := z.setWeighted(t, "app.example.com", "A", tc.written...)
			if tc.record != "" {
				rec.Name = tc.record
			}
			weights := tc.claimed
			if weights == nil {
				weights = weightsOf(tc.written...)
			}
			d, err := NewDNS("dns-1", spec.DNSGate{Servers: []string{z.sb.DNSAddr()}})
			if err != nil {
				t.Fatal(err)
			}
			r := d.Check(context.Background(), Step{Index: 1, From: "blue", To: "green", Weights: weights, Records: []Record{rec}})
			t.Logf("pass=%v detail: %s", r.Pass, r.Detail)
			if r.Pass != tc.pass || r.Err != "" {
				t.Fatalf("Pass = %v (Err %q), want %v: %s", r.Pass, r.Err, tc.pass, r.Detail)
			}
			for _, s := range tc.detail {
				if !strings.Contains(r.Detail, s) {
					t.Errorf("Detail lacks %q: %s", s, r.Detail)
				}
			}
			if tc.match != "" && !regexp.MustCompile(tc.match).MatchString(r.Detail) {
				t.Errorf("Detail does not match %s: %s", tc.match, r.Detail)
			}
			key := rec.Name + "/A"
			if share := r.Values[key+".blue.share"]; tc.blueBelow > 0 && share >= tc.blueBelow {
				t.Errorf("blue share = %v, want < %v (the zone holds 1:3)", share, tc.blueBelow)
			}
			if n := r.Values[key+".samples"]; n < spec.DefaultDNSSamples {
				t.Errorf("%s.samples = %v, want ≥ %d", key, n, spec.DefaultDNSSamples)
			}
			if tc.pass && r.Values["empty"] != 0 {
				t.Errorf("empty = %v on a passing check", r.Values["empty"])
			}
			if tc.record != "" && r.Values["empty"] != r.Values[key+".samples"] {
				t.Errorf("empty = %v, want every sample", r.Values["empty"])
			}
		})
	}
}

// An answer with values that belong to no member is "other" and fails the gate.
func TestDNSGateForeignAnswer(t *testing.T) {
	z := startZone(t)
	rec := z.setWeighted(t, "app.example.com", "A",
		member{id: "blue", weight: 1, values: []string{"192.0.2.10"}},
		member{id: "green", weight: 1, values: []string{"192.0.2.20"}})
	rec.Members["green"] = []string{"192.0.2.99"} // the engine believes green answers this
	d, err := NewDNS("dns-1", spec.DNSGate{Servers: []string{z.sb.DNSAddr()}, Samples: 50})
	if err != nil {
		t.Fatal(err)
	}
	r := d.Check(context.Background(), Step{Weights: map[string]int64{"blue": 1, "green": 1}, Records: []Record{rec}})
	if r.Pass || !strings.Contains(r.Detail, "answers matched no member (e.g. 192.0.2.20)") || r.Values["other"] == 0 {
		t.Errorf("got pass=%v other=%v: %s", r.Pass, r.Values["other"], r.Detail)
	}
}

// closedUDPPort is a loopback UDP address nothing listens on: a query sent there gets no
// reply (the kernel answers port unreachable at once, so the test does not wait out
// timeouts). The port lies below the ephemeral range (Linux's default starts at 32768):
// one taken from it (port 0) may be handed next to the gate's own client socket, which
// then sends its query to itself and reads it back as an answer.
func closedUDPPort(t *testing.T) string {
	t.Helper()
	for port := 20000 + rand.IntN(10000); ; port++ {
		c, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			if port >= 32000 {
				t.Fatal(err)
			}
			continue // taken: try the next
		}
		addr := c.LocalAddr().String()
		c.Close()
		return addr
	}
}

// A query no server replies to is not an empty answer: the shares are judged on the
// answered ones, and a record with fewer than half its queries answered cannot be judged
// (Result.Err: the engine holds the step rather than rolling back on the runner's network).
func TestDNSGateUnanswered(t *testing.T) {
	z := startZone(t)
	ms := []member{
		{id: "blue", weight: 1, values: []string{"192.0.2.10"}},
		{id: "green", weight: 3, values: []string{"192.0.2.20"}},
	}
	rec := z.setWeighted(t, "app.example.com", "A", ms...)
	dead := closedUDPPort(t)
	for _, tc := range []struct {
		name       string
		servers    []string
		pass       bool
		err        string // substring of Result.Err; "" wants none
		unanswered float64
	}{
		// Round robin over a live and a dead server: half the queries answered (-1: as many
		// unanswered as answered; a share off by chance on 100 answers is sampled once more).
		{"half answered", []string{z.sb.DNSAddr(), dead}, true, "", -1},
		{"none answered", []string{dead}, false, "200 of 200 queries got no reply", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := NewDNS("dns-1", spec.DNSGate{Servers: tc.servers, Samples: 200})
			if err != nil {
				t.Fatal(err)
			}
			r := d.Check(context.Background(), Step{Weights: weightsOf(ms...), Records: []Record{rec}})
			if r.Pass != tc.pass {
				t.Errorf("pass %v, want %v: %s (err %q)", r.Pass, tc.pass, r.Detail, r.Err)
			}
			if tc.err == "" && r.Err != "" || tc.err != "" && !strings.Contains(r.Err, tc.err) {
				t.Errorf("err %q, want %q", r.Err, tc.err)
			}
			want := tc.unanswered
			if want < 0 {
				want = r.Values["app.example.com/A.samples"]
			}
			if got := r.Values["app.example.com/A.unanswered"]; got != want || got == 0 {
				t.Errorf("unanswered %v, want %v: %s (err %q)", got, want, r.Detail, r.Err)
			}
			if e := r.Values["empty"]; e != 0 {
				t.Errorf("%v answers counted empty: no server answered empty", e)
			}
		})
	}
}
