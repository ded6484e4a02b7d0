package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/awsconfig"
	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
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
member whose target answers those addresses.
Exit status 1 when a share is off by more than --tolerance, or an answer is empty or
matches no member; an error when members cannot be told apart (the same addresses) or an
alias with weight cannot be resolved.

With --cloudmap NAMESPACE/SERVICE it calls Cloud Map's DiscoverInstances as the clients do
(--query, --optional, --health-status) and at every health, and prints each cluster's
instances (by --cluster-attribute) selected and answered; with --expect (two clusters'
weights, as a Cloud Map cutover plan writes them) it checks that the answer gives the
clusters the share the cutover's health assignment gives them. Exit status 1 when the
answer is empty or off by more than --tolerance.`,
		Args: verifyArgs(&cloudMap),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cloudMap != "" {
				if len(args) > 0 {
					return errors.New("verify: give a NAME or --cloudmap, not both")
				}
				ns, svc, ok := strings.Cut(cloudMap, "/")
				if !ok || ns == "" || svc == "" {
					return fmt.Errorf("--cloudmap %q: want NAMESPACE/SERVICE", cloudMap)
				}
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
			if len(args) != 1 {
				return errors.New("verify: give the weighted NAME to verify, or --cloudmap NAMESPACE/SERVICE")
			}
			log, err := g.logger()
			if err != nil {
				return err
			}
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
	return cmd
}
