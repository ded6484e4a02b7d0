// Command crossfade moves live traffic between Kubernetes clusters: it publishes DNS
// records, shifts weights step by step behind health gates, and proves where traffic goes.
package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	root := newRootCmd()
	if isKubectlPlugin(os.Args[0]) {
		// Run through a link named kubectl-crossfade: kubectl runs it as `kubectl crossfade`.
		root = newPluginRootCmd()
	}
	code := cli.Execute(ctx, root, os.Stderr)
	stop()
	os.Exit(code)
}

// globalFlags are shared by every command.
type globalFlags struct {
	cli.Global
}

func newRootCmd() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:           "crossfade",
		Short:         "Move production traffic between Kubernetes clusters with no downtime",
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints what `crossfade version` does.
		Version: cli.BuildVersion().String(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	// Defined here so that cobra uses it instead of its own: no -v, which reads as
	// "verbose", and a usage that says what it prints.
	root.Flags().Bool("version", false, "print the version, commit and Go version, as 'crossfade version' does")
	g.AddFlags(root)
	controller, cutover := newControllerCmd(g), newCutoverCmd(g)
	root.AddCommand(newSandboxCmd(g), newDemoCmd(g), newSyncCmd(g), controller, newHandoverCmd(g), cutover, newVerifyCmd(g), newVersionCmd(),
		newKubectlCmd(g, "kubectl"))
	// Declared here, not beside their flags: see internal/cli/checks_cmds.go.
	cli.CheckControllerFlags(&g.Checks, controller)
	cli.CheckCutoverFlags(&g.Checks, cutover)
	cli.AcceptExternalDNSFlags(controller)
	cli.EnforceUsage(root, &g.Checks)
	return root
}

// logger builds the structured logger the flags ask for.
func (g *globalFlags) logger() *slog.Logger { return g.loggerTo(os.Stderr) }

// loggerTo builds the logger the global flags ask for, writing to w (cutover run writes
// its logs away from the progress display).
func (g *globalFlags) loggerTo(w io.Writer) *slog.Logger { return g.Logger(w) }
