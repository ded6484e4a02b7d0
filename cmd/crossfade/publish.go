package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/plan"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/source"
)

// publishFlags are the flags `sync` and `controller` share, named as external-dns names
// them so that an external-dns command line works unchanged.
type publishFlags struct {
	providerName   string
	policy         string
	domains        []string
	excludeDomains []string
	managedTypes   []string
	dryRun         bool
	source         source.Config
	registry       registry.Config
	route53        route53.Config
	guard          controller.DeleteGuard
}

func (f *publishFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.providerName, "provider", "route53", "DNS provider: route53 (external-dns's name, aws, is accepted)")
	fl.StringVar(&f.policy, "policy", string(plan.Sync), "what a sync may change: sync, upsert-only or create-only")
	fl.StringSliceVar(&f.domains, "domain-filter", nil, "only manage names at or below these domains (repeatable)")
	fl.StringSliceVar(&f.excludeDomains, "exclude-domains", nil, "never manage names at or below these domains (repeatable)")
	fl.StringSliceVar(&f.managedTypes, "managed-record-types", plan.DefaultManagedTypes, "record types planned")

	fl.StringVar(&f.registry.OwnerID, "txt-owner-id", "", "owner id written into and required of ownership TXT records (required)")
	fl.StringVar(&f.registry.Prefix, "txt-prefix", "", "prefix on ownership TXT names; may hold %{record_type}")
	fl.StringVar(&f.registry.Suffix, "txt-suffix", "", "suffix on the first label of ownership TXT names; may hold %{record_type}")
	fl.StringVar(&f.registry.WildcardReplacement, "txt-wildcard-replacement", "", "replaces a leading * in ownership TXT names")
	fl.BoolVar(&f.registry.WriteLegacy, "txt-write-legacy", false, "also write the same-name TXT form that external-dns < 0.18 reads")

	fl.StringSliceVar(&f.source.AnnotationPrefixes, "annotation-prefix", nil, "annotation key prefixes read (default external-dns.kubernetes.io/ and external-dns.alpha.kubernetes.io/)")
	fl.StringVar(&f.source.AnnotationFilter, "annotation-filter", "", "only read objects whose annotations match this selector")
	fl.StringVar(&f.source.LabelFilter, "label-filter", "", "only read objects whose labels match this selector")
	fl.StringVar(&f.source.Namespace, "namespace", "", "only read objects in this namespace (default: all)")
	fl.BoolVar(&f.source.PublishHostIP, "publish-host-ip", false, "headless Services publish their endpoints' Node host IPs, not their own addresses")
	fl.BoolVar(&f.source.AlwaysPublishNotReadyAddresses, "always-publish-not-ready-addresses", false, "headless Services publish endpoints that are not ready too")

	route53Flags(fl, &f.route53)
	fl.StringSliceVar(&f.route53.ZoneIDs, "zone-id-filter", nil, "only manage these hosted zone ids (repeatable)")
	fl.StringVar(&f.route53.ZoneType, "aws-zone-type", "", "only manage public or private zones (default: both)")
	fl.IntVar(&f.route53.MaxRetries, "aws-max-retries", route53.DefaultMaxRetries, "retries of a throttled or failed AWS call (Route 53; Cloud Map with --cloudmap)")
	fl.BoolVar(&f.route53.PreferCNAME, "aws-prefer-cname", false, "publish a CNAME to an AWS load balancer as a CNAME, not as an alias (with its alias AAAA)")

	fl.Float64Var(&f.guard.MaxRatio, "max-delete-ratio", controller.DefaultMaxDeleteRatio, "hold a zone's deletions when they are more than this share of the owner's records there (and at least --max-delete-min), or all of them")
	fl.IntVar(&f.guard.Min, "max-delete-min", controller.DefaultMaxDeleteMin, "the fewest deletions --max-delete-ratio holds")
	fl.BoolVar(&f.guard.Allow, "allow-mass-delete", false, "let the deletions the deletion guard would hold through (controller: at its first reconcile, and only the deletions the guard held before it started)")
}

// checkPublishFlags declares what the values of the flags publishFlags.add defined in fl
// must be, for command c.
func checkPublishFlags(fc *flagChecks, c *cobra.Command, fl *pflag.FlagSet) {
	fc.want(fl, "provider", oneOf("route53", "aws"))
	fc.want(fl, "policy", oneOf(string(plan.Sync), string(plan.UpsertOnly), string(plan.CreateOnly)))
	fc.want(fl, "domain-filter", domain)
	fc.want(fl, "exclude-domains", domain)
	// The planner compares types as written: "a" would manage nothing.
	fc.want(fl, "managed-record-types", oneOf(endpoint.TypeA, endpoint.TypeAAAA, endpoint.TypeCNAME, endpoint.TypeTXT,
		endpoint.TypeMX, endpoint.TypeNS, endpoint.TypeSRV, endpoint.TypePTR, endpoint.TypeNAPTR))
	fc.want(fl, "txt-owner-id", ownerID)
	checkTXTFlags(fc, c, fl)
	fc.want(fl, "annotation-prefix", annotationPrefix)
	fc.want(fl, "annotation-filter", selector("AnnotationFilter"))
	fc.want(fl, "label-filter", selector("LabelFilter"))
	fc.want(fl, "namespace", optional(k8sName("namespace", true)))
	checkRoute53Flags(fc, fl)
	fc.want(fl, "zone-id-filter", zoneID)
	fc.want(fl, "aws-zone-type", optional(oneOf(route53.ZoneTypePublic, route53.ZoneTypePrivate)))
	fc.want(fl, "aws-max-retries", intRange(0, -1))
	fc.want(fl, "max-delete-ratio", deleteRatio)
	fc.want(fl, "max-delete-min", intRange(1, -1))
}

// deleteRatio wants a share above 0 and at most 1 (NaN is not one): 0 would hold every
// deletion, and the guard takes 0 for its default.
func deleteRatio(v string) error {
	if x, err := strconv.ParseFloat(v, 64); err == nil && x > 0 && x <= 1 {
		return nil
	}
	return errors.New("want a number above 0 and at most 1")
}

// checkTXTFlags declares the rules of the ownership TXT name flags (--txt-prefix,
// --txt-suffix, --txt-wildcard-replacement) that fl defines.
func checkTXTFlags(fc *flagChecks, c *cobra.Command, fl *pflag.FlagSet) {
	fc.want(fl, "txt-prefix", optional(txtAffix))
	fc.want(fl, "txt-suffix", optional(txtAffix))
	if fl.Lookup("txt-wildcard-replacement") != nil {
		fc.want(fl, "txt-wildcard-replacement", optional(dnsLabelChars))
	}
	// The registry reads one form of ownership name, not both.
	fc.check(c, func() error {
		return notBoth("txt-prefix", "txt-suffix", fl.Lookup("txt-prefix").Value.String(), fl.Lookup("txt-suffix").Value.String())
	})
}

// checkRoute53Flags declares the rules of route53Flags' flags in fl.
func checkRoute53Flags(fc *flagChecks, fl *pflag.FlagSet) {
	fc.want(fl, "aws-endpoint", optional(httpURL))
	fc.want(fl, "aws-region", optional(awsRegion))
}

// sdkRetries is --aws-max-retries as awsconfig takes it: there 0 means its default and
// a negative value none, while the flag's 0 says "retry nothing".
func sdkRetries(flag int) int {
	if flag == 0 {
		return -1
	}
	return flag
}

// parts are what the flags build: the source, and a Syncer over the provider.
type parts struct {
	source *source.Source
	syncer *controller.Syncer
	dns    *route53.Provider
}

// build checks the flags and builds the source, registry and provider. wrap, when not
// nil, wraps the provider the Syncer writes through (the controller's zone cache).
func (f *publishFlags) build(ctx context.Context, log *slog.Logger, wrap func(*route53.Provider) provider.Provider) (*parts, error) {
	switch f.providerName {
	case "route53", "aws":
	default:
		return nil, fmt.Errorf("--provider %q: want route53 (or external-dns's name for it, aws)", f.providerName)
	}
	policy, err := plan.ParsePolicy(f.policy)
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
	filter := endpoint.NewDomainFilter(f.domains, f.excludeDomains)
	f.route53.DomainFilter, f.route53.Logger = filter, log
	// Set once here, so that the Cloud Map publisher's client retries alike.
	f.route53.MaxRetries = sdkRetries(f.route53.MaxRetries)
	dns, err := route53.New(ctx, f.route53)
	if err != nil {
		return nil, err
	}
	syncer := &controller.Syncer{Provider: dns, Registry: reg, Policy: policy, DomainFilter: filter,
		ManagedTypes: f.managedTypes, DryRun: f.dryRun, Logger: log, Guard: f.guard}
	if wrap != nil {
		syncer.Provider = wrap(dns)
	}
	return &parts{source: src, syncer: syncer, dns: dns}, nil
}
