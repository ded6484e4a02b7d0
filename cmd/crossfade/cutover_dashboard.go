package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/cutover/journal/statusstore"
	"github.com/crossfade-io/crossfade/internal/cutover/render"
	"github.com/crossfade-io/crossfade/internal/dashboard"
)

// dashboardCmd is `cutover dashboard`: the live dashboard of a Cutover object, fed from
// the journal in its status as the controller running it writes it.
func (f *cutoverFlags) dashboardCmd(g *globalFlags) *cobra.Command {
	var kubeconfig, namespace, ui string
	c := &cobra.Command{
		Use:   "dashboard NAME",
		Short: "Serve the live dashboard of a Cutover object (cutovers.crossfade.io), following its status",
		Long: `dashboard serves, on a loopback address, the live dashboard of the Cutover object NAME
that 'crossfade controller --cutovers' runs: it watches the object and shows each entry the
controller journals in its status (the steps, the weights written, the gate verdicts, a
rollback) as 'cutover run --ui' shows its own run, and prints the run's progress. It keeps
following until Ctrl-C; it reads the object only (get and watch on cutovers.crossfade.io).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rules := clientcmd.NewDefaultClientConfigLoadingRules()
			rules.ExplicitPath = kubeconfig
			kc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
			rc, err := kc.ClientConfig()
			if err != nil {
				return fmt.Errorf("--kubeconfig %q: %w", kubeconfig, err)
			}
			ns := namespace
			if ns == "" {
				if ns, _, err = kc.Namespace(); err != nil {
					return fmt.Errorf("the kubeconfig's namespace: %w", err)
				}
			}
			client, err := statusstore.NewClient(rc)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			progress := render.NewProgress(out, cli.IsTerminal(out) && os.Getenv("CI") == "")
			url, _, wait, err := dashboard.FollowCutover(cmd.Context(), client.Cutovers, ns, args[0], ui, progress, g.logger())
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "dashboard of cutover %s/%s: %s (Ctrl-C to stop)\n", ns, args[0], url)
			return wait()
		},
	}
	fl := c.Flags()
	fl.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	fl.StringVarP(&namespace, "namespace", "n", "", "the Cutover's namespace (default: the kubeconfig context's)")
	fl.StringVar(&ui, "ui", "127.0.0.1:0", "serve the dashboard at this loopback address (port 0 picks one)")
	g.Checks.Want(fl, "ui", cli.LoopbackAddr)
	g.Checks.Want(fl, "namespace", cli.Optional(cli.K8sName("namespace", true)))
	return c
}
