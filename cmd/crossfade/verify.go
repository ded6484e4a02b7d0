package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/awsconfig"
	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/cloudmap"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/verify"
)

// verifyLong is verify's help.
const verifyLong = `verify reads NAME's weighted record sets from the zone that holds it, queries the
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

With --cloudmap-service NAMESPACE/SERVICE it calls Cloud Map's DiscoverInstances as the
clients do (--query, --optional, --health-status) and at every health, and prints each cluster's
instances (by --cluster-attribute) selected and answered; with --expect (two clusters'
weights, as a Cloud Map cutover plan writes them) it checks that the answer gives the
clusters the share the cutover's health assignment gives them. Exit status 1 when the
answer is empty or off by more than --tolerance.`

func newVerifyCmd(g *globalFlags) *cobra.Command {
	o := &cli.VerifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify NAME | verify --cloudmap-service NAMESPACE/SERVICE",
		Short: "Sample the authoritative answers for a weighted name and compare them with the weights written",
		Long:  verifyLong,
		Args:  o.Args(),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, r53, cm, cloudMap, sdEndpoint := o.Verify, o.Route53, o.CloudMap, o.CloudMapService, o.CloudMapEndpoint
			// VerifyOptions.Args took NAME or --cloudmap-service, one of them, before the command ran.
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
				res, err := verify.RunCloudMap(cmd.Context(), cloudmap.NewServiceDiscovery(awsCfg, sdEndpoint), cm)
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
			cfg.Name = args[0]
			return verifyName(cmd, g, cfg, r53)
		},
	}
	o.AddFlags(cmd, &g.Checks)
	return cmd
}

// verifyName is verify NAME: it samples the answers for cfg.Name and compares them with
// the weights the zone holds, read through Route 53.
func verifyName(cmd *cobra.Command, g *globalFlags, cfg verify.Config, r53 route53.Config) error {
	r53.Logger = g.logger()
	dns, err := route53.New(cmd.Context(), r53)
	if err != nil {
		return err
	}
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
}
