package cli

import (
	"errors"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/handover"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// HandoverOptions are `crossfade handover`'s flags.
type HandoverOptions struct {
	cfg handover.Config
	// Route53 points at the Route 53 API.
	Route53 route53.Config
}

// AddFlags defines the flags on c, marks the required ones and declares their checks in fc.
func (o *HandoverOptions) AddFlags(c *cobra.Command, fc *FlagChecks) {
	f := &o.cfg
	fl := c.Flags()
	fl.StringVar(&f.Zone, "zone", "", "hosted zone, by name (example.com) or id (required)")
	fl.StringVar(&f.From, "from", "", "owner id (--txt-owner-id) whose records move (required)")
	fl.StringVar(&f.To, "to", "", "owner id they move to (required)")
	fl.StringVar(&f.Names, "name", "", `only names matching this shell glob, e.g. "*.shop.example.com" (default: every name)`)
	fl.BoolVar(&f.DryRun, "dry-run", false, "send nothing; print each change batch as AWS CLI --change-batch JSON")
	fl.StringVar(&f.Registry.Prefix, "txt-prefix", "", "prefix on ownership TXT names; may hold %{record_type}")
	fl.StringVar(&f.Registry.Suffix, "txt-suffix", "", "suffix on the first label of ownership TXT names; may hold %{record_type}")
	fl.StringVar(&f.Registry.WildcardReplacement, "txt-wildcard-replacement", "", "replaces a leading * in ownership TXT names")
	Route53Flags(fl, &o.Route53)
	for _, name := range []string{"zone", "from", "to"} {
		_ = c.MarkFlagRequired(name)
	}
	fc.Want(fl, "zone", func(v string) error {
		if ZoneID(v) == nil || Domain(v) == nil {
			return nil
		}
		return errors.New(`want a hosted zone's name or id, e.g. "example.com" or "Z1D633PJN98FT9"`)
	})
	fc.Want(fl, "from", OwnerID)
	fc.Want(fl, "to", OwnerID)
	fc.Want(fl, "name", Optional(Glob))
	CheckTXTFlags(fc, c, fl)
	CheckRoute53Flags(fc, fl)
	// The flags together (--from and --to differ), as PlanHandover checks them again.
	fc.Check(c, func() error {
		if err := (registry.Handover{From: f.From, To: f.To, Names: f.Names}).Validate(); err != nil {
			// The usage error names the command already.
			return errors.New(strings.TrimPrefix(err.Error(), "handover: "))
		}
		return nil
	})
}

// Config is the handover the flags ask for, logging to log.
func (o *HandoverOptions) Config(log *slog.Logger) handover.Config {
	cfg := o.cfg
	cfg.Logger = log
	return cfg
}

// NewHandoverCommand is `crossfade handover` as its users see it: usage, help, flags (into o)
// and their checks (into fc). What it runs (RunE) is the caller's.
func NewHandoverCommand(o *HandoverOptions, fc *FlagChecks) *cobra.Command {
	c := &cobra.Command{
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
	}
	o.AddFlags(c, fc)
	return c
}
