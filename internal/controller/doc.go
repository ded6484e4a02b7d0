// Package controller publishes a cluster's records: sources → plan (with the registry) →
// provider, and annotated Services' endpoints as Cloud Map instances (Config.CloudMap).
// A Syncer is one reconcile across zones, used by `crossfade sync` and by the
// in-cluster Controller, which reads objects from informers (Watcher), debounces their
// changes, reconciles against cached zones one at a time, and runs only while it holds
// the leader lease (Lead).
//
// A controller runs unattended for months, so the loop carries the guards that keep a
// bad input or a struggling API from turning into lost records or a throttled account:
//   - DeleteGuard holds back mass deletions: an input that reads as empty (an empty
//     manifest directory, a changed annotation prefix, a wrong filter) must not delete
//     what an owner published.
//   - After a failed reconcile the loop backs off with jitter instead of calling Route 53
//     again at every change; Refusals keeps a change Route 53 refused as invalid from
//     being sent again at every reconcile.
//   - The Watcher follows CRD-served kinds by discovery and counts a kind absent only
//     after several 404s in a row: a discovery error leaves the kind unknown, so an API
//     server that answers badly for a while deletes nothing.
//   - HoldProber notices, by DNS, a cutover taking hold of a weighted name long before
//     the zone cache's resync would, so the publisher confirms the hold promptly.
//
// Problems reach people as Warning events (EventReporter), sent when a problem appears
// rather than at every reconcile, and as metrics.
package controller
