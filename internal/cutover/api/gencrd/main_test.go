package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCRDFresh: the checked-in CRD is what controller-gen makes of the types now, so
// that a marker or field changed without `go generate ./internal/cutover/api/...`
// fails here rather than ship a schema that differs from the Go types. controller-gen
// takes about a second, so it runs under -short too.
func TestCRDFresh(t *testing.T) {
	want, err := generate(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "deploy", "crds", "cutovers.crossfade.io.yaml")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run `go generate ./internal/cutover/api/...`", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run `go generate ./internal/cutover/api/...` (first difference at byte %d)", path, firstDiff(got, want))
	}
}

// firstDiff is the offset of the first byte where a and b differ.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
