package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/demo"
)

func newDemoCmd(g *globalFlags) *cobra.Command {
	cfg := demo.Config{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a real cutover between two simulated clusters under real traffic, with the live dashboard",
		Long: `demo starts the sandbox (Route 53 API and DNS on loopback), two simulated clusters,
blue (app v1) and green (app v2), each publishing its member of app.demo.crossfade.test from
its own manifests, clients that resolve the name like caching resolvers and send real
requests, and a gated cutover 0 → 10 → 50 → 100 % from blue to green. It prints the
dashboard's URL, the report and where the traffic went, and exits 0 when every step
passed, the final split is 0/100 and no request failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.logger()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			cfg.Logger, cfg.Out = log, out
			cfg.Progress = cutover.NewProgress(out, isTerminal(out) && os.Getenv("CI") == "")
			_, err = demo.Run(cmd.Context(), cfg)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.UI, "ui", "127.0.0.1:0", "dashboard listen address (loopback only)")
	f.BoolVar(&cfg.Keep, "keep", false, "leave everything running after the cutover, until Ctrl-C, and print aws and dig commands that explore the zone")
	f.DurationVar(&cfg.Pause, "pause", 5*time.Second, "how long each step holds (the TTL is 1s)")
	f.IntVar(&cfg.Clients, "clients", 10, "simulated clients, each with its own DNS cache")
	f.DurationVar(&cfg.Interval, "interval", 100*time.Millisecond, "time between one client's requests")
	return cmd
}
