// Package controller runs the publish loop: sources → plan (with the registry) →
// provider. Sync is one reconcile, used by `crossfade sync` and, later, by the in-cluster
// watch → debounce → plan → apply loop.
package controller
