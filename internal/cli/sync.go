package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// SyncOptions are `crossfade sync`'s flags, named as external-dns names them.
type SyncOptions struct {
	PublishOptions
	// Manifests is the manifest file, or directory of them, to publish from.
	Manifests string
	// DryRunDir, with DryRun, is where each batch is written as a file too.
	DryRunDir string
	// Strict fails the run on any finding: an invalid object, a conflict, a name
	// without a zone.
	Strict bool
}

// AddFlags defines the flags on c, marks the required ones and declares their checks in fc.
func (o *SyncOptions) AddFlags(c *cobra.Command, fc *FlagChecks) {
	fl := c.Flags()
	fl.StringVar(&o.Manifests, "manifests", "", "manifest file, or directory of *.yaml, *.yml and *.json files (required)")
	o.PublishOptions.AddFlags(fl)
	fl.BoolVar(&o.DryRun, "dry-run", false, "send nothing; print each change batch as AWS CLI --change-batch JSON")
	fl.StringVar(&o.DryRunDir, "dry-run-dir", "", "with --dry-run, also write each batch to DIR/<zone id>-<n>.json")
	fl.BoolVar(&o.Strict, "strict", false, "exit non-zero when any object is invalid or unreadable, any record conflicts, or a name has no zone")
	_ = c.MarkFlagRequired("manifests")
	_ = c.MarkFlagRequired("txt-owner-id")
	CheckPublishFlags(fc, c, fl)
	fc.Want(fl, "manifests", NotEmpty("a manifest file or directory"))
	// A flag that needs another one.
	fc.Check(c, func() error {
		if o.DryRunDir != "" && !o.DryRun {
			return fmt.Errorf("--dry-run-dir %q: needs --dry-run", o.DryRunDir)
		}
		return nil
	})
}

// NewSyncCommand is `crossfade sync` as its users see it: usage, help, flags (into o)
// and their checks (into fc). What it runs (RunE) is the caller's.
func NewSyncCommand(o *SyncOptions, fc *FlagChecks) *cobra.Command {
	c := &cobra.Command{
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
	}
	o.AddFlags(c, fc)
	return c
}
