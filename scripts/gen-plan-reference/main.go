// Command gen-plan-reference writes what is generated from the plan file's Go types: the
// doc comments `crossfade cutover explain` shows (-docs, in the spec package), and the
// plan file reference page (-reference, docs/plan-reference.md). Run by `go generate
// ./internal/cutover/spec/`; the spec package's tests fail when either is stale.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

func main() {
	docs := flag.String("docs", "", "write the spec package's explain_docs.go here (read from the package in this file's directory)")
	ref := flag.String("reference", "", "write the plan file reference page here")
	flag.Parse()
	if err := run(*docs, *ref); err != nil {
		fmt.Fprintln(os.Stderr, "gen-plan-reference:", err)
		os.Exit(1)
	}
}

func run(docs, ref string) error {
	if docs != "" {
		src, err := spec.GenerateDocsSource(filepath.Dir(docs))
		if err != nil {
			return fmt.Errorf("generate %s: %w", docs, err)
		}
		if err := os.WriteFile(docs, src, 0o644); err != nil {
			return err
		}
	}
	if ref != "" {
		if err := os.WriteFile(ref, []byte(spec.Reference()), 0o644); err != nil {
			return err
		}
	}
	return nil
}
