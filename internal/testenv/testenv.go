// Package testenv decides what a test does when something it needs from the machine is
// missing: a tool, a built server, root, /proc. A developer's `go test` skips the test,
// saying what to install; under CI=true (set by CI and by .ci/run) it fails, because
// there the setup provides everything and a skip would hide a test that never ran.
// `make test` counts the skips that remain (scripts/testreport).
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// CI reports whether this run is CI's: the environment has CI=true.
func CI() bool { return os.Getenv("CI") == "true" }

// ciSuffix ends a failure's message, saying why a missing prerequisite failed rather
// than skipped the test.
const ciSuffix = "; under CI=true a missing prerequisite fails the test instead of skipping it"

// Missing stops t because what it needs is absent; msg names it and what provides it
// (the Debian package, the make target). It fails t under CI=true and skips it otherwise.
func Missing(t testing.TB, msg string) {
	t.Helper()
	stop(t, CI(), msg)
}

// Missingf is Missing with a format.
func Missingf(t testing.TB, format string, args ...any) {
	t.Helper()
	stop(t, CI(), fmt.Sprintf(format, args...))
}

// stop is Missing with the CI verdict given, so that both verdicts are testable.
func stop(t testing.TB, ci bool, msg string) {
	t.Helper()
	if ci {
		t.Fatal(msg + ciSuffix)
	}
	t.Skip(msg)
}

// LookPath returns the path of the program name, or stops t (Missing) saying that the
// Debian package pkg provides it.
func LookPath(t testing.TB, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missingf(t, "%s is not installed: install the Debian package %s", name, pkg)
	}
	return path
}

// File stops t (Missing) unless path exists; what says what provides it.
func File(t testing.TB, path, what string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		Missingf(t, "%s: %v: %s", path, err, what)
	}
}

// Root stops t (Missing) unless the process runs as root; why says what needs root.
func Root(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missingf(t, "not root (uid %d): %s: run the test as root", os.Geteuid(), why)
	}
}
