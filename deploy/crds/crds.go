// Package crds holds the CustomResourceDefinitions crossfade ships, for `kubectl apply -f
// deploy/crds/` and embedded for the programs that install them themselves (demo --kube).
package crds

import _ "embed"

// Cutovers is cutovers.crossfade.io.yaml, the Cutover CRD (generated: `go generate
// ./internal/cutover/api/...`).
//
//go:embed cutovers.crossfade.io.yaml
var Cutovers []byte
