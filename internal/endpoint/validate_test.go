package endpoint

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	base := func() *Endpoint {
		return &Endpoint{Name: "app.example.com", Type: TypeA, Targets: NewTargets("192.0.2.1"), TTL: 60}
	}
	tests := []struct {
		name   string
		change func(e *Endpoint)
		want   []string // "field: substring"
	}{
		{"valid simple", func(*Endpoint) {}, nil},
		{"valid weighted", func(e *Endpoint) { e.SetIdentifier, e.Policy = "blue", WeightedPolicy(255) }, nil},
		{"valid failover", func(e *Endpoint) { e.SetIdentifier, e.Policy = "blue", FailoverPolicy("primary") }, nil},
		{"valid wildcard", func(e *Endpoint) { e.Name = "*.example.com" }, nil},
		{"weight over 255", func(e *Endpoint) { e.SetIdentifier, e.Policy = "blue", WeightedPolicy(256) }, []string{`weight "256": want an integer 0..255`}},
		{"weight without set identifier", func(e *Endpoint) { e.Policy = WeightedPolicy(1) }, []string{`weight "1": set without set-identifier`}},
		{"set identifier without policy", func(e *Endpoint) { e.SetIdentifier = "blue" }, []string{`set-identifier "blue": set without a routing policy`}},
		{"bad failover role", func(e *Endpoint) { e.SetIdentifier, e.Policy = "x", FailoverPolicy("first") }, []string{`failover "FIRST": want PRIMARY or SECONDARY`}},
		{"A with a hostname", func(e *Endpoint) { e.Targets = NewTargets("lb.example.net") }, []string{`targets "lb.example.net": want an IPv4 address`}},
		{"AAAA with IPv4", func(e *Endpoint) { e.Type, e.Targets = TypeAAAA, NewTargets("192.0.2.1") }, []string{"want an IPv6 address"}},
		{"two CNAME targets", func(e *Endpoint) { e.Type, e.Targets = TypeCNAME, NewTargets("a.example.net", "b.example.net") }, []string{"a CNAME takes exactly one target"}},
		{"no targets", func(e *Endpoint) { e.Targets = nil }, []string{"targets: no targets"}},
		{"bad name", func(e *Endpoint) { e.Name = "app..example.com" }, []string{`name "app..example.com": empty label`}},
		{"bad character", func(e *Endpoint) { e.Name = "app!.example.com" }, []string{"has character '!'"}},
		{"long label", func(e *Endpoint) { e.Name = strings.Repeat("a", 64) + ".example.com" }, []string{"longer than 63 characters"}},
		{"negative ttl", func(e *Endpoint) { e.TTL = -1 }, []string{`ttl "-1": want 0..2147483647`}},
		{"unknown type", func(e *Endpoint) { e.Type = "LOC" }, []string{`type "LOC"`}},
		{"alias to a hostname", func(e *Endpoint) { e.Targets = NewTargets("lb.example.net"); e.SetProp(PropAlias, "true") }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := base()
			tt.change(e)
			errs := e.Validate()
			if len(errs) != len(tt.want) {
				t.Fatalf("got %v, want %d errors %v", errs, len(tt.want), tt.want)
			}
			for i, err := range errs {
				if !strings.Contains(err.Error(), tt.want[i]) {
					t.Errorf("error %q does not contain %q", err, tt.want[i])
				}
			}
		})
	}
}

func TestInvalidErrorText(t *testing.T) {
	err := &InvalidError{Object: ObjectRef{Kind: "Service", Namespace: "default", Name: "nginx"},
		Field: "annotation external-dns.alpha.kubernetes.io/aws-weight", Value: "abc", Reason: "want an integer 0..255"}
	const want = `service default/nginx: annotation external-dns.alpha.kubernetes.io/aws-weight "abc": want an integer 0..255`
	if err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
}

func TestDomainFilter(t *testing.T) {
	f := NewDomainFilter([]string{"Example.com.", ".apps.example.org"}, []string{"internal.example.com"})
	for name, want := range map[string]bool{
		"example.com": true, "a.b.example.com": true, "badexample.com": false, "x.internal.example.com": false,
		"apps.example.org": true, "x.apps.example.org": true, "example.org": false,
	} {
		if got := f.Match(name); got != want {
			t.Errorf("Match(%q) = %v, want %v", name, got, want)
		}
	}
	for zone, want := range map[string]bool{"example.com": true, "sub.example.com": true, "com": true, "example.org": true, "other.net": false, "internal.example.com": false} {
		if got := f.MatchZone(zone); got != want {
			t.Errorf("MatchZone(%q) = %v, want %v", zone, got, want)
		}
	}
	if !(DomainFilter{}).Match("anything.test") {
		t.Error("empty filter must match everything")
	}
}

func TestTargets(t *testing.T) {
	got := NewTargets("LB.Example.net.", "lb.example.net", " ", `"Heritage=X"`)
	if len(got) != 2 || got[0] != `"Heritage=X"` || got[1] != "lb.example.net" {
		t.Fatalf("NewTargets = %q", got)
	}
	if !NewTargets("b", "a").Same(Targets{"a", "b"}) || NewTargets("a").Same(Targets{"a", "b"}) {
		t.Error("Same")
	}
}
