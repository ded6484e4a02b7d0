package changes

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// readOnly is the TXT registry without Index: the planner then labels the zone with Read,
// a map of labels per record, as it did before Index.
type readOnly struct{ reg *registry.TXT }

func (r readOnly) OwnerID() string { return r.reg.OwnerID() }

func (r readOnly) Read(records []*endpoint.Endpoint) registry.Zone { return r.reg.Read(records) }

func (r readOnly) For(rec *endpoint.Endpoint) []*endpoint.Endpoint { return r.reg.For(rec) }

// randomZone makes a small zone of a few names, each with some of: this owner's, another
// owner's and nobody's records (simple or weighted), their ownership records (the
// type-prefixed form, the legacy one, or both; some carrying the planner's own labels), a
// user's TXT record, an unmanaged MX, a cutover's hold; and what the sources want of it.
func randomZone(rng *rand.Rand) (current, desired []*endpoint.Endpoint) {
	regs := map[string]*registry.TXT{}
	for _, o := range []string{"blue", "green"} {
		regs[o], _ = registry.New(registry.Config{OwnerID: o})
	}
	legacy, _ := registry.New(registry.Config{OwnerID: "blue", WriteLegacy: true})
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	for n := range 1 + rng.IntN(6) {
		name := fmt.Sprintf("n%d.example.com", n)
		for _, set := range []string{"", "blue", "green"} {
			if rng.IntN(3) == 0 {
				continue
			}
			typ := pick("A", "A", "AAAA", "CNAME")
			target := pick("192.0.2.1", "192.0.2.2")
			if typ == "AAAA" {
				target = pick("2001:db8::1", "2001:db8::2")
			} else if typ == "CNAME" {
				target = pick("lb.example.net", "lb2.example.net")
			}
			cur := rec(name, typ, target)
			if set != "" {
				weighted(cur, set, int64(rng.IntN(3)*50))
				cur.TTL = endpoint.TTL(pick("60", "300")[0]-'0') * 60
			}
			owner := pick("blue", "blue", "green", "")
			res := pick("service/default/a", "service/default/b")
			current = append(current, cur)
			if owner != "" {
				l := cur.Clone()
				l.Labels = endpoint.Labels{endpoint.OwnerLabel: owner, endpoint.ResourceLabel: res}
				switch rng.IntN(4) {
				case 0:
					l.Labels[WantsTTLLabel] = "60"
				case 1:
					l.Labels[endpoint.ConfirmsHoldLabel] = "run-1"
				}
				switch {
				case owner == "blue" && rng.IntN(4) == 0:
					current = append(current, legacy.For(l)...)
				case owner == "blue" && rng.IntN(6) == 0:
					// The legacy form alone.
					all := legacy.For(l)
					current = append(current, all[len(all)-1])
				default:
					current = append(current, regs[owner].For(l)...)
				}
			}
			if rng.IntN(4) > 0 {
				d := cur.Clone()
				d.Labels = endpoint.Labels{endpoint.ResourceLabel: res}
				if rng.IntN(3) == 0 {
					d.Targets = endpoint.NewTargets(pick("192.0.2.9", "lb3.example.net"))
				}
				if set != "" && rng.IntN(3) == 0 {
					d.Policy = endpoint.WeightedPolicy(int64(rng.IntN(3) * 50))
					d.TTL = 60
				}
				desired = append(desired, d)
			}
		}
		if rng.IntN(4) == 0 {
			current = append(current, rec(name, "TXT", `"v=spf1 -all"`))
		}
		if rng.IntN(5) == 0 {
			current = append(current, rec(name, "MX", "10 mail.example.net"))
		}
		if rng.IntN(5) == 0 {
			current = append(current, registry.Authority{Name: name, Cutover: "c1", Types: []string{"A"}, Runner: registry.Runner{Token: "run-1"}}.Record())
		}
	}
	rng.Shuffle(len(current), func(i, j int) { current[i], current[j] = current[j], current[i] })
	return current, desired
}

// renderAll is everything a plan says, the Labels of every change included (as a
// provider or a report reads them: the field, not AllLabels).
func renderAll(p *Set) string {
	var b strings.Builder
	for i, u := range p.Units {
		for _, x := range u {
			fmt.Fprintf(&b, "unit %d %s %v\n", i, x.Name, x.Resources)
			for _, c := range x.Changes {
				e := c.Endpoint
				fmt.Fprintf(&b, "  %s %s %s ttl=%d %v labels=%v props=%v\n", c.Action, e.Key(), e.Policy, e.TTL, e.Targets, e.Labels, e.ProviderSpecific)
			}
		}
	}
	for i, cs := range [][]Conflict{p.Conflicts, p.Notes, p.Kept} {
		for _, c := range cs {
			fmt.Fprintf(&b, "%s %s: %s / %s / %s\n", []string{"conflict", "note", "kept"}[i], c.Key, c.Reason, c.Advice, c.Resource)
		}
	}
	fmt.Fprintf(&b, "summary %+v\n", p.Summary)
	return b.String()
}

func cloneAll(in []*endpoint.Endpoint) []*endpoint.Endpoint {
	out := make([]*endpoint.Endpoint, len(in))
	for i, e := range in {
		out[i] = e.Clone()
	}
	return out
}

// TestIndexPlansAsRead plans random zones twice, once with the registry's Index (the
// ownership values read on demand) and once with Read (a map of labels per record), and
// wants the same plan, labels included, and the same labels on the zone's records after.
func TestIndexPlansAsRead(t *testing.T) {
	reg, err := registry.New(registry.Config{OwnerID: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(32, 1))
	for i := range 3000 {
		current, desired := randomZone(rng)
		policy := []Policy{Sync, Sync, UpsertOnly, CreateOnly}[rng.IntN(4)]
		var keep []string
		if rng.IntN(5) == 0 {
			keep = []string{"service/default/a"}
		}
		curA, curB := cloneAll(current), cloneAll(current)
		a := Calculate(Input{Desired: cloneAll(desired), Current: curA, Registry: reg, Policy: policy, Keep: keep, Zone: "example.com"})
		b := Calculate(Input{Desired: cloneAll(desired), Current: curB, Registry: readOnly{reg}, Policy: policy, Keep: keep, Zone: "example.com"})
		if ga, gb := renderAll(a), renderAll(b); ga != gb {
			t.Fatalf("zone %d (%s): the plan with Index differs from the one with Read:\nIndex:\n%s\nRead:\n%s\nzone:\n%s", i, policy, ga, gb, describeAll(current))
		}
		for j := range curA {
			if la, lb := curA[j].AllLabels(), curB[j].AllLabels(); !maps.Equal(la, lb) || curA[j].Owner() != curB[j].Owner() || curA[j].Resource() != curB[j].Resource() {
				t.Fatalf("zone %d: record %s labelled %v by Index, %v by Read", i, curA[j].Key(), la, lb)
			}
		}
	}
}

func describeAll(recs []*endpoint.Endpoint) string {
	var out []string
	for _, e := range recs {
		out = append(out, fmt.Sprintf("%s %s ttl=%d %v", e.Key(), e.Policy, e.TTL, e.Targets))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// TestCalculateBuildsNoLabelMapPerRecord guards what made planning a large zone cheap:
// the planner reads each record's owner from its ownership record without building a
// map of labels for it (two allocations each), so planning a zone where nothing changed
// allocates a handful of times per plan, not per record.
func TestCalculateBuildsNoLabelMapPerRecord(t *testing.T) {
	const n = 2000
	reg, err := registry.New(registry.Config{OwnerID: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	var current, desired []*endpoint.Endpoint
	for i := range n {
		name := fmt.Sprintf("svc%04d.example.com", i)
		res := fmt.Sprintf("service/default/svc%04d", i)
		cur := weighted(rec(name, "A", "192.0.2.1"), "blue", 1)
		l := cur.Clone()
		l.Labels = endpoint.Labels{endpoint.OwnerLabel: "blue", endpoint.ResourceLabel: res}
		current = append(current, cur)
		current = append(current, reg.For(l)...)
		desired = append(desired, from(weighted(rec(name, "A", "192.0.2.1"), "blue", 1), res))
	}
	allocs := testing.AllocsPerRun(3, func() {
		if p := Calculate(Input{Desired: desired, Current: current, Registry: reg}); len(p.Batches) != 0 {
			t.Fatalf("planned %d batches for a zone that holds what is wanted", len(p.Batches))
		}
	})
	t.Logf("planning %d unchanged records: %v allocations", n, allocs)
	// Before: 2 per record for its labels, 4,000 and more here.
	if allocs > n/10 {
		t.Errorf("planning %d unchanged records allocates %v times, want at most %d", n, allocs, n/10)
	}
}

// TestPlannerLabelPart keeps plannerLabelsDiffer's shortcut right: every label it
// compares has plannerLabelPart in its key.
func TestPlannerLabelPart(t *testing.T) {
	for _, k := range []string{endpoint.WantsWeightLabel, WantsTTLLabel, endpoint.ConfirmsHoldLabel} {
		if !strings.Contains(k, plannerLabelPart) {
			t.Errorf("label %q lacks %q: plannerLabelsDiffer would not see it change", k, plannerLabelPart)
		}
	}
}

// TestNameIndexInOrder wants the index of a zone listed in order of name (searched as
// listed) to find what the maps find: the same records at every name, in the order
// listed, and the same record for every key.
func TestNameIndexInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 2))
	names := []string{"a.example.com", "a-a.example.com", "b.example.com", "cname-b.example.com", "c.example.com"}
	slices.Sort(names)
	all := func(*endpoint.Endpoint) bool { return false }
	for range 500 {
		var list []*endpoint.Endpoint
		for _, n := range names {
			for range rng.IntN(3) {
				e := rec(n, []string{"TXT", "MX", "SRV"}[rng.IntN(3)], fmt.Sprint(rng.IntN(9)))
				e.SetIdentifier = []string{"", "x"}[rng.IntN(2)]
				list = append(list, e)
			}
		}
		x, _ := newNameIndex(list, all)
		if len(list) > 0 && x.sorted == nil {
			t.Fatalf("records listed in order of name were put in maps: %s", describeAll(list))
		}
		m := mapIndex(list)
		for _, n := range append(names, "absent.example.com", "") {
			if got, want := x.at(n), m.at(n); !slices.Equal(got, want) {
				t.Fatalf("at(%q) = %v searched, %v from the maps", n, got, want)
			}
			for _, typ := range []string{"TXT", "MX", "SRV", "A"} {
				for _, id := range []string{"", "x"} {
					k := endpoint.Key{Name: n, Type: typ, SetIdentifier: id}
					if got, want := x.find(k), m.find(k); got != want {
						t.Fatalf("find(%s) = %v searched, %v from the maps", k, got, want)
					}
				}
			}
		}
	}
}
