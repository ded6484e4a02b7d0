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
	"github.com/spf13/pflag"

	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, newRootCmd(), os.Stderr)
	stop()
	os.Exit(code)
}

// globalFlags are shared by every command.
type globalFlags struct {
	logLevel  string
	logFormat string
	// checks are what every command's flag values must be, checked before it runs.
	checks flagChecks
}

func newRootCmd() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:           "crossfade",
		Short:         "Move production traffic between Kubernetes clusters with no downtime",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&g.logFormat, "log-format", "text", "log format: text or json")
	g.checks.want(root.PersistentFlags(), "log-level", logLevel)
	g.checks.want(root.PersistentFlags(), "log-format", oneOf("text", "json"))
	controller, cutover := newControllerCmd(g), newCutoverCmd(g)
	root.AddCommand(newSandboxCmd(g), newDemoCmd(g), newSyncCmd(g), controller, newHandoverCmd(g), cutover, newVerifyCmd(g))
	// Declared here, not beside their flags: see flagcheck_cmds.go.
	checkControllerFlags(&g.checks, controller)
	checkCutoverFlags(&g.checks, cutover)
	acceptExternalDNSFlags(controller)
	enforceUsage(root, &g.checks)
	return root
}

// route53Flags adds the flags that point a command at a Route 53 API.
func route53Flags(fs *pflag.FlagSet, c *route53.Config) {
	fs.StringVar(&c.Endpoint, "aws-endpoint", "", "Route 53 API URL, e.g. the sandbox's http://"+sandbox.DefaultAPIAddr)
	fs.StringVar(&c.Region, "aws-region", "", "AWS region for signing (default: from the environment, else us-east-1)")
}

// logger builds the structured logger the flags ask for.
func (g *globalFlags) logger() *slog.Logger { return g.loggerTo(os.Stderr) }

// loggerTo builds the logger the --log-level and --log-format flags ask for, writing to w
// (cutover run writes its logs away from the progress display). Both values were checked
// before the command ran (newRootCmd's rules: logLevel, text or json).
func (g *globalFlags) loggerTo(w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(g.logLevel))
	opts := &slog.HandlerOptions{Level: level}
	if g.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
