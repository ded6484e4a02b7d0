// +kubebuilder:object:generate=true
// +groupName=crossfade.io

// Package v1alpha1 is the Cutover resource, crossfade.io/v1alpha1: a cutover plan kept
// in Kubernetes, whose spec is the plan file's spec (spec.Spec, the same Go type the
// file decodes into) and whose status is the run as a controller keeps it: its phase,
// kstatus conditions, steps with their gates' verdicts, the current weights, the
// journal it resumes from, and who did the last control action.
//
// Only types live here. controller-gen writes their deep copies
// (zz_generated.deepcopy.go) and the CRD (deploy/crds/cutovers.crossfade.io.yaml) from
// them and from spec's types' markers: `go generate ./internal/cutover/api/...`.
package v1alpha1

//go:generate go tool controller-gen object paths=.
//go:generate go run ../gencrd -out ../../../../deploy/crds/cutovers.crossfade.io.yaml
