package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/source/manifest"
)

// syncFlags are `crossfade sync`'s flags, named as external-dns names them.
type syncFlags struct {
	publishFlags
	manifests string
	dryRunDir string
	strict    bool
}

func newSyncCmd(g *globalFlags) *cobra.Command {
	f := &syncFlags{}
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Publish the records that Kubernetes manifests ask for: one reconcile",
		Long: `sync reads Kubernetes objects from manifest files (Service, Ingress, DNSEndpoint,
Istio Gateway/VirtualService, Gateway API routes), turns them into records as external-dns
would, and makes the zones hold them, once. It never deletes or overwrites a record that
another owner, or no owner, holds: such records are reported as conflicts.

Objects with invalid annotations are reported by kind, namespace, name, annotation and
value, and skipped; everything else is synced. With --strict, any invalid or unreadable
object, conflict, or name without a zone makes the exit status non-zero.

The deletion guard holds back a zone's deletions when a sync would delete all of the
owner's records there, or more than --max-delete-ratio of them and at least
--max-delete-min: an empty manifest directory, a changed annotation prefix or a wrong
label filter reads as "delete everything". Creates and updates still go; the run lists
what it held and exits non-zero. --allow-mass-delete lets the deletions through.

--dry-run sends nothing and prints every change batch as the JSON that
'aws route53 change-resource-record-sets --change-batch file://…' accepts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, g.logger())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.manifests, "manifests", "", "manifest file, or directory of *.yaml, *.yml and *.json files (required)")
	f.add(fl)
	fl.BoolVar(&f.dryRun, "dry-run", false, "send nothing; print each change batch as AWS CLI --change-batch JSON")
	fl.StringVar(&f.dryRunDir, "dry-run-dir", "", "with --dry-run, also write each batch to DIR/<zone id>-<n>.json")
	fl.BoolVar(&f.strict, "strict", false, "exit non-zero when any object is invalid or unreadable, any record conflicts, or a name has no zone")
	_ = cmd.MarkFlagRequired("manifests")
	_ = cmd.MarkFlagRequired("txt-owner-id")
	checkPublishFlags(&g.checks, cmd, fl)
	g.checks.want(fl, "manifests", notEmpty("a manifest file or directory"))
	g.checks.check(cmd, f.check)
	return cmd
}

// run builds the pieces from the flags and runs one reconcile.
func (f *syncFlags) run(cmd *cobra.Command, log *slog.Logger) error {
	ctx := cmd.Context()
	p, err := f.build(ctx, log, nil)
	if err != nil {
		return err
	}
	loaded, err := manifest.Load(f.manifests)
	if err != nil {
		return fmt.Errorf("--manifests: %w", err)
	}
	out := &controller.Outcome{Source: p.source.Endpoints(loaded.Snapshot), DryRun: f.dryRun}
	for _, e := range loaded.Errors {
		out.InputErrors = append(out.InputErrors, e)
	}
	out.Report, err = p.syncer.SyncKeeping(ctx, out.Source.Endpoints, out.Keep())
	if err != nil {
		return err
	}
	if f.dryRunDir != "" {
		if err := out.SaveBatches(f.dryRunDir); err != nil {
			return fmt.Errorf("--dry-run-dir: %w", err)
		}
	}
	if err := out.WriteText(cmd.OutOrStdout()); err != nil {
		return err
	}
	if err := out.Report.Err(); err != nil {
		return err
	}
	if err := heldError(out.Report, f.dryRun); err != nil {
		return err
	}
	if n := out.Report.Refused(); n > 0 {
		// As before the split, a refusal still fails the run; only now it fails alone.
		return fmt.Errorf("the provider refused the changes of %d names (listed above); every other name was written", n)
	}
	if n := out.Findings(); f.strict && n > 0 {
		return fmt.Errorf("--strict: %d findings (listed above)", n)
	}
	return nil
}

// heldError fails a run in which the deletion guard held deletions, naming each zone,
// its counts and the way through; nil when it held none.
func heldError(r *controller.Report, dryRun bool) error {
	n := r.DeletionsHeld()
	if n == 0 {
		return nil
	}
	var zones []string
	for _, z := range r.Zones {
		if h := z.HeldDeletions; h != nil {
			zones = append(zones, fmt.Sprintf("zone %s: %d of the %d records of owner %s", z.Zone, h.Deletes, h.Owned, h.Owner))
		}
	}
	verb, outcome := "held", "nothing was deleted there, creates and updates went on"
	if dryRun {
		verb, outcome = "would hold", "a sync would delete nothing there, and write the creates and updates"
	}
	deletions := "deletions"
	if n == 1 {
		deletions = "deletion"
	}
	return fmt.Errorf("the deletion guard %s %d %s (%s): %s; "+
		"if the sources are right, run again with --allow-mass-delete", verb, n, deletions, strings.Join(zones, "; "), outcome)
}

// check refuses flags that need another one: run before anything runs (flagChecks).
func (f *syncFlags) check() error {
	if f.dryRunDir != "" && !f.dryRun {
		return fmt.Errorf("--dry-run-dir %q: needs --dry-run", f.dryRunDir)
	}
	return nil
}
