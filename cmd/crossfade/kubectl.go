package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
	"github.com/crossfade-io/crossfade/internal/cutoverctl"
)

// kubectlPlugin is the name the binary answers to as a kubectl plugin: a link of that
// name on PATH makes `kubectl crossfade …` run it.
const kubectlPlugin = "kubectl-crossfade"

// isKubectlPlugin reports whether argv0 (os.Args[0]) runs the binary as the kubectl
// plugin: its base name is kubectlPlugin (kubectl-crossfade.exe on Windows).
func isKubectlPlugin(argv0 string) bool {
	return strings.TrimSuffix(filepath.Base(argv0), ".exe") == kubectlPlugin
}

// newPluginRootCmd is the command tree of `kubectl crossfade`: the kubectl commands at
// the top, with the global flags, the usage checks and the help of `crossfade kubectl`.
func newPluginRootCmd() *cobra.Command {
	g := &globalFlags{}
	root := newKubectlCmd(g, kubectlPlugin)
	root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl crossfade"}
	root.SilenceUsage, root.SilenceErrors = true, true
	g.AddFlags(root)
	cli.EnforceUsage(root, &g.Checks)
	return root
}

// kubectlFlags are kubectl's standard flags and the waits' bound.
type kubectlFlags struct {
	kube    cutoverctl.Flags
	timeout time.Duration
}

// newKubectlCmd is `crossfade kubectl` (use "kubectl"), or, as the plugin, the root
// (use kubectlPlugin).
func newKubectlCmd(g *globalFlags, use string) *cobra.Command {
	f := &kubectlFlags{}
	cmd := &cobra.Command{
		Use:   use,
		Short: "Control Cutover objects in a cluster (also `kubectl crossfade` through a kubectl-crossfade link)",
		Long: `kubectl acts on Cutover objects (crossfade.io/v1alpha1) through the Kubernetes API, as
the kubectl plugin 'kubectl crossfade' does (the same binary, run through a link named
kubectl-crossfade on PATH): get and status read them; pause and resume set spec.paused;
promote, abort and release leave a command in the crossfade.io/command annotation for
'crossfade controller --cutovers', which runs the cutover. Each waits until the object's
status shows what the controller did (--timeout), and says so. Nothing here calls AWS.

Commands are sent as the user the API server authenticates (a SelfSubjectReview), else as
the kubeconfig context's user.`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.kube.Kubeconfig, "kubeconfig", "", "path of the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	pf.StringVar(&f.kube.Context, "context", "", "the kubeconfig context to use (default: its current context)")
	pf.StringVarP(&f.kube.Namespace, "namespace", "n", "", "the namespace of the Cutovers (default: the context's, else default)")
	g.Checks.Want(pf, "namespace", cli.Optional(cli.K8sName("namespace", true)))
	cmd.AddCommand(f.getCmd(g), f.statusCmd(), f.pauseCmd(g, true), f.pauseCmd(g, false),
		f.commandCmd(g, v1alpha1.RequestPromote), f.commandCmd(g, v1alpha1.RequestAbort), f.commandCmd(g, v1alpha1.RequestRelease))
	return cmd
}

// client builds the client the kubectl flags ask for.
func (f *kubectlFlags) client() (*cutoverctl.Client, error) {
	return cutoverctl.Load(f.kube)
}

// addTimeout defines --timeout on c.
func (f *kubectlFlags) addTimeout(g *globalFlags, c *cobra.Command, what string) {
	c.Flags().DurationVar(&f.timeout, "timeout", cutoverctl.DefaultTimeout, "how long to wait for "+what)
	g.Checks.Want(c.Flags(), "timeout", cli.PositiveDuration)
}

// getCmd is `get [NAME]`.
func (f *kubectlFlags) getCmd(g *globalFlags) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "get [NAME]",
		Short: "List the namespace's Cutovers, or show one (NAME PHASE STEP WEIGHTS AGE; -o yaml|json)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := f.client()
			if err != nil {
				return err
			}
			var items []v1alpha1.Cutover
			var obj any
			if len(args) == 1 {
				c, err := cl.Get(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				items, obj = []v1alpha1.Cutover{*c}, c
			} else {
				list, err := cl.List(cmd.Context())
				if err != nil {
					return err
				}
				items, obj = list.Items, list
			}
			if output != "" {
				return cutoverctl.Print(cmd.OutOrStdout(), obj, output)
			}
			if len(items) == 0 {
				_, err := fmt.Fprintf(cmd.ErrOrStderr(), "No Cutovers in namespace %s.\n", cl.Namespace)
				return err
			}
			return cutoverctl.Table(cmd.OutOrStdout(), items, time.Now())
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "output format: yaml or json (default: a table)")
	g.Checks.Want(c.Flags(), "output", cli.Optional(cli.OneOf("yaml", "json")))
	return c
}

// statusCmd is `status NAME [--watch]`.
func (f *kubectlFlags) statusCmd() *cobra.Command {
	var watch bool
	c := &cobra.Command{
		Use:   "status NAME",
		Short: "Show a Cutover's run: phase, conditions, steps with gate verdicts and measurements, last action (--watch: until it ends)",
		Long: `status shows a Cutover's run: its phase and step, the weights in effect, its conditions'
messages, each step with its weights and its gates' verdicts and measurements, the last
control action and who took it, and any command waiting for the controller.

--watch prints it again at every change of the object (a watch, not polling) until the
phase is final: exit 0 when Completed, 1 when RolledBack or Failed (and 1 when
interrupted first).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := f.client()
			if err != nil {
				return err
			}
			if !watch {
				c, err := cl.Get(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				return cutoverctl.Status(cmd.OutOrStdout(), c, time.Now())
			}
			return watchStatus(cmd.Context(), cl, args[0], cmd)
		},
	}
	c.Flags().BoolVarP(&watch, "watch", "w", false, "print the status again at every change until the phase is final (exit 0 Completed, 1 RolledBack or Failed)")
	return c
}

// watchStatus prints the Cutover name's status at every change until its phase is final,
// and returns the error a final phase other than Completed means.
func watchStatus(ctx context.Context, cl *cutoverctl.Client, name string, cmd *cobra.Command) error {
	printed := ""
	c, err := cl.Until(ctx, name, func(c *v1alpha1.Cutover) (bool, error) {
		if c.ResourceVersion == printed {
			return c.Status.Phase.Final(), nil
		}
		if printed != "" {
			fmt.Fprintln(cmd.OutOrStdout())
		}
		printed = c.ResourceVersion
		if err := cutoverctl.Status(cmd.OutOrStdout(), c, time.Now()); err != nil {
			return false, err
		}
		return c.Status.Phase.Final(), nil
	})
	if err != nil {
		if ctx.Err() != nil {
			phase := "no status"
			if c != nil {
				phase = string(c.Status.Phase)
			}
			return fmt.Errorf("cutover %s/%s: stopped watching at phase %s: %w", cl.Namespace, name, phase, err)
		}
		return err
	}
	return finalErr(c)
}

// finalErr is nil for a Completed cutover, and says how a RolledBack or Failed one ended.
func finalErr(c *v1alpha1.Cutover) error {
	if c.Status.Phase == v1alpha1.PhaseCompleted {
		return nil
	}
	msg := "no conditions"
	for _, cd := range c.Status.Conditions {
		if cd.Type == v1alpha1.ConditionReady {
			msg = cd.Message
		}
	}
	return fmt.Errorf("cutover %s/%s ended %s: %s", c.Namespace, c.Name, c.Status.Phase, msg)
}

// pauseCmd is `pause NAME` (paused) or `resume NAME`.
func (f *kubectlFlags) pauseCmd(g *globalFlags, paused bool) *cobra.Command {
	var afterDrift bool
	name, short, long := "resume", "Clear spec.paused and wait until the run goes on (--after-drift: go on after a pause on drift)",
		`resume clears the Cutover's spec.paused (annotation crossfade.io/paused-by naming who, in
the same merge patch), then waits (--timeout) until its status shows the run going on, or,
for a cutover paused before its start, starting.

A run paused on drift (the zone held weights it did not write) is not resumed by
spec.paused: resume shows the weights and stops; once you have looked at them, resume
--after-drift sends the resume command (annotation crossfade.io/command), which the
controller journals as yours, and waits for it.`
	if paused {
		name, short, long = "pause", "Set spec.paused and wait until the run holds (Paused)",
			`pause sets the Cutover's spec.paused (annotation crossfade.io/paused-by naming who, in
the same merge patch), then waits (--timeout) until its status shows the run Paused, or,
for a cutover that has not started, paused before its start.`
	}
	c := &cobra.Command{
		Use:   name + " NAME",
		Short: short,
		Long:  long + "\n\nThe same without the plugin: kubectl patch cutover NAME --type merge -p '{\"spec\":{\"paused\":" + fmt.Sprint(paused) + "}}'",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, who, err := f.clientAs(cmd)
			if err != nil {
				return err
			}
			if !paused {
				cur, err := cl.Get(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if cutoverctl.DriftPaused(cur) {
					// No level lifts a pause on drift: the resume command does, once a
					// person has looked at the weights. A resume meant to undo one's own
					// pause must not accept weights nobody looked at: without
					// --after-drift it shows them and stops. spec.paused is cleared
					// first, as the controller refuses the command while it is set.
					if !afterDrift {
						if err := cutoverctl.Status(cmd.OutOrStdout(), cur, time.Now()); err != nil {
							return err
						}
						return fmt.Errorf("cutover %s/%s is paused on drift (the zone holds weights it did not write: above), which spec.paused does not lift: "+
							"look at them, then go on from them with kubectl crossfade resume %s --after-drift, or roll back with kubectl crossfade abort %s",
							cl.Namespace, args[0], args[0], args[0])
					}
					if cur.Spec.Paused {
						if _, err := cl.SetPaused(cmd.Context(), args[0], false, who); err != nil {
							return err
						}
					}
					fmt.Fprintf(cmd.OutOrStdout(), "cutover %s/%s is paused on drift: %s\n", cl.Namespace, args[0], cutoverctl.DriftMessage(cur))
					return f.sendCommand(cmd, cl, args[0], v1alpha1.CommandRequest{Command: v1alpha1.RequestResume, ID: cutoverctl.NewID(), By: who, At: time.Now().UTC().Truncate(time.Second)})
				}
			}
			c, err := cl.SetPaused(cmd.Context(), args[0], paused, who)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cutover %s/%s: spec.paused=%t set by %s; waiting up to %s for the controller\n", cl.Namespace, args[0], paused, who, cutoverctl.Seconds(f.timeout))
			c, err = cl.WaitPaused(cmd.Context(), args[0], paused, c.Generation, f.timeout)
			if err != nil {
				return err
			}
			return cutoverctl.Status(cmd.OutOrStdout(), c, time.Now())
		},
	}
	if !paused {
		c.Flags().BoolVar(&afterDrift, "after-drift", false, "resume a run paused on drift (the zone held weights it did not write), once you have looked at them: sends the resume command")
	}
	f.addTimeout(g, c, "the status to show it")
	return c
}

// commandShort and commandLong say what each command does.
var commandShort = map[string]string{
	v1alpha1.RequestPromote: "Skip the remaining pauses (--skip-gates: the gates too): go to the last step",
	v1alpha1.RequestAbort:   "Roll the cutover back per its plan",
	v1alpha1.RequestRelease: "Delete a finished cutover's authority records, so the publishers write again (--force: without their confirmation)",
}

// commandCmd is `promote|abort|release NAME`.
func (f *kubectlFlags) commandCmd(g *globalFlags, command string) *cobra.Command {
	var skipGates, force bool
	c := &cobra.Command{
		Use:   command + " NAME",
		Short: commandShort[command],
		Long: commandShort[command] + `.

The command is written into the Cutover's crossfade.io/command annotation, only if no other
command is waiting there (refused, naming it, otherwise), for the controller that runs the
cutover to take; then it waits (--timeout) for the controller's journal entry of it, or its
answer in crossfade.io/command-result, and prints it. A refusal exits 1 with the
controller's reason; no answer in time exits 1, the command still waiting.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, who, err := f.clientAs(cmd)
			if err != nil {
				return err
			}
			req := v1alpha1.CommandRequest{Command: command, ID: cutoverctl.NewID(), By: who, At: time.Now().UTC().Truncate(time.Second),
				SkipGates: skipGates, Force: force}
			return f.sendCommand(cmd, cl, args[0], req)
		},
	}
	switch command {
	case v1alpha1.RequestPromote:
		c.Flags().BoolVar(&skipGates, "skip-gates", false, "skip the gates too, not just the pauses: the remaining steps pass UNMEASURED (journaled and flagged)")
	case v1alpha1.RequestRelease:
		c.Flags().BoolVar(&force, "force", false, "release without every publisher's confirmation, as 'crossfade cutover release --force' does")
	}
	f.addTimeout(g, c, "the controller to journal or answer the command")
	return c
}

// sendCommand leaves req for the controller that runs the Cutover name, then waits
// (--timeout) for its journal entry or its answer, and prints it.
func (f *kubectlFlags) sendCommand(cmd *cobra.Command, cl *cutoverctl.Client, name string, req v1alpha1.CommandRequest) error {
	if _, err := cl.Send(cmd.Context(), name, req); err != nil {
		return err
	}
	ref := cl.Namespace + "/" + name
	fmt.Fprintf(cmd.OutOrStdout(), "cutover %s: %s (id %s) sent by %s; waiting up to %s for the controller\n", ref, req.Command, req.ID, req.By, cutoverctl.Seconds(f.timeout))
	out, _, err := cl.WaitCommand(cmd.Context(), name, req, f.timeout)
	var nc *cutoverctl.NoControllerError
	if errors.As(err, &nc) {
		return err
	}
	if out.Entry != nil || out.Result != nil {
		if werr := cutoverctl.Done(cmd.OutOrStdout(), ref, req, out); werr != nil {
			return errors.Join(err, werr)
		}
	}
	return err
}

// clientAs is the client of the flags' cluster and namespace, and who the commands are
// sent as (whoFor).
func (f *kubectlFlags) clientAs(cmd *cobra.Command) (*cutoverctl.Client, string, error) {
	cl, err := f.client()
	if err != nil {
		return nil, "", err
	}
	who, err := whoFor(cmd, cl)
	return cl, who, err
}

// whoFor is who the commands are sent as; it says so on stderr, and where the name comes from.
func whoFor(cmd *cobra.Command, cl *cutoverctl.Client) (string, error) {
	id, err := cl.Who(cmd.Context())
	if err != nil {
		return "", err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "acting as %s (%s)\n", id.Name, id.Source)
	return id.Name, nil
}
