package cli

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/crossfade-io/crossfade/internal/handover"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// HandoverOptions are `crossfade handover`'s flags.
type HandoverOptions struct {
	cfg handover.Config
	// Route53 points at the Route 53 API.
	Route53 route53.Config
	// Registry is where ownership is now (--registry: txt or crd), ToRegistry where it
	// goes (--to-registry; empty: the same).
	Registry, ToRegistry string
	// CRDNamespace holds the DNSRecords when either registry is crd (--crd-registry-namespace).
	CRDNamespace string
	// kubeconfig and master reach the API server holding the DNSRecords.
	kubeconfig, master string
	// kubeQPS and kubeBurst pace the DNSRecord reads and writes (--kube-api-qps/--kube-api-burst).
	kubeQPS, kubeBurst int
}

// Registries are --registry and --to-registry as given (--to-registry defaulting to --registry).
func (o *HandoverOptions) Registries() (from, to string) {
	return o.Registry, cmp.Or(o.ToRegistry, o.Registry)
}

// NeedsKube says whether either registry is crd, so the DNSRecords' API server is needed.
func (o *HandoverOptions) NeedsKube() bool {
	from, to := o.Registries()
	return from == "crd" || to == "crd"
}

// RESTConfig is the client configuration of the API server holding the DNSRecords, found
// as `crossfade controller` finds it: --kubeconfig/--master, else in-cluster, else the
// usual kubeconfig files.
func (o *HandoverOptions) RESTConfig() (*rest.Config, error) {
	return (&ControllerOptions{kubeconfig: o.kubeconfig, master: o.master, kubeQPS: o.kubeQPS, kubeBurst: o.kubeBurst}).restConfig()
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
	fl.StringVar(&o.Registry, "registry", "txt", "where ownership is now: txt (TXT records in the zone) or crd (external-dns v0.23's DNSRecord objects)")
	fl.StringVar(&o.ToRegistry, "to-registry", "", "where ownership goes: txt or crd (default: --registry); moving between registries keeps the owner (--to = --from)")
	fl.StringVar(&o.CRDNamespace, "crd-registry-namespace", "", "namespace of the DNSRecords (required when --registry or --to-registry is crd)")
	fl.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file for the DNSRecords' cluster (default: in-cluster, else $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&o.master, "master", "", "Kubernetes API server URL, overriding the kubeconfig's")
	fl.IntVar(&o.kubeQPS, "kube-api-qps", int(rest.DefaultQPS), "requests per second to the Kubernetes API server (one per DNSRecord read or written)")
	fl.IntVar(&o.kubeBurst, "kube-api-burst", rest.DefaultBurst, "requests to the Kubernetes API server sent at once before --kube-api-qps applies")
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
	fc.Want(fl, "kube-api-qps", IntRange(1, -1))
	fc.Want(fl, "kube-api-burst", IntRange(1, -1))
	registryName := func(v string) error {
		if v == "txt" || v == "crd" {
			return nil
		}
		return errors.New(`want "txt" or "crd"`)
	}
	fc.Want(fl, "registry", registryName)
	fc.Want(fl, "to-registry", Optional(registryName))
	fc.Want(fl, "crd-registry-namespace", Optional(K8sName("namespace", true)))
	fc.Want(fl, "master", Optional(KubeAPIServer))
	// The flags together (--from and --to differ), as PlanHandover checks them again.
	fc.Check(c, func() error {
		if from, to := o.Registries(); from != to {
			// A move between registries rewrites where ownership is kept, not whose it is:
			// one step that cannot leave a record without an owner.
			switch {
			case f.From != f.To:
				return fmt.Errorf("--registry %s --to-registry %s: moves ownership between registries and keeps the owner: give --to %s (the same as --from), and hand over to %s within one registry before or after", from, to, f.From, f.To)
			case f.Names != "":
				return fmt.Errorf("--registry %s --to-registry %s: --name: a move between registries takes every record of --from in the zone", from, to)
			}
		}
		if o.NeedsKube() && o.CRDNamespace == "" {
			// A wrong namespace would read no DNSRecords: records owned there would look
			// unowned, and a move would write where no controller reads.
			return errors.New("--crd-registry-namespace: required with --registry crd or --to-registry crd: the namespace the controllers' --crd-registry-namespace names")
		}
		if from, to := o.Registries(); from != to {
			return nil
		}
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
