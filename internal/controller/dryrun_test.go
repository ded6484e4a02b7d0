package controller

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// noRender reads and writes the sandbox zone through inner but has no dry run of its own:
// BaseProvider's, as a back end that cannot render a batch without sending it.
type noRender struct {
	provider.BaseProvider
	inner provider.Provider
}

func (n *noRender) Zones(ctx context.Context) ([]provider.Zone, error) { return n.inner.Zones(ctx) }
func (n *noRender) Records(ctx context.Context, z provider.Zone) ([]*endpoint.Endpoint, error) {
	return n.inner.Records(ctx, z)
}
func (n *noRender) Apply(ctx context.Context, z provider.Zone, b changes.Batch) error {
	return n.inner.Apply(ctx, z, b)
}
func (n *noRender) Limits() changes.Limits { return n.inner.Limits() }

// TestDryRunWithoutRendering: a dry run renders every batch it plans through the provider;
// one whose provider cannot render fails the zone with provider.ErrNoDryRun, naming the
// provider, instead of reporting an empty rendering that reads as "nothing to change". In
// both cases nothing is written.
func TestDryRunWithoutRendering(t *testing.T) {
	www := &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.NewTargets("192.0.2.1"),
		Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/www"}}
	for _, tc := range []struct {
		name    string
		wrap    func(provider.Provider) provider.Provider
		wantErr bool
	}{
		{name: "route53 renders", wrap: func(p provider.Provider) provider.Provider { return p }},
		{name: "no dry run fails", wrap: func(p provider.Provider) provider.Provider { return &noRender{inner: p} }, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			s := e.syncer(t, "blue", changes.Sync)
			s.Provider, s.DryRun = tc.wrap(e.p), true
			rep, err := s.Sync(context.Background(), []*endpoint.Endpoint{www})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Zones) != 1 {
				t.Fatalf("zones %v, want the one zone", rep.Zones)
			}
			zr := rep.Zones[0]
			if len(zr.Changes.Batches) == 0 {
				t.Fatalf("zone %s: no batch planned for %s", zr.Zone, www.Name)
			}
			if tc.wantErr {
				if !errors.Is(zr.Err, provider.ErrNoDryRun) || !strings.Contains(zr.Err.Error(), "*controller.noRender") {
					t.Errorf("zone %s: Err %v, want ErrNoDryRun naming *controller.noRender", zr.Zone, zr.Err)
				}
				if rep.Err() == nil {
					t.Errorf("report Err nil, want the zone's")
				}
				if len(zr.DryRun) != 0 {
					t.Errorf("zone %s: rendered %q without a dry run", zr.Zone, zr.DryRun)
				}
			} else {
				if zr.Err != nil {
					t.Fatalf("zone %s: %v", zr.Zone, zr.Err)
				}
				if len(zr.DryRun) != len(zr.Changes.Batches) || !strings.Contains(string(zr.DryRun[0]), "www.example.com") {
					t.Errorf("zone %s: rendered %q, want one document per batch naming www.example.com", zr.Zone, zr.DryRun)
				}
			}
			if got := e.state(t); len(got) != 0 {
				t.Errorf("a dry run wrote %v", got)
			}
		})
	}
}
