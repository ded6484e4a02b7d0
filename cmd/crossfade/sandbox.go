package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// newSandboxCmd is `crossfade sandbox`: it serves the sandbox until interrupted.
func newSandboxCmd(g *globalFlags) *cobra.Command {
	o := &cli.SandboxOptions{}
	cmd := cli.NewSandboxCommand(o, &g.Checks)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		log := g.logger()
		sb, err := sandbox.Start(cmd.Context(), o.Config(log))
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "route53 api: %s\ndns:         %s (udp+tcp)\n", sb.APIURL(), sb.DNSAddr())
		<-cmd.Context().Done()
		log.Info("sandbox stopping")
		return sb.Close()
	}
	return cmd
}
