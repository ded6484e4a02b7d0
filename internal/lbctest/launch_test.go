package lbctest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPathsIn: the lookup in a directory of the caller's (the demo's option) finds the
// controller there and, in an empty one, names what is missing there and how to get it.
func TestPathsIn(t *testing.T) {
	empty := t.TempDir()
	if _, _, err := PathsIn(empty); !errors.Is(err, ErrNotBuilt) || !strings.Contains(err.Error(), Binary+" and "+CRDsFile+" not in "+empty) ||
		!strings.Contains(err.Error(), "`make test` builds it") {
		t.Errorf("PathsIn(empty) = %v, want ErrNotBuilt naming both files and %s", err, empty)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, Binary), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, CRDsFile), []byte("---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	binary, crds, err := PathsIn(dir)
	if err != nil || binary != filepath.Join(dir, Binary) || crds != filepath.Join(dir, CRDsFile) {
		t.Errorf("PathsIn(dir) = %s, %s, %v", binary, crds, err)
	}
}

// TestLaunchRefuses: Launch names the option it cannot run without, and starts nothing
// (the binary it would run does not exist: an attempt would fail differently).
func TestLaunchRefuses(t *testing.T) {
	good := Options{ClusterName: "blue", Endpoint: "http://127.0.0.1:1", Kubeconfig: "/k", Dir: t.TempDir(), Binary: "/nonexistent/aws-load-balancer-controller"}
	for _, tc := range []struct {
		name   string
		change func(*Options)
		want   string
	}{
		{"no cluster name", func(o *Options) { o.ClusterName = "" }, "Options.ClusterName is empty"},
		{"no endpoint", func(o *Options) { o.Endpoint = "" }, "Options.Endpoint: empty"},
		{"remote endpoint", func(o *Options) { o.Endpoint = "https://elasticloadbalancing.us-east-1.amazonaws.com" }, "not a loopback address"},
		{"no kubeconfig", func(o *Options) { o.Kubeconfig = "" }, "Options.Kubeconfig is empty"},
		{"no dir", func(o *Options) { o.Dir = "" }, "Options.Dir is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.change(&o)
			ctl, err := Launch(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Launch = %v, %v; want an error saying %q", ctl, err, tc.want)
			}
		})
	}
}
