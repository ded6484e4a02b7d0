package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/controller"
)

// newControllerCmd is `crossfade controller`, warning about the external-dns flags it ignores.
func newControllerCmd(g *globalFlags) *cobra.Command {
	f := &cli.ControllerOptions{}
	cmd := cli.NewControllerCommand(f)
	// Beside the command rather than in main's list: --cutovers and its runner flags.
	cli.CheckControllerCutoverFlags(&g.Checks, cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		log := g.logger()
		cli.WarnIgnoredFlags(log, cmd.Flags())
		return runController(cmd.Context(), f, log)
	}
	return cmd
}

// controllerGCPercent is the controller's GOGC when the environment sets none. Its heap is
// mostly informer caches, long-lived and idle between changes, so the Go default (100:
// let the heap grow to twice what is live before collecting) mostly holds garbage of the
// first lists and reconciles. At 50 a 10,000-Service cluster peaks at a sixth less
// memory, for collections that cost little while the controller idles (BENCHMARKS.md,
// "In a cluster"); Prometheus sets its own default the same way.
const controllerGCPercent = 50

// runController runs the controller the flags and the environment ask for.
func runController(ctx context.Context, f *cli.ControllerOptions, log *slog.Logger) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(controllerGCPercent)
	}
	env := cli.ControllerEnv{PodNamespace: os.Getenv("POD_NAMESPACE"), PodName: os.Getenv("POD_NAME"), PodUID: os.Getenv("POD_UID"),
		Identity: identity(), Hostname: hostname()}
	// The endpoint as the SDK picks it from the environment.
	for _, name := range []string{"AWS_ENDPOINT_URL_ROUTE_53", "AWS_ENDPOINT_URL"} {
		if env.AWSEndpoint == "" {
			env.AWSEndpoint = os.Getenv(name)
		}
	}
	if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
		env.Namespace = strings.TrimSpace(string(b))
	}
	cfg, err := f.Config(ctx, env, log)
	if err != nil {
		return err
	}
	return controller.RunApp(ctx, cfg)
}

// identity names this replica in the Lease: the pod's name (its host name in a pod) and
// a random suffix, so a restarted pod never mistakes the old holder for itself.
func identity() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hostname() + "_" + hex.EncodeToString(b[:])
}

// hostname is the machine's host name (the pod's name in a pod), else "crossfade".
func hostname() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		return "crossfade"
	}
	return host
}
