package main

import (
	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/demo"
)

func newDemoCmd(g *globalFlags) *cobra.Command {
	cfg := demo.Config{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start the sandbox, write a weighted record with the AWS CLI and show what DNS answers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.logger()
			if err != nil {
				return err
			}
			cfg.Logger, cfg.Out = log, cmd.OutOrStdout()
			return demo.Run(cmd.Context(), cfg)
		},
	}
	// /usr/bin/aws first: an older aws 1.x often comes first on PATH (pyenv).
	cmd.Flags().StringVar(&cfg.AWSCLI, "aws-cli", "/usr/bin/aws", "AWS CLI v2 binary")
	cmd.Flags().StringVar(&cfg.Dig, "dig", "dig", "dig binary")
	cmd.Flags().IntVar(&cfg.Queries, "queries", 40, "DNS queries that show the weighted split")
	return cmd
}
