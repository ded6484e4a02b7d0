// Package registry keeps TXT ownership records in external-dns's formats: it reads which
// owner holds each record (per name, type and set identifier) and writes the TXT records
// that accompany the records crossfade publishes, byte-compatible with external-dns v0.21.0.
package registry
