package changes

import (
	"slices"
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// TestAliasAOwnershipForms: an alias A's ownership is written under both forms,
// "cname-" (what external-dns ≤ 0.21 writes and alone reads) and "a-" (what ≥ 0.22
// writes and reads first), whenever crossfade writes it; a record adopted unchanged with
// either form or both gets nothing added; a deleted one loses every form read; a
// conflict over either form writes nothing.
func TestAliasAOwnershipForms(t *testing.T) {
	const res = "service/default/app"
	pb := payload("app")
	lb := func() *endpoint.Endpoint { return alias(rec("app.example.com", "A", "lb.example.com")) }
	lb2 := func() *endpoint.Endpoint { return alias(rec("app.example.com", "A", "lb2.example.com")) }
	txt := func(name string) *endpoint.Endpoint { return rec(name, "TXT", pb) }
	green := rec("a-app.example.com", "TXT", `"heritage=external-dns,external-dns/owner=green,external-dns/resource=service/default/g"`)
	spf := rec("app.example.com", "TXT", `"v=spf1 -all"`)
	tests := []struct {
		name      string
		legacy    bool
		current   []*endpoint.Endpoint
		desired   []*endpoint.Endpoint
		want      []string
		conflicts []string
		notes     []string
	}{
		{
			name:    "create: both forms",
			desired: []*endpoint.Endpoint{from(lb(), res)},
			want: []string{
				"0 CREATE app.example.com A  simple lb.example.com",
				"0 CREATE cname-app.example.com TXT  simple " + pb,
				"0 CREATE a-app.example.com TXT  simple " + pb,
			},
		},
		{
			name:    "create a weighted member: both forms carry its set identifier and weight",
			desired: []*endpoint.Endpoint{from(weighted(lb(), "blue", 1), res)},
			want: []string{
				"0 CREATE app.example.com A blue weighted(1) lb.example.com",
				"0 CREATE cname-app.example.com TXT blue weighted(1) " + pb,
				"0 CREATE a-app.example.com TXT blue weighted(1) " + pb,
			},
		},
		{
			name:    "create with the legacy form: both type-prefixed forms and the legacy one",
			legacy:  true,
			desired: []*endpoint.Endpoint{from(lb(), res)},
			want: []string{
				"0 CREATE app.example.com A  simple lb.example.com",
				"0 CREATE cname-app.example.com TXT  simple " + pb,
				"0 CREATE a-app.example.com TXT  simple " + pb,
				"0 CREATE app.example.com TXT  simple " + pb,
			},
		},
		{
			name:    "create where a user's TXT record holds the legacy name: only the legacy form is left out",
			legacy:  true,
			current: []*endpoint.Endpoint{spf},
			desired: []*endpoint.Endpoint{from(lb(), res)},
			want: []string{
				"0 CREATE app.example.com A  simple lb.example.com",
				"0 CREATE cname-app.example.com TXT  simple " + pb,
				"0 CREATE a-app.example.com TXT  simple " + pb,
			},
			notes: []string{"legacy same-name ownership record is not written"},
		},
		{
			name:    "adopted unchanged with cname- only (external-dns v0.21's zone): nothing added",
			current: []*endpoint.Endpoint{lb(), txt("cname-app.example.com")},
			desired: []*endpoint.Endpoint{from(lb(), res)},
		},
		{
			name:    "adopted unchanged with a- only (external-dns v0.23's zone): nothing added",
			current: []*endpoint.Endpoint{lb(), txt("a-app.example.com")},
			desired: []*endpoint.Endpoint{from(lb(), res)},
		},
		{
			name:    "adopted unchanged with both forms: nothing",
			current: []*endpoint.Endpoint{lb(), txt("cname-app.example.com"), txt("a-app.example.com")},
			desired: []*endpoint.Endpoint{from(lb(), res)},
		},
		{
			name:    "owned only through the legacy same-name form: its ownership is written, in both forms",
			current: []*endpoint.Endpoint{lb(), txt("app.example.com")},
			desired: []*endpoint.Endpoint{from(lb(), res)},
			want: []string{
				"0 CREATE cname-app.example.com TXT  simple " + pb,
				"0 CREATE a-app.example.com TXT  simple " + pb,
			},
		},
		{
			name:    "deleted with both forms: both go",
			current: []*endpoint.Endpoint{lb(), txt("cname-app.example.com"), txt("a-app.example.com")},
			want: []string{
				"0 DELETE app.example.com A  simple lb.example.com",
				"0 DELETE cname-app.example.com TXT  simple " + pb,
				"0 DELETE a-app.example.com TXT  simple " + pb,
			},
		},
		{
			name:    "deleted with cname- only: it goes, nothing else",
			current: []*endpoint.Endpoint{lb(), txt("cname-app.example.com")},
			want: []string{
				"0 DELETE app.example.com A  simple lb.example.com",
				"0 DELETE cname-app.example.com TXT  simple " + pb,
			},
		},
		{
			name:    "deleted with a- only: it goes, nothing else",
			current: []*endpoint.Endpoint{lb(), txt("a-app.example.com")},
			want: []string{
				"0 DELETE app.example.com A  simple lb.example.com",
				"0 DELETE a-app.example.com TXT  simple " + pb,
			},
		},
		{
			name:    "new target with both forms: both kept, rewritten as read",
			current: []*endpoint.Endpoint{lb(), txt("cname-app.example.com"), txt("a-app.example.com")},
			desired: []*endpoint.Endpoint{from(lb2(), res)},
			want: []string{
				"0 DELETE app.example.com A  simple lb.example.com",
				"0 DELETE cname-app.example.com TXT  simple " + pb,
				"0 DELETE a-app.example.com TXT  simple " + pb,
				"0 CREATE app.example.com A  simple lb2.example.com",
				"0 CREATE cname-app.example.com TXT  simple " + pb,
				"0 CREATE a-app.example.com TXT  simple " + pb,
			},
		},
		{
			name:    "new target with cname- only: cname- kept, a- added",
			current: []*endpoint.Endpoint{lb(), txt("cname-app.example.com")},
			desired: []*endpoint.Endpoint{from(lb2(), res)},
			want: []string{
				"0 DELETE app.example.com A  simple lb.example.com",
				"0 DELETE cname-app.example.com TXT  simple " + pb,
				"0 CREATE app.example.com A  simple lb2.example.com",
				"0 CREATE cname-app.example.com TXT  simple " + pb,
				"0 CREATE a-app.example.com TXT  simple " + pb,
			},
		},
		{
			name:    "new target with a- only: a- kept, cname- added",
			current: []*endpoint.Endpoint{lb(), txt("a-app.example.com")},
			desired: []*endpoint.Endpoint{from(lb2(), res)},
			want: []string{
				"0 DELETE app.example.com A  simple lb.example.com",
				"0 DELETE a-app.example.com TXT  simple " + pb,
				"0 CREATE app.example.com A  simple lb2.example.com",
				"0 CREATE cname-app.example.com TXT  simple " + pb,
				"0 CREATE a-app.example.com TXT  simple " + pb,
			},
		},
		{
			name:    "simple A becomes an alias A: its a- record is the alias's too, cname- added",
			current: []*endpoint.Endpoint{rec("app.example.com", "A", "192.0.2.1"), txt("a-app.example.com")},
			desired: []*endpoint.Endpoint{from(lb(), res)},
			want: []string{
				"0 DELETE app.example.com A  simple 192.0.2.1",
				"0 DELETE a-app.example.com TXT  simple " + pb,
				"0 CREATE app.example.com A  simple lb.example.com",
				"0 CREATE cname-app.example.com TXT  simple " + pb,
				"0 CREATE a-app.example.com TXT  simple " + pb,
			},
		},
		{
			// The two forms name two owners: the record is nobody's (see the next case).
			name:      "new target where another owner holds a-: nothing written",
			current:   []*endpoint.Endpoint{lb(), txt("cname-app.example.com"), green},
			desired:   []*endpoint.Endpoint{from(lb2(), res)},
			conflicts: []string{"exists as simple A record app.example.com -> lb.example.com with no owner"},
		},
		{
			// A leftover cname- of ours beside green's a- (a release deleted only its own
			// form, green wrote the record since): nobody's, so nothing is deleted.
			name:    "cname- ours, a- green's, nothing wanted: green's record is not deleted",
			current: []*endpoint.Endpoint{lb(), txt("cname-app.example.com"), green},
		},
		{
			name:      "create where a user's TXT record holds a-: nothing written",
			current:   []*endpoint.Endpoint{rec("a-app.example.com", "TXT", `"v=spf1 -all"`)},
			desired:   []*endpoint.Endpoint{from(lb(), res)},
			conflicts: []string{"its ownership record TXT a-app.example.com is taken by a TXT record that is not an ownership record"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := registry.New(registry.Config{OwnerID: "blue", WriteLegacy: tt.legacy})
			if err != nil {
				t.Fatal(err)
			}
			current := cloneAll(tt.current)
			p := Calculate(Input{Desired: cloneAll(tt.desired), Current: current, Registry: reg})
			if got := render(p); !slices.Equal(got, tt.want) {
				t.Errorf("changes:\n got %q\nwant %q", got, tt.want)
			}
			checkFindings(t, "conflict", p.Conflicts, tt.conflicts)
			checkFindings(t, "note", p.Notes, tt.notes)

			// No write loop: once the plan is applied, the next plan is empty.
			after := applyPlan(cloneAll(tt.current), p)
			if p2 := Calculate(Input{Desired: cloneAll(tt.desired), Current: after, Registry: reg}); len(p2.Batches) != 0 {
				t.Errorf("second plan not empty: %q", render(p2))
			}
		})
	}
}
