package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/cutover/render"
	"github.com/crossfade-io/crossfade/internal/demo"
)

// newDemoCmd is `crossfade demo`: it runs the demo the flags ask for.
func newDemoCmd(g *globalFlags) *cobra.Command {
	o := &cli.DemoOptions{}
	cmd := cli.NewDemoCommand(o, &g.Checks)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		out, cfg := cmd.OutOrStdout(), o.Config()
		cfg.Logger, cfg.Out = g.logger(), out
		cfg.Progress = render.NewProgress(out, cli.IsTerminal(out) && os.Getenv("CI") == "")
		if o.Kube {
			// The controllers run as this very binary, as they would in a cluster.
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("--kube: find the crossfade binary to run the controllers: %w", err)
			}
			cfg.Kube = &demo.KubeConfig{Crossfade: exe}
		}
		_, err := demo.Run(cmd.Context(), cfg)
		return err
	}
	return cmd
}
