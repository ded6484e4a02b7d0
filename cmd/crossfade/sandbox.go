package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/targetaddr"
)

// newSandboxCmd is `crossfade sandbox`: it serves the sandbox until interrupted.
func newSandboxCmd(g *globalFlags) *cobra.Command {
	o := &cli.SandboxOptions{}
	cmd := cli.NewSandboxCommand(o, &g.Checks)
	var addrs []string
	f := cmd.Flags()
	f.StringSliceVar(&addrs, "target-addresses", nil, "loopback backends that stand for registered ELBv2 targets, as TARGET_IP:PORT=LOOPBACK_IP:PORT,... "+
		"(e.g. 192.0.2.11:8080=127.0.0.1:18011): the ALB proxy and its health checks connect to a target only there, a loopback target is its own backend, "+
		"and any other target is unhealthy (no route in the sandbox) and never dialled; PUT /_sandbox/addresses replaces the mapping while it runs")
	g.Checks.Want(f, "target-addresses", func(v string) error {
		_, err := targetaddr.ParseFlag(v)
		return err
	})
	// Each value is checked alone above; a target mapped in two of them only together.
	g.Checks.Check(cmd, func() error {
		if _, err := targetaddr.ParseFlag(strings.Join(addrs, ",")); err != nil {
			return fmt.Errorf("--target-addresses: %w", err)
		}
		return nil
	})
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		log := g.logger()
		cfg := o.Config(log)
		m, err := targetaddr.ParseFlag(strings.Join(addrs, ","))
		if err != nil {
			return fmt.Errorf("--target-addresses: %w", err)
		}
		cfg.TargetAddresses = m
		sb, err := sandbox.Start(cmd.Context(), cfg)
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
