package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/verify"
)

func newVerifyCmd(g *globalFlags) *cobra.Command {
	cfg := verify.Config{}
	var r53 route53.Config
	cmd := &cobra.Command{
		Use:   "verify NAME",
		Short: "Sample the authoritative answers for a weighted name and compare them with the weights written",
		Long: `verify reads NAME's weighted record sets from the zone that holds it, queries the
authoritative DNS servers --queries times, and prints each member's share of the answers
next to the share its weight asks for: the console's "Test record", done statistically.
Exit status 1 when a share is off by more than --tolerance, or an answer is empty or
matches no member.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
	f.StringSliceVar(&cfg.Servers, "dns-server", nil, "authoritative DNS servers (host:port) to ask, in turn; required")
	f.IntVar(&cfg.Queries, "queries", 1000, "queries to send")
	f.Float64Var(&cfg.Tolerance, "tolerance", 0.05, "largest allowed difference between a member's answered and written share, 0..1")
	route53Flags(f, &r53)
	_ = cmd.MarkFlagRequired("dns-server")
	return cmd
}
