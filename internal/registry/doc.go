// Package registry keeps TXT ownership records in external-dns's formats: it reads which
// owner holds each record (per name, type and set identifier) and writes the TXT records
// that accompany the records crossfade publishes, byte-compatible with external-dns v0.21.0.
//
// It also spells the records external-dns knows nothing of: the authority record by which
// a cutover holds a weighted name's weights (in the zone, so that every publisher sees it
// and it outlives the runner; Route 53 has no conditional write, so the record is the
// lock), and the ownership rewrite of a handover between owners.
package registry
