package gate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// sampledKeys are the record keys ("<name>/<type>") a check sampled, from its values.
func sampledKeys(r Result) []string {
	var out []string
	for k := range r.Values {
		if rest, ok := strings.CutSuffix(k, ".samples"); ok {
			out = append(out, rest)
		}
	}
	slices.Sort(out)
	return out
}

// fleetStep writes n names app000…app<n-1>.example.com in z, each blue 0 and green 1 as
// the step claims (every answer green: a correct record judged without chance), and
// returns the step.
func fleetStep(t *testing.T, z testZone, n int) Step {
	t.Helper()
	blue := member{id: "blue", weight: 0, values: []string{"192.0.2.10"}}
	green := member{id: "green", weight: 1, values: []string{"192.0.2.20"}}
	s := Step{Index: 1, Weights: weightsOf(blue, green), Since: time.Unix(1_800_000_000, 0)}
	for i := range n {
		s.Records = append(s.Records, z.setWeighted(t, fmt.Sprintf("app%04d.example.com", i), "A", blue, green))
	}
	return s
}

// TestDNSGateSamplesFleet: with 1,000 records a check samples k = 20 of them in turn (not
// all 1,000), every record exactly once over ⌈N/k⌉ = 50 checks; the gate passes as Pending
// ("not judged yet") until then, and passes judged once every record has been.
func TestDNSGateSamplesFleet(t *testing.T) {
	const n, k = 1000, DefaultSampleNames
	z := startZone(t)
	s := fleetStep(t, z, n)
	d, err := NewDNS("dns-1", spec.DNSGate{Servers: []string{z.sb.DNSAddr()}, Samples: 10})
	if err != nil {
		t.Fatal(err)
	}
	checks := (n + k - 1) / k
	seen := map[string]int{}
	for c := 1; c <= checks; c++ {
		res := d.Check(context.Background(), s)
		got := sampledKeys(res)
		if len(got) > 2*k || len(got) == 0 {
			t.Fatalf("check %d sampled %d records, want 1 to %d (k in turn and at most k suspects): %.300s…", c, len(got), 2*k, res.Detail)
		}
		for _, key := range got {
			seen[key]++
		}
		if !res.Pass || res.Err != "" {
			t.Fatalf("check %d of correct records failed: %s (%s)", c, res.Detail, res.Err)
		}
		if wantPending := c < checks; res.Pending != wantPending {
			t.Fatalf("check %d: pending %v, want %v (%d of %d records judged): %s", c, res.Pending, wantPending, len(seen), n, res.Detail)
		}
		if res.Values["names.judged"] != float64(len(seen)) || res.Values["names"] != n {
			t.Fatalf("check %d: names.judged %v of %v, want %d of %d", c, res.Values["names.judged"], res.Values["names"], len(seen), n)
		}
		if c == 1 && !strings.HasPrefix(res.Detail, fmt.Sprintf("sampled %d of %d records this check", k, n)) {
			t.Fatalf("check 1 detail %q: want how many records it sampled first", res.Detail)
		}
	}
	if len(seen) != n {
		t.Fatalf("%d of %d records sampled in %d checks", len(seen), n, checks)
	}
	for key, times := range seen {
		if times != 1 {
			t.Fatalf("%s sampled %d times in the first %d checks, want once: the rotation repeats before covering", key, times, checks)
		}
	}
	// A new step's weights (here: the same weights written again later) are judged afresh.
	s.Since = s.Since.Add(time.Minute)
	if res := d.Check(context.Background(), s); !res.Pass || !res.Pending || res.Values["names.judged"] != k {
		t.Fatalf("after the weights took effect again: pass %v pending %v judged %v, want a pending pass with %d judged: %s",
			res.Pass, res.Pending, res.Values["names.judged"], k, res.Detail)
	}
}

// TestDNSGateCatchesOneWrongRecord: 1,000 records, one of them written with the wrong
// weights (blue 1, green 0 where the step says blue 0, green 1). Whether it comes first,
// in the middle or last in the rotation, the gate fails by the ⌈N/k⌉-th check, every
// check before passes only as Pending (so the step cannot pass), none of them sampled the
// wrong record, and the failing check names it.
func TestDNSGateCatchesOneWrongRecord(t *testing.T) {
	const n, k, seed = 1000, 25, 7
	bound := (n + k - 1) / k
	z := startZone(t)
	s := fleetStep(t, z, n)
	newGate := func() *DNS {
		d, err := NewDNS("dns-1", spec.DNSGate{Servers: []string{z.sb.DNSAddr()}, Samples: 10}, WithSampleNames(k), WithSeed(seed))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// The rotation's order, as a gate of this seed samples the records.
	var order []string
	d := newGate()
	for range bound {
		order = append(order, sampledKeys(d.Check(context.Background(), s))...)
	}
	if len(order) != n {
		t.Fatalf("%d records in the rotation's first %d checks, want %d", len(order), bound, n)
	}
	blue := member{id: "blue", weight: 1, values: []string{"192.0.2.10"}}
	green := member{id: "green", weight: 0, values: []string{"192.0.2.20"}}
	for _, tc := range []struct {
		name string
		at   int // the wrong record's place in the rotation
	}{{"first in turn", 0}, {"middle", n / 2}, {"last in turn", n - 1}} {
		t.Run(tc.name, func(t *testing.T) {
			wrong := order[tc.at]
			name := strings.TrimSuffix(wrong, "/A")
			z.setWeighted(t, name, "A", blue, green)
			t.Cleanup(func() {
				z.setWeighted(t, name, "A", member{id: "blue", weight: 0, values: blue.values}, member{id: "green", weight: 1, values: green.values})
			})
			d := newGate()
			for c := 1; ; c++ {
				if c > bound {
					t.Fatalf("%s not caught in %d checks (⌈%d/%d⌉)", wrong, bound, n, k)
				}
				res := d.Check(context.Background(), s)
				sampled := slices.Contains(sampledKeys(res), wrong)
				if sampled && res.Pass {
					t.Fatalf("check %d sampled %s and passed: %s", c, wrong, res.Detail)
				}
				if !res.Pass {
					if !sampled || !strings.Contains(res.Detail, wrong+": share off by more than 10%") {
						t.Fatalf("check %d failed without naming %s: %s (%s)", c, wrong, res.Detail, res.Err)
					}
					t.Logf("%s caught at check %d of at most %d", wrong, c, bound)
					if want := tc.at/k + 1; c != want {
						t.Fatalf("caught at check %d, want %d (its turn)", c, want)
					}
					return
				}
				if !res.Pending {
					t.Fatalf("check %d passed judged without having sampled %s: %s", c, wrong, res.Detail)
				}
			}
		})
	}
}

// rotationStep is a step of n records for the rotation alone (no DNS).
func rotationStep(n int) Step {
	s := Step{Weights: map[string]int64{"blue": 1, "green": 1}}
	for i := range n {
		s.Records = append(s.Records, Record{Name: fmt.Sprintf("r%03d.example.com", i), Type: "A"})
	}
	return s
}

// TestRotation: which records each check samples, as outcomes come in.
func TestRotation(t *testing.T) {
	all := func(p pick, o nameOutcome) map[int]nameOutcome {
		out := map[int]nameOutcome{}
		for _, i := range p.idx {
			out[i] = o
		}
		return out
	}
	t.Run("covers every record once in ceil(N/k) checks, then again", func(t *testing.T) {
		for _, tc := range []struct{ n, k int }{{10, 3}, {1000, 20}, {7, 7}, {5, 20}, {101, 10}} {
			var r rotation
			s := rotationStep(tc.n)
			seen := map[int]int{}
			checks := (tc.n + tc.k - 1) / tc.k
			for c := range checks {
				p := r.next(s, tc.k, 1)
				if len(p.idx) != min(tc.k, tc.n) {
					t.Fatalf("n %d k %d check %d: %d records, want %d", tc.n, tc.k, c, len(p.idx), min(tc.k, tc.n))
				}
				for _, i := range p.idx {
					seen[i]++
				}
				r.note(p, all(p, namePassed))
			}
			if len(seen) != tc.n || len(r.judged) != tc.n {
				t.Fatalf("n %d k %d: %d sampled, %d judged in %d checks, want all", tc.n, tc.k, len(seen), len(r.judged), checks)
			}
			// A record sampled twice in the first pass is only the wrap-around of the last
			// window, when k does not divide n.
			if extra := checks*min(tc.k, tc.n) - tc.n; extra < 0 || extra >= tc.k {
				t.Fatalf("n %d k %d: %d repeats", tc.n, tc.k, extra)
			}
		}
	})
	t.Run("a suspect is sampled again at the next check until it passes on a first sample", func(t *testing.T) {
		for _, o := range []nameOutcome{nameFailed, nameUnmeasured, nameClose} {
			var r rotation
			s := rotationStep(100)
			p := r.next(s, 10, 1)
			out := all(p, namePassed)
			bad := p.idx[3]
			out[bad] = o
			r.note(p, out)
			p2 := r.next(s, 10, 1)
			if len(p2.idx) != 11 || p2.idx[0] != bad || p2.rechecked != 1 {
				t.Fatalf("outcome %d: next check samples %v (rechecked %d), want %d first and then 10 in turn", o, p2.idx, p2.rechecked, bad)
			}
			if r.judged[bad] != (o == nameClose) {
				t.Fatalf("outcome %d: judged %v", o, r.judged[bad])
			}
			r.note(p2, all(p2, namePassed))
			if p3 := r.next(s, 10, 1); slices.Contains(p3.idx, bad) {
				t.Fatalf("outcome %d: %d sampled a third time after passing", o, bad)
			}
			if !r.judged[bad] {
				t.Fatalf("outcome %d: %d not judged after passing", o, bad)
			}
		}
	})
	t.Run("suspects are capped at k, the oldest first", func(t *testing.T) {
		var r rotation
		s := rotationStep(100)
		p := r.next(s, 10, 1)
		r.note(p, all(p, nameUnmeasured))
		p2 := r.next(s, 10, 1)
		out := all(p2, nameUnmeasured)
		r.note(p2, out)
		p3 := r.next(s, 10, 1)
		if p3.rechecked != 10 || len(p3.idx) != 20 {
			t.Fatalf("%d suspects of 20 rechecked, %d records: want 10 and 20", p3.rechecked, len(p3.idx))
		}
		if !slices.Equal(p3.idx[:10], slices.Sorted(slices.Values(p.idx))) {
			t.Fatalf("rechecked %v, want the first check's %v", p3.idx[:10], p.idx)
		}
	})
	t.Run("a check ended early moves the rotation past what it reached only", func(t *testing.T) {
		var r rotation
		s := rotationStep(100)
		p := r.next(s, 10, 1)
		out := map[int]nameOutcome{}
		for _, i := range p.idx[:4] {
			out[i] = namePassed
		}
		out[p.idx[4]] = nameUnmeasured // the check ended on it
		r.note(p, out)
		p2 := r.next(s, 10, 1)
		if p2.idx[0] != p.idx[4] || p2.window[0][1] != p.idx[5] {
			t.Fatalf("next check %v: want %d again first, then the window from %d", p2.idx, p.idx[4], p.idx[5])
		}
	})
	t.Run("new weights or a new Since judge afresh in the same order", func(t *testing.T) {
		var r rotation
		s := rotationStep(30)
		p := r.next(s, 10, 1)
		r.note(p, all(p, namePassed))
		s.Weights = map[string]int64{"blue": 0, "green": 1}
		p2 := r.next(s, 10, 1)
		if len(r.judged) != 0 || p2.idx[0] != r.order[10] {
			t.Fatalf("after new weights: %d judged, window from %d; want 0, and the rotation to go on at %d", len(r.judged), p2.idx[0], r.order[10])
		}
		r.note(p2, all(p2, namePassed))
		s.Since = time.Unix(1, 0)
		r.next(s, 10, 1)
		if len(r.judged) != 0 {
			t.Fatalf("after a new Since: %d judged, want 0", len(r.judged))
		}
	})
	t.Run("the seed orders the rotation", func(t *testing.T) {
		var a, b, c rotation
		s := rotationStep(50)
		a.next(s, 10, 1)
		b.next(s, 10, 1)
		c.next(s, 10, 2)
		if !slices.Equal(a.order, b.order) || slices.Equal(a.order, c.order) {
			t.Fatalf("orders %v %v %v: want the same for one seed, another for another", a.order[:5], b.order[:5], c.order[:5])
		}
	})
}

// TestNewDNSSampleNames: the option's default and the value refused.
func TestNewDNSSampleNames(t *testing.T) {
	d, err := NewDNS("dns-1", spec.DNSGate{Servers: []string{"127.0.0.1:53"}})
	if err != nil || d.sampleNames != DefaultSampleNames {
		t.Fatalf("default: %v, %v; want %d", d.sampleNames, err, DefaultSampleNames)
	}
	if _, err := NewDNS("dns-1", spec.DNSGate{Servers: []string{"127.0.0.1:53"}}, WithSampleNames(-1)); err == nil || !strings.Contains(err.Error(), "sampleNames -1") {
		t.Fatalf("sampleNames -1: %v, want refused", err)
	}
}

// TestDNSGateFailureNotHiddenByUnmeasured: a check that judged a record wrong fails, even
// when it then ends on a record it cannot measure (an alias whose target does not resolve):
// "could not measure", which the engine holds on for a few checks, must not hide a
// measured failure.
func TestDNSGateFailureNotHiddenByUnmeasured(t *testing.T) {
	z := startZone(t)
	s := Step{Index: 1, Weights: map[string]int64{"blue": 0, "green": 1}}
	s.Records = append(s.Records,
		z.setWeighted(t, "wrong.example.com", "A", member{id: "blue", weight: 1, values: []string{"192.0.2.10"}},
			member{id: "green", weight: 0, values: []string{"192.0.2.20"}}),
		Record{Name: "lost.example.com", Type: "A", Members: map[string][]string{
			"blue": {"192.0.2.10"}, "green": {"missing-target.example.com"}}})
	// A seed whose rotation checks wrong.example.com first.
	seed := uint64(0)
	for ; ; seed++ {
		var r rotation
		r.next(s, DefaultSampleNames, seed)
		if r.order[0] == 0 {
			break
		}
	}
	d, err := NewDNS("dns-1", spec.DNSGate{Servers: []string{z.sb.DNSAddr()}, Samples: 10}, WithSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	res := d.Check(context.Background(), s)
	if res.Pass || res.Err != "" || !strings.Contains(res.Detail, "wrong.example.com/A: share off by more than 10%") ||
		!strings.Contains(res.Detail, "check ended on lost.example.com/A") {
		t.Fatalf("pass %v err %q detail %q: want a failure naming wrong.example.com, and lost.example.com's error after it", res.Pass, res.Err, res.Detail)
	}
}

// TestDNSGateDetailInPlanOrder: a check samples its records in the rotation's shuffled
// order, yet its detail lists them in the plan's, whatever the seed: two checks of the
// same records read alike (a person comparing them, a page quoting one).
func TestDNSGateDetailInPlanOrder(t *testing.T) {
	const n = 6
	z := startZone(t)
	s := fleetStep(t, z, n)
	for seed := uint64(1); seed <= 8; seed++ {
		d, err := NewDNS("dns-1", spec.DNSGate{Servers: []string{z.sb.DNSAddr()}, Samples: 10}, WithSeed(seed))
		if err != nil {
			t.Fatal(err)
		}
		res := d.Check(context.Background(), s)
		if !res.Pass {
			t.Fatalf("seed %d: check of correct records failed: %s (%s)", seed, res.Detail, res.Err)
		}
		at := -1
		for i := range n {
			key := fmt.Sprintf("app%04d.example.com/A: ", i)
			j := strings.Index(res.Detail, key)
			if j <= at {
				t.Fatalf("seed %d: %q at %d, after the record before it (at %d): want the plan's order: %s", seed, key, j, at, res.Detail)
			}
			at = j
		}
	}
}
