package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/testenv"
)

// TestVersionCommand: `crossfade version` and `crossfade --version` print the same one
// line, with the Go release that built the binary, on stdout.
func TestVersionCommand(t *testing.T) {
	want := cli.BuildVersion().String() + "\n"
	if !strings.Contains(want, runtime.Version()) {
		t.Fatalf("version line %q lacks the Go version %s", want, runtime.Version())
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		root := newRootCmd()
		var out, errOut strings.Builder
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs(args)
		if code := cli.Execute(t.Context(), root, &errOut); code != 0 || out.String() != want || errOut.Len() != 0 {
			t.Errorf("crossfade %s: exit %d, stdout %q, stderr %q; want 0, %q, nothing", args[0], code, out.String(), errOut.String(), want)
		}
	}
}

// TestMakeBuildVersion builds the binary with the command `make build` runs, with a
// VERSION and COMMIT given, and runs it: both forms print them, so that the Makefile's -X
// flags name variables that exist (the linker ignores a -X of a name that does not).
func TestMakeBuildVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	testenv.LookPath(t, "make", "make")
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	mk := exec.CommandContext(t.Context(), "make", "--no-print-directory", "-n", "build", "VERSION=v0.0.0-test", "COMMIT=c0ffee")
	mk.Dir = root
	// Not the make variables of a `make test` that may be running this test.
	mk.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == "MAKEFLAGS" || k == "MFLAGS" || k == "MAKELEVEL"
	})
	out, err := mk.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n build: %v\n%s", err, out)
	}
	// The go build line, and the kubectl plugin's link to what it writes.
	recipe, link, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	bin := filepath.Join(t.TempDir(), "crossfade")
	if strings.Count(recipe, "-o bin/crossfade ") != 1 || link != "ln -sf crossfade bin/kubectl-crossfade" {
		t.Fatalf("make -n build: want one go build line writing bin/crossfade, then the link bin/kubectl-crossfade, got:\n%s", out)
	}
	build := exec.CommandContext(t.Context(), "sh", "-c", strings.Replace(recipe, "-o bin/crossfade ", "-o "+bin+" ", 1))
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", recipe, err, out)
	}
	want := "crossfade v0.0.0-test (commit c0ffee, " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	for _, arg := range []string{"version", "--version"} {
		got, err := exec.CommandContext(t.Context(), bin, arg).Output()
		if err != nil || string(got) != want {
			t.Errorf("crossfade %s: %q, %v; want %q", arg, got, err, want)
		}
	}
}
