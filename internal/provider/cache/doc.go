// Package cache keeps each zone's record sets between reconciles, so that a controller
// which reconciles on object events makes no Route 53 List call while nothing changes.
//
// A Provider wraps another provider.Provider. It lists a zone once, then keeps it up to
// date from its own successful writes: every batch Route 53 accepts is applied to the
// cached zone in the form a fresh listing would return. The zone is listed again only when
// the resync interval (default one hour) has passed since it was listed, after any write to
// it failed (refused, throttled, failed or cancelled: the zone may not be what the cache
// thinks; a batch the provider could not even build was never sent and changes nothing),
// or on demand (Invalidate, InvalidateAll). The zone list itself is kept for the same
// interval.
//
// How it stays correct while others write the zone (another cluster's controller, a
// cutover, a person): the planner sends every replacement and every delete as a DELETE of
// the set exactly as read plus a CREATE, never an UPSERT, and Route 53 applies a batch
// whole or not at all. A DELETE built from a stale copy does not match what the zone holds,
// so Route 53 refuses the whole batch ("values provided do not match", "not found", and
// "already exists" for a CREATE of a set someone else created): a stale cache never
// overwrites another writer's change to a set the batch writes. The refused write
// invalidates the zone, and the next reconcile lists it and plans from what is really there. What a stale cache can do is
// delay a write: a record another writer deleted or changed, which this owner would not
// touch otherwise, is seen again at the next resync, which bounds that delay.
//
// The compare-and-swap extends to ownership: with every record it writes, the planner
// also rewrites the record's ownership TXT exactly as read, so a change of ownership alone
// (a handover that rewrote only the TXT record) makes a stale write fail too. What it does
// not cover is a cutover's authority record (which holds a weighted group's weights) that a
// stale copy lacks: a weight annotation changed in the moment between a cutover taking the
// authority and its first weight write could still be written; the cutover's own
// compare-and-swap then reports the drift, and the refused writes that follow re-list the
// zone. A controller does not wait for the resync to see a new hold either: its
// controller.HoldProber asks the zone's name servers, by DNS, for the authority record of
// every name where it publishes weighted sets, and invalidates the zone (Invalidate) when
// the answer differs from the cached listing, so the publisher confirms the hold within
// minutes (endpoint.ConfirmsHoldLabel) and `cutover release` can trust what it recorded.
// Against the sandbox (an API on this machine) it asks only the servers it is given
// (--hold-probe-servers): the sandbox's NS records name real AWS name servers.
//
// The cache is safe for concurrent use, but it does not merge concurrent misses into one
// listing (no singleflight): a controller reconciles one zone at a time, so two listings of
// one zone at once do not happen in practice, and if they did, both would be correct.
package cache
