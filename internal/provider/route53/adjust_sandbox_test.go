package route53

import (
	"context"
	"slices"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// TestLoadBalancerCNAMEBecomesDualAlias follows a zone from the CNAMEs to AWS load
// balancers that crossfade wrote before it matched external-dns (what --aws-prefer-cname
// still writes) to the alias A + alias AAAA external-dns writes for them, and back,
// through controller.Syncer against the sandbox. Each move is one sync with no conflict
// or refusal (Route 53 takes the CNAME's DELETE, the aliases' CREATEs and the ownership
// records' changes in one batch), leaves the zone exactly as the target form's first
// sync would have written it (no stray aaaa- TXT on the way back), and the sync after it
// plans nothing.
func TestLoadBalancerCNAMEBecomesDualAlias(t *testing.T) {
	const (
		alb = "k8s-default-web-0123456789-1234567890.us-east-1.elb.amazonaws.com"
		nlb = "k8s-default-tcp-0123456789-0123456789abcdef.elb.eu-west-1.amazonaws.com"
	)
	desired := []*endpoint.Endpoint{
		{Name: "web.example.com", Type: "CNAME", Targets: endpoint.Targets{alb}, TTL: 60,
			Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/web"}},
		{Name: "app.example.com", Type: "CNAME", Targets: endpoint.Targets{nlb}, SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(100),
			Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/app"}},
	}
	cname := []string{
		"app.example.com CNAME [blue] " + nlb,
		"cname-app.example.com TXT [blue] " + `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`,
		"cname-web.example.com TXT " + `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/web"`,
		"web.example.com CNAME " + alb,
	}
	dual := []string{
		"a-app.example.com TXT [blue] " + `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`,
		"a-web.example.com TXT " + `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/web"`,
		"aaaa-app.example.com TXT [blue] " + `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`,
		"aaaa-web.example.com TXT " + `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/web"`,
		"app.example.com A [blue] " + nlb,
		"app.example.com AAAA [blue] " + nlb,
		"cname-app.example.com TXT [blue] " + `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`,
		"cname-web.example.com TXT " + `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/web"`,
		"web.example.com A " + alb,
		"web.example.com AAAA " + alb,
	}

	sb := startSandbox(t)
	z := createZone(t, sb, "example.com", false)
	reg, err := registry.New(registry.Config{OwnerID: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	asCNAME := &controller.Syncer{Provider: newTestProvider(t, sb, Config{PreferCNAME: true}), Registry: reg}
	asAlias := &controller.Syncer{Provider: newTestProvider(t, sb, Config{}), Registry: reg}
	p := asAlias.Provider.(*Provider)

	for i, step := range []struct {
		name string
		s    *controller.Syncer
		want []string
	}{
		{"CNAMEs, as before", asCNAME, cname},
		{"to alias A and AAAA", asAlias, dual},
		{"back to CNAMEs", asCNAME, cname},
	} {
		rep, err := step.s.Sync(context.Background(), desired)
		if err != nil || rep.Err() != nil || len(rep.Conflicts()) > 0 {
			t.Fatalf("step %d (%s): %v, %v, conflicts %v", i, step.name, err, rep.Err(), rep.Conflicts())
		}
		if got := render(managed(records(t, p, z))); !slices.Equal(got, step.want) {
			t.Fatalf("step %d (%s): zone\n got %q\nwant %q", i, step.name, got, step.want)
		}
		if rep.Zones[0].Applied != 1 {
			t.Errorf("step %d (%s): %d batches written, want the move in one", i, step.name, rep.Zones[0].Applied)
		}
		again, err := step.s.Sync(context.Background(), desired)
		if err != nil || again.Err() != nil {
			t.Fatalf("step %d (%s), again: %v, %v", i, step.name, err, again.Err())
		}
		if zr := again.Zones[0]; len(zr.Changes.Batches) > 0 || zr.Changes.Summary != (changes.Summary{}) {
			t.Errorf("step %d (%s): the next sync plans %+v: %v", i, step.name, zr.Changes.Summary, zr.Changes.Batches)
		}
	}
}

// render lists records as "name type [set] targets", sorted.
func render(rs []*endpoint.Endpoint) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.String())
	}
	slices.Sort(out)
	return out
}
