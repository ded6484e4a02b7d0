package registry

import (
	"slices"
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

func TestTXTNames(t *testing.T) {
	tests := []struct {
		prefix, suffix, wildcard string
		name, typ                string
		want, legacy             string
	}{
		{name: "app.example.com", typ: "A", want: "a-app.example.com", legacy: "app.example.com"},
		{name: "app.example.com", typ: "CNAME", want: "cname-app.example.com", legacy: "app.example.com"},
		{name: "app.example.com", typ: "AAAA", want: "aaaa-app.example.com", legacy: "app.example.com"},
		// external-dns v0.23 owns TXT records (and knows DNAME, TLSA) under the TXT registry.
		{name: "spf.example.com", typ: "TXT", want: "txt-spf.example.com", legacy: "spf.example.com"},
		{name: "app.example.com", typ: "DNAME", want: "dname-app.example.com", legacy: "app.example.com"},
		{name: "_443._tcp.app.example.com", typ: "TLSA", want: "tlsa-_443._tcp.app.example.com", legacy: "_443._tcp.app.example.com"},
		{prefix: "%{record_type}-owner.", name: "spf.example.com", typ: "TXT", want: "txt-owner.spf.example.com", legacy: "-owner.spf.example.com"},
		{prefix: "txt.", name: "app.example.com", typ: "A", want: "txt.a-app.example.com", legacy: "txt.app.example.com"},
		{suffix: "-txt", name: "app.example.com", typ: "A", want: "a-app-txt.example.com", legacy: "app-txt.example.com"},
		{prefix: "%{record_type}-owner.", name: "app.example.com", typ: "CNAME", want: "cname-owner.app.example.com", legacy: "-owner.app.example.com"},
		{suffix: ".%{record_type}reg", name: "app.example.com", typ: "A", want: "app.areg.example.com", legacy: "app.reg.example.com"},
		{wildcard: "wild", name: "*.example.com", typ: "A", want: "a-wild.example.com", legacy: "wild.example.com"},
		{name: "*.example.com", typ: "A", want: "a-*.example.com", legacy: "*.example.com"},
		{name: "example.com", typ: "A", want: "a-example.com", legacy: "example.com"},
	}
	for _, tt := range tests {
		m := newNameMapper(tt.prefix, tt.suffix, tt.wildcard)
		if got := m.txtName(tt.name, tt.typ); got != tt.want {
			t.Errorf("txtName(%q,%q) prefix %q suffix %q = %q, want %q", tt.name, tt.typ, tt.prefix, tt.suffix, got, tt.want)
		}
		if got := m.legacyName(tt.name); got != tt.legacy {
			t.Errorf("legacyName(%q) = %q, want %q", tt.name, got, tt.legacy)
		}
		wantName := tt.name
		if tt.wildcard != "" {
			wantName = "wild" + tt.name[1:]
		}
		if name, typ, ok := m.recordName(tt.want); !ok || name != wantName || typ != tt.typ {
			t.Errorf("recordName(%q) = %q %q %v, want %q %q", tt.want, name, typ, ok, wantName, tt.typ)
		}
	}
}

func TestPayload(t *testing.T) {
	l := endpoint.Labels{"resource": "service/default/app", "owner": "blue"}
	const want = `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`
	if got := Payload(l); got != want {
		t.Fatalf("Payload = %s, want %s", got, want)
	}
	back, err := ParsePayload(want)
	if err != nil || back["owner"] != "blue" || back["resource"] != "service/default/app" || len(back) != 2 {
		t.Fatalf("ParsePayload = %v, %v", back, err)
	}
	for _, bad := range []string{`"heritage=other,external-dns/owner=blue"`, `"external-dns/owner=blue"`, `v=spf1 -all`, ``} {
		if _, err := ParsePayload(bad); err == nil {
			t.Errorf("ParsePayload(%q) accepted", bad)
		}
	}
}

func TestRead(t *testing.T) {
	reg, err := New(Config{OwnerID: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	p := func(owner string) endpoint.Targets {
		return endpoint.Targets{Payload(endpoint.Labels{"owner": owner, "resource": "service/default/app"})}
	}
	records := []*endpoint.Endpoint{
		{Name: "new.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.1"}},
		{Name: "a-new.example.com", Type: "TXT", Targets: p("blue")},
		{Name: "legacy.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.2"}},
		{Name: "legacy.example.com", Type: "TXT", Targets: p("green")},
		{Name: "legacy.example.com", Type: "AAAA", Targets: endpoint.Targets{"2001:db8::1"}},
		{Name: "w.example.com", Type: "A", SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(1), Targets: endpoint.Targets{"192.0.2.3"}},
		{Name: "w.example.com", Type: "A", SetIdentifier: "green", Policy: endpoint.WeightedPolicy(1), Targets: endpoint.Targets{"192.0.2.4"}},
		{Name: "a-w.example.com", Type: "TXT", SetIdentifier: "green", Policy: endpoint.WeightedPolicy(1), Targets: p("green")},
		{Name: "alias.example.com", Type: "A", Targets: endpoint.Targets{"lb.example.net"}, ProviderSpecific: map[string]string{"alias": "true"}},
		{Name: "cname-alias.example.com", Type: "TXT", Targets: p("blue")},
		{Name: "spf.example.com", Type: "TXT", Targets: endpoint.Targets{`"v=spf1 -all"`}},
	}
	z := reg.Read(records)
	owners := map[string]string{}
	for _, r := range z.Records {
		owners[r.Key().String()] = r.Owner()
	}
	want := map[string]string{
		"new.example.com A":       "blue",
		"legacy.example.com A":    "green",
		"legacy.example.com AAAA": "", // external-dns never reads the legacy form for AAAA
		"w.example.com A [blue]":  "",
		"w.example.com A [green]": "green",
		"alias.example.com A":     "blue",
		"spf.example.com TXT":     "",
	}
	for k, v := range want {
		if got, ok := owners[k]; !ok || got != v {
			t.Errorf("%s: owner %q (present %v), want %q", k, got, ok, v)
		}
	}
	if len(z.Records) != len(want) {
		t.Errorf("got %d records, want %d", len(z.Records), len(want))
	}
	if !z.LegacyOnly[endpoint.Key{Name: "legacy.example.com", Type: "A"}] || len(z.LegacyOnly) != 1 {
		t.Errorf("LegacyOnly = %v", z.LegacyOnly)
	}
	if got := z.TXT(endpoint.Key{Name: "a-w.example.com", Type: "TXT", SetIdentifier: "green"}); got == nil {
		t.Error("TXT lookup of a-w.example.com [green] found nothing")
	}
	if got := z.TXT(endpoint.Key{Name: "a-w.example.com", Type: "TXT", SetIdentifier: "blue"}); got != nil {
		t.Errorf("TXT lookup of a missing member found %v", got)
	}
}

func TestFor(t *testing.T) {
	reg, _ := New(Config{OwnerID: "blue", WriteLegacy: true})
	rec := &endpoint.Endpoint{Name: "app.example.com", Type: "A", TTL: 60, SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(3),
		Targets: endpoint.Targets{"192.0.2.1"}, Labels: endpoint.Labels{"owner": "blue", "resource": "service/default/app"},
		ProviderSpecific: map[string]string{endpoint.PropHealthCheckID: "hc-1"}}
	got := reg.For(rec)
	var names []string
	for _, g := range got {
		names = append(names, g.Name)
		if g.Type != "TXT" || g.SetIdentifier != "blue" || g.Policy != endpoint.WeightedPolicy(3) || g.TTL != 0 ||
			g.ProviderSpecific[endpoint.PropHealthCheckID] != "hc-1" || g.Targets[0] != `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"` {
			t.Errorf("TXT %+v", g)
		}
	}
	if !slices.Equal(names, []string{"a-app.example.com", "app.example.com"}) {
		t.Errorf("names %v", names)
	}
	cname := &endpoint.Endpoint{Name: "c.example.com", Type: "CNAME", Targets: endpoint.Targets{"x.example.net"}, Labels: endpoint.Labels{"owner": "blue"}}
	if got := reg.For(cname); len(got) != 1 || got[0].Name != "cname-c.example.com" {
		t.Errorf("a CNAME must not get a same-name legacy TXT: %v", got)
	}
	if _, err := New(Config{}); err == nil {
		t.Error("empty owner accepted")
	}
	if _, err := New(Config{OwnerID: "x", Prefix: "a", Suffix: "b"}); err == nil {
		t.Error("prefix and suffix accepted together")
	}
}

// TestForAliasA: an alias A's ownership is written under both type-prefixed forms,
// "cname-" (external-dns ≤ 0.21) and "a-" (≥ 0.22), before the legacy one; every other
// record, an alias AAAA included, has one. Read back, the record is owned and both forms
// are found, the "a-" one in Other, so that a delete removes both.
func TestForAliasA(t *testing.T) {
	aliasTo := func(typ string) *endpoint.Endpoint {
		return &endpoint.Endpoint{Name: "app.example.com", Type: typ, Targets: endpoint.Targets{"lb.example.net"},
			ProviderSpecific: map[string]string{endpoint.PropAlias: "true"}}
	}
	plain := &endpoint.Endpoint{Name: "app.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.1"}}
	tests := []struct {
		name  string
		cfg   Config
		rec   *endpoint.Endpoint
		want  []string
		typed int
	}{
		{name: "alias A", rec: aliasTo("A"), want: []string{"cname-app.example.com", "a-app.example.com"}, typed: 2},
		{name: "alias A, legacy form last", cfg: Config{WriteLegacy: true}, rec: aliasTo("A"),
			want: []string{"cname-app.example.com", "a-app.example.com", "app.example.com"}, typed: 2},
		{name: "alias A, prefix", cfg: Config{Prefix: "txt."}, rec: aliasTo("A"), want: []string{"txt.cname-app.example.com", "txt.a-app.example.com"}, typed: 2},
		{name: "alias A, templated prefix", cfg: Config{Prefix: "%{record_type}-owner."}, rec: aliasTo("A"),
			want: []string{"cname-owner.app.example.com", "a-owner.app.example.com"}, typed: 2},
		{name: "alias A, suffix", cfg: Config{Suffix: "-txt"}, rec: aliasTo("A"), want: []string{"cname-app-txt.example.com", "a-app-txt.example.com"}, typed: 2},
		{name: "alias AAAA: aaaa- in every release", rec: aliasTo("AAAA"), want: []string{"aaaa-app.example.com"}, typed: 1},
		{name: "plain A", rec: plain, want: []string{"a-app.example.com"}, typed: 1},
		{name: "plain A, legacy form", cfg: Config{WriteLegacy: true}, rec: plain, want: []string{"a-app.example.com", "app.example.com"}, typed: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.OwnerID = "blue"
			reg, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := TypedForms(tt.rec); got != tt.typed {
				t.Errorf("TypedForms = %d, want %d", got, tt.typed)
			}
			l := tt.rec.Clone()
			l.Labels = endpoint.Labels{endpoint.OwnerLabel: "blue", endpoint.ResourceLabel: "service/default/app"}
			txts := reg.For(l)
			var names []string
			for _, x := range txts {
				names = append(names, x.Name)
			}
			if !slices.Equal(names, tt.want) {
				t.Fatalf("For names %q, want %q", names, tt.want)
			}
			for _, read := range []func([]*endpoint.Endpoint) Zone{reg.Read, reg.Index} {
				z := read(append([]*endpoint.Endpoint{tt.rec.Clone()}, txts...))
				if len(z.Records) != 1 || z.Records[0].Owner() != "blue" {
					t.Fatalf("read back: %v, want the record owned by blue", z.Records)
				}
				for _, x := range txts[:tt.typed] {
					if z.TXT(x.Key()) == nil {
						t.Errorf("read back: TXT(%s) found nothing", x.Key())
					}
				}
				other := z.Other[tt.rec.Key()]
				switch {
				case tt.typed == 2 && (other == nil || other.Name != tt.want[1]):
					t.Errorf("read back: Other = %v, want the a- form %s", other, tt.want[1])
				case tt.typed == 1 && other != nil:
					t.Errorf("read back: Other = %v, want none", other)
				}
			}
		})
	}
}
