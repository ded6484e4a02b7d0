// Package handover hands the records one owner id holds in a zone over to another owner
// id: it rewrites their ownership TXT records, each name in one atomic change batch,
// through a provider.Provider.
package handover

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// Config is one handover: which zone, whose records, to whom.
type Config struct {
	// Zone is the hosted zone, by name (example.com) or id (Z123, /hostedzone/Z123), as
	// --zone gives it.
	Zone string
	// From is the owner id whose records move; To the owner id they move to.
	From, To string
	// Names, when not empty, is a shell glob: only names matching it move.
	Names string
	// DryRun sends nothing and renders each change batch instead.
	DryRun bool
	// Registry names the ownership TXT records (prefix, suffix, wildcard replacement);
	// its OwnerID is ignored.
	Registry registry.Config
	// Logger receives what was refused and why; nil discards.
	Logger *slog.Logger
}

// result is what a handover did, or would do, in one zone.
type result struct {
	zone provider.Zone
	// moves are the records each name's unit moves, by name.
	moves map[string][]registry.HandoverMove
	// moved are the units written (in a dry run, the units that would be).
	moved []changes.Unit
	// refused are the records that did not move, each with why.
	refused []registry.HandoverRefusal
	// batches counts the change batches written, or planned in a dry run: more than
	// planned when a refused batch was split.
	batches int
	// dryRun holds each batch as the provider renders it, in a dry run.
	dryRun [][]byte
	// format says what a dry run's documents are, when the provider renders more than
	// a change batch (DryRunFormatter); empty for a plain change batch.
	format string
	// errs are failures other than refusals (a throttled, failed or cancelled call): the
	// names of that batch may or may not have moved.
	errs []error
}

// DryRunFormatter is a provider whose DryRun renders more than the zone's change batch
// (the CRD registry: its DNSRecord writes too); DryRunFormat says what, for people.
type DryRunFormatter interface {
	DryRunFormat() string
}

// Run hands cfg.Zone over: read it, plan, and write (or, in a dry run, render) the
// batches, then write the outcome for people to out. dns reads the zone, writes batches
// atomically and renders them for a dry run (a provider that cannot render fails the dry
// run with provider.ErrNoDryRun). The error is non-nil when anything was refused or failed.
func Run(ctx context.Context, dns provider.Provider, cfg Config, out io.Writer) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := registry.Handover{From: cfg.From, To: cfg.To, Names: cfg.Names}
	zones, err := dns.Zones(ctx)
	if err != nil {
		return fmt.Errorf("list zones: %w", err)
	}
	zone, err := findZone(zones, cfg.Zone)
	if err != nil {
		return err
	}
	regCfg := cfg.Registry
	// The registry writes nothing here; its owner id only has to be valid.
	regCfg.OwnerID = cfg.To
	reg, err := registry.New(regCfg)
	if err != nil {
		return err
	}
	records, err := dns.Records(ctx, zone)
	if err != nil {
		return fmt.Errorf("zone %s: list records: %w", zone, err)
	}
	h.Zone = zone.Name
	hp, err := reg.PlanHandover(records, h)
	if err != nil {
		return err
	}
	res := &result{zone: zone, refused: hp.Refused, moves: map[string][]registry.HandoverMove{}}
	if f, ok := dns.(DryRunFormatter); ok {
		res.format = f.DryRunFormat()
	}
	log = log.With("zone", zone.Name, "zone_id", zone.ID, "from", cfg.From, "to", cfg.To)
	batches := res.prepare(ctx, dns, hp)
	for _, r := range hp.Refused {
		log.Warn("not handed over", "record", r.Key.String(), "reason", r.Reason)
	}
	if err := res.write(ctx, dns, batches, cfg.DryRun, log); err != nil {
		return err
	}
	if err := res.writeText(out, cfg.From, cfg.To, cfg.DryRun); err != nil {
		return err
	}
	if len(res.errs) > 0 {
		return fmt.Errorf("zone %s: %w", zone, errors.Join(res.errs...))
	}
	if n := len(res.refused); n > 0 {
		return fmt.Errorf("zone %s: %d records were not handed over (listed above); every other record was", zone, n)
	}
	return nil
}

// write sends the batches (or renders them, in a dry run), recording what became of each.
func (r *result) write(ctx context.Context, dns provider.Provider, batches [][]changes.Unit, dryRun bool, log *slog.Logger) error {
	for i, units := range batches {
		if dryRun {
			doc, err := dns.DryRun(ctx, r.zone, changes.Changes(units))
			if err != nil {
				return fmt.Errorf("zone %s: render batch %d of %d: %w", r.zone, i+1, len(batches), err)
			}
			r.dryRun = append(r.dryRun, doc)
			r.moved = append(r.moved, units...)
			r.batches++
			continue
		}
		controller.WriteUnits(ctx, dns, r.zone, units, r.outcomes(log), log.With("batch", i+1))
		if err := ctx.Err(); err != nil {
			r.errs = append(r.errs, fmt.Errorf("interrupted (%w): the names not listed as moved or refused were not sent", err))
			break
		}
	}
	return nil
}

// FindZone picks the zone --zone names among zones, as Run does.
func FindZone(zones []provider.Zone, want string) (provider.Zone, error) {
	return findZone(zones, want)
}

// findZone picks the zone --zone names: by id ("Z123", "/hostedzone/Z123") first, else by
// name, where more than one zone of that name is refused (the id says which).
func findZone(zones []provider.Zone, want string) (provider.Zone, error) {
	if z, err := provider.FindZone(zones, "", want); err == nil {
		return z, nil
	}
	z, err := provider.FindZone(zones, want, "")
	var lookup *provider.ZoneLookupError
	switch {
	case err == nil:
		return z, nil
	case !errors.As(err, &lookup):
		return provider.Zone{}, fmt.Errorf("--zone %q: %w", want, err)
	case len(lookup.Matches) == 0:
		return provider.Zone{}, fmt.Errorf("--zone %q: no hosted zone has this name or id", want)
	}
	return provider.Zone{}, fmt.Errorf("--zone %q: %d hosted zones have this name (%s): pass the id", want, len(lookup.Matches), strings.Join(lookup.IDs(), ", "))
}

// prepare turns the plan's units into batches: each name whole in one batch (a name's
// ownership must move in one atomic write), batches within the provider's limits. A name
// that cannot be sent at all, or not in one batch, is refused here.
func (r *result) prepare(ctx context.Context, dns provider.Provider, hp *registry.HandoverPlan) [][]changes.Unit {
	var units []changes.Unit
	for _, hu := range hp.Units {
		u := changes.Unit{Name: hu.Name}
		r.moves[hu.Name] = hu.Moves
		for _, d := range hu.Delete {
			u.Changes = append(u.Changes, changes.Change{Action: changes.Delete, Endpoint: d})
		}
		for _, c := range hu.Create {
			u.Changes = append(u.Changes, changes.Change{Action: changes.Create, Endpoint: c})
		}
		for _, m := range hu.Moves {
			if m.Resource != "" && !slices.Contains(u.Resources, m.Resource) {
				u.Resources = append(u.Resources, m.Resource)
			}
		}
		// An ownership record the provider cannot write back as it was read (a Route 53
		// one with a latency or geolocation policy) is refused before anything is sent.
		// Rendering is how to ask without sending; a provider that cannot render leaves
		// the check to the write, which refuses the name alone (controller.WriteUnits).
		if _, err := dns.DryRun(ctx, r.zone, u.Changes); err != nil && !errors.Is(err, provider.ErrNoDryRun) {
			r.refuse(u, "it cannot be written back as read: "+err.Error())
			continue
		}
		units = append(units, u)
	}
	lim := dns.Limits()
	batches, tooBig := changes.Pack(units, lim)
	for _, u := range tooBig {
		r.refuse(u, fmt.Sprintf("its %d changes exceed one change batch (%d values, %d value characters), and a name's ownership moves in one batch or not at all", len(u.Changes), lim.MaxRecords, lim.MaxValueChars))
	}
	return batches
}

// outcomes records what became of the units written: moved, refused (one name that
// moved under the handover's feet never keeps the others from moving), or failed.
func (r *result) outcomes(log *slog.Logger) controller.UnitOutcomes {
	return controller.UnitOutcomes{
		Applied: func(units []changes.Unit, _ changes.Batch) {
			r.moved = append(r.moved, units...)
			r.batches++
		},
		Refused: func(u changes.Unit, reason string) {
			if controller.Moved(reason) {
				reason += "; another writer changed its ownership records since they were read, and nothing of this name was written: check who owns it now, and hand over again"
			}
			log.Error("name not handed over", "name", u.Name, "reason", reason)
			r.refuse(u, reason)
		},
		Failed: func(units []changes.Unit, _ changes.Batch, err error) {
			names := make([]string, len(units))
			for i, u := range units {
				names[i] = u.Name
			}
			r.errs = append(r.errs, fmt.Errorf("%d names (%s) may not have moved: %w", len(units), strings.Join(names, ", "), err))
		},
	}
}

// refuse records that the records of u do not move.
func (r *result) refuse(u changes.Unit, reason string) {
	for _, m := range r.moves[u.Name] {
		r.refused = append(r.refused, registry.HandoverRefusal{Name: u.Name, Key: m.Key, Reason: reason})
	}
}

// writeText writes the outcome for people: one line per record moved, the refusals with
// why, the count; in a dry run, each batch as it would be sent.
func (r *result) writeText(w io.Writer, from, to string, dryRun bool) error {
	b := bufio.NewWriter(w)
	verb := "moved"
	if dryRun {
		verb = "would move"
	}
	fmt.Fprintf(b, "zone %s: handing the records of %s over to %s\n", r.zone, from, to)
	n := 0
	for _, u := range r.moved {
		for _, m := range r.moves[u.Name] {
			fmt.Fprintf(b, "  %s %s\n", verb, m)
			n++
		}
	}
	for i, doc := range r.dryRun {
		if r.format != "" {
			fmt.Fprintf(b, "  batch %d of %d, %s:\n%s\n", i+1, len(r.dryRun), r.format, doc)
			continue
		}
		fmt.Fprintf(b, "  batch %d of %d, as `aws route53 change-resource-record-sets --hosted-zone-id %s --change-batch file://BATCH.json` takes it:\n%s\n", i+1, len(r.dryRun), r.zone.ID, doc)
	}
	if len(r.refused) > 0 {
		fmt.Fprintf(b, "refused (not handed over; nothing was deleted): %d\n", len(r.refused))
		for _, x := range r.refused {
			fmt.Fprintf(b, "  %s\n", x)
		}
	}
	for _, err := range r.errs {
		fmt.Fprintf(b, "error: %v\n", err)
	}
	changes := 0
	for _, u := range r.moved {
		changes += len(u.Changes)
	}
	fmt.Fprintf(b, "handover %s -> %s: %s %s, %d refused; %s in %s\n", from, to, plural(n, "record"), verb,
		len(r.refused), plural(changes, "ownership record change"), plural(r.batches, "change batch"))
	if dryRun {
		fmt.Fprintln(b, "dry run: nothing was sent")
	}
	return b.Flush()
}

// plural renders "1 record", "2 records", "3 change batches".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "ch") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
