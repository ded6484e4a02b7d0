// Package provider defines the small Provider interface (zones, records, apply, and the
// adjust and dry-run steps) that the planner and controller write through, with the batch
// limits the planner splits by and the typed error for a batch the DNS service rejects. A
// back end embeds BaseProvider for the defaults: records as sources state them, and a dry
// run that fails with ErrNoDryRun rather than render nothing. Back ends live in
// subpackages: route53, and cache in front of one.
package provider
