package endpoint

import (
	"maps"
	"strings"
	"testing"
)

func TestOwnershipLabel(t *testing.T) {
	const blue = `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`
	tests := []struct {
		name, v, key string
		want         string
		ok           bool
	}{
		{"owner", blue, OwnerLabel, "blue", true},
		{"resource", blue, ResourceLabel, "service/default/app", true},
		{"absent", blue, WantsWeightLabel, "", false},
		{"unquoted", "heritage=external-dns,external-dns/owner=blue", OwnerLabel, "blue", true},
		{"heritage last", "external-dns/owner=blue,heritage=external-dns", OwnerLabel, "blue", true},
		{"no heritage", "external-dns/owner=blue", OwnerLabel, "", false},
		{"another heritage after the label", "heritage=external-dns,external-dns/owner=blue,heritage=other", OwnerLabel, "", false},
		{"repeated: the last wins", "heritage=external-dns,external-dns/owner=blue,external-dns/owner=green", OwnerLabel, "green", true},
		{"a value with = is skipped", "heritage=external-dns,external-dns/owner=blue,external-dns/owner=a=b", OwnerLabel, "blue", true},
		{"empty value", "heritage=external-dns,external-dns/owner=", OwnerLabel, "", true},
		{"key without the heritage prefix", "heritage=external-dns,owner=blue", OwnerLabel, "", false},
		{"key as another label's suffix", "heritage=external-dns,external-dns/xowner=blue", OwnerLabel, "", false},
		{"key inside a value", "heritage=external-dns,external-dns/resource=owner", OwnerLabel, "", false},
		{"a token without =", "heritage=external-dns,external-dns/owner,external-dns/resource=r", OwnerLabel, "", false},
		{"empty", "", OwnerLabel, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := OwnershipLabel(tt.v, tt.key)
			if got != tt.want || ok != tt.ok {
				t.Errorf("OwnershipLabel(%q, %q) = %q, %v; want %q, %v", tt.v, tt.key, got, ok, tt.want, tt.ok)
			}
			checkAgainstMap(t, tt.v, tt.key)
		})
	}
}

// checkAgainstMap asserts that every way of reading one label of v agrees with the map
// ParseOwnership builds: OwnershipLabel, and a record labelled by SetOwnership.
func checkAgainstMap(t *testing.T, v, key string) {
	t.Helper()
	l, isOwnership := ParseOwnership(v)
	if isOwnership != IsOwnership(v) {
		t.Fatalf("ParseOwnership(%q) ok %v, IsOwnership %v", v, isOwnership, IsOwnership(v))
	}
	want, wantOK := l[key]
	if got, ok := OwnershipLabel(v, key); got != want || ok != wantOK {
		t.Errorf("OwnershipLabel(%q, %q) = %q, %v; the labels map says %q, %v", v, key, got, ok, want, wantOK)
	}
	if _, ok := ReadOwnership(v); ok != isOwnership {
		t.Fatalf("ReadOwnership(%q) ok %v, ParseOwnership %v", v, ok, isOwnership)
	}
	if !isOwnership {
		return
	}
	o, ok := ReadOwnership(v)
	if !ok {
		t.Fatalf("ReadOwnership(%q) refused an ownership value", v)
	}
	e := &Endpoint{Name: "app.example.com", Type: TypeA}
	e.SetOwnership(o)
	if got, ok := e.LookupLabel(key); got != want || ok != wantOK {
		t.Errorf("LookupLabel(%q) of %q = %q, %v; the labels map says %q, %v", key, v, got, ok, want, wantOK)
	}
	if got := e.AllLabels(); !maps.Equal(got, l) {
		t.Errorf("AllLabels of %q = %v, want %v", v, got, l)
	}
	// MayCarryLabel may say true wrongly, never false.
	for _, sub := range []string{key, "crossfade-", OwnerLabel, ResourceLabel, "o", ""} {
		if e.MayCarryLabel(sub) {
			continue
		}
		for k := range l {
			if strings.Contains(k, sub) {
				t.Errorf("MayCarryLabel(%q) of %q = false, but it carries the label %q", sub, v, k)
			}
		}
	}
}

func FuzzOwnershipLabel(f *testing.F) {
	for _, s := range [][2]string{
		{`"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`, OwnerLabel},
		{"heritage=external-dns,external-dns/owner=a=b,external-dns/owner=c", OwnerLabel},
		{"heritage=external-dns,external-dns/crossfade-wants-ttl=60", "crossfade-wants-ttl"},
		{"heritage=external-dns,external-dns/=x", ""},
		{"heritage=external-dns,external-dns/a=b=c", "a=b"},
		{`""heritage=external-dns,,external-dns/owner=x"`, OwnerLabel},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, v, key string) { checkAgainstMap(t, v, key) })
}

func TestSetOwnership(t *testing.T) {
	const v = `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`
	want := Labels{OwnerLabel: "blue", ResourceLabel: "service/default/app"}
	e := &Endpoint{Name: "app.example.com", Type: TypeA, Labels: Labels{"stale": "x"}}
	e.SetOwnership(mustRead(t, v))
	if e.Labels != nil || e.Owner() != "blue" || e.Resource() != "service/default/app" || e.Label("stale") != "" {
		t.Fatalf("after SetOwnership: Labels %v, owner %q, resource %q, stale %q; want no Labels, blue, service/default/app, none",
			e.Labels, e.Owner(), e.Resource(), e.Label("stale"))
	}
	c := e.Clone()
	if !maps.Equal(c.Labels, want) {
		t.Errorf("Clone's Labels = %v, want %v", c.Labels, want)
	}
	c.Labels[OwnerLabel] = "green"
	if e.Owner() != "blue" {
		t.Errorf("changing a clone's labels changed the original's owner to %q", e.Owner())
	}
	if c.Clone().Owner() != "green" {
		t.Errorf("a clone of a clone lost its Labels: owner %q, want green", c.Clone().Owner())
	}
	e.FillLabels()
	if !maps.Equal(e.Labels, want) {
		t.Errorf("FillLabels: Labels = %v, want %v", e.Labels, want)
	}
	// Labels set later win over the ownership value.
	e.Labels = Labels{OwnerLabel: "red"}
	if e.Owner() != "red" || e.Resource() != "" || !maps.Equal(e.AllLabels(), Labels{OwnerLabel: "red"}) {
		t.Errorf("Labels set after SetOwnership: owner %q, resource %q, all %v; want red, none, only the owner", e.Owner(), e.Resource(), e.AllLabels())
	}
}

// TestOwnerAllocatesNothing guards what makes a large zone cheap to plan: reading a
// label of a record labelled by SetOwnership builds no map.
func TestOwnerAllocatesNothing(t *testing.T) {
	e := &Endpoint{Name: "app.example.com", Type: TypeA}
	e.SetOwnership(mustRead(t, `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`))
	allocs := testing.AllocsPerRun(100, func() {
		if e.Owner() != "blue" || e.Label(WantsWeightLabel) != "" {
			t.Fatal("wrong labels")
		}
	})
	if allocs != 0 {
		t.Errorf("Owner and Label allocate %v times per call, want 0", allocs)
	}
}

func TestMayCarryLabel(t *testing.T) {
	lazy := func(v string) *Endpoint {
		e := &Endpoint{}
		e.SetOwnership(mustRead(t, v))
		return e
	}
	tests := []struct {
		name string
		e    *Endpoint
		sub  string
		want bool
	}{
		{"no labels", &Endpoint{}, "crossfade-", false},
		{"map without", &Endpoint{Labels: Labels{ResourceLabel: "service/default/app"}}, "crossfade-", false},
		{"map with", &Endpoint{Labels: Labels{ConfirmsHoldLabel: "r"}}, "crossfade-", true},
		{"value without", lazy("heritage=external-dns,external-dns/owner=blue"), "crossfade-", false},
		{"value with", lazy("heritage=external-dns,external-dns/owner=blue,external-dns/crossfade-confirms-hold=r"), "crossfade-", true},
		// Owner and resource alone are told without searching the value, which a label's
		// value could match.
		{"only owner and resource", lazy("heritage=external-dns,external-dns/owner=blue,external-dns/resource=crossfade-app"), "crossfade-", false},
		{"only owner and resource: their keys", lazy("heritage=external-dns,external-dns/owner=blue,external-dns/resource=app"), "source", true},
		{"another label, empty", lazy("heritage=external-dns,external-dns/owner=blue,external-dns/crossfade-wants-ttl="), "crossfade-", true},
		{"a token that is no label", lazy("heritage=external-dns,external-dns/owner=blue,crossfade-x"), "crossfade-", true},
	}
	for _, tt := range tests {
		if got := tt.e.MayCarryLabel(tt.sub); got != tt.want {
			t.Errorf("%s: MayCarryLabel(%q) = %v, want %v", tt.name, tt.sub, got, tt.want)
		}
	}
}

func mustRead(t *testing.T, v string) Ownership {
	t.Helper()
	o, ok := ReadOwnership(v)
	if !ok {
		t.Fatalf("ReadOwnership(%q) refused an ownership value", v)
	}
	return o
}

func TestReadOwnership(t *testing.T) {
	tests := []struct {
		v        string
		ok       bool
		owner    string
		hasOwner bool
	}{
		{`"heritage=external-dns,external-dns/owner=blue"`, true, "blue", true},
		{"heritage=external-dns,external-dns/resource=r", true, "", false},
		{"heritage=external-dns,external-dns/owner=", true, "", true},
		{"heritage=external-dns,external-dns/owner=a,external-dns/owner=b", true, "b", true},
		{"external-dns/owner=blue", false, "", false},
		{"heritage=other,external-dns/owner=blue", false, "", false},
	}
	for _, tt := range tests {
		o, ok := ReadOwnership(tt.v)
		if ok != tt.ok {
			t.Errorf("ReadOwnership(%q) ok = %v, want %v", tt.v, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		e := &Endpoint{}
		e.SetOwnership(o)
		if got, has := e.LookupLabel(OwnerLabel); got != tt.owner || has != tt.hasOwner || e.Owner() != tt.owner {
			t.Errorf("owner of %q = %q, %v; want %q, %v", tt.v, got, has, tt.owner, tt.hasOwner)
		}
	}
}
