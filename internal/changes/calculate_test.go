package changes

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/registry"
)

func rec(name, typ string, targets ...string) *endpoint.Endpoint {
	return &endpoint.Endpoint{Name: name, Type: typ, Targets: endpoint.NewTargets(targets...), TTL: 300}
}

func weighted(e *endpoint.Endpoint, id string, w int64) *endpoint.Endpoint {
	e.SetIdentifier = id
	e.Policy = endpoint.WeightedPolicy(w)
	return e
}

func from(e *endpoint.Endpoint, resource string) *endpoint.Endpoint {
	e.Labels = endpoint.Labels{endpoint.ResourceLabel: resource}
	return e
}

// owned returns the record and the TXT ownership record external-dns ≥ 0.18 writes for it.
func owned(t *testing.T, e *endpoint.Endpoint, owner, resource string) []*endpoint.Endpoint {
	t.Helper()
	reg, err := registry.New(registry.Config{OwnerID: owner})
	if err != nil {
		t.Fatal(err)
	}
	l := e.Clone()
	l.Labels = endpoint.Labels{endpoint.OwnerLabel: owner, endpoint.ResourceLabel: resource}
	return append([]*endpoint.Endpoint{e}, reg.For(l)...)
}

func render(p *Set) []string {
	var out []string
	for i, b := range p.Batches {
		for _, c := range b {
			e := c.Endpoint
			out = append(out, fmt.Sprintf("%d %s %s %s %s %s %s", i, c.Action, e.Name, e.Type, e.SetIdentifier, e.Policy, strings.Join(e.Targets, ",")))
		}
	}
	return out
}

func TestCalculate(t *testing.T) {
	const payloadBlue = `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`
	tests := []struct {
		name      string
		policy    Policy
		current   func(t *testing.T) []*endpoint.Endpoint
		desired   []*endpoint.Endpoint
		want      []string
		conflicts []string // substrings, one per conflict
		summary   Summary
	}{
		{
			name:    "create simple with its TXT",
			current: func(*testing.T) []*endpoint.Endpoint { return nil },
			desired: []*endpoint.Endpoint{from(rec("app.example.com", "A", "192.0.2.1"), "service/default/app")},
			want: []string{
				"0 CREATE app.example.com A  simple 192.0.2.1",
				"0 CREATE a-app.example.com TXT  simple " + payloadBlue,
			},
			summary: Summary{Create: 1},
		},
		{
			name: "issue 1411: owned simple becomes weighted in one batch",
			current: func(t *testing.T) []*endpoint.Endpoint {
				return owned(t, rec("app.example.com", "A", "192.0.2.1"), "blue", "service/default/app")
			},
			desired: []*endpoint.Endpoint{from(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), "service/default/app")},
			want: []string{
				"0 DELETE app.example.com A  simple 192.0.2.1",
				"0 DELETE a-app.example.com TXT  simple " + payloadBlue,
				"0 CREATE app.example.com A blue weighted(1) 192.0.2.1",
				"0 CREATE a-app.example.com TXT blue weighted(1) " + payloadBlue,
			},
			summary: Summary{Create: 1, Replace: 1},
		},
		{
			name:   "issue 1411 under upsert-only: replacement is an update, allowed",
			policy: UpsertOnly,
			current: func(t *testing.T) []*endpoint.Endpoint {
				return owned(t, rec("app.example.com", "A", "192.0.2.1"), "blue", "service/default/app")
			},
			desired: []*endpoint.Endpoint{from(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), "service/default/app")},
			want: []string{
				"0 DELETE app.example.com A  simple 192.0.2.1",
				"0 DELETE a-app.example.com TXT  simple " + payloadBlue,
				"0 CREATE app.example.com A blue weighted(1) 192.0.2.1",
				"0 CREATE a-app.example.com TXT blue weighted(1) " + payloadBlue,
			},
			summary: Summary{Create: 1, Replace: 1},
		},
		{
			name: "unowned simple blocks weighted: conflict, nothing deleted",
			current: func(*testing.T) []*endpoint.Endpoint {
				return []*endpoint.Endpoint{rec("app.example.com", "A", "192.0.2.1")}
			},
			desired:   []*endpoint.Endpoint{from(weighted(rec("app.example.com", "A", "192.0.2.9"), "blue", 1), "service/default/app")},
			conflicts: []string{"app.example.com A [blue]: cannot be created beside the existing simple A record app.example.com -> 192.0.2.1 with no owner"},
		},
		{
			name: "simple owned by green blocks blue's weighted member",
			current: func(t *testing.T) []*endpoint.Endpoint {
				return owned(t, rec("app.example.com", "A", "192.0.2.1"), "green", "service/default/app")
			},
			desired:   []*endpoint.Endpoint{from(weighted(rec("app.example.com", "A", "192.0.2.9"), "blue", 1), "service/default/app")},
			conflicts: []string{"with owner green"},
		},
		{
			name: "two owners: green's member stays, blue adds its own",
			current: func(t *testing.T) []*endpoint.Endpoint {
				return owned(t, weighted(rec("app.example.com", "A", "192.0.2.2"), "green", 1), "green", "service/default/app")
			},
			desired: []*endpoint.Endpoint{from(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), "service/default/app")},
			want: []string{
				"0 CREATE app.example.com A blue weighted(1) 192.0.2.1",
				"0 CREATE a-app.example.com TXT blue weighted(1) " + payloadBlue,
			},
			summary: Summary{Create: 1},
		},
		{
			name: "same set identifier held by another owner: conflict",
			current: func(t *testing.T) []*endpoint.Endpoint {
				return owned(t, weighted(rec("app.example.com", "A", "192.0.2.2"), "blue", 1), "green", "service/default/app")
			},
			desired:   []*endpoint.Endpoint{from(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), "service/default/app")},
			conflicts: []string{"crossfade never overwrites a record it does not own"},
		},
		{
			name: "sync deletes only its own",
			current: func(t *testing.T) []*endpoint.Endpoint {
				return slices.Concat(
					owned(t, weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 1), "blue", "service/default/app"),
					owned(t, weighted(rec("app.example.com", "A", "192.0.2.2"), "green", 1), "green", "service/default/app"),
					[]*endpoint.Endpoint{rec("other.example.com", "A", "192.0.2.3")})
			},
			want: []string{
				"0 DELETE app.example.com A blue weighted(1) 192.0.2.1",
				"0 DELETE a-app.example.com TXT blue weighted(1) " + payloadBlue,
			},
			summary: Summary{Delete: 1},
		},
		{
			name:   "upsert-only keeps records whose source is gone",
			policy: UpsertOnly,
			current: func(t *testing.T) []*endpoint.Endpoint {
				return owned(t, rec("app.example.com", "A", "192.0.2.1"), "blue", "service/default/app")
			},
			summary: Summary{Held: 1},
		},
		{
			name: "update targets of an owned record",
			current: func(t *testing.T) []*endpoint.Endpoint {
				return owned(t, rec("app.example.com", "A", "192.0.2.1"), "blue", "service/default/app")
			},
			desired: []*endpoint.Endpoint{from(rec("app.example.com", "A", "192.0.2.7"), "service/default/app")},
			want: []string{
				// A compare-and-swap: the DELETE must match the set as read, so a set
				// someone changed since makes Route 53 refuse instead of overwriting it.
				// The ownership record says the same as before and is rewritten exactly
				// as read, so that the write lands only while blue still owns the name.
				"0 DELETE app.example.com A  simple 192.0.2.1",
				`0 DELETE a-app.example.com TXT  simple "heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`,
				"0 CREATE app.example.com A  simple 192.0.2.7",
				`0 CREATE a-app.example.com TXT  simple "heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`,
			},
			summary: Summary{Update: 1},
		},
		{
			name:   "create-only holds updates",
			policy: CreateOnly,
			current: func(t *testing.T) []*endpoint.Endpoint {
				return owned(t, rec("app.example.com", "A", "192.0.2.1"), "blue", "service/default/app")
			},
			desired: []*endpoint.Endpoint{from(rec("app.example.com", "A", "192.0.2.7"), "service/default/app")},
			summary: Summary{Held: 1},
		},
		{
			name: "unchanged record is left alone",
			current: func(t *testing.T) []*endpoint.Endpoint {
				return owned(t, rec("app.example.com", "A", "192.0.2.1"), "blue", "service/default/app")
			},
			desired: []*endpoint.Endpoint{from(rec("app.example.com", "A", "192.0.2.1"), "service/default/app")},
		},
		{
			name: "legacy same-name TXT: owned, new-format TXT is added",
			current: func(*testing.T) []*endpoint.Endpoint {
				return []*endpoint.Endpoint{rec("app.example.com", "A", "192.0.2.1"),
					{Name: "app.example.com", Type: "TXT", Targets: endpoint.Targets{payloadBlue}}}
			},
			desired: []*endpoint.Endpoint{from(rec("app.example.com", "A", "192.0.2.1"), "service/default/app")},
			want:    []string{"0 CREATE a-app.example.com TXT  simple " + payloadBlue},
		},
		{
			name:    "two sources disagree: reported, one published",
			current: func(*testing.T) []*endpoint.Endpoint { return nil },
			desired: []*endpoint.Endpoint{
				from(rec("app.example.com", "A", "192.0.2.2"), "service/default/b"),
				from(rec("app.example.com", "A", "192.0.2.1"), "service/default/a"),
			},
			want: []string{
				"0 CREATE app.example.com A  simple 192.0.2.1",
				"0 CREATE a-app.example.com TXT  simple " + strings.Replace(payloadBlue, "default/app", "default/a", 1),
			},
			conflicts: []string{"sources disagree: service/default/a wants simple A record app.example.com -> 192.0.2.1; service/default/b wants"},
			summary:   Summary{Create: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := registry.New(registry.Config{OwnerID: "blue"})
			if err != nil {
				t.Fatal(err)
			}
			p := Calculate(Input{Desired: tt.desired, Current: tt.current(t), Registry: reg, Policy: tt.policy})
			if got := render(p); !slices.Equal(got, tt.want) {
				t.Errorf("changes:\n got %q\nwant %q", got, tt.want)
			}
			if len(p.Conflicts) != len(tt.conflicts) {
				t.Fatalf("conflicts: got %v, want %d", p.Conflicts, len(tt.conflicts))
			}
			for i, c := range p.Conflicts {
				if !strings.Contains(c.String(), tt.conflicts[i]) {
					t.Errorf("conflict %d: %q does not contain %q", i, c, tt.conflicts[i])
				}
				if c.Advice == "" {
					t.Errorf("conflict %d has no advice", i)
				}
			}
			if p.Summary != tt.summary {
				t.Errorf("summary: got %+v, want %+v", p.Summary, tt.summary)
			}
		})
	}
}

func TestBatchesKeepNamesWhole(t *testing.T) {
	reg, _ := registry.New(registry.Config{OwnerID: "blue"})
	var current, desired []*endpoint.Endpoint
	// 700 owned simple records each becoming weighted: 4 changes per name.
	for i := range 700 {
		name := fmt.Sprintf("app%03d.example.com", i)
		current = append(current, owned(t, rec(name, "A", "192.0.2.1"), "blue", "service/default/app")...)
		desired = append(desired, from(weighted(rec(name, "A", "192.0.2.1"), "blue", 1), "service/default/app"))
	}
	p := Calculate(Input{Desired: desired, Current: current, Registry: reg})
	total := 0
	for i, b := range p.Batches {
		n, chars := Route53Limits.BatchCost(b)
		if n > 1000 || chars > 32000 {
			t.Errorf("batch %d over limits: %d changes, %d chars", i, n, chars)
		}
		// A batch boundary never falls inside a name's changes.
		first := strings.TrimPrefix(b[0].Endpoint.Name, "a-")
		last := strings.TrimPrefix(b[len(b)-1].Endpoint.Name, "a-")
		if b[0].Action != Delete || first == "" {
			t.Errorf("batch %d starts with %s %s", i, b[0].Action, first)
		}
		if len(b)%4 != 0 {
			t.Errorf("batch %d has %d changes, not whole units of 4 (last %s)", i, len(b), last)
		}
		total += len(b)
	}
	// Each name spends 4 changes and 2×(9+88) value characters, so the 32,000-character
	// limit binds first: 164 names (656 changes) a batch, 5 batches.
	if total != 2800 || len(p.Batches) != 5 {
		t.Errorf("got %d changes in %d batches, want 2800 in 5", total, len(p.Batches))
	}
	// Value characters bind too.
	p = Calculate(Input{Desired: desired, Current: current, Registry: reg, Limits: Limits{MaxRecords: 1000, MaxValueChars: 2000}})
	for i, b := range p.Batches {
		if _, chars := Route53Limits.BatchCost(b); chars > 2000 {
			t.Errorf("batch %d has %d chars", i, chars)
		}
	}
}

func TestDeterministic(t *testing.T) {
	reg, _ := registry.New(registry.Config{OwnerID: "blue"})
	var desired []*endpoint.Endpoint
	for i := range 200 {
		desired = append(desired, from(weighted(rec(fmt.Sprintf("n%d.example.com", i%37), "A", fmt.Sprintf("192.0.2.%d", i%250)), fmt.Sprint("s", i%5), 1), fmt.Sprint("service/default/", i)))
	}
	first := render(Calculate(Input{Desired: desired, Registry: reg}))
	for range 20 {
		slices.Reverse(desired)
		if got := render(Calculate(Input{Desired: desired, Registry: reg})); !slices.Equal(got, first) {
			t.Fatal("plan depends on input order")
		}
	}
}

func TestParsePolicy(t *testing.T) {
	for _, s := range []string{"sync", "upsert-only", "create-only"} {
		if p, err := ParsePolicy(s); err != nil || string(p) != s {
			t.Errorf("ParsePolicy(%q) = %q, %v", s, p, err)
		}
	}
	if _, err := ParsePolicy("delete-all"); err == nil || !strings.Contains(err.Error(), `"delete-all"`) {
		t.Errorf("bad policy: %v", err)
	}
}

func TestLimitsCost(t *testing.T) {
	l := Route53Limits
	e := &endpoint.Endpoint{Name: "a.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.1", "192.0.2.22"}}
	for _, tc := range []struct {
		c             Change
		records, char int
	}{
		{Change{Action: Create, Endpoint: e}, 2, 19},
		{Change{Action: Upsert, Endpoint: e}, 4, 38},
		{Change{Action: Delete, Endpoint: &endpoint.Endpoint{Name: "b.example.com", Type: "A", Targets: endpoint.Targets{"lb.example.net"},
			ProviderSpecific: map[string]string{endpoint.PropAlias: "true"}}}, 1, 14},
	} {
		r, c := l.Cost(tc.c)
		if r != tc.records || c != tc.char {
			t.Errorf("Cost(%s %s) = %d, %d; want %d, %d", tc.c.Action, tc.c.Endpoint, r, c, tc.records, tc.char)
		}
	}
	if !l.Fits(1000, 32000) || l.Fits(1001, 1) || l.Fits(1, 32001) {
		t.Error("Fits disagrees with Route 53's limits")
	}
}

// TestDomainFilterKeepsOutsideRecords: a record owned by us but outside the domain filter
// is neither deleted nor updated, even though its TXT name (a-other...) is outside the
// filter too; inside the filter, ownership is still read from the TXT.
func TestDomainFilterKeepsOutsideRecords(t *testing.T) {
	reg, err := registry.New(registry.Config{OwnerID: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	current := append(owned(t, rec("other.example.com", "A", "192.0.2.5"), "blue", "service/default/other"),
		owned(t, rec("app.example.com", "A", "192.0.2.1"), "blue", "service/default/app")...)
	desired := []*endpoint.Endpoint{
		from(rec("app.example.com", "A", "192.0.2.2"), "service/default/app"),
		from(rec("new.other.example.com", "A", "192.0.2.3"), "service/default/new"),
	}
	const payload = "\"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/"
	update := []string{"0 DELETE app.example.com A  simple 192.0.2.1", "0 DELETE a-app.example.com TXT  simple " + payload + "app\"",
		"0 CREATE app.example.com A  simple 192.0.2.2", "0 CREATE a-app.example.com TXT  simple " + payload + "app\""}
	for _, tt := range []struct {
		filter endpoint.DomainFilter
		want   []string
	}{
		{endpoint.NewDomainFilter([]string{"app.example.com"}, nil), update},
		{endpoint.NewDomainFilter(nil, []string{"other.example.com"}), update},
		{endpoint.DomainFilter{}, append(slices.Clone(update),
			"0 CREATE new.other.example.com A  simple 192.0.2.3",
			"0 CREATE a-new.other.example.com TXT  simple "+payload+"new\"",
			"0 DELETE other.example.com A  simple 192.0.2.5",
			"0 DELETE a-other.example.com TXT  simple "+payload+"other\"",
		)},
	} {
		p := Calculate(Input{Desired: desired, Current: current, Registry: reg, DomainFilter: tt.filter})
		if got := render(p); !slices.Equal(got, tt.want) || len(p.Conflicts) != 0 {
			t.Errorf("filter %+v:\n got %q\nwant %q\nconflicts %v", tt.filter, got, tt.want, p.Conflicts)
		}
	}
}

// TestCutoverHoldsTTL: a TTL the cutover lowered is not raised again by a sync while the
// cutover holds the name, and without a conflict: it is the cutover's to restore. Only
// the member's ownership record is written, once, to confirm the hold.
func TestCutoverHoldsTTL(t *testing.T) {
	reg, _ := registry.New(registry.Config{OwnerID: "blue"})
	cur := weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 5)
	cur.TTL = 10
	current := append(owned(t, cur, "blue", "service/default/app"), registry.AuthorityRecord("app.example.com", []string{"A"}, "c"))
	desired := func() []*endpoint.Endpoint {
		return []*endpoint.Endpoint{from(weighted(rec("app.example.com", "A", "192.0.2.1"), "blue", 5), "service/default/app")}
	}
	p := Calculate(Input{Desired: desired(), Current: current, Registry: reg})
	got := render(p)
	if len(got) != 2 || !strings.Contains(got[0], "DELETE a-app.example.com TXT") || !strings.Contains(got[1], "CREATE a-app.example.com TXT blue weighted(5)") ||
		!strings.Contains(got[1], endpoint.ConfirmsHoldLabel+"=c,") || len(p.Conflicts) != 0 {
		t.Errorf("got %q, conflicts %v; want only the ownership record confirming the hold", got, p.Conflicts)
	}
	if p2 := Calculate(Input{Desired: desired(), Current: applyPlan(current, p), Registry: reg}); len(p2.Batches) != 0 {
		t.Errorf("second plan: %q, want nothing", render(p2))
	}
}
