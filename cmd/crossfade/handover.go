package main

import (
	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/handover"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
)

// newHandoverCmd is `crossfade handover`, through the Route 53 provider.
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
		return handover.Run(cmd.Context(), dns, o.Config(log), cmd.OutOrStdout())
	}
	return cmd
}
