package cli

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/source"
)

// PublishOptions are the flags `sync` and `controller` share, named as external-dns names
// them so that an external-dns command line works unchanged.
type PublishOptions struct {
	providerName   string
	policy         string
	domains        []string
	excludeDomains []string
	managedTypes   []string
	// DryRun plans and reports, sending nothing (--dry-run, which each command defines
	// with its own help).
	DryRun   bool
	source   source.Config
	registry registry.Config
	route53  route53.Config
	guard    controller.DeleteGuard
}

// AddFlags defines the shared flags in fl.
func (f *PublishOptions) AddFlags(fl *pflag.FlagSet) {
	fl.StringVar(&f.providerName, "provider", "route53", "DNS provider: route53 (external-dns's name, aws, is accepted)")
	fl.StringVar(&f.policy, "policy", string(changes.Sync), "what a sync may change: sync, upsert-only or create-only")
	fl.StringSliceVar(&f.domains, "domain-filter", nil, "only manage names at or below these domains (repeatable)")
	fl.StringSliceVar(&f.excludeDomains, "exclude-domains", nil, "never manage names at or below these domains (repeatable)")
	fl.StringSliceVar(&f.managedTypes, "managed-record-types", changes.DefaultManagedTypes, "record types planned; others are never touched ("+
		strings.Join(UnpublishedTypes, " and ")+", which external-dns v0.22/v0.23 take, are accepted with a warning and ignored: crossfade neither writes nor deletes them)")

	fl.StringVar(&f.registry.OwnerID, "txt-owner-id", "", "owner id written into and required of ownership TXT records (required)")
	fl.StringVar(&f.registry.Prefix, "txt-prefix", "", "prefix on ownership TXT names; may hold %{record_type}")
	fl.StringVar(&f.registry.Suffix, "txt-suffix", "", "suffix on the first label of ownership TXT names; may hold %{record_type}")
	fl.StringVar(&f.registry.WildcardReplacement, "txt-wildcard-replacement", "", "replaces a leading * in ownership TXT names")
	fl.BoolVar(&f.registry.WriteLegacy, "txt-write-legacy", false, "also write the same-name TXT form that external-dns < 0.18 reads")

	fl.StringSliceVar(&f.source.AnnotationPrefixes, "annotation-prefix", nil, "annotation key prefixes read (default external-dns.kubernetes.io/ and external-dns.alpha.kubernetes.io/)")
	fl.BoolVar(&f.source.LegacyAnnotationPrefix, "enable-legacy-annotation-prefix", false, "read "+source.PrefixAlpha+" annotations as a fallback after --annotation-prefix (default "+
		source.PrefixStable+"), whose value wins where both set one, as external-dns v0.23 does (without this flag and --annotation-prefix, crossfade reads both prefixes and refuses an object that sets one key differently under each)")
	fl.StringVar(&f.source.AnnotationFilter, "annotation-filter", "", "only read objects whose annotations match this selector")
	fl.StringVar(&f.source.LabelFilter, "label-filter", "", "only read objects whose labels match this selector")
	fl.StringVar(&f.source.Namespace, "namespace", "", "only read objects in this namespace (default: all)")
	fl.BoolVar(&f.source.PublishHostIP, "publish-host-ip", false, "headless Services publish their endpoints' Node host IPs, not their own addresses")
	fl.BoolVar(&f.source.AlwaysPublishNotReadyAddresses, "always-publish-not-ready-addresses", false, "headless Services publish endpoints that are not ready too")

	Route53Flags(fl, &f.route53)
	fl.StringSliceVar(&f.route53.ZoneIDs, "zone-id-filter", nil, "only manage these hosted zone ids (repeatable)")
	fl.StringVar(&f.route53.ZoneType, "aws-zone-type", "", "only manage public or private zones (default: both)")
	fl.IntVar(&f.route53.MaxRetries, "aws-max-retries", route53.DefaultMaxRetries, "retries of a throttled or failed AWS call (Route 53; Cloud Map with --cloudmap)")
	fl.BoolVar(&f.route53.PreferCNAME, "aws-prefer-cname", false, "publish a CNAME to an AWS load balancer as a CNAME, not as an alias (with its alias AAAA)")

	fl.Float64Var(&f.guard.MaxRatio, "max-delete-ratio", controller.DefaultMaxDeleteRatio, "hold a zone's deletions when they are more than this share of the owner's records there (and at least --max-delete-min), or all of them")
	fl.IntVar(&f.guard.Min, "max-delete-min", controller.DefaultMaxDeleteMin, "the fewest deletions --max-delete-ratio holds")
	fl.BoolVar(&f.guard.Allow, "allow-mass-delete", false, "let the deletions the deletion guard would hold through (controller: at its first reconcile, and only the deletions the guard held before it started)")
}

// UnpublishedTypes are the record types external-dns v0.22/v0.23 take in
// --managed-record-types (DNAME from v0.22, TLSA from v0.23) that crossfade does not
// publish: Route 53 has no DNAME, and v0.23's own AWS provider never reads a TLSA record
// back. They are accepted, so that a copied v0.23 command line runs, and Build warns once
// that they are ignored, so that nobody believes they are managed.
var UnpublishedTypes = []string{"DNAME", "TLSA"}

// splitManagedTypes parts --managed-record-types into the types planned and those of
// UnpublishedTypes, each in the order given. planned is never nil, as nil would plan the
// default types.
func splitManagedTypes(types []string) (planned, unpublished []string) {
	planned = []string{}
	for _, t := range types {
		if slices.Contains(UnpublishedTypes, t) {
			if !slices.Contains(unpublished, t) {
				unpublished = append(unpublished, t)
			}
			continue
		}
		planned = append(planned, t)
	}
	return planned, unpublished
}

// Parts are what the flags build: the source, and a Syncer over the provider.
type Parts struct {
	// Source turns objects into records.
	Source *source.Source
	// Syncer plans and writes through the provider (wrapped, when Build was asked to).
	Syncer *controller.Syncer
	// DNS is the Route 53 provider itself.
	DNS *route53.Provider
}

// Build checks the flags and builds the source, registry and provider. wrap, when not
// nil, wraps the provider the Syncer writes through (the controller's zone cache).
func (f *PublishOptions) Build(ctx context.Context, log *slog.Logger, wrap func(*route53.Provider) provider.Provider) (*Parts, error) {
	switch f.providerName {
	case "route53", "aws":
	default:
		return nil, fmt.Errorf("--provider %q: want route53 (or external-dns's name for it, aws)", f.providerName)
	}
	policy, err := changes.ParsePolicy(f.policy)
	if err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	reg, err := registry.New(f.registry)
	if err != nil {
		return nil, err
	}
	src, err := source.New(f.source)
	if err != nil {
		return nil, err
	}
	managed, unpublished := splitManagedTypes(f.managedTypes)
	if len(unpublished) > 0 {
		log.Warn("record types accepted for external-dns compatibility and ignored: crossfade neither writes nor deletes records of these types",
			"flag", "--managed-record-types", "types", strings.Join(unpublished, ","),
			"why", "Route 53 has no DNAME, and external-dns v0.23's AWS provider never reads TLSA back")
	}
	filter := endpoint.NewDomainFilter(f.domains, f.excludeDomains)
	f.route53.DomainFilter, f.route53.Logger = filter, log
	// Set once here, so that the Cloud Map publisher's client retries alike.
	f.route53.MaxRetries = SDKRetries(f.route53.MaxRetries)
	Route53Limiter(&f.route53)
	dns, err := route53.New(ctx, f.route53)
	if err != nil {
		return nil, err
	}
	syncer := &controller.Syncer{Provider: dns, Registry: reg, Policy: policy, DomainFilter: filter,
		ManagedTypes: managed, DryRun: f.DryRun, Logger: log, Guard: f.guard}
	if wrap != nil {
		syncer.Provider = wrap(dns)
	}
	return &Parts{Source: src, Syncer: syncer, DNS: dns}, nil
}
