package registry

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// own is the ownership value external-dns v0.21.0 writes.
func own(owner, resource string) endpoint.Targets {
	return endpoint.Targets{Payload(endpoint.Labels{endpoint.OwnerLabel: owner, endpoint.ResourceLabel: resource})}
}

func rec(name, typ string, targets ...string) *endpoint.Endpoint {
	return &endpoint.Endpoint{Name: name, Type: typ, TTL: 60, Targets: targets}
}

func txt(name string, targets endpoint.Targets) *endpoint.Endpoint {
	return &endpoint.Endpoint{Name: name, Type: endpoint.TypeTXT, TTL: 300, Targets: targets}
}

func weighted(e *endpoint.Endpoint, setID string, w int64) *endpoint.Endpoint {
	e.SetIdentifier, e.Policy = setID, endpoint.WeightedPolicy(w)
	return e
}

func alias(e *endpoint.Endpoint) *endpoint.Endpoint {
	e.TTL = 0
	e.SetProp(endpoint.PropAlias, "true")
	return e
}

// zone5993 is external-dns issue 5993's zone: three owners (a, b and c) share it, with
// weighted members, an alias A under both ownership forms, a legacy same-name ownership
// record, a record with no ownership record and one whose TXT has another heritage.
func zone5993() []*endpoint.Endpoint {
	return []*endpoint.Endpoint{
		{Name: "example.com", Type: "SOA", TTL: 900, Targets: endpoint.Targets{"ns-1.example.net. admin.example.com. 1 7200 900 1209600 86400"}},
		rec("example.com", "NS", "ns-1.example.net"),
		weighted(rec("app.example.com", "A", "192.0.2.1"), "a", 1),
		weighted(txt("a-app.example.com", own("a", "service/default/app")), "a", 1),
		weighted(rec("app.example.com", "A", "192.0.2.2"), "b", 1),
		weighted(txt("a-app.example.com", own("b", "service/default/app")), "b", 1),
		weighted(rec("app.example.com", "A", "192.0.2.3"), "c", 1),
		weighted(txt("a-app.example.com", own("c", "service/default/app")), "c", 1),
		rec("web.example.com", "A", "192.0.2.4"),
		txt("a-web.example.com", own("a", "service/default/web")),
		txt("web.example.com", own("a", "service/default/web")),
		alias(rec("edge.example.com", "A", "lb.example.com")),
		txt("cname-edge.example.com", own("a", "service/default/edge")),
		txt("a-edge.example.com", own("a", "service/default/edge")),
		rec("lb.example.com", "A", "192.0.2.5"),
		rec("foreign.example.com", "A", "192.0.2.6"),
		txt("a-foreign.example.com", endpoint.Targets{`"heritage=other-tool,external-dns/owner=a,external-dns/resource=service/default/foreign"`}),
		rec("shop.example.com", "A", "192.0.2.7"),
		txt("a-shop.example.com", own("b", "service/default/shop")),
		rec("old.example.com", "A", "192.0.2.8"),
		txt("old.example.com", own("c", "service/default/old")),
		txt("spf.example.com", endpoint.Targets{`"v=spf1 -all"`}),
	}
}

func moveStrings(p *HandoverPlan) []string {
	var out []string
	for _, u := range p.Units {
		for _, m := range u.Moves {
			out = append(out, m.String())
		}
	}
	return out
}

func changeStrings(p *HandoverPlan) (dels, creates []string) {
	for _, u := range p.Units {
		for _, d := range u.Delete {
			dels = append(dels, d.Key().String()+" "+strings.Join(d.Targets, " "))
		}
		for _, c := range u.Create {
			creates = append(creates, c.Key().String()+" "+strings.Join(c.Targets, " "))
		}
	}
	return dels, creates
}

func refusedKeys(p *HandoverPlan) []string {
	var out []string
	for _, r := range p.Refused {
		out = append(out, r.Key.String())
	}
	return out
}

// applyHandover returns records as the zone holds them once p's units are applied.
func applyHandover(records []*endpoint.Endpoint, p *HandoverPlan) []*endpoint.Endpoint {
	out := slices.Clone(records)
	for _, u := range p.Units {
		for i, d := range u.Delete {
			out[slices.Index(out, d)] = u.Create[i]
		}
	}
	return out
}

func TestPlanHandover(t *testing.T) {
	d := func(owner, resource string) string { return own(owner, resource)[0] }
	tests := []struct {
		name    string
		cfg     Config
		records []*endpoint.Endpoint
		h       Handover
		moves   []string
		dels    []string // "name TXT [set] value" as read
		creates []string
		refused []string // record keys
		reason  string   // in every refusal
		units   []string // names of the units, when checked
	}{
		{
			name: "issue 5993: only a's records move, to d", records: zone5993(),
			h:     Handover{From: "a", To: "d", Zone: "example.com"},
			units: []string{"app.example.com", "edge.example.com", "web.example.com"},
			moves: []string{
				"app.example.com A [a] (service/default/app): a -> d",
				"edge.example.com A (service/default/edge): a -> d",
				"web.example.com A (service/default/web): a -> d",
			},
			dels: []string{
				"a-app.example.com TXT [a] " + d("a", "service/default/app"),
				"a-edge.example.com TXT " + d("a", "service/default/edge"),
				"cname-edge.example.com TXT " + d("a", "service/default/edge"),
				"a-web.example.com TXT " + d("a", "service/default/web"),
				"web.example.com TXT " + d("a", "service/default/web"),
			},
			creates: []string{
				"a-app.example.com TXT [a] " + d("d", "service/default/app"),
				"a-edge.example.com TXT " + d("d", "service/default/edge"),
				"cname-edge.example.com TXT " + d("d", "service/default/edge"),
				"a-web.example.com TXT " + d("d", "service/default/web"),
				"web.example.com TXT " + d("d", "service/default/web"),
			},
		},
		{
			name: "issue 5993: b's, with the name glob on app", records: zone5993(),
			h:       Handover{From: "b", To: "d", Names: "app.*"},
			moves:   []string{"app.example.com A [b] (service/default/app): b -> d"},
			dels:    []string{"a-app.example.com TXT [b] " + d("b", "service/default/app")},
			creates: []string{"a-app.example.com TXT [b] " + d("d", "service/default/app")},
		},
		{
			name: "legacy-only record", records: zone5993(),
			h:       Handover{From: "c", To: "d", Names: "old.example.com."},
			moves:   []string{"old.example.com A (service/default/old): c -> d"},
			dels:    []string{"old.example.com TXT " + d("c", "service/default/old")},
			creates: []string{"old.example.com TXT " + d("d", "service/default/old")},
		},
		{
			name: "an owner with nothing in the zone", records: zone5993(),
			h: Handover{From: "nobody", To: "d"},
		},
		{
			name: "to already owns the alias's other form",
			records: []*endpoint.Endpoint{
				alias(rec("edge.example.com", "A", "lb.example.com")),
				txt("cname-edge.example.com", own("a", "service/default/edge")),
				txt("a-edge.example.com", own("d", "service/default/edge")),
			},
			h:       Handover{From: "a", To: "d"},
			refused: []string{"edge.example.com A"},
			reason:  `TXT cname-edge.example.com names a, but TXT a-edge.example.com names "d"`,
		},
		{
			name: "another owner's type-prefixed record wins over a's legacy one",
			records: []*endpoint.Endpoint{
				rec("web.example.com", "A", "192.0.2.4"),
				txt("a-web.example.com", own("c", "service/default/web")),
				txt("web.example.com", own("a", "service/default/web")),
			},
			h:       Handover{From: "a", To: "d"},
			refused: []string{"web.example.com A"},
			reason:  `read as owned by "c" (TXT a-web.example.com), but TXT web.example.com names a`,
		},
		{
			name: "a refusal holds back the whole name",
			records: []*endpoint.Endpoint{
				weighted(rec("app.example.com", "A", "192.0.2.1"), "x", 1),
				weighted(txt("a-app.example.com", own("a", "service/default/app")), "x", 1),
				weighted(rec("app.example.com", "A", "192.0.2.2"), "y", 1),
				weighted(txt("a-app.example.com", own("a", "service/default/app")), "y", 1),
				weighted(txt("app.example.com", own("b", "service/default/app")), "y", 1),
				rec("web.example.com", "A", "192.0.2.4"),
				txt("a-web.example.com", own("a", "service/default/web")),
			},
			h:       Handover{From: "a", To: "d"},
			moves:   []string{"web.example.com A (service/default/web): a -> d"},
			dels:    []string{"a-web.example.com TXT " + d("a", "service/default/web")},
			creates: []string{"a-web.example.com TXT " + d("d", "service/default/web")},
			refused: []string{"app.example.com A [x]", "app.example.com A [y]"},
		},
		{
			name: "one name's members move in one unit",
			records: []*endpoint.Endpoint{
				weighted(rec("app.example.com", "A", "192.0.2.1"), "x", 1),
				weighted(txt("a-app.example.com", own("a", "service/default/app")), "x", 1),
				weighted(rec("app.example.com", "A", "192.0.2.2"), "y", 3),
				weighted(txt("a-app.example.com", own("a", "service/default/app")), "y", 3),
				weighted(rec("app.example.com", "AAAA", "2001:db8::1"), "x", 1),
				weighted(txt("aaaa-app.example.com", own("a", "service/default/app")), "x", 1),
			},
			h:     Handover{From: "a", To: "d"},
			units: []string{"app.example.com"},
			moves: []string{
				"app.example.com A [x] (service/default/app): a -> d",
				"app.example.com A [y] (service/default/app): a -> d",
				"app.example.com AAAA [x] (service/default/app): a -> d",
			},
			dels: []string{
				"a-app.example.com TXT [x] " + d("a", "service/default/app"),
				"a-app.example.com TXT [y] " + d("a", "service/default/app"),
				"aaaa-app.example.com TXT [x] " + d("a", "service/default/app"),
			},
			creates: []string{
				"a-app.example.com TXT [x] " + d("d", "service/default/app"),
				"a-app.example.com TXT [y] " + d("d", "service/default/app"),
				"aaaa-app.example.com TXT [x] " + d("d", "service/default/app"),
			},
		},
		{
			name: "the legacy form never speaks for AAAA",
			records: []*endpoint.Endpoint{
				rec("v6.example.com", "AAAA", "2001:db8::1"),
				txt("aaaa-v6.example.com", own("a", "service/default/v6")),
				txt("v6.example.com", own("c", "service/default/other")),
			},
			h:       Handover{From: "a", To: "d"},
			moves:   []string{"v6.example.com AAAA (service/default/v6): a -> d"},
			dels:    []string{"aaaa-v6.example.com TXT " + d("a", "service/default/v6")},
			creates: []string{"aaaa-v6.example.com TXT " + d("d", "service/default/v6")},
		},
		{
			name: "the apex's SOA and NS are Route 53's, though a legacy record there reads as theirs too",
			records: []*endpoint.Endpoint{
				{Name: "example.com", Type: "SOA", TTL: 900, Targets: endpoint.Targets{"ns-1.example.net. admin.example.com. 1 7200 900 1209600 86400"}},
				rec("example.com", "NS", "ns-1.example.net"),
				rec("example.com", "A", "192.0.2.1"),
				txt("example.com", own("a", "service/default/apex")),
				rec("sub.example.com", "NS", "ns-1.example.org"),
			},
			h:       Handover{From: "a", To: "d", Zone: "example.com."},
			moves:   []string{"example.com A (service/default/apex): a -> d"},
			dels:    []string{"example.com TXT " + d("a", "service/default/apex")},
			creates: []string{"example.com TXT " + d("d", "service/default/apex")},
		},
		{
			name: "an ownership record without its record moves too",
			records: []*endpoint.Endpoint{
				txt("a-gone.example.com", own("a", "service/default/gone")),
				txt("cname-other.example.com", own("b", "service/default/other")),
			},
			h:       Handover{From: "a", To: "d"},
			moves:   []string{"gone.example.com A (ownership record only, no record) (service/default/gone): a -> d"},
			dels:    []string{"a-gone.example.com TXT " + d("a", "service/default/gone")},
			creates: []string{"a-gone.example.com TXT " + d("d", "service/default/gone")},
		},
		{
			name: "prefix",
			cfg:  Config{Prefix: "_own."},
			records: []*endpoint.Endpoint{
				rec("app.example.com", "CNAME", "lb.example.net"),
				txt("_own.cname-app.example.com", own("a", "ingress/default/app")),
				// Without the prefix this is not an ownership record of this registry (Read
				// does not read it either): it stays as it is.
				rec("api.example.com", "A", "192.0.2.9"),
				txt("a-api.example.com", own("a", "service/default/api")),
			},
			h:       Handover{From: "a", To: "d"},
			moves:   []string{"app.example.com CNAME (ingress/default/app): a -> d"},
			dels:    []string{"_own.cname-app.example.com TXT " + d("a", "ingress/default/app")},
			creates: []string{"_own.cname-app.example.com TXT " + d("d", "ingress/default/app")},
		},
		{
			name: "templated suffix and wildcard replacement",
			cfg:  Config{Suffix: "-%{record_type}own", WildcardReplacement: "star"},
			records: []*endpoint.Endpoint{
				rec("*.example.com", "A", "192.0.2.10"),
				txt("star-aown.example.com", own("a", "service/default/wild")),
			},
			h:       Handover{From: "a", To: "d", Names: `\*.example.com`},
			moves:   []string{"*.example.com A (service/default/wild): a -> d"},
			dels:    []string{"star-aown.example.com TXT " + d("a", "service/default/wild")},
			creates: []string{"star-aown.example.com TXT " + d("d", "service/default/wild")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.OwnerID = tt.h.To
			reg, err := New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			before := cloneAll(tt.records)
			p, err := reg.PlanHandover(tt.records, tt.h)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tt.records, before) {
				t.Error("PlanHandover modified its input")
			}
			if got := moveStrings(p); !slices.Equal(got, tt.moves) {
				t.Errorf("moves:\n got %q\nwant %q", got, tt.moves)
			}
			dels, creates := changeStrings(p)
			if !slices.Equal(dels, tt.dels) || !slices.Equal(creates, tt.creates) {
				t.Errorf("deletes:\n got %q\nwant %q\ncreates:\n got %q\nwant %q", dels, tt.dels, creates, tt.creates)
			}
			if tt.units != nil {
				var names []string
				for _, u := range p.Units {
					names = append(names, u.Name)
				}
				if !slices.Equal(names, tt.units) {
					t.Errorf("units %q, want %q", names, tt.units)
				}
			}
			if got := refusedKeys(p); !slices.Equal(got, tt.refused) {
				t.Errorf("refused %q, want %q: %v", got, tt.refused, p.Refused)
			}
			for _, r := range p.Refused {
				if !strings.Contains(r.String(), tt.reason) {
					t.Errorf("refusal %q lacks %q", r, tt.reason)
				}
			}
			for _, u := range p.Units {
				for _, c := range u.Delete {
					if c.Type != endpoint.TypeTXT || !slices.Contains(tt.records, c) {
						t.Errorf("deletes %v, which is not an ownership record read from the zone", c)
					}
				}
			}

			// After it, To's registry reads every moved record as To's, everything else
			// as before; and a second handover finds nothing to do.
			after := applyHandover(tt.records, p)
			ownersBefore, ownersAfter := owners(reg, before), owners(reg, cloneAll(after))
			for k, o := range ownersBefore {
				want := o
				apex := k.Name == strings.TrimSuffix(tt.h.Zone, ".") && (k.Type == "SOA" || k.Type == "NS")
				if moved(p, k) || (apex && o == tt.h.From) {
					// (Read labels the apex's SOA and NS with whatever a legacy ownership
					// record at the apex says; nobody writes them.)
					want = tt.h.To
				}
				if ownersAfter[k] != want {
					t.Errorf("%s: owner %q after, want %q", k, ownersAfter[k], want)
				}
			}
			again, err := reg.PlanHandover(after, tt.h)
			if err != nil {
				t.Fatal(err)
			}
			if len(again.Units) != 0 || len(again.Refused) != len(p.Refused) {
				t.Errorf("second handover: %d units, %v refused; want none and the same refusals", len(again.Units), again.Refused)
			}
		})
	}
}

func cloneAll(in []*endpoint.Endpoint) []*endpoint.Endpoint {
	out := make([]*endpoint.Endpoint, len(in))
	for i, e := range in {
		out[i] = e.Clone()
	}
	return out
}

func owners(reg *TXT, records []*endpoint.Endpoint) map[endpoint.Key]string {
	out := map[endpoint.Key]string{}
	for _, r := range reg.Read(records).Records {
		out[r.Key()] = r.Owner()
	}
	return out
}

func moved(p *HandoverPlan, k endpoint.Key) bool {
	for _, u := range p.Units {
		for _, m := range u.Moves {
			if m.Key == k && !m.NoRecord {
				return true
			}
		}
	}
	return false
}

// TestPlanHandoverKeepsTheRest: the new ownership record is the old one with the owner
// token alone rewritten: set identifier, routing policy, TTL, health check, every other
// label, the quoting and the order of the tokens, and other values of the set.
func TestPlanHandoverKeepsTheRest(t *testing.T) {
	held := weighted(txt("a-app.example.com", endpoint.Targets{
		`"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app,external-dns/crossfade-wants-weight=100"`,
	}), "blue", 0)
	held.SetProp(endpoint.PropHealthCheckID, "hc-1")
	odd := txt("odd.example.com", endpoint.Targets{
		`external-dns/resource=service/x/odd,heritage=external-dns,external-dns/owner=blue`,
		`"v=spf1 -all"`,
	})
	records := []*endpoint.Endpoint{
		weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 0), held,
		rec("odd.example.com", "MX", "10 mail.example.com"), odd,
	}
	reg, _ := New(Config{OwnerID: "green"})
	p, err := reg.PlanHandover(records, Handover{From: "blue", To: "green"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Units) != 2 {
		t.Fatalf("units %+v", p.Units)
	}
	for _, u := range p.Units {
		if len(u.Delete) != 1 || len(u.Create) != 1 {
			t.Fatalf("unit %s: %d deletes, %d creates", u.Name, len(u.Delete), len(u.Create))
		}
		d, c := u.Delete[0], u.Create[0]
		wantTargets := slices.Clone(d.Targets)
		wantTargets[0] = strings.Replace(wantTargets[0], "owner=blue", "owner=green", 1)
		want := d.Clone()
		want.Targets = wantTargets
		if !reflect.DeepEqual(c, want) {
			t.Errorf("create\n %+v\nwant\n %+v", c, want)
		}
	}
}

func TestPlanHandoverRefusesBadInput(t *testing.T) {
	reg, _ := New(Config{OwnerID: "x"})
	for _, h := range []Handover{
		{From: "", To: "b"},
		{From: "a", To: ""},
		{From: "a", To: "a"},
		{From: "a", To: "b,c"},
		{From: "a", To: "b=c"},
		{From: "a", To: `b"`},
		{From: "a", To: "b c"},
		{From: "a", To: "b", Names: "[app"},
	} {
		if _, err := reg.PlanHandover(nil, h); err == nil {
			t.Errorf("%+v accepted", h)
		}
	}
}

// FuzzPlanHandover: whatever the zone holds, a handover only ever deletes ownership
// records it was given, recreates each with the same key, and changes nothing in them
// but values that named From.
func FuzzPlanHandover(f *testing.F) {
	f.Add("a-app.example.com", `"heritage=external-dns,external-dns/owner=a,external-dns/resource=x"`, "app.example.com", "A", "a", "")
	f.Add("app.example.com", `heritage=external-dns,external-dns/owner=a`, "app.example.com", "MX", "a", "")
	f.Add("cname-*.example.com", `""heritage=external-dns,external-dns/owner=a""`, "*.example.com", "A", "a", "*")
	f.Add("a-x", `"heritage=external-dns,external-dns/owner=a=b,external-dns/owner=a"`, "x", "AAAA", "a", "x*")
	f.Fuzz(func(t *testing.T, txtName, value, recName, recType, from, glob string) {
		reg, _ := New(Config{OwnerID: "z"})
		records := []*endpoint.Endpoint{
			{Name: txtName, Type: endpoint.TypeTXT, Targets: endpoint.Targets{value}},
			{Name: recName, Type: recType, Targets: endpoint.Targets{"192.0.2.1"}, ProviderSpecific: map[string]string{endpoint.PropAlias: "true"}},
		}
		p, err := reg.PlanHandover(records, Handover{From: from, To: "z", Names: glob})
		if err != nil {
			return
		}
		for _, u := range p.Units {
			if len(u.Delete) != len(u.Create) {
				t.Fatalf("unit %s: %d deletes, %d creates", u.Name, len(u.Delete), len(u.Create))
			}
			for i, d := range u.Delete {
				c := u.Create[i]
				if d != records[0] || c.Key() != d.Key() || c.TTL != d.TTL || c.Policy != d.Policy {
					t.Fatalf("delete %v, create %v", d, c)
				}
				if l, err := ParsePayload(c.Targets[0]); err != nil || l[endpoint.OwnerLabel] != "z" {
					t.Fatalf("created %q: owner %q, %v", c.Targets[0], l[endpoint.OwnerLabel], err)
				}
			}
		}
	})
}
