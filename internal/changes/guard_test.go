package changes

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// withTTL sets a record's TTL.
func withTTL(e *endpoint.Endpoint, ttl endpoint.TTL) *endpoint.Endpoint {
	e.TTL = ttl
	return e
}

// alias marks a record as a Route 53 alias.
func alias(e *endpoint.Endpoint) *endpoint.Endpoint {
	e.SetProp(endpoint.PropAlias, "true")
	return e
}

// TestRefusedBeforeSending: what Route 53 is known to refuse becomes a conflict (or, for
// a TTL, a note and the group's TTL) before anything is sent, and nothing of the record
// at fault is written.
func TestRefusedBeforeSending(t *testing.T) {
	const payloadBlue = `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`
	spf := rec("app.example.com", "TXT", `"v=spf1 -all"`)
	tests := []struct {
		name      string
		zone      string
		legacy    bool
		current   func(t *testing.T) []*endpoint.Endpoint
		desired   []*endpoint.Endpoint
		want      []string
		conflicts []string // substrings, one per conflict
		notes     []string // substrings, one per note
	}{
		{
			name:      "CNAME beside an unmanaged TXT record",
			current:   func(*testing.T) []*endpoint.Endpoint { return []*endpoint.Endpoint{spf} },
			desired:   []*endpoint.Endpoint{from(rec("app.example.com", "CNAME", "lb.example.net"), "service/default/app")},
			conflicts: []string{"cannot be created beside the existing simple TXT record app.example.com"},
		},
		{
			name: "CNAME beside an unmanaged MX record",
			current: func(*testing.T) []*endpoint.Endpoint {
				return []*endpoint.Endpoint{rec("app.example.com", "MX", "10 mail.example.com")}
			},
			desired:   []*endpoint.Endpoint{from(rec("app.example.com", "CNAME", "lb.example.net"), "service/default/app")},
			conflicts: []string{"simple MX record app.example.com"},
		},
		{
			name:      "CNAME at the apex",
			zone:      "example.com",
			current:   func(*testing.T) []*endpoint.Endpoint { return nil },
			desired:   []*endpoint.Endpoint{from(rec("example.com", "CNAME", "lb.example.net"), "service/default/app")},
			conflicts: []string{"does not allow a CNAME at the zone apex"},
		},
		{
			name: "weighted member beside a leftover simple TXT nobody owns",
			current: func(*testing.T) []*endpoint.Endpoint {
				return []*endpoint.Endpoint{rec("a-app.example.com", "TXT", `"left over"`)}
			},
			desired:   []*endpoint.Endpoint{from(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), "service/default/app")},
			conflicts: []string{"weighted ownership record TXT a-app.example.com cannot be created beside the simple TXT record there"},
		},
		{
			name: "weighted member beside another owner's simple TXT",
			current: func(t *testing.T) []*endpoint.Endpoint {
				return owned(t, rec("app.example.com", "AAAA", "2001:db8::1"), "green", "service/default/x")[1:]
			},
			desired:   []*endpoint.Endpoint{from(weighted(rec("app.example.com", "AAAA", "2001:db8::2"), "blue", 1), "service/default/app")},
			conflicts: []string{`held by owner "green"`},
		},
		{
			name: "weighted member beside an unowned simple record",
			current: func(*testing.T) []*endpoint.Endpoint {
				return []*endpoint.Endpoint{rec("app.example.com", "A", "192.0.2.9")}
			},
			desired:   []*endpoint.Endpoint{from(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), "service/default/app")},
			conflicts: []string{"no owner (no ownership TXT record)"},
		},
		{
			name: "replacement whose new ownership record belongs to another owner",
			current: func(t *testing.T) []*endpoint.Endpoint {
				mine := owned(t, rec("app.example.com", "A", "192.0.2.1"), "blue", "service/default/app")
				theirs := owned(t, weighted(rec("app.example.com", "A", "192.0.2.2"), "blue", 1), "green", "service/default/g")[1:]
				return append(mine, theirs...)
			},
			desired:   []*endpoint.Endpoint{from(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), "service/default/app")},
			conflicts: []string{`its ownership record TXT a-app.example.com is taken by owner "green"`},
		},
		{
			name: "alias becomes a plain record whose ownership record another owner holds",
			current: func(t *testing.T) []*endpoint.Endpoint {
				// The alias owned through "cname-" alone, as external-dns v0.21 writes it.
				mine := owned(t, alias(rec("app.example.com", "A", "lb.example.com")), "blue", "service/default/app")[:2]
				theirs := owned(t, rec("app.example.com", "A", "192.0.2.2"), "green", "service/default/g")[1:]
				return append(mine, theirs...)
			},
			desired: []*endpoint.Endpoint{from(rec("app.example.com", "A", "192.0.2.1"), "service/default/app")},
			// cname- names blue and a- green: the alias is nobody's, and nothing is written.
			conflicts: []string{"exists as simple A record app.example.com -> lb.example.com with no owner"},
		},
		{
			name: "alias becomes a plain record: the old ownership record goes, the new one comes",
			current: func(t *testing.T) []*endpoint.Endpoint {
				// Owned through "cname-" alone, as external-dns v0.21 writes it.
				return owned(t, alias(rec("app.example.com", "A", "lb.example.com")), "blue", "service/default/app")[:2]
			},
			desired: []*endpoint.Endpoint{from(rec("app.example.com", "A", "192.0.2.1"), "service/default/app")},
			want: []string{
				"0 DELETE app.example.com A  simple lb.example.com",
				"0 DELETE cname-app.example.com TXT  simple " + payloadBlue,
				"0 CREATE app.example.com A  simple 192.0.2.1",
				"0 CREATE a-app.example.com TXT  simple " + payloadBlue,
			},
		},
		{
			name:    "legacy form where a user's TXT record stands: record published, legacy form left out",
			legacy:  true,
			current: func(*testing.T) []*endpoint.Endpoint { return []*endpoint.Endpoint{spf} },
			desired: []*endpoint.Endpoint{from(rec("app.example.com", "A", "192.0.2.1"), "service/default/app")},
			want: []string{
				"0 CREATE app.example.com A  simple 192.0.2.1",
				"0 CREATE a-app.example.com TXT  simple " + payloadBlue,
			},
			notes: []string{"legacy same-name ownership record is not written"},
		},
		{
			name: "a weighted member asks another TTL than another owner's members carry",
			current: func(t *testing.T) []*endpoint.Endpoint {
				return owned(t, weighted(rec("app.example.com", "A", "192.0.2.2"), "green", 1), "green", "service/default/g")
			},
			desired: []*endpoint.Endpoint{from(withTTL(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), 60), "service/default/app")},
			want: []string{
				"0 CREATE app.example.com A blue weighted(1) 192.0.2.1 ttl=300",
				// What blue asks is recorded, for green's publisher to read.
				`0 CREATE a-app.example.com TXT blue weighted(1) "heritage=external-dns,external-dns/crossfade-wants-ttl=60,external-dns/owner=blue,external-dns/resource=service/default/app" ttl=0`,
			},
			notes: []string{`the source asks for TTL 60, but the weighted sets of app.example.com A carry TTL 300 and Route 53 requires one TTL per weighted group; published with TTL 300 (wanted by service/default/app); ` +
				`the group moves to one TTL, all members in one batch, once every member's publisher asks for it; they ask: green (owner "green") carries 300 and records no TTL it asks for ` +
				`(external-dns never records one: then change the TTL of every member by hand, in one batch), blue asks 60`},
		},
		{
			name: "every member's publisher asks the same new TTL: the whole group moves in one batch, another owner's set too",
			current: func(t *testing.T) []*endpoint.Endpoint {
				return slices.Concat(
					owned(t, withTTL(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), 30), "blue", "service/default/app"),
					ownedAsking(t, withTTL(weighted(rec("app.example.com", "A", "192.0.2.2"), "green", 1), 30), "green", "service/default/g", "1"))
			},
			desired: []*endpoint.Endpoint{from(withTTL(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), 1), "service/default/app")},
			want: []string{
				"0 DELETE app.example.com A blue weighted(1) 192.0.2.1 ttl=30",
				"0 DELETE a-app.example.com TXT blue weighted(1) " + payloadBlue + " ttl=0",
				// green's set exactly as read: the batch fails if green changed it since.
				"0 DELETE app.example.com A green weighted(1) 192.0.2.2 ttl=30",
				"0 CREATE app.example.com A blue weighted(1) 192.0.2.1 ttl=1",
				"0 CREATE a-app.example.com TXT blue weighted(1) " + payloadBlue + " ttl=0",
				// Only its TTL changes; its ownership record stays green's to rewrite.
				"0 CREATE app.example.com A green weighted(1) 192.0.2.2 ttl=1",
			},
		},
		{
			name: "another owner's publisher asks another TTL: the group stays, and the note says who asks what",
			current: func(t *testing.T) []*endpoint.Endpoint {
				return slices.Concat(
					owned(t, withTTL(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), 30), "blue", "service/default/app"),
					ownedAsking(t, withTTL(weighted(rec("app.example.com", "A", "192.0.2.2"), "green", 1), 30), "green", "service/default/g", "5"))
			},
			desired: []*endpoint.Endpoint{from(withTTL(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), 1), "service/default/app")},
			want: []string{
				"0 DELETE a-app.example.com TXT blue weighted(1) " + payloadBlue + " ttl=0",
				`0 CREATE a-app.example.com TXT blue weighted(1) "heritage=external-dns,external-dns/crossfade-wants-ttl=1,external-dns/owner=blue,external-dns/resource=service/default/app" ttl=0`,
			},
			notes: []string{`published with TTL 30 (wanted by service/default/app); the group moves to one TTL, all members in one batch, once every member's publisher asks for it; they ask: green (owner "green") asks 5, blue asks 1`},
		},
		{
			name: "another owner's record says nothing of a TTL: its set is not touched",
			current: func(t *testing.T) []*endpoint.Endpoint {
				return slices.Concat(
					owned(t, withTTL(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), 1), "blue", "service/default/app"),
					owned(t, withTTL(weighted(rec("app.example.com", "A", "192.0.2.2"), "green", 1), 30), "green", "service/default/g"))
			},
			desired: []*endpoint.Endpoint{from(withTTL(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), 1), "service/default/app")},
			// Route 53 would not hold such a zone; the planner still writes only blue's.
			want: []string{
				"0 DELETE app.example.com A blue weighted(1) 192.0.2.1 ttl=1",
				"0 DELETE a-app.example.com TXT blue weighted(1) " + payloadBlue + " ttl=0",
				"0 CREATE app.example.com A blue weighted(1) 192.0.2.1 ttl=30",
				`0 CREATE a-app.example.com TXT blue weighted(1) "heritage=external-dns,external-dns/crossfade-wants-ttl=1,external-dns/owner=blue,external-dns/resource=service/default/app" ttl=0`,
			},
			notes: []string{`they ask: green (owner "green") carries 30 and records no TTL it asks for (external-dns never records one`},
		},
		{
			name: "a new member with no TTL of its own takes its group's",
			current: func(t *testing.T) []*endpoint.Endpoint {
				return owned(t, withTTL(weighted(rec("app.example.com", "A", "192.0.2.2"), "green", 1), 30), "green", "service/default/g")
			},
			desired: []*endpoint.Endpoint{from(withTTL(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), 0), "service/default/app")},
			want: []string{
				"0 CREATE app.example.com A blue weighted(1) 192.0.2.1 ttl=30",
				"0 CREATE a-app.example.com TXT blue weighted(1) " + payloadBlue + " ttl=0",
			},
		},
		{
			name: "one owner moves its whole group to a new TTL: every DELETE before every CREATE",
			current: func(t *testing.T) []*endpoint.Endpoint {
				return slices.Concat(
					owned(t, weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), "blue", "service/default/app"),
					owned(t, weighted(rec("app.example.com", "A", "192.0.2.2"), "green", 1), "blue", "service/default/app"))
			},
			desired: []*endpoint.Endpoint{
				from(withTTL(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), 60), "service/default/app"),
				from(withTTL(weighted(rec("app.example.com", "A", "192.0.2.2"), "green", 1), 60), "service/default/app"),
			},
			want: []string{
				// Each ownership record is rewritten as read beside its record: the
				// batch lands only if blue still owns both.
				"0 DELETE app.example.com A blue weighted(1) 192.0.2.1 ttl=300",
				`0 DELETE a-app.example.com TXT blue weighted(1) "heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app" ttl=0`,
				"0 DELETE app.example.com A green weighted(1) 192.0.2.2 ttl=300",
				`0 DELETE a-app.example.com TXT green weighted(1) "heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app" ttl=0`,
				"0 CREATE app.example.com A blue weighted(1) 192.0.2.1 ttl=60",
				`0 CREATE a-app.example.com TXT blue weighted(1) "heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app" ttl=0`,
				"0 CREATE app.example.com A green weighted(1) 192.0.2.2 ttl=60",
				`0 CREATE a-app.example.com TXT green weighted(1) "heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app" ttl=0`,
			},
		},
		{
			name: "two members of one owner ask different TTLs: the TTL they carry stays",
			current: func(t *testing.T) []*endpoint.Endpoint {
				return slices.Concat(
					owned(t, weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), "blue", "service/default/app"),
					owned(t, weighted(rec("app.example.com", "A", "192.0.2.2"), "green", 1), "blue", "service/default/app"))
			},
			desired: []*endpoint.Endpoint{
				from(withTTL(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), 60), "service/default/app"),
				from(withTTL(weighted(rec("app.example.com", "A", "192.0.2.2"), "green", 1), 30), "service/default/app"),
			},
			notes: []string{"asks for TTL 60", "asks for TTL 30"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := registry.New(registry.Config{OwnerID: "blue", WriteLegacy: tt.legacy})
			if err != nil {
				t.Fatal(err)
			}
			current := tt.current(t)
			p := Calculate(Input{Desired: tt.desired, Current: current, Registry: reg, Zone: tt.zone})
			got := render(p)
			if strings.Contains(strings.Join(tt.want, "\n"), " ttl=") {
				got = renderTTL(p)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("changes:\n got %q\nwant %q", got, tt.want)
			}
			checkFindings(t, "conflict", p.Conflicts, tt.conflicts)
			checkFindings(t, "note", p.Notes, tt.notes)

			// No write loop: once the plan is applied, the next plan is empty.
			after := applyPlan(current, p)
			if p2 := Calculate(Input{Desired: tt.desired, Current: after, Registry: reg, Zone: tt.zone}); len(p2.Batches) != 0 {
				t.Errorf("second plan not empty: %q", render(p2))
			}
		})
	}
}

// ownedAsking is owned with the TTL the owner's source asks for recorded in its
// ownership record (WantsTTLLabel), as a crossfade publisher records it.
func ownedAsking(t *testing.T, e *endpoint.Endpoint, owner, resource, ttl string) []*endpoint.Endpoint {
	t.Helper()
	reg, err := registry.New(registry.Config{OwnerID: owner})
	if err != nil {
		t.Fatal(err)
	}
	l := e.Clone()
	l.Labels = endpoint.Labels{endpoint.OwnerLabel: owner, endpoint.ResourceLabel: resource, WantsTTLLabel: ttl}
	return append([]*endpoint.Endpoint{e}, reg.For(l)...)
}

func checkFindings(t *testing.T, what string, got []Conflict, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%ss: got %v, want %d", what, got, len(want))
	}
	for i, c := range got {
		if !strings.Contains(c.String(), want[i]) {
			t.Errorf("%s %d: %q does not contain %q", what, i, c, want[i])
		}
		if c.Advice == "" {
			t.Errorf("%s %d has no advice", what, i)
		}
	}
}

// renderTTL is render with each change's TTL.
func renderTTL(p *Set) []string {
	out := render(p)
	i := 0
	for _, b := range p.Batches {
		for _, c := range b {
			out[i] += fmt.Sprintf(" ttl=%d", c.Endpoint.TTL)
			i++
		}
	}
	return out
}

// applyPlan returns the zone once p's batches are applied to current, as Route 53 would
// list it: deleted sets gone, created ones present, without labels.
func applyPlan(current []*endpoint.Endpoint, p *Set) []*endpoint.Endpoint {
	zone := map[endpoint.Key]*endpoint.Endpoint{}
	var order []endpoint.Key
	put := func(e *endpoint.Endpoint) {
		c := e.Clone()
		c.Labels = nil
		if _, ok := zone[c.Key()]; !ok {
			order = append(order, c.Key())
		}
		zone[c.Key()] = c
	}
	for _, e := range current {
		put(e)
	}
	for _, b := range p.Batches {
		for _, c := range b {
			switch c.Action {
			case Delete:
				delete(zone, c.Endpoint.Key())
			case Create, Upsert:
				put(c.Endpoint)
			}
		}
	}
	var out []*endpoint.Endpoint
	for _, k := range order {
		if e, ok := zone[k]; ok {
			out = append(out, e)
		}
	}
	return out
}

// TestKeep: the records of an object that is invalid now are kept, not deleted and not
// cleared out of another record's way; with unreadable input, nothing is deleted at all.
func TestKeep(t *testing.T) {
	reg, _ := registry.New(registry.Config{OwnerID: "blue"})
	current := slices.Concat(
		owned(t, rec("app.example.com", "A", "192.0.2.1"), "blue", "service/default/app"),
		owned(t, rec("old.example.com", "A", "192.0.2.2"), "blue", "service/default/old"))
	cname := from(rec("app.example.com", "CNAME", "lb.example.net"), "service/default/other")
	tests := []struct {
		name    string
		in      Input
		want    []string
		kept    []string
		confl   []string
		summary Summary
	}{
		{"nothing kept: both go", Input{}, []string{
			"0 DELETE app.example.com A  simple 192.0.2.1", "0 DELETE a-app.example.com TXT  simple " + payload("app"),
			"0 DELETE old.example.com A  simple 192.0.2.2", "0 DELETE a-old.example.com TXT  simple " + payload("old"),
		}, nil, nil, Summary{Delete: 2}},
		{"invalid object: its record stays", Input{Keep: []string{"service/default/app"}}, []string{
			"0 DELETE old.example.com A  simple 192.0.2.2", "0 DELETE a-old.example.com TXT  simple " + payload("old"),
		}, []string{"app.example.com A: not deleted: its object service/default/app is invalid now"}, nil, Summary{Delete: 1, Kept: 1}},
		{"unreadable input: nothing deleted", Input{KeepAll: true}, nil,
			[]string{"app.example.com A: not deleted: some input could not be read", "old.example.com A: not deleted: some input"}, nil, Summary{Kept: 2}},
		{"a kept record is not replaced by another object's CNAME", Input{Keep: []string{"service/default/app"}, Desired: []*endpoint.Endpoint{cname}}, []string{
			"0 DELETE old.example.com A  simple 192.0.2.2", "0 DELETE a-old.example.com TXT  simple " + payload("old"),
		}, nil, []string{"would replace simple A record app.example.com -> 192.0.2.1, which is kept: its object service/default/app is invalid now"}, Summary{Delete: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.Current, in.Registry = current, reg
			p := Calculate(in)
			if got := render(p); !slices.Equal(got, tt.want) {
				t.Errorf("changes:\n got %q\nwant %q", got, tt.want)
			}
			checkFindings(t, "kept", p.Kept, tt.kept)
			checkFindings(t, "conflict", p.Conflicts, tt.confl)
			if p.Summary != tt.summary {
				t.Errorf("summary %+v, want %+v", p.Summary, tt.summary)
			}
		})
	}
}

// payload is blue's ownership payload for service/default/NAME.
func payload(name string) string {
	return `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/` + name + `"`
}

// TestHeldWeightIsRecorded: while a cutover holds a member's weight, the member's
// ownership record carries the weight its source asks for (once: no write loop), and
// loses it when the source agrees with the zone again.
func TestHeldWeightIsRecorded(t *testing.T) {
	reg, _ := registry.New(registry.Config{OwnerID: "blue"})
	held := weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 0)
	current := append(owned(t, held, "blue", "service/default/app"), registry.AuthorityRecord("app.example.com", []string{"A"}, "shop"))
	want := func(w int64) []*endpoint.Endpoint {
		return []*endpoint.Endpoint{from(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", w), "service/default/app")}
	}
	p := Calculate(Input{Desired: want(100), Current: current, Registry: reg})
	got := render(p)
	wantTXT := `"heritage=external-dns,external-dns/crossfade-confirms-hold=shop,external-dns/crossfade-wants-weight=100,external-dns/owner=blue,external-dns/resource=service/default/app"`
	if len(got) != 2 || !strings.Contains(got[0], "DELETE a-app.example.com TXT blue weighted(0)") || got[1] != "0 CREATE a-app.example.com TXT blue weighted(0) "+wantTXT {
		t.Fatalf("held member: %q", got)
	}
	checkFindings(t, "conflict", p.Conflicts, []string{"held by cutover shop: the source asks for weight 100, the zone holds 0"})
	after := applyPlan(current, p)
	if p2 := Calculate(Input{Desired: want(100), Current: after, Registry: reg}); len(p2.Batches) != 0 {
		t.Errorf("second plan: %q", render(p2))
	}
	p3 := Calculate(Input{Desired: want(0), Current: after, Registry: reg})
	if got := render(p3); len(got) != 2 || strings.Contains(got[1], "wants-weight") {
		t.Errorf("source agrees again: %q, want the label dropped", got)
	}
}

// TestAliasOwnedUnderTheNewerForm: an alias A that external-dns ≥ 0.22 owns under "a-"
// (v0.21 writes "cname-", crossfade both) is owned: unchanged, nothing is written; deleted,
// its ownership record goes with it.
func TestAliasOwnedUnderTheNewerForm(t *testing.T) {
	reg, _ := registry.New(registry.Config{OwnerID: "blue"})
	lb := alias(rec("app.example.com", "A", "lb.example.com"))
	txt := rec("a-app.example.com", "TXT", payload("app"))
	desired := []*endpoint.Endpoint{from(alias(rec("app.example.com", "A", "lb.example.com")), "service/default/app")}
	if p := Calculate(Input{Desired: desired, Current: []*endpoint.Endpoint{lb, txt}, Registry: reg}); len(p.Batches) != 0 || len(p.Conflicts) != 0 {
		t.Errorf("unchanged: %q, conflicts %v; want nothing", render(p), p.Conflicts)
	}
	lb, txt = alias(rec("app.example.com", "A", "lb.example.com")), rec("a-app.example.com", "TXT", payload("app"))
	p := Calculate(Input{Current: []*endpoint.Endpoint{lb, txt}, Registry: reg})
	want := []string{"0 DELETE app.example.com A  simple lb.example.com", "0 DELETE a-app.example.com TXT  simple " + payload("app")}
	if got := render(p); !slices.Equal(got, want) {
		t.Errorf("deleted: %q, want %q", got, want)
	}
}

// TestHeldMembersStay: while a cutover holds a name, a publisher never deletes one of its
// weighted members, nor the member's ownership record, nor replaces it by a record of
// another routing policy: the member stays, reported as held by the cutover, and its
// ownership record confirms the hold and, under the sync policy, says that its source
// wants none of it. A name no cutover holds is planned as before.
func TestHeldMembersStay(t *testing.T) {
	reg, _ := registry.New(registry.Config{OwnerID: "blue"})
	member := func() []*endpoint.Endpoint {
		return owned(t, weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 0), "blue", "service/default/app")
	}
	hold := registry.Authority{Name: "app.example.com", Cutover: "shop", Types: []string{"A"}, Runner: registry.Runner{Token: "t0k3n", Host: "ci"}}.Record()
	confirmed := func(wants string) string {
		l := `"heritage=external-dns,external-dns/crossfade-confirms-hold=t0k3n,`
		if wants != "" {
			l += "external-dns/crossfade-wants-weight=" + wants + ","
		}
		return l + `external-dns/owner=blue,external-dns/resource=service/default/app"`
	}
	simple := from(rec("app.example.com", "A", "192.0.2.9"), "service/default/app")
	tests := []struct {
		name    string
		policy  Policy
		current []*endpoint.Endpoint
		desired []*endpoint.Endpoint
		want    []string
		confl   []string
		summary Summary
	}{
		{"no hold: an unwanted member goes", Sync, member(), nil, []string{
			"0 DELETE app.example.com A blue weighted(0) 192.0.2.1",
			"0 DELETE a-app.example.com TXT blue weighted(0) " + payload("app"),
		}, nil, Summary{Delete: 1}},
		{"held: an unwanted member stays and says it goes at the next sync", Sync, append(member(), hold), nil, []string{
			"0 DELETE a-app.example.com TXT blue weighted(0) " + payload("app"),
			"0 CREATE a-app.example.com TXT blue weighted(0) " + confirmed(endpoint.WantsNone),
		}, []string{"app.example.com A [blue]: held by cutover shop: no source asks for this member any more (weight 0 in the zone, published by service/default/app); it stays as it is while the cutover holds the weights, and goes at the first sync after `crossfade cutover release`"},
			Summary{Held: 1}},
		{"held, upsert-only: confirmed, nothing to hand back", UpsertOnly, append(member(), hold), nil, []string{
			"0 DELETE a-app.example.com TXT blue weighted(0) " + payload("app"),
			"0 CREATE a-app.example.com TXT blue weighted(0) " + confirmed(""),
		}, []string{"held by cutover shop: no source asks for this member any more"}, Summary{Held: 1}},
		{"held, create-only: kept, nothing written", CreateOnly, append(member(), hold), nil, nil,
			[]string{"held by cutover shop: no source asks for this member any more"}, Summary{Held: 1}},
		{"held: a wanted member is confirmed", Sync, append(member(), hold),
			[]*endpoint.Endpoint{from(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 0), "service/default/app")}, []string{
				"0 DELETE a-app.example.com TXT blue weighted(0) " + payload("app"),
				"0 CREATE a-app.example.com TXT blue weighted(0) " + confirmed(""),
			}, nil, Summary{}},
		{"held: not replaced by a simple record", Sync, append(member(), hold), []*endpoint.Endpoint{simple}, []string{
			"0 DELETE a-app.example.com TXT blue weighted(0) " + payload("app"),
			"0 CREATE a-app.example.com TXT blue weighted(0) " + confirmed(endpoint.WantsNone),
		},
			[]string{"app.example.com A: held by cutover shop: it would replace the weighted member weighted(0) [blue] A record app.example.com -> 192.0.2.1 (weight 0), which stays while the cutover holds the weights (wanted by service/default/app)",
				"app.example.com A [blue]: held by cutover shop: no source asks for this member any more"},
			Summary{Held: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Calculate(Input{Desired: tt.desired, Current: tt.current, Registry: reg, Policy: tt.policy})
			got := render(p)
			if !slices.Equal(got, tt.want) {
				t.Errorf("changes:\n got %q\nwant %q", got, tt.want)
			}
			checkFindings(t, "conflict", p.Conflicts, tt.confl)
			if p.Summary != tt.summary {
				t.Errorf("summary %+v, want %+v", p.Summary, tt.summary)
			}
			for _, c := range got {
				if strings.Contains(c, "DELETE app.example.com A") && len(tt.current) > 2 {
					t.Errorf("a held member is deleted: %s", c)
				}
			}
			// Once written, the next plan writes nothing more: no write loop.
			if p2 := Calculate(Input{Desired: tt.desired, Current: applyPlan(tt.current, p), Registry: reg, Policy: tt.policy}); len(p2.Batches) != 0 {
				t.Errorf("second plan: %q, want nothing", render(p2))
			}
		})
	}
}

// TestHeldNameJoinsAtZero: while a cutover holds a name, a weighted member the zone lacks
// (deleted by another writer, or a new cluster's) is created at weight 0, whatever its
// source asks for: any other weight moves traffic only the cutover moves. Its ownership
// record confirms the hold and records the weight the source asks for, and the plan says
// so; the next plan writes nothing more. Without a hold, the source's weight is written.
func TestHeldNameJoinsAtZero(t *testing.T) {
	reg, _ := registry.New(registry.Config{OwnerID: "blue"})
	hold := registry.Authority{Name: "app.example.com", Cutover: "shop", Types: []string{"A"}, Runner: registry.Runner{Token: "t0k3n", Host: "ci"}}.Record()
	green := owned(t, weighted(rec("app.example.com", "A", "192.0.2.2"), "green", 90), "green", "service/default/app")
	blue := func(w int64) []*endpoint.Endpoint {
		return []*endpoint.Endpoint{from(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", w), "service/default/app")}
	}
	txt := func(wants string) string {
		l := `"heritage=external-dns,external-dns/crossfade-confirms-hold=t0k3n,`
		if wants != "" {
			l += "external-dns/crossfade-wants-weight=" + wants + ","
		}
		return l + `external-dns/owner=blue,external-dns/resource=service/default/app"`
	}
	simple := owned(t, rec("app.example.com", "A", "192.0.2.9"), "blue", "service/default/app")
	const joined = "app.example.com A [blue]: held by cutover shop: the member is not in the zone and is created at weight 0 while the cutover holds the weights; the source asks for 100 (wanted by service/default/app)"
	// What every policy writes for a held member the source asks 100 of: weight 0, the
	// wish recorded.
	joinedAt0 := []string{
		"0 CREATE app.example.com A blue weighted(0) 192.0.2.1",
		"0 CREATE a-app.example.com TXT blue weighted(0) " + txt("100"),
	}
	tests := []struct {
		name    string
		policy  Policy
		current []*endpoint.Endpoint
		desired []*endpoint.Endpoint
		want    []string
		confl   []string
		summary Summary
	}{
		{"no hold: the source's weight", Sync, green, blue(100), []string{
			"0 CREATE app.example.com A blue weighted(100) 192.0.2.1",
			"0 CREATE a-app.example.com TXT blue weighted(100) " + payload("app"),
		}, nil, Summary{Create: 1}},
		{"held: a deleted member comes back at weight 0", Sync, append(slices.Clone(green), hold), blue(100), joinedAt0, []string{joined}, Summary{Create: 1}},
		{"held: a source asking for 0 is created as it asks", Sync, append(slices.Clone(green), hold), blue(0), []string{
			"0 CREATE app.example.com A blue weighted(0) 192.0.2.1",
			"0 CREATE a-app.example.com TXT blue weighted(0) " + txt(""),
		}, nil, Summary{Create: 1}},
		{"held, upsert-only: at weight 0 too", UpsertOnly, append(slices.Clone(green), hold), blue(100), joinedAt0, []string{joined}, Summary{Create: 1}},
		{"held, create-only: at weight 0 too", CreateOnly, append(slices.Clone(green), hold), blue(100), joinedAt0, []string{joined}, Summary{Create: 1}},
		{"held: a simple record turned weighted joins at weight 0", Sync, append(slices.Clone(simple), hold), blue(100), []string{
			"0 DELETE app.example.com A  simple 192.0.2.9",
			"0 DELETE a-app.example.com TXT  simple " + payload("app"),
			joinedAt0[0], joinedAt0[1],
		}, []string{joined}, Summary{Create: 1, Replace: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Calculate(Input{Desired: tt.desired, Current: tt.current, Registry: reg, Policy: tt.policy})
			if got := render(p); !slices.Equal(got, tt.want) {
				t.Errorf("changes:\n got %q\nwant %q", got, tt.want)
			}
			checkFindings(t, "conflict", p.Conflicts, tt.confl)
			if p.Summary != tt.summary {
				t.Errorf("summary %+v, want %+v", p.Summary, tt.summary)
			}
			// Once written, the next plan writes nothing more: the member stays at 0 and
			// the wish stays recorded, with the same report, until the cutover moves it.
			p2 := Calculate(Input{Desired: tt.desired, Current: applyPlan(tt.current, p), Registry: reg, Policy: tt.policy})
			if len(p2.Batches) != 0 {
				t.Errorf("second plan: %q, want nothing", render(p2))
			}
		})
	}
}
