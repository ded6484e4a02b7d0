package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/source/manifest"
)

// newSyncCmd is `crossfade sync`: one reconcile from manifests.
func newSyncCmd(g *globalFlags) *cobra.Command {
	f := &cli.SyncOptions{}
	cmd := cli.NewSyncCommand(f, &g.Checks)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		// To the command's stderr (os.Stderr unless a test sets it), so that its
		// warnings are seen where its errors are.
		return runSync(cmd, f, g.loggerTo(cmd.ErrOrStderr()))
	}
	return cmd
}

// runSync builds the pieces from the flags and runs one reconcile.
func runSync(cmd *cobra.Command, f *cli.SyncOptions, log *slog.Logger) error {
	ctx := cmd.Context()
	p, err := f.Build(ctx, log, nil)
	if err != nil {
		return err
	}
	loaded, err := manifest.Load(f.Manifests)
	if err != nil {
		return fmt.Errorf("--manifests: %w", err)
	}
	out := &controller.Outcome{Source: p.Source.Endpoints(loaded.Snapshot), DryRun: f.DryRun}
	for _, e := range loaded.Errors {
		out.InputErrors = append(out.InputErrors, e)
	}
	// A legacy-prefix value that lost to the configured prefix's
	// (--enable-legacy-annotation-prefix) is not published: said so, as the controller does.
	for _, o := range out.Source.Overridden {
		log.Warn("annotation set aside", "kind", o.Object.Kind, "namespace", o.Object.Namespace, "name", o.Object.Name, "reason", o.Reason)
	}
	out.Report, err = p.Syncer.SyncKeeping(ctx, out.Source.Endpoints, out.Keep())
	if err != nil {
		return err
	}
	if f.DryRunDir != "" {
		if err := out.SaveBatches(f.DryRunDir); err != nil {
			return fmt.Errorf("--dry-run-dir: %w", err)
		}
	}
	if err := out.WriteText(cmd.OutOrStdout()); err != nil {
		return err
	}
	if err := out.Report.Err(); err != nil {
		return err
	}
	if err := out.Report.HeldError(f.DryRun); err != nil {
		return err
	}
	if n := out.Report.Refused(); n > 0 {
		// As before the split, a refusal still fails the run; only now it fails alone.
		return fmt.Errorf("the provider refused the changes of %d names (listed above); every other name was written", n)
	}
	if n := out.Findings(); f.Strict && n > 0 {
		findings := "findings"
		if n == 1 {
			findings = "finding"
		}
		return fmt.Errorf("--strict: %d %s (listed above)", n, findings)
	}
	return nil
}
