package crdstore

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// migrateBatch is how many ownership TXT changes one batch of a move carries: far below
// Route 53's 1,000 values and 32,000 characters for ownership records of a few hundred
// characters at most.
const migrateBatch = 100

// Moved is what a move between the registries did in one zone.
type Moved struct {
	// Records are the records whose ownership moved, by key.
	Records []endpoint.Key
	// Refused are the records that did not move, each with why.
	Refused []changes.Conflict
	// Writes are, under Config.DryRun, the writes the move would send, in order: each
	// DNSRecord created as its JSON object, each DNSRecord deleted, each zone batch as
	// the provider renders it. Empty otherwise.
	Writes []string
}

// FromTXT moves the ownership of owner's records in zone from TXT records (as txt reads
// them: its affixes, the legacy and "a-" forms) to DNSRecords, with no moment without an
// owner: each record's DNSRecord is created (Ready, Programmed: the record is live) before
// its ownership TXT records are deleted, exactly as read, so that a TXT record another
// writer changed meanwhile stays (the batch is refused). A record whose DNSRecord exists
// already is moved only if it is owner's; another owner's is refused. Records of other
// owners and records without an owner are never touched, and no record is deleted.
func (p *Provider) FromTXT(ctx context.Context, zone provider.Zone, txt *registry.TXT, owner string) (*Moved, error) {
	raw, err := p.Provider.Records(ctx, zone)
	if err != nil {
		return nil, fmt.Errorf("zone %s: list records: %w", zone, err)
	}
	objs, err := p.list(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]*DNSRecord{}
	for _, d := range objs {
		byName[d.Name] = d
	}
	legacy, err := registry.New(registry.Config{OwnerID: owner, WriteLegacy: true})
	if err != nil {
		return nil, err
	}
	z := txt.Read(raw)
	out := &Moved{}
	var units []changes.Unit
	keyOf := map[*endpoint.Endpoint]endpoint.Key{}
	for _, rec := range z.Records {
		if rec.Owner() != owner {
			continue
		}
		name := ObjectName(rec.Key())
		if d := byName[name]; d != nil && d.Owner() != owner {
			out.Refused = append(out.Refused, changes.Conflict{Key: rec.Key(),
				Reason: fmt.Sprintf("its DNSRecord %s/%s is owner %q's", p.ns, name, d.Owner()),
				Advice: "hand it over within the CRD registry first, or delete the DNSRecord if it is stale"})
			continue
		} else if d == nil && p.dryRun {
			obj := p.newObject(rec, rec.Labels)
			meta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{Type: ReadyCondition, Status: metav1.ConditionTrue,
				Reason: ProgrammedReason, Message: "Endpoint applied to the DNS provider (ownership moved from TXT records)"})
			doc, err := json.MarshalIndent(obj, "", "  ")
			if err != nil {
				return nil, fmt.Errorf("render DNSRecord %s/%s: %w", p.ns, obj.Name, err)
			}
			out.Writes = append(out.Writes, fmt.Sprintf("create DNSRecord %s/%s (with status Ready=True/Programmed):\n%s", p.ns, obj.Name, doc))
		} else if d == nil {
			o := &op{rec: rec, labels: rec.Labels}
			if err := p.accept(ctx, o); err != nil {
				out.Refused = append(out.Refused, changes.Conflict{Key: rec.Key(), Reason: err.Error()})
				continue
			}
			if err := p.writeStatus(ctx, o, ProgrammedReason, "Endpoint applied to the DNS provider (ownership moved from TXT records)"); err != nil {
				out.Refused = append(out.Refused, changes.Conflict{Key: rec.Key(), Reason: err.Error()})
				continue
			}
		}
		// Every form of its ownership record that stands and is owner's goes.
		u := changes.Unit{Name: rec.Name, Resources: []string{rec.Resource()}}
		var seen []endpoint.Key
		for _, t := range slices.Concat(txt.For(rec), legacy.For(rec), []*endpoint.Endpoint{z.Other[rec.Key()]}) {
			if t == nil {
				continue
			}
			have := z.TXT(t.Key())
			if t == z.Other[rec.Key()] {
				have = t
			}
			if have == nil || slices.Contains(seen, have.Key()) {
				continue
			}
			if l, err := registry.ParsePayload(have.Targets[0]); err != nil || l[endpoint.OwnerLabel] != owner {
				continue
			}
			seen = append(seen, have.Key())
			u.Changes = append(u.Changes, changes.Change{Action: changes.Delete, Endpoint: have})
		}
		if len(u.Changes) == 0 {
			out.Records = append(out.Records, rec.Key())
			continue
		}
		units = append(units, u)
		keyOf[u.Changes[0].Endpoint] = rec.Key()
	}
	// A record whose TXT records were not deleted is owned by both, the same owner.
	for _, u := range p.writeUnits(ctx, zone, units, out) {
		out.Records = append(out.Records, keyOf[u.Changes[0].Endpoint])
	}
	return out, nil
}

// ToTXT moves the ownership of owner's records in zone from DNSRecords to TXT records (as
// txt writes them), with no moment without an owner: each record's ownership TXT records
// are created (a CREATE, which Route 53 refuses where one stands) before its DNSRecord is
// deleted, conditional on the resourceVersion read. DNSRecords of other owners, and of
// records the zone does not hold, are never touched.
func (p *Provider) ToTXT(ctx context.Context, zone provider.Zone, txt *registry.TXT, owner string) (*Moved, error) {
	raw, err := p.Provider.Records(ctx, zone)
	if err != nil {
		return nil, fmt.Errorf("zone %s: list records: %w", zone, err)
	}
	objs, err := p.list(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]*endpoint.Endpoint{}
	for _, rec := range raw {
		byName[ObjectName(rec.Key())] = rec
	}
	out := &Moved{}
	var units []changes.Unit
	objOf := map[*endpoint.Endpoint]*DNSRecord{}
	for _, d := range objs {
		rec := byName[d.Name]
		if d.Owner() != owner || rec == nil || rec.Key() != d.Key() || (!d.Ready() && !d.sameTargets(rec)) {
			continue
		}
		owned := *rec
		owned.Labels = endpoint.Labels{}
		for k, v := range d.Spec.Endpoint.Labels {
			owned.Labels[k] = v
		}
		owned.Labels[endpoint.OwnerLabel] = owner
		u := changes.Unit{Name: rec.Name, Resources: []string{owned.Resource()}}
		for _, t := range txt.For(&owned) {
			u.Changes = append(u.Changes, changes.Change{Action: changes.Create, Endpoint: t})
		}
		units = append(units, u)
		objOf[u.Changes[0].Endpoint] = d
	}
	// Units are per record here, so that each DNSRecord goes once its own TXT records stand.
	for _, u := range p.writeUnits(ctx, zone, units, out) {
		if d := objOf[u.Changes[0].Endpoint]; d != nil {
			if p.dryRun {
				out.Writes = append(out.Writes, fmt.Sprintf("delete DNSRecord %s/%s (if still at resourceVersion %s)", p.ns, d.Name, d.ResourceVersion))
				out.Records = append(out.Records, d.Key())
				continue
			}
			err := p.client.Delete(ctx, d.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &d.ResourceVersion}})
			if err != nil {
				out.Refused = append(out.Refused, changes.Conflict{Key: d.Key(),
					Reason: fmt.Sprintf("its TXT ownership was written but DNSRecord %s/%s was not deleted: %v", p.ns, d.Name, err),
					Advice: "both say the same owner; delete the DNSRecord once it is checked"})
				continue
			}
			out.Records = append(out.Records, d.Key())
		}
	}
	return out, nil
}

// writeUnits writes units to the zone itself (not through the DNSRecords), in batches,
// each refused unit reported in out, and returns the units written.
func (p *Provider) writeUnits(ctx context.Context, zone provider.Zone, units []changes.Unit, out *Moved) []changes.Unit {
	var written []changes.Unit
	if p.dryRun {
		for len(units) > 0 {
			n := min(len(units), migrateBatch)
			var batch changes.Batch
			for _, u := range units[:n] {
				batch = append(batch, u.Changes...)
			}
			doc, err := p.Provider.DryRun(ctx, zone, batch)
			if err != nil {
				for _, u := range units[:n] {
					out.Refused = append(out.Refused, changes.Conflict{Key: u.Changes[0].Endpoint.Key(), Reason: "it cannot be rendered: " + err.Error()})
				}
			} else {
				out.Writes = append(out.Writes, fmt.Sprintf("zone %s (%s), change batch as `aws route53 change-resource-record-sets --change-batch` takes it:\n%s", zone.Name, zone.ID, doc))
				written = append(written, units[:n]...)
			}
			units = units[n:]
		}
		return written
	}
	for len(units) > 0 {
		n, size := 0, 0
		for n < len(units) && (n == 0 || size+len(units[n].Changes) <= migrateBatch) {
			size += len(units[n].Changes)
			n++
		}
		controller.WriteUnits(ctx, p.Provider, zone, units[:n], controller.UnitOutcomes{
			Applied: func(us []changes.Unit, _ changes.Batch) { written = append(written, us...) },
			Refused: func(u changes.Unit, reason string) {
				out.Refused = append(out.Refused, changes.Conflict{Key: u.Changes[0].Endpoint.Key(), Reason: reason})
			},
			Failed: func(us []changes.Unit, _ changes.Batch, err error) {
				for _, u := range us {
					out.Refused = append(out.Refused, changes.Conflict{Key: u.Changes[0].Endpoint.Key(), Reason: err.Error()})
				}
			},
		}, p.log.With(slog.String("zone", zone.Name)))
		units = units[n:]
	}
	return written
}
