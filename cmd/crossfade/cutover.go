package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/awsconfig"
	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/cutover"
	lrroute53 "github.com/crossfade-io/crossfade/internal/cutover/lever/route53"
	"github.com/crossfade-io/crossfade/internal/cutover/levers"
	"github.com/crossfade-io/crossfade/internal/cutover/render"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/dashboard"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// cutoverFlags are shared by the cutover subcommands.
type cutoverFlags struct {
	stateDir  string
	txtPrefix string
	txtSuffix string
	route53   route53.Config
	// runner holds --dns-server, --elbv2-endpoint and --cloudwatch-endpoint, defined as
	// `controller --cutovers` defines them.
	runner cli.CutoverRunnerFlags
	// logTo is where the logger writes (nil: stderr): run sends its logs away from the
	// progress display.
	logTo io.Writer
	// cloudMapEndpoint is the Cloud Map API URL for a plan with spec.cloudMap
	// (its lever and cloudMapDiscovery gates); "" uses the Route 53 endpoint's.
	cloudMapEndpoint string
	// ackTimeout is how long pause, resume, promote and abort wait for the runner to
	// journal what it did with the command; 0 does not wait.
	ackTimeout time.Duration
}

func newCutoverCmd(g *globalFlags) *cobra.Command {
	f := &cutoverFlags{}
	cmd := &cobra.Command{
		Use:   "cutover",
		Short: "Shift traffic between clusters in gated, TTL-paced steps, with rollback",
		Long: `cutover moves the Route 53 weights of the members of one or more weighted records
from one set identifier (cluster) to another, step by step, as a plan file says. A step
holds for at least the records' TTL, with every gate passing; a failing gate rolls back.
Every action is journaled before and after it is taken, so a killed run continues with
'run --resume'.

With spec.alb the plan moves the target-group weights of ALB listener rules instead (the
ALB lever): no DNS record changes, a weight applies to the next request, and each step
holds for its pause.`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.stateDir, "state-dir", defaultStateDir(), "directory of the journal, lock, control and report files")
	f.runner.AddFlags(pf)
	pf.StringVar(&f.txtPrefix, "txt-prefix", "", "prefix of the ownership TXT names, as the publishers write them")
	pf.StringVar(&f.txtSuffix, "txt-suffix", "", "suffix of the ownership TXT names, as the publishers write them")
	cli.Route53Flags(pf, &f.route53)
	pf.StringVar(&f.cloudMapEndpoint, "cloudmap-endpoint", "", "Cloud Map (servicediscovery) API URL for a plan with spec.cloudMap (default: --aws-endpoint's, e.g. the sandbox's)")
	cli.DeprecatedAlias(&g.Checks, cmd, pf, cli.OldServiceDiscoveryEndpoint, "cloudmap-endpoint")
	cmd.AddCommand(f.planCmd(g), f.runCmd(g), f.statusCmd(), f.releaseCmd(g))
	cmd.AddCommand(f.controlCmds(g)...)
	cmd.AddCommand(explainCmd(g))
	cmd.AddCommand(f.dashboardCmd(g))
	return cmd
}

// planCmd is `cutover plan`.
func (f *cutoverFlags) planCmd(g *globalFlags) *cobra.Command {
	o := &cli.CutoverPlanOptions{}
	c := &cobra.Command{
		Use:   "plan FILE",
		Short: "Check a plan file against the live zone: steps, holds, gates checked now, rollback (--batches: every batch)",
		Long: `plan checks a plan file against the live zone without writing anything, and prints a
summary: the weights now, one line per step (weights, hold, gates), one line per gate with its
check at the current weights, and the rollback path. --batches prints every change batch the
run and its rollback would send, as 'aws route53 change-resource-record-sets' takes it.

plan exits non-zero when the zone or the plan would refuse a run, and when a gate fails at
the current weights (step 1 checks it too, and would fail and roll back);
--allow-failing-gates accepts a failing gate knowingly.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := f.config(cmd, g, args[0])
			if err != nil {
				return err
			}
			pv, err := cutover.DryRun(cmd.Context(), cfg)
			if pv == nil {
				return err
			}
			write := render.PreviewSummary
			if o.Batches {
				write = render.Preview
			}
			if werr := write(cmd.OutOrStdout(), pv); werr != nil {
				return errors.Join(err, werr)
			}
			if err == nil && !o.AllowFailingGates {
				err = pv.FailingGates()
			}
			return err
		},
	}
	o.AddFlags(c)
	return c
}

// runCmd is `cutover run`.
func (f *cutoverFlags) runCmd(g *globalFlags) *cobra.Command {
	o := &cli.CutoverRunOptions{}
	c := &cobra.Command{
		Use:   "run FILE",
		Short: "Run a cutover, or continue an interrupted one with --resume",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			progress := render.NewProgress(out, cli.IsTerminal(out))
			closeLogs, err := f.runLogs(progress, o.LogFile)
			if err != nil {
				return err
			}
			defer closeLogs()
			cfg, err := f.config(cmd, g, args[0])
			if err != nil {
				return err
			}
			for _, w := range cfg.Plan.Warnings {
				fmt.Fprintf(out, "warning: %v\n", w)
			}
			cfg.Progress, cfg.WriteRetryFor = progress, o.EngineWriteRetryFor()
			if o.UI != "" {
				url, stop, err := dashboard.ServeLive(cmd.Context(), &cfg, o.UI)
				if err != nil {
					return fmt.Errorf("--ui: %w", err)
				}
				defer stop()
				fmt.Fprintf(out, "dashboard: %s\n", url)
			}
			rep, err := cutover.Run(cmd.Context(), cfg, o.Resume)
			if rep != nil {
				fmt.Fprintln(out)
				if werr := render.Report(out, rep); werr != nil {
					return errors.Join(err, werr)
				}
				if rep.Outcome != "" {
					fmt.Fprintf(out, "report: %s\n", cutover.PathsFor(f.stateDir, cfg.Plan.Name).Report)
				}
			}
			return err
		},
	}
	o.AddFlags(c)
	return c
}

// statusCmd is `cutover status`.
func (f *cutoverFlags) statusCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "status FILE",
		Short: "Show where a cutover stands, from its journal, and which runner holds it now",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := spec.Load(args[0])
			if err != nil {
				return err
			}
			st, err := cutover.ReadStatus(f.stateDir, p.Name)
			if err != nil {
				return err
			}
			if asJSON {
				return st.WriteJSON(cmd.OutOrStdout())
			}
			st.PlanFile = args[0]
			return render.Status(cmd.OutOrStdout(), st)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON: the report's fields, the runner holding the cutover, the journal's path")
	return c
}

// releaseCmd is `cutover release`.
func (f *cutoverFlags) releaseCmd(g *globalFlags) *cobra.Command {
	o := &cli.CutoverReleaseOptions{}
	c := &cobra.Command{
		Use:   "release FILE",
		Short: "Hand a finished cutover's weights back to the publishers (delete its authority records)",
		Long: `release deletes a finished cutover's authority records, after which each publisher
writes the weights its sources ask for at its next sync. It refuses (exit 1) unless every
publisher of a held weighted record has confirmed the hold since it began (crossfade sync
confirms at every run, a running crossfade controller within 5 minutes) and asks for the
weight the zone holds; a member no source asks for any more, which its publisher would
delete at its next sync, is refused alike. --wait DURATION waits that long for the
confirmations; --force releases without them, saying what will change.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := f.config(cmd, g, args[0])
			if err != nil {
				return err
			}
			rel, err := cutover.Release(cmd.Context(), cfg, cutover.ReleaseOptions{Force: o.Force, Wait: o.Wait})
			if err != nil {
				return err
			}
			return render.Released(cmd.OutOrStdout(), cfg.Plan, rel)
		},
	}
	o.AddFlags(c)
	return c
}

// controlCmds are pause, resume, promote and abort: commands to the cutover's runner.
func (f *cutoverFlags) controlCmds(g *globalFlags) []*cobra.Command {
	return []*cobra.Command{
		f.controlCmd(g, cutover.CommandPause, "Hold a running cutover at its current weights"),
		f.controlCmd(g, cutover.CommandResume, "Let a paused cutover go on (its hold starts again)"),
		f.promoteCmd(g),
		f.controlCmd(g, cutover.CommandAbort, "Roll a cutover back per its plan (a running one, or an interrupted one)"),
	}
}

// promoteCmd is `cutover promote`, the one control command with a flag of its own.
func (f *cutoverFlags) promoteCmd(g *globalFlags) *cobra.Command {
	c := f.controlCmd(g, cutover.CommandPromote, "Skip the remaining pauses, not the gates: go to the last step, held for the TTL and until every gate has judged it (--skip-gates: unmeasured)")
	// promote --skip-gates: the one way to pass steps unmeasured, said out loud.
	c.Flags().Bool("skip-gates", false, "skip the gates too, not just the pauses: the remaining steps pass UNMEASURED "+
		"(journaled, flagged in red in the report, status and dashboard); without it a promoted step still needs every gate to pass. "+
		"The check before each write still runs (targetHealth: a step never moves traffic onto a target group with no healthy target)")
	return c
}

// controlCmd is `cutover NAME FILE`, which sends the control command name (f.control).
func (f *cutoverFlags) controlCmd(g *globalFlags, name, short string) *cobra.Command {
	c := &cobra.Command{
		Use:   name + " FILE",
		Short: short,
		Long: short + `.

When a runner holds the cutover, the command waits (--ack-timeout, default 30s) until the
runner has journaled what it did with it, and says so: acted on, exit 0; not acted on,
exit 1 naming why (an abort that finds the cutover already rolling back counts as acted
on); not acknowledged in time, exit 1: the command stays queued, the runner acts on it at
its next check, and 'crossfade cutover status FILE' shows when. When no runner holds it,
the command is left for 'crossfade cutover run --resume' (an abort rolls back at once).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.control(cmd, g, args[0], name)
		},
	}
	c.Flags().DurationVar(&f.ackTimeout, "ack-timeout", 30*time.Second, "how long to wait for the runner to journal what it did with the command (0: do not wait)")
	return c
}

// control sends a command to the cutover's runner (cutover.Control), and prints the report
// of a rollback an abort did here.
func (f *cutoverFlags) control(cmd *cobra.Command, g *globalFlags, file, command string) error {
	cc := cutover.ControlConfig{Command: command, PlanFile: file, StateDir: f.stateDir, By: whoAmI(), AckTimeout: f.ackTimeout, Out: cmd.OutOrStdout()}
	var err error
	if command == cutover.CommandAbort {
		// An abort rolls back here when no runner holds the cutover: it needs the zone.
		if cc.Engine, err = f.config(cmd, g, file); err != nil {
			return err
		}
		cc.Plan = cc.Engine.Plan
	} else if cc.Plan, err = spec.Load(file); err != nil {
		// pause, resume and promote only leave a command: they need the plan's name.
		return err
	}
	// skip-gates is defined on promote only; elsewhere GetBool says false.
	cc.SkipGates, _ = cmd.Flags().GetBool("skip-gates")
	rep, err := cutover.Control(cmd.Context(), cc)
	if rep != nil {
		if werr := render.Report(cc.Out, rep); werr != nil {
			return errors.Join(err, werr)
		}
	}
	return err
}

// runLogs points `run`'s logs away from its progress display on stdout: to logFile
// (--log-file) when given; else to stderr, and, when stdout and stderr are one terminal,
// above the progress table, which a line written straight there would be erased by at
// the table's next redraw. (Plain progress lines and log lines are each written whole,
// so on one pipe they never split each other.) The function returned closes the log file.
func (f *cutoverFlags) runLogs(p cutover.Progress, logFile string) (func(), error) {
	if logFile != "" {
		file, err := os.OpenFile(logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("--log-file: %w", err)
		}
		f.logTo = file
		return func() { file.Close() }, nil
	}
	if cli.IsTerminal(os.Stderr) {
		f.logTo = render.LogWriter(p, os.Stderr)
	}
	return func() {}, nil
}

// logger is the logger the global flags ask for, writing to f.logTo when set.
func (f *cutoverFlags) logger(g *globalFlags) *slog.Logger {
	if f.logTo == nil {
		return g.logger()
	}
	return g.loggerTo(f.logTo)
}

// config builds the engine's configuration from the flags and the plan file.
func (f *cutoverFlags) config(cmd *cobra.Command, g *globalFlags, file string) (cutover.Config, error) {
	log := f.logger(g)
	p, err := spec.Load(file)
	if err != nil {
		return cutover.Config{}, err
	}
	// Reading ownership needs no owner id of ours; the registry wants one all the same.
	reg, err := registry.New(registry.Config{OwnerID: "crossfade-cutover", Prefix: f.txtPrefix, Suffix: f.txtSuffix})
	if err != nil {
		return cutover.Config{}, err
	}
	cli.Route53Limiter(&f.route53)
	env := levers.Env{Registry: reg,
		// The ALB and Cloud Map levers: through the standard AWS configuration chain,
		// loaded when the plan's lever is built; each API's endpoint defaults to
		// --route53-endpoint (the sandbox serves them all).
		AWS:              func() (aws.Config, error) { return f.awsConfig(cmd) },
		ELBv2:            cmp.Or(f.runner.ELBv2Endpoint, f.route53.Endpoint),
		CloudWatch:       cmp.Or(f.runner.CloudWatchEndpoint, f.route53.Endpoint),
		ServiceDiscovery: cmp.Or(f.cloudMapEndpoint, f.route53.Endpoint),
		// The Route 53 lever: the provider, built with the plan's lever.
		DNS: func() (lrroute53.DNS, error) {
			r53 := f.route53
			r53.Logger = log
			return route53.New(cmd.Context(), r53)
		}}
	return cutover.Config{Plan: p, Levers: levers.New(env), StateDir: f.stateDir, By: whoAmI(), DNSServers: f.runner.DNSServers, Logger: log}, nil
}

// awsConfig loads the AWS configuration (credentials, region, retries) of the ALB and
// Cloud Map levers the way the Route 53 provider loads its own: --region first, and
// --aws-max-retries for every AWS API.
func (f *cutoverFlags) awsConfig(cmd *cobra.Command) (aws.Config, error) {
	return awsconfig.Load(cmd.Context(), awsconfig.Options{Region: f.route53.Region,
		MaxRetries: f.route53.MaxRetries, MaxBackoff: f.route53.MaxBackoff})
}

// defaultStateDir follows the XDG base directory spec: cutover state is state, not cache.
func defaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "crossfade", "cutovers")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "state", "crossfade", "cutovers")
	}
	return "crossfade-cutovers"
}

// whoAmI is user@host, for the journal's audit trail.
func whoAmI() string {
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return name + "@" + host
}
