package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crossfade-io/crossfade/internal/awsconfig"
	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/verify"
)

func newVerifyCmd(g *globalFlags) *cobra.Command {
	cfg := verify.Config{}
	var r53 route53.Config
	var cm verify.CloudMapConfig
	var cloudMap, sdEndpoint string
	cmd := &cobra.Command{
		Use:   "verify NAME | verify --cloudmap NAMESPACE/SERVICE",
		Short: "Sample the authoritative answers for a weighted name and compare them with the weights written",
		Long: `verify reads NAME's weighted record sets from the zone that holds it, queries the
authoritative DNS servers --queries times, and prints each member's share of the answers
next to the share its weight asks for: the console's "Test record", done statistically.
A member that is an alias (to a load balancer, or another record) is judged by its target:
the target's name is resolved at --dns-server (or, when those servers refuse it, as Route
53's do a load balancer's name, by the system resolver) and an answer counts for the
member whose target answers those addresses. Answers that match no member make verify
resolve the targets once more (a load balancer's addresses change) before counting them.
An alias whose target has no address of --type (an AAAA alias to a load balancer with
IPv4 addresses only) is answered empty (NODATA) for its share: those answers are its
member's. When no member's target has an address of --type, the record carries no traffic:
verify prints "not applicable" and exits 0.
Exit status 1 when a share is off by more than --tolerance, or an answer is empty or
matches no member; an error when members cannot be told apart (the same addresses, or
two aliases whose targets both have no address of --type) or an alias with weight cannot
be resolved.

With --cloudmap NAMESPACE/SERVICE it calls Cloud Map's DiscoverInstances as the clients do
(--query, --optional, --health-status) and at every health, and prints each cluster's
instances (by --cluster-attribute) selected and answered; with --expect (two clusters'
weights, as a Cloud Map cutover plan writes them) it checks that the answer gives the
clusters the share the cutover's health assignment gives them. Exit status 1 when the
answer is empty or off by more than --tolerance.`,
		Args: verifyArgs(&cloudMap),
		RunE: func(cmd *cobra.Command, args []string) error {
			// verifyArgs took NAME or --cloudmap, one of them, before the command ran.
			if cloudMap != "" {
				// cloudMapService checked the form before the command ran.
				ns, svc, _ := strings.Cut(cloudMap, "/")
				cm.Service.Namespace, cm.Service.Service, cm.Tolerance = ns, svc, cfg.Tolerance
				awsCfg, err := awsconfig.Load(cmd.Context(), awsconfig.Options{Region: r53.Region, MaxRetries: r53.MaxRetries, MaxBackoff: r53.MaxBackoff})
				if err != nil {
					return err
				}
				if sdEndpoint == "" {
					sdEndpoint = r53.Endpoint
				}
				res, err := verify.RunCloudMap(cmd.Context(), cutover.NewServiceDiscovery(awsCfg, sdEndpoint), cm)
				if err != nil {
					return err
				}
				if err := res.WriteText(cmd.OutOrStdout()); err != nil {
					return err
				}
				if !res.Pass {
					return fmt.Errorf("verify %s: the answer does not follow the expected shares", cloudMap)
				}
				return nil
			}
			log := g.logger()
			r53.Logger = log
			dns, err := route53.New(cmd.Context(), r53)
			if err != nil {
				return err
			}
			cfg.Name = args[0]
			res, err := verify.Run(cmd.Context(), dns, cfg)
			if err != nil {
				return err
			}
			if err := res.WriteText(cmd.OutOrStdout()); err != nil {
				return err
			}
			if !res.Pass {
				return fmt.Errorf("verify %s: the answers do not follow the weights", res.Name)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Type, "type", "A", "record type: A, AAAA or CNAME")
	f.StringSliceVar(&cfg.Servers, "dns-server", nil, "authoritative DNS servers (host:port) to ask, in turn; required for NAME")
	f.IntVar(&cfg.Queries, "queries", 1000, "queries to send")
	f.Float64Var(&cfg.Tolerance, "tolerance", 0.05, "largest allowed difference between a member's answered and written share, 0..1")
	route53Flags(f, &r53)
	f.StringVar(&cloudMap, "cloudmap", "", "verify a Cloud Map service, NAMESPACE/SERVICE, instead of a weighted NAME")
	f.StringToStringVar(&cm.Service.QueryParameters, "query", nil, "with --cloudmap: the clients' QueryParameters, k=v,…")
	f.StringToStringVar(&cm.Service.OptionalParameters, "optional", nil, "with --cloudmap: the clients' OptionalParameters, k=v,…")
	f.StringVar(&cm.Service.HealthStatus, "health-status", spec.HealthHealthyOrElseAll, "with --cloudmap: the clients' HealthStatus")
	f.StringVar(&cm.Service.ClusterAttribute, "cluster-attribute", spec.DefaultClusterAttribute, "with --cloudmap: the instance attribute naming the cluster")
	f.StringToInt64Var(&cm.Expect, "expect", nil, "with --cloudmap: two clusters' weights as the cutover plan writes them, e.g. blue=90,green=10")
	f.StringVar(&sdEndpoint, "servicediscovery-endpoint", "", "with --cloudmap: Cloud Map API URL (default: --aws-endpoint's)")
	g.checks.want(f, "type", oneOfFold(endpoint.TypeA, endpoint.TypeAAAA, endpoint.TypeCNAME))
	g.checks.want(f, "dns-server", dnsServer)
	// As a plan's dns gate's samples: 0 would be the gate's default, not "none".
	g.checks.want(f, "queries", intRange(1, 100000))
	g.checks.want(f, "tolerance", ratio)
	checkRoute53Flags(&g.checks, f)
	g.checks.want(f, "cloudmap", optional(cloudMapService))
	g.checks.want(f, "health-status", oneOf(spec.HealthHealthyOrElseAll, spec.HealthHealthy, "ALL", "UNHEALTHY"))
	g.checks.want(f, "cluster-attribute", cloudMapAttributeKey)
	g.checks.want(f, "servicediscovery-endpoint", optional(httpURL))
	g.checks.check(cmd, func() error { return verifyFlagsTogether(f, cloudMap != "", cm) })
	return cmd
}

// cloudMapService wants verify's --cloudmap NAMESPACE/SERVICE.
func cloudMapService(v string) error {
	if ns, svc, ok := strings.Cut(v, "/"); ok && ns != "" && svc != "" {
		return nil
	}
	return errors.New(`want NAMESPACE/SERVICE, e.g. "apps.local/api"`)
}

// verifyFlagsTogether refuses a flag of one form of verify given to the other (it would be
// ignored), a NAME without --dns-server, and an --expect, --query or --optional that
// cannot be what the clients send.
func verifyFlagsTogether(f *pflag.FlagSet, cloudMap bool, cm verify.CloudMapConfig) error {
	form, other := "NAME", []string{"query", "optional", "health-status", "cluster-attribute", "expect", "servicediscovery-endpoint"}
	if cloudMap {
		form, other = "--cloudmap", []string{"type", "dns-server", "queries"}
	}
	for _, name := range other {
		if f.Changed(name) {
			return fmt.Errorf("--%s %q: not with %s, which does not use it", name, f.Lookup(name).Value.String(), form)
		}
	}
	if !cloudMap {
		if servers, _ := f.GetStringSlice("dns-server"); len(servers) == 0 {
			return errors.New("--dns-server: missing: verify NAME asks the authoritative DNS servers, host:port")
		}
		return nil
	}
	if n := len(cm.Expect); n != 0 && n != 2 {
		return fmt.Errorf("--expect %q: want two clusters' weights, e.g. blue=90,green=10", f.Lookup("expect").Value.String())
	}
	var sum int64
	for k, w := range cm.Expect {
		if w < 0 || w > 255 {
			return fmt.Errorf("--expect %s=%d: want a weight 0..255", k, w)
		}
		sum += w
	}
	if len(cm.Expect) > 0 && sum == 0 {
		return fmt.Errorf("--expect %q: want a weight above 0 for one of the clusters", f.Lookup("expect").Value.String())
	}
	for _, p := range []struct {
		flag   string
		params map[string]string
	}{{"query", cm.Service.QueryParameters}, {"optional", cm.Service.OptionalParameters}} {
		for k, v := range p.params {
			// A query may name Cloud Map's own AWS_ attributes.
			if err := cloudMapAttributeKey(strings.Replace(k, "AWS_", "aws_", 1)); err != nil {
				return fmt.Errorf("--%s %q: %w", p.flag, k+"="+v, err)
			}
			if v == "" || len(v) > 1024 {
				return fmt.Errorf("--%s %q: want an attribute value of 1 to 1024 characters", p.flag, k+"="+v)
			}
		}
	}
	return nil
}
