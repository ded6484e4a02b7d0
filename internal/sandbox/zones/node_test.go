package zones

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	"github.com/miekg/dns"
)

// TestZoneCutCount checks that Lookup's HasCuts follows the NS sets below the apex through
// creates, upserts and deletes: a count that went stale high only costs time, but one that
// went stale low would answer names below a delegation as if the zone held them.
func TestZoneCutCount(t *testing.T) {
	ns := func(name, id string) RRSet {
		set := simple(name, "NS", 300, "ns1.elsewhere.net.")
		if id != "" {
			set.SetIdentifier, set.Weight = id, i64(1)
		}
		return set
	}
	tests := []struct {
		name    string
		batches [][]Change
		want    bool
	}{
		{"new zone: apex NS only", nil, false},
		{"records but no NS below the apex", [][]Change{{{Create, simple("www.example.com.", "A", 60, "192.0.2.1")}}}, false},
		{"apex NS upserted", [][]Change{{{Upsert, simple("example.com.", "NS", 300, "ns1.elsewhere.net.")}}}, false},
		{"NS below the apex", [][]Change{{{Create, ns("sub.example.com.", "")}}}, true},
		{"NS upserted twice", [][]Change{{{Upsert, ns("sub.example.com.", "")}}, {{Upsert, ns("sub.example.com.", "")}}}, true},
		{"NS created then deleted", [][]Change{{{Create, ns("sub.example.com.", "")}}, {{Delete, ns("sub.example.com.", "")}}}, false},
		{"NS upserted twice then deleted", [][]Change{{{Upsert, ns("sub.example.com.", "")}}, {{Upsert, ns("sub.example.com.", "")}}, {{Delete, ns("sub.example.com.", "")}}}, false},
		{"two cuts, one deleted", [][]Change{{{Create, ns("a.example.com.", "")}, {Create, ns("b.example.com.", "")}}, {{Delete, ns("a.example.com.", "")}}}, true},
		{"weighted NS pair, one deleted", [][]Change{{{Create, ns("w.example.com.", "x")}, {Create, ns("w.example.com.", "y")}}, {{Delete, ns("w.example.com.", "x")}}}, true},
		{"weighted NS pair, both deleted", [][]Change{{{Create, ns("w.example.com.", "x")}, {Create, ns("w.example.com.", "y")}}, {{Delete, ns("w.example.com.", "x")}, {Delete, ns("w.example.com.", "y")}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := Open(Options{})
			z := newZone(t, s, "example.com")
			for i, b := range tt.batches {
				if _, err := s.Apply(z.ID, "", b); err != nil {
					t.Fatalf("batch %d: %v", i, err)
				}
			}
			for _, q := range []string{"example.com.", "www.example.com.", "x.sub.example.com."} {
				if a, _ := s.Lookup(q); a.HasCuts != tt.want {
					t.Errorf("Lookup(%s).HasCuts = %v, want %v", q, a.HasCuts, tt.want)
				}
			}
		})
	}
}

// groupState is what a test sees of a prepared group.
type groupState struct {
	ids     []string
	records []string
	cum     []uint64
	total   uint64
	choice  Choice
}

func stateOf(g *Group) groupState {
	st := groupState{total: g.Total, choice: g.Choice}
	for _, m := range g.Members {
		st.ids = append(st.ids, m.Set.SetIdentifier)
		for _, rr := range m.Records {
			st.records = append(st.records, rr.(*dns.A).A.String())
		}
		st.cum = append(st.cum, m.Cum)
	}
	return st
}

// TestNodeGroupsFollowChanges checks the per-type groups a node is published with after
// each kind of change to one member: the DNS server answers from them without looking at
// the sets, so a group that went stale would answer with a member that is gone or a weight
// that was changed.
func TestNodeGroupsFollowChanges(t *testing.T) {
	const name = "w.example.com."
	blue := weighted(name, "A", "blue", 1, "192.0.2.1")
	green := weighted(name, "A", "green", 3, "192.0.2.2")
	with := func(set RRSet, f func(*RRSet)) RRSet {
		set.Records = slices.Clone(set.Records)
		f(&set)
		return set
	}
	tests := []struct {
		name    string
		batches [][]Change
		want    groupState
	}{
		{"weighted pair", nil,
			groupState{[]string{"blue", "green"}, []string{"192.0.2.1", "192.0.2.2"}, []uint64{1, 4}, 4, ChooseWeighted}},
		{"UPSERT one member's weight and value", [][]Change{{{Upsert, with(green, func(s *RRSet) { s.Weight, s.Records = i64(0), []string{"192.0.2.3"} })}}},
			groupState{[]string{"blue", "green"}, []string{"192.0.2.1", "192.0.2.3"}, []uint64{1, 1}, 1, ChooseWeighted}},
		{"DELETE one member", [][]Change{{{Delete, blue}}},
			groupState{[]string{"green"}, []string{"192.0.2.2"}, []uint64{3}, 3, ChooseFirst}},
		{"CREATE a third member", [][]Change{{{Create, weighted(name, "A", "red", 2, "192.0.2.4")}}},
			groupState{[]string{"blue", "green", "red"}, []string{"192.0.2.1", "192.0.2.2", "192.0.2.4"}, []uint64{1, 4, 6}, 6, ChooseWeighted}},
		{"every weight 0", [][]Change{{{Upsert, with(blue, func(s *RRSet) { s.Weight = i64(0) })}, {Upsert, with(green, func(s *RRSet) { s.Weight = i64(0) })}}},
			groupState{[]string{"blue", "green"}, []string{"192.0.2.1", "192.0.2.2"}, []uint64{0, 0}, 0, ChooseWeighted}},
		{"UPSERT a health check onto one member", [][]Change{{{Upsert, with(blue, func(s *RRSet) { s.HealthCheckID = "hc-1" })}}},
			groupState{[]string{"blue", "green"}, []string{"192.0.2.1", "192.0.2.2"}, []uint64{1, 4}, 4, ChooseByHealth}},
		{"health check added then removed", [][]Change{{{Upsert, with(blue, func(s *RRSet) { s.HealthCheckID = "hc-1" })}}, {{Upsert, blue}}},
			groupState{[]string{"blue", "green"}, []string{"192.0.2.1", "192.0.2.2"}, []uint64{1, 4}, 4, ChooseWeighted}},
		{"lone member with a health check", [][]Change{{{Delete, blue}, {Upsert, with(green, func(s *RRSet) { s.HealthCheckID = "hc-1" })}}},
			groupState{[]string{"green"}, []string{"192.0.2.2"}, []uint64{3}, 3, ChooseFirst}},
		{"weighted to failover", [][]Change{{{Delete, blue}, {Delete, green}, {Create, failover(name, "p", Primary, "192.0.2.5")}, {Create, failover(name, "s", Secondary, "192.0.2.6")}}},
			groupState{[]string{"p", "s"}, []string{"192.0.2.5", "192.0.2.6"}, []uint64{0, 0}, 0, ChooseByHealth}},
		{"weighted to simple", [][]Change{{{Delete, blue}, {Delete, green}, {Create, simple(name, "A", 60, "192.0.2.7", "192.0.2.8")}}},
			groupState{[]string{""}, []string{"192.0.2.7", "192.0.2.8"}, []uint64{0}, 0, ChooseFirst}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := Open(Options{})
			z := newZone(t, s, "example.com")
			if _, err := s.Apply(z.ID, "", []Change{{Create, blue}, {Create, green}}); err != nil {
				t.Fatal(err)
			}
			for i, b := range tt.batches {
				if _, err := s.Apply(z.ID, "", b); err != nil {
					t.Fatalf("batch %d: %v", i, err)
				}
			}
			a, _ := s.Lookup(name)
			g := a.Node.Group("A")
			if g == nil {
				t.Fatal("no A group")
			}
			if got := stateOf(g); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("group %+v, want %+v", got, tt.want)
			}
			if !slices.Equal(g.Sets, a.Node.Sets) {
				t.Errorf("group sets %v, want the node's %v", g.Sets, a.Node.Sets)
			}
			for i, m := range g.Members {
				if m.Set != g.Sets[i] || !m.Plain {
					t.Errorf("member %d: set %p plain %v, want set %p plain", i, m.Set, m.Plain, g.Sets[i])
				}
			}
		})
	}
}

// TestAlternateTypesAndAliasHealth checks the groups of a node holding several types, and
// that an alias evaluating target health is chosen by health.
func TestAlternateTypesAndAliasHealth(t *testing.T) {
	s, _ := Open(Options{})
	z := newZone(t, s, "example.com")
	eth := func(id string, w int64) RRSet {
		set := weightedAlias("api.example.com.", id, w, "t.example.com.")
		set.Alias.HostedZoneID, set.Alias.EvaluateTargetHealth = z.ID, true
		return set
	}
	if _, err := s.Apply(z.ID, "", []Change{
		{Create, simple("t.example.com.", "A", 60, "192.0.2.1")},
		{Create, eth("a", 1)}, {Create, eth("b", 1)},
		{Create, simple("api.example.com.", "TXT", 60, `"hello"`)},
		{Create, simple("api.example.com.", "AAAA", 60, "2001:db8::1")},
	}); err != nil {
		t.Fatal(err)
	}
	n := s.LookupIn(z.ID, "api.example.com.")
	for _, tc := range []struct {
		typ    string
		sets   int
		choice Choice
	}{{"A", 2, ChooseByHealth}, {"AAAA", 1, ChooseFirst}, {"TXT", 1, ChooseFirst}, {"MX", 0, 0}} {
		g := n.Group(tc.typ)
		switch {
		case tc.sets == 0 && g != nil:
			t.Errorf("%s: group of %d sets, want none", tc.typ, len(g.Sets))
		case tc.sets == 0:
		case g == nil:
			t.Errorf("%s: no group, want %d sets", tc.typ, tc.sets)
		case len(g.Sets) != tc.sets || g.Choice != tc.choice || g.Type != tc.typ || g.Name != "api.example.com.":
			t.Errorf("%s: %s %s %d sets choice %d, want %d sets choice %d", tc.typ, g.Name, g.Type, len(g.Sets), g.Choice, tc.sets, tc.choice)
		}
	}
}

// TestTypesInterned checks that a stored set's type shares dns.TypeToString's string, so the
// DNS server compares types by pointer, whether it came in lower case or from the state file.
func TestTypesInterned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	z := newZone(t, s, "example.com")
	if _, err := s.Apply(z.ID, "", []Change{{Create, simple("www.example.com.", "aaaa", 60, "2001:db8::1")}}); err != nil {
		t.Fatal(err)
	}
	check := func(s *Store, when string) {
		t.Helper()
		for _, typ := range []uint16{dns.TypeAAAA, dns.TypeSOA, dns.TypeNS} {
			name := "example.com."
			if typ == dns.TypeAAAA {
				name = "www.example.com."
			}
			want := dns.TypeToString[typ]
			g := s.LookupIn(z.ID, name).Group(want)
			if g == nil {
				t.Fatalf("%s: no %s group at %s", when, want, name)
			}
			if unsafe.StringData(g.Type) != unsafe.StringData(want) || unsafe.StringData(g.Sets[0].Type) != unsafe.StringData(want) {
				t.Errorf("%s: %s at %s is not interned", when, want, name)
			}
		}
	}
	check(s, "after Apply")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	check(s2, "after reopening")
}

// TestLookupSOAFollowsUpsert checks that the SOA Lookup hands out (kept by the zone, not
// looked up per query) is the one an UPSERT left.
func TestLookupSOAFollowsUpsert(t *testing.T) {
	s, _ := Open(Options{})
	z := newZone(t, s, "example.com")
	soa := simple("example.com.", "SOA", 900, "ns-1.awsdns-01.com. hostmaster.example.com. 2 7200 900 1209600 60")
	if _, err := s.Apply(z.ID, "", []Change{{Upsert, soa}}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"example.com.", "missing.example.com."} {
		a, _ := s.Lookup(q)
		if a.SOA == nil || len(a.SOA.DNSRecords()) != 1 || a.SOA.DNSRecords()[0].(*dns.SOA).Minttl != 60 {
			t.Errorf("Lookup(%s).SOA = %v, want the upserted SOA with MINIMUM 60", q, a.SOA)
		}
	}
}
