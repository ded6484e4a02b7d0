package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/plan"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// Syncer reconciles desired records into a provider's zones once per call.
type Syncer struct {
	// Provider reads and writes the zones.
	Provider provider.Provider
	// Registry reads and writes ownership.
	Registry *registry.TXT
	// Policy limits what a sync may change.
	Policy plan.Policy
	// DomainFilter keeps the desired and current names it matches; the provider filters
	// zones itself.
	DomainFilter endpoint.DomainFilter
	// ManagedTypes are the record types planned; nil means A, AAAA, CNAME.
	ManagedTypes []string
	// DryRun plans but sends nothing; the batches are in the report.
	DryRun bool
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
}

// adjuster is a provider that stores some desired records in another form than sources
// state them (Route 53 writes an alias CNAME as an alias A); planning compares that form.
type adjuster interface {
	AdjustEndpoints(desired []*endpoint.Endpoint) []*endpoint.Endpoint
}

// ZoneReport is what a sync did, or would do, in one zone.
type ZoneReport struct {
	Zone provider.Zone
	// Plan holds the batches, conflicts and counts.
	Plan *plan.Plan
	// Applied is how many batches were written (0 in a dry run).
	Applied int
	// DryRun holds, in a dry run, each batch as the provider would send it (for Route 53,
	// the AWS CLI's --change-batch JSON), when the provider can render it.
	DryRun [][]byte
	// Err is the first failure in the zone; the batches after a failed one are still tried.
	Err error
}

// Report is the outcome of one sync.
type Report struct {
	Zones []ZoneReport
	// Unzoned are desired names no managed zone can hold.
	Unzoned []string
}

// Conflicts returns every zone's conflicts in zone order.
func (r *Report) Conflicts() []plan.Conflict {
	var out []plan.Conflict
	for _, z := range r.Zones {
		if z.Plan != nil {
			out = append(out, z.Plan.Conflicts...)
		}
	}
	return out
}

// Err joins the zones' errors, nil when every zone succeeded.
func (r *Report) Err() error {
	var errs []error
	for _, z := range r.Zones {
		if z.Err != nil {
			errs = append(errs, z.Err)
		}
	}
	return errors.Join(errs...)
}

// Sync plans every zone and applies its batches in order. A zone that fails does not stop
// the others; a failed batch does not stop the later batches of its zone, which touch
// other names (a name's changes never span two batches).
func (s *Syncer) Sync(ctx context.Context, desired []*endpoint.Endpoint) (*Report, error) {
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	zones, err := s.Provider.Zones(ctx)
	if err != nil {
		return nil, fmt.Errorf("list zones: %w", err)
	}
	if a, ok := s.Provider.(adjuster); ok {
		desired = a.AdjustEndpoints(desired)
	}
	byZone, unzoned := assign(desired, zones, s.DomainFilter)
	rep := &Report{Unzoned: unzoned}
	for _, z := range zones {
		zr := ZoneReport{Zone: z}
		current, err := s.Provider.Records(ctx, z)
		if err != nil {
			zr.Err = fmt.Errorf("zone %s: list records: %w", z, err)
			rep.Zones = append(rep.Zones, zr)
			log.Error("list records", "zone", z.Name, "zone_id", z.ID, "err", err)
			continue
		}
		zr.Plan = plan.Calculate(plan.Input{
			Desired:      byZone[z.ID],
			Current:      current,
			Registry:     s.Registry,
			Policy:       s.Policy,
			ManagedTypes: s.ManagedTypes,
			Limits:       s.Provider.Limits(),
			DomainFilter: s.DomainFilter,
		})
		for _, c := range zr.Plan.Conflicts {
			log.Warn("conflict", "zone", z.Name, "record", c.Key.String(), "reason", c.Reason, "advice", c.Advice)
		}
		if s.DryRun {
			if err := s.render(ctx, &zr); err != nil {
				zr.Err = err
			}
		} else {
			for i, b := range zr.Plan.Batches {
				if err := s.Provider.Apply(ctx, z, b); err != nil {
					log.Error("apply batch", "zone", z.Name, "zone_id", z.ID, "batch", i, "changes", len(b), "err", err)
					if zr.Err == nil {
						zr.Err = fmt.Errorf("zone %s: batch %d of %d (%d changes): %w", z, i+1, len(zr.Plan.Batches), len(b), err)
					}
					if ctx.Err() != nil {
						break
					}
					continue
				}
				zr.Applied++
				log.Debug("applied batch", "zone", z.Name, "zone_id", z.ID, "batch", i, "changes", len(b))
			}
		}
		rep.Zones = append(rep.Zones, zr)
	}
	return rep, nil
}

// render fills zr.DryRun with the requests a real sync would send.
func (s *Syncer) render(ctx context.Context, zr *ZoneReport) error {
	dr, ok := s.Provider.(provider.DryRunner)
	if !ok {
		return nil
	}
	for i, b := range zr.Plan.Batches {
		doc, err := dr.DryRun(ctx, zr.Zone, b)
		if err != nil {
			return fmt.Errorf("render batch %d of %d: %w", i+1, len(zr.Plan.Batches), err)
		}
		zr.DryRun = append(zr.DryRun, doc)
	}
	return nil
}

// assign puts each desired record into the zones with the longest name that holds it (a
// public and a private zone of one name both get it, as external-dns does).
func assign(desired []*endpoint.Endpoint, zones []provider.Zone, filter endpoint.DomainFilter) (map[string][]*endpoint.Endpoint, []string) {
	out := map[string][]*endpoint.Endpoint{}
	var unzoned []string
	for _, d := range desired {
		if !filter.Match(d.Name) {
			continue
		}
		holding := provider.Holding(zones, d.Name)
		if len(holding) == 0 {
			unzoned = append(unzoned, d.Name)
			continue
		}
		for _, z := range holding {
			out[z.ID] = append(out[z.ID], d)
		}
	}
	slices.Sort(unzoned)
	return out, slices.Compact(unzoned)
}

// Summary renders a one-line account of a zone's plan.
func (z ZoneReport) Summary() string {
	if z.Plan == nil {
		return fmt.Sprintf("zone %s: not planned", z.Zone)
	}
	s := z.Plan.Summary
	parts := []string{
		fmt.Sprintf("%d create", s.Create), fmt.Sprintf("%d update", s.Update), fmt.Sprintf("%d delete", s.Delete),
		fmt.Sprintf("%d replace", s.Replace), fmt.Sprintf("%d held by policy", s.Held),
		fmt.Sprintf("%d conflicts", len(z.Plan.Conflicts)), fmt.Sprintf("%d batches", len(z.Plan.Batches)),
	}
	return fmt.Sprintf("zone %s: %s", z.Zone, strings.Join(parts, ", "))
}
