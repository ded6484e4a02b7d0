package verify

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

func TestVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	sb := sandboxtest.Start(t)
	if _, _, err := sb.Store().CreateZone("example.com", "ref", "", false); err != nil {
		t.Fatal(err)
	}
	dns := route53test.New(t, sb)
	zones, _ := dns.Zones(context.Background())
	b := changes.Batch{
		{Action: changes.Create, Endpoint: &endpoint.Endpoint{Name: "app.example.com", Type: "A", Targets: endpoint.Targets{"127.0.0.10"}, TTL: 60, SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(1)}},
		{Action: changes.Create, Endpoint: &endpoint.Endpoint{Name: "app.example.com", Type: "A", Targets: endpoint.Targets{"127.0.0.20"}, TTL: 60, SetIdentifier: "green", Policy: endpoint.WeightedPolicy(3)}},
		{Action: changes.Create, Endpoint: &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.Targets{"127.0.0.30"}, TTL: 60}},
	}
	if err := dns.Apply(context.Background(), zones[0], b); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Name: "App.Example.com.", Servers: []string{sb.DNSAddr()}, Queries: 2000, Tolerance: 0.05}
	res, err := Run(context.Background(), dns, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	res.WriteText(&out)
	t.Log("\n" + out.String())
	if !res.Pass || res.Queries != 2000 || len(res.Members) != 2 || res.Empty+res.Other != 0 {
		t.Fatalf("result %+v", res)
	}
	for _, m := range res.Members {
		want := map[string]float64{"blue": 0.25, "green": 0.75}[m.SetID]
		if m.Expected != want || math.Abs(m.Measured-want) > 0.05 {
			t.Errorf("%s: written %.3f measured %.3f, want %.2f", m.SetID, m.Expected, m.Measured, want)
		}
	}
	if !strings.Contains(out.String(), "green   3       75.0%") || !strings.Contains(out.String(), "ok: the answers follow the weights") {
		t.Errorf("table:\n%s", out.String())
	}

	for _, tc := range []struct{ name, typ, want string }{
		{"www.example.com", "A", "is simple, not weighted"},
		{"app.example.com", "AAAA", "has no weighted record set of that name and type"},
		{"app.example.org", "A", "no zone among the 1"},
	} {
		_, err := Run(context.Background(), dns, Config{Name: tc.name, Type: tc.typ, Servers: []string{sb.DNSAddr()}, Queries: 10, Tolerance: 0.1})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("verify %s %s: %v, want %q", tc.name, tc.typ, err, tc.want)
		}
	}
}
