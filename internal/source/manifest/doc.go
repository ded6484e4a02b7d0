// Package manifest loads Kubernetes manifests (YAML or JSON files, multi-document, "kind:
// List" included) into a source.Snapshot, so that crossfade can show what a set of
// manifests would publish without a cluster. A malformed document is reported with its
// file, index, object and field, and never costs the other documents their place.
package manifest
