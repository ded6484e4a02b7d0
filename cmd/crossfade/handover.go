package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/handover"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/registry/crdstore"
)

// newHandoverCmd is `crossfade handover`, through the Route 53 provider: between owners
// within one registry (TXT records, or the DNSRecords of the CRD registry), or the same
// owner between the two registries.
func newHandoverCmd(g *globalFlags) *cobra.Command {
	o := &cli.HandoverOptions{}
	cmd := cli.NewHandoverCommand(o, &g.Checks)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		log := g.logger()
		r53 := o.Route53
		r53.Logger = log
		dns, err := route53.New(cmd.Context(), r53)
		if err != nil {
			return err
		}
		cfg := o.Config(log)
		if !o.NeedsKube() {
			return handover.Run(cmd.Context(), dns, cfg, cmd.OutOrStdout())
		}
		restCfg, err := o.RESTConfig()
		if err != nil {
			return err
		}
		from, to := o.Registries()
		if from == to {
			// Ownership is what DNSRecords say and nothing else: the plan rewrites their
			// owner and no TXT record of the zone.
			reg, err := registry.New(registry.Config{OwnerID: cfg.To})
			if err != nil {
				return err
			}
			crd, err := crdstore.New(dns, crdstore.Config{REST: restCfg, Namespace: o.CRDNamespace, Registry: reg, OnlyDNSRecords: true, Logger: log})
			if err != nil {
				return fmt.Errorf("--registry crd: %w", err)
			}
			// The DNSRecords stand for ownership records as the registry names them without
			// affixes (crdstore synthesises them so): --txt-prefix and the like mean nothing here.
			cfg.Registry = registry.Config{}
			return handover.Run(cmd.Context(), crd, cfg, cmd.OutOrStdout())
		}
		return moveRegistry(cmd.Context(), dns, o, cfg, restCfg, log, cmd.OutOrStdout())
	}
	return cmd
}

// moveRegistry moves the ownership of cfg.From's records in cfg.Zone from one registry to
// the other (crdstore's FromTXT or ToTXT) and writes the outcome for people to out. The
// error is non-nil when any record was refused.
func moveRegistry(ctx context.Context, dns provider.Provider, o *cli.HandoverOptions, cfg handover.Config, restCfg *rest.Config, log *slog.Logger, out io.Writer) error {
	from, to := o.Registries()
	// The TXT records as the controllers write and read them: --txt-prefix, --txt-suffix,
	// --txt-wildcard-replacement.
	regCfg := cfg.Registry
	regCfg.OwnerID = cfg.From
	txt, err := registry.New(regCfg)
	if err != nil {
		return err
	}
	crd, err := crdstore.New(dns, crdstore.Config{REST: restCfg, Namespace: o.CRDNamespace, Registry: txt, DryRun: cfg.DryRun, Logger: log})
	if err != nil {
		return fmt.Errorf("--registry %s --to-registry %s: %w", from, to, err)
	}
	zones, err := dns.Zones(ctx)
	if err != nil {
		return fmt.Errorf("list zones: %w", err)
	}
	zone, err := handover.FindZone(zones, cfg.Zone)
	if err != nil {
		return err
	}
	move := crd.FromTXT
	if from == "crd" {
		move = crd.ToTXT
	}
	moved, err := move(ctx, zone, txt, cfg.From)
	if err != nil {
		return err
	}
	for _, r := range moved.Refused {
		log.Warn("ownership not moved", "zone", zone.Name, "record", r.Key.String(), "reason", r.Reason)
	}
	b := bufio.NewWriter(out)
	verb := "moved"
	if cfg.DryRun {
		verb = "would move"
	}
	fmt.Fprintf(b, "zone %s: moving the ownership of %s's records from the %s registry to the %s registry (DNSRecords in namespace %s)\n",
		zone, cfg.From, from, to, o.CRDNamespace)
	for _, k := range moved.Records {
		fmt.Fprintf(b, "  %s %s\n", verb, k)
	}
	for _, w := range moved.Writes {
		fmt.Fprintf(b, "  %s\n", w)
	}
	if len(moved.Refused) > 0 {
		fmt.Fprintf(b, "refused (ownership not moved; nothing was deleted): %d\n", len(moved.Refused))
		for _, r := range moved.Refused {
			fmt.Fprintf(b, "  %s: %s", r.Key, r.Reason)
			if r.Advice != "" {
				fmt.Fprintf(b, " (%s)", r.Advice)
			}
			fmt.Fprintln(b)
		}
	}
	fmt.Fprintf(b, "%s -> %s for %s: %d records %s, %d refused\n", from, to, cfg.From, len(moved.Records), verb, len(moved.Refused))
	if cfg.DryRun {
		fmt.Fprintln(b, "dry run: nothing was written")
	}
	if err := b.Flush(); err != nil {
		return err
	}
	if n := len(moved.Refused); n > 0 {
		return fmt.Errorf("zone %s: %d records' ownership was not moved (listed above); every other record's was", zone, n)
	}
	return nil
}
