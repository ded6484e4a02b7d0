// Package registry keeps TXT ownership records in external-dns's formats, adopts zones
// external-dns wrote and hands ownership over atomically. (Built with issue 4.)
package registry
