package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/plan"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/source"
	"github.com/crossfade-io/crossfade/internal/source/manifest"
)

// syncFlags are `crossfade sync`'s flags, named as external-dns names them.
type syncFlags struct {
	manifests      string
	providerName   string
	policy         string
	domains        []string
	excludeDomains []string
	managedTypes   []string
	dryRun         bool
	dryRunDir      string
	strict         bool
	source         source.Config
	registry       registry.Config
	route53        route53.Config
}

func newSyncCmd(g *globalFlags) *cobra.Command {
	f := &syncFlags{}
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Publish the records that Kubernetes manifests ask for: one reconcile",
		Long: `sync reads Kubernetes objects from manifest files (Service, Ingress, DNSEndpoint,
Istio Gateway/VirtualService, Gateway API routes), turns them into records as external-dns
would, and makes the zones hold them, once. It never deletes or overwrites a record that
another owner, or no owner, holds: such records are reported as conflicts.

Objects with invalid annotations are reported by kind, namespace, name, annotation and
value, and skipped; everything else is synced. With --strict, any invalid or unreadable
object, conflict, or name without a zone makes the exit status non-zero.

--dry-run sends nothing and prints every change batch as the JSON that
'aws route53 change-resource-record-sets --change-batch file://…' accepts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.logger()
			if err != nil {
				return err
			}
			return f.run(cmd, log)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.manifests, "manifests", "", "manifest file, or directory of *.yaml, *.yml and *.json files (required)")
	fl.StringVar(&f.providerName, "provider", "route53", "DNS provider: route53")
	fl.StringVar(&f.policy, "policy", string(plan.Sync), "what a sync may change: sync, upsert-only or create-only")
	fl.StringSliceVar(&f.domains, "domain-filter", nil, "only manage names at or below these domains (repeatable)")
	fl.StringSliceVar(&f.excludeDomains, "exclude-domains", nil, "never manage names at or below these domains (repeatable)")
	fl.StringSliceVar(&f.managedTypes, "managed-record-types", plan.DefaultManagedTypes, "record types planned")
	fl.BoolVar(&f.dryRun, "dry-run", false, "send nothing; print each change batch as AWS CLI --change-batch JSON")
	fl.StringVar(&f.dryRunDir, "dry-run-dir", "", "with --dry-run, also write each batch to DIR/<zone id>-<n>.json")
	fl.BoolVar(&f.strict, "strict", false, "exit non-zero when any object is invalid or unreadable, any record conflicts, or a name has no zone")

	fl.StringVar(&f.registry.OwnerID, "txt-owner-id", "", "owner id written into and required of ownership TXT records (required)")
	fl.StringVar(&f.registry.Prefix, "txt-prefix", "", "prefix on ownership TXT names; may hold %{record_type}")
	fl.StringVar(&f.registry.Suffix, "txt-suffix", "", "suffix on the first label of ownership TXT names; may hold %{record_type}")
	fl.StringVar(&f.registry.WildcardReplacement, "txt-wildcard-replacement", "", "replaces a leading * in ownership TXT names")
	fl.BoolVar(&f.registry.WriteLegacy, "txt-write-legacy", false, "also write the same-name TXT form that external-dns < 0.18 reads")

	fl.StringSliceVar(&f.source.AnnotationPrefixes, "annotation-prefix", nil, "annotation key prefixes read (default external-dns.kubernetes.io/ and external-dns.alpha.kubernetes.io/)")
	fl.StringVar(&f.source.AnnotationFilter, "annotation-filter", "", "only read objects whose annotations match this selector")
	fl.StringVar(&f.source.LabelFilter, "label-filter", "", "only read objects whose labels match this selector")
	fl.StringVar(&f.source.Namespace, "namespace", "", "only read objects in this namespace (default: all)")

	route53Flags(fl, &f.route53)
	fl.StringSliceVar(&f.route53.ZoneIDs, "zone-id-filter", nil, "only manage these hosted zone ids (repeatable)")
	fl.StringVar(&f.route53.ZoneType, "aws-zone-type", "", "only manage public or private zones (default: both)")
	fl.IntVar(&f.route53.MaxRetries, "aws-max-retries", route53.DefaultMaxRetries, "retries of a throttled or failed Route 53 call")
	_ = cmd.MarkFlagRequired("manifests")
	_ = cmd.MarkFlagRequired("txt-owner-id")
	return cmd
}

// run builds the pieces from the flags and runs one reconcile.
func (f *syncFlags) run(cmd *cobra.Command, log *slog.Logger) error {
	if err := f.check(); err != nil {
		return err
	}
	policy, err := plan.ParsePolicy(f.policy)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	reg, err := registry.New(f.registry)
	if err != nil {
		return err
	}
	src, err := source.New(f.source)
	if err != nil {
		return err
	}
	filter := endpoint.NewDomainFilter(f.domains, f.excludeDomains)
	f.route53.DomainFilter, f.route53.Logger = filter, log
	ctx := cmd.Context()
	dns, err := route53.New(ctx, f.route53)
	if err != nil {
		return err
	}
	loaded, err := manifest.Load(f.manifests)
	if err != nil {
		return fmt.Errorf("--manifests: %w", err)
	}
	out := &controller.Outcome{Source: src.Endpoints(loaded.Snapshot), DryRun: f.dryRun}
	for _, e := range loaded.Errors {
		out.InputErrors = append(out.InputErrors, e)
	}
	syncer := &controller.Syncer{Provider: dns, Registry: reg, Policy: policy, DomainFilter: filter,
		ManagedTypes: f.managedTypes, DryRun: f.dryRun, Logger: log}
	out.Report, err = syncer.SyncKeeping(ctx, out.Source.Endpoints, out.Keep())
	if err != nil {
		return err
	}
	if f.dryRunDir != "" {
		if err := out.SaveBatches(f.dryRunDir); err != nil {
			return fmt.Errorf("--dry-run-dir: %w", err)
		}
	}
	if err := out.WriteText(cmd.OutOrStdout()); err != nil {
		return err
	}
	if err := out.Report.Err(); err != nil {
		return err
	}
	if n := out.Report.Refused(); n > 0 {
		// As before the split, a refusal still fails the run; only now it fails alone.
		return fmt.Errorf("the provider refused the changes of %d names (listed above); every other name was written", n)
	}
	if n := out.Findings(); f.strict && n > 0 {
		return fmt.Errorf("--strict: %d findings (listed above)", n)
	}
	return nil
}

func (f *syncFlags) check() error {
	if f.providerName != "route53" {
		return fmt.Errorf("--provider %q: want route53", f.providerName)
	}
	if f.dryRunDir != "" && !f.dryRun {
		return fmt.Errorf("--dry-run-dir %q: needs --dry-run", f.dryRunDir)
	}
	return nil
}
