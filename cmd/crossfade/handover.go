package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/plan"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// handoverFlags are `crossfade handover`'s flags.
type handoverFlags struct {
	zone     string
	from, to string
	names    string
	dryRun   bool
	registry registry.Config
	route53  route53.Config
}

func newHandoverCmd(g *globalFlags) *cobra.Command {
	f := &handoverFlags{}
	cmd := &cobra.Command{
		Use:   "handover --zone ZONE --from OWNER --to OWNER",
		Short: "Hand the records of one owner id over to another, atomically, name by name",
		Long: `handover rewrites the ownership TXT records of the records that --from owns in one
zone so that they name --to: the new cluster's controller (--txt-owner-id TO) takes them
over as they are, and the old one (--txt-owner-id FROM) no longer touches them.

Only ownership TXT records are written, and only those that name --from: every form the
registry reads (type-prefixed, an alias A's "cname-" and "a-" forms, the legacy same-name
form) is deleted exactly as read and created again with the new owner, every other byte
kept. Records of other owners, records without an ownership record, and TXT records that
are not external-dns ownership records are never touched; no record is deleted.

Each name's changes go in one atomic change batch: at no moment does nobody, or both
owners, own a record. If another writer changed an ownership record of a name since it
was read, Route 53 refuses that name's batch whole; the name is reported, and every other
name still moves. A record whose ownership records disagree is refused before anything is
sent. The exit status is non-zero when anything was refused.

--dry-run sends nothing and prints every change batch as the JSON that
'aws route53 change-resource-record-sets --change-batch file://…' accepts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := g.logger()
			f.route53.Logger = log
			dns, err := route53.New(cmd.Context(), f.route53)
			if err != nil {
				return err
			}
			return f.run(cmd.Context(), dns, cmd.OutOrStdout(), log)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.zone, "zone", "", "hosted zone, by name (example.com) or id (required)")
	fl.StringVar(&f.from, "from", "", "owner id (--txt-owner-id) whose records move (required)")
	fl.StringVar(&f.to, "to", "", "owner id they move to (required)")
	fl.StringVar(&f.names, "name", "", `only names matching this shell glob, e.g. "*.shop.example.com" (default: every name)`)
	fl.BoolVar(&f.dryRun, "dry-run", false, "send nothing; print each change batch as AWS CLI --change-batch JSON")
	fl.StringVar(&f.registry.Prefix, "txt-prefix", "", "prefix on ownership TXT names; may hold %{record_type}")
	fl.StringVar(&f.registry.Suffix, "txt-suffix", "", "suffix on the first label of ownership TXT names; may hold %{record_type}")
	fl.StringVar(&f.registry.WildcardReplacement, "txt-wildcard-replacement", "", "replaces a leading * in ownership TXT names")
	route53Flags(fl, &f.route53)
	for _, name := range []string{"zone", "from", "to"} {
		_ = cmd.MarkFlagRequired(name)
	}
	g.checks.want(fl, "zone", func(v string) error {
		if zoneID(v) == nil || domain(v) == nil {
			return nil
		}
		return errors.New(`want a hosted zone's name or id, e.g. "example.com" or "Z1D633PJN98FT9"`)
	})
	g.checks.want(fl, "from", ownerID)
	g.checks.want(fl, "to", ownerID)
	g.checks.want(fl, "name", optional(glob))
	checkTXTFlags(&g.checks, cmd, fl)
	checkRoute53Flags(&g.checks, fl)
	// The flags together (--from and --to differ), as PlanHandover checks them again.
	g.checks.check(cmd, func() error {
		if err := (registry.Handover{From: f.from, To: f.to, Names: f.names}).Validate(); err != nil {
			// The usage error names the command already.
			return errors.New(strings.TrimPrefix(err.Error(), "handover: "))
		}
		return nil
	})
	return cmd
}

// handoverResult is what a handover did, or would do, in one zone.
type handoverResult struct {
	zone provider.Zone
	// moves are the records each name's unit moves, by name.
	moves map[string][]registry.HandoverMove
	// moved are the units written (in a dry run, the units that would be).
	moved []plan.Unit
	// refused are the records that did not move, each with why.
	refused []registry.HandoverRefusal
	// batches counts the change batches written, or planned in a dry run: more than
	// planned when a refused batch was split.
	batches int
	// dryRun holds each batch as the AWS CLI's --change-batch JSON, in a dry run.
	dryRun [][]byte
	// errs are failures other than refusals (a throttled, failed or cancelled call): the
	// names of that batch may or may not have moved.
	errs []error
}

// run hands the zone over: read it, plan, and write (or render) the batches.
// dns reads the zone, writes batches atomically and renders them for a dry run (a provider
// that cannot render fails the dry run with provider.ErrNoDryRun).
func (f *handoverFlags) run(ctx context.Context, dns provider.Provider, out io.Writer, log *slog.Logger) error {
	h := registry.Handover{From: f.from, To: f.to, Names: f.names}
	zones, err := dns.Zones(ctx)
	if err != nil {
		return fmt.Errorf("list zones: %w", err)
	}
	zone, err := findZone(zones, f.zone)
	if err != nil {
		return err
	}
	cfg := f.registry
	// The registry writes nothing here; its owner id only has to be valid.
	cfg.OwnerID = f.to
	reg, err := registry.New(cfg)
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
	res := &handoverResult{zone: zone, refused: hp.Refused, moves: map[string][]registry.HandoverMove{}}
	batches := res.prepare(hp, dns.Limits())
	log = log.With("zone", zone.Name, "zone_id", zone.ID, "from", f.from, "to", f.to)
	for _, r := range hp.Refused {
		log.Warn("not handed over", "record", r.Key.String(), "reason", r.Reason)
	}
	for i, units := range batches {
		batch := plan.Changes(units)
		if f.dryRun {
			doc, err := dns.DryRun(ctx, zone, batch)
			if err != nil {
				return fmt.Errorf("zone %s: render batch %d of %d: %w", zone, i+1, len(batches), err)
			}
			res.dryRun = append(res.dryRun, doc)
			res.moved = append(res.moved, units...)
			res.batches++
			continue
		}
		controller.WriteUnits(ctx, dns, zone, units, res.outcomes(log), log.With("batch", i+1))
		if err := ctx.Err(); err != nil {
			res.errs = append(res.errs, fmt.Errorf("interrupted (%w): the names not listed as moved or refused were not sent", err))
			break
		}
	}
	if err := res.writeText(out, f.from, f.to, f.dryRun); err != nil {
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

// findZone picks the zone --zone names, by id ("Z123", "/hostedzone/Z123") or by name.
func findZone(zones []provider.Zone, want string) (provider.Zone, error) {
	id := strings.TrimPrefix(strings.TrimPrefix(want, "/"), "hostedzone/")
	for _, z := range zones {
		if z.ID == id {
			return z, nil
		}
	}
	name := endpoint.NormalizeName(want)
	var found []provider.Zone
	for _, z := range zones {
		if z.Name == name {
			found = append(found, z)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return provider.Zone{}, fmt.Errorf("--zone %q: no hosted zone has this name or id", want)
	}
	ids := make([]string, len(found))
	for i, z := range found {
		ids[i] = z.ID
	}
	return provider.Zone{}, fmt.Errorf("--zone %q: %d hosted zones have this name (%s): pass the id", want, len(found), strings.Join(ids, ", "))
}

// prepare turns the plan's units into batches: each name whole in one batch (a name's
// ownership must move in one atomic write), batches within the provider's limits. A name
// that cannot be sent at all, or not in one batch, is refused here.
func (r *handoverResult) prepare(hp *registry.HandoverPlan, lim plan.Limits) [][]plan.Unit {
	var units []plan.Unit
	for _, hu := range hp.Units {
		u := plan.Unit{Name: hu.Name}
		r.moves[hu.Name] = hu.Moves
		for _, d := range hu.Delete {
			u.Changes = append(u.Changes, plan.Change{Action: plan.Delete, Endpoint: d})
		}
		for _, c := range hu.Create {
			u.Changes = append(u.Changes, plan.Change{Action: plan.Create, Endpoint: c})
		}
		for _, m := range hu.Moves {
			if m.Resource != "" && !slices.Contains(u.Resources, m.Resource) {
				u.Resources = append(u.Resources, m.Resource)
			}
		}
		// An ownership record crossfade cannot write back as it was read (one with a
		// latency or geolocation policy) is refused before anything is sent.
		if _, err := route53.ChangeBatch(r.zone, u.Changes, "", nil); err != nil {
			r.refuse(u, "it cannot be written back as read: "+err.Error())
			continue
		}
		units = append(units, u)
	}
	batches, tooBig := plan.Pack(units, lim)
	for _, u := range tooBig {
		r.refuse(u, fmt.Sprintf("its %d changes exceed one change batch (%d values, %d value characters), and a name's ownership moves in one batch or not at all", len(u.Changes), lim.MaxRecords, lim.MaxValueChars))
	}
	return batches
}

// outcomes records what became of the units written: moved, refused (one name that
// moved under the handover's feet never keeps the others from moving), or failed.
func (r *handoverResult) outcomes(log *slog.Logger) controller.UnitOutcomes {
	return controller.UnitOutcomes{
		Applied: func(units []plan.Unit, _ plan.Batch) {
			r.moved = append(r.moved, units...)
			r.batches++
		},
		Refused: func(u plan.Unit, reason string) {
			if controller.Moved(reason) {
				reason += "; another writer changed its ownership records since they were read, and nothing of this name was written: check who owns it now, and hand over again"
			}
			log.Error("name not handed over", "name", u.Name, "reason", reason)
			r.refuse(u, reason)
		},
		Failed: func(units []plan.Unit, _ plan.Batch, err error) {
			names := make([]string, len(units))
			for i, u := range units {
				names[i] = u.Name
			}
			r.errs = append(r.errs, fmt.Errorf("%d names (%s) may not have moved: %w", len(units), strings.Join(names, ", "), err))
		},
	}
}

// refuse records that the records of u do not move.
func (r *handoverResult) refuse(u plan.Unit, reason string) {
	for _, m := range r.moves[u.Name] {
		key := m.Key
		r.refused = append(r.refused, registry.HandoverRefusal{Name: u.Name, Key: key, Reason: reason})
	}
}

// writeText writes the outcome for people: one line per record moved, the refusals with
// why, the count; in a dry run, each batch as it would be sent.
func (r *handoverResult) writeText(w io.Writer, from, to string, dryRun bool) error {
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
