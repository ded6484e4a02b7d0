package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB whose Skip and Fatal record the message and end the
// goroutine, as the real ones do, so that the verdict can be checked.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()           {}
func (r *recorder) Skip(args ...any)  { r.skipped = fmt.Sprint(args...); runtime.Goexit() }
func (r *recorder) Fatal(args ...any) { r.failed = fmt.Sprint(args...); runtime.Goexit() }

// run calls f with a recorder in its own goroutine (Skip and Fatal end it) and returns
// what it recorded.
func run(t *testing.T, f func(testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

// TestVerdicts: a missing prerequisite skips a developer's test and fails CI's, the
// message naming what is missing and, under CI, why it is a failure; a present one does
// neither, under CI or not.
func TestVerdicts(t *testing.T) {
	dir := t.TempDir()
	present := filepath.Join(dir, "present")
	if err := os.WriteFile(present, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		ci          string // the CI variable
		check       func(testing.TB)
		wantSkip    string // substring of the skip message; "" for no skip
		wantFailure string // substring of the failure; "" for no failure
	}{
		{name: "tool present", ci: "true", check: func(t testing.TB) { LookPath(t, "go", "golang") }},
		{name: "tool missing, developer", ci: "", check: func(t testing.TB) { LookPath(t, "crossfade-no-such-tool", "crossfade-pkg") },
			wantSkip: "crossfade-no-such-tool is not installed: install the Debian package crossfade-pkg"},
		{name: "tool missing, CI", ci: "true", check: func(t testing.TB) { LookPath(t, "crossfade-no-such-tool", "crossfade-pkg") },
			wantFailure: "crossfade-no-such-tool is not installed: install the Debian package crossfade-pkg; under CI=true a missing prerequisite fails"},
		{name: "tool missing, CI not true", ci: "1", check: func(t testing.TB) { LookPath(t, "crossfade-no-such-tool", "crossfade-pkg") },
			wantSkip: "crossfade-no-such-tool is not installed"},
		{name: "file present, CI", ci: "true", check: func(t testing.TB) { File(t, present, "make builds it") }},
		{name: "file missing, developer", check: func(t testing.TB) { File(t, filepath.Join(dir, "absent"), "make builds it") },
			wantSkip: "absent: stat"},
		{name: "file missing, CI", ci: "true", check: func(t testing.TB) { File(t, filepath.Join(dir, "absent"), "make builds it") },
			wantFailure: "make builds it; under CI=true"},
		{name: "Missing, CI", ci: "true", check: func(t testing.TB) { Missing(t, "no sh") }, wantFailure: "no sh; under CI=true"},
		{name: "Missingf, developer", check: func(t testing.TB) { Missingf(t, "no %s", "sh") }, wantSkip: "no sh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			r := run(t, tc.check)
			if got := r.skipped; (tc.wantSkip == "") != (got == "") || !strings.Contains(got, tc.wantSkip) {
				t.Errorf("skip = %q, want one containing %q", got, tc.wantSkip)
			}
			if got := r.failed; (tc.wantFailure == "") != (got == "") || !strings.Contains(got, tc.wantFailure) {
				t.Errorf("failure = %q, want one containing %q", got, tc.wantFailure)
			}
		})
	}
}

// TestRoot: Root lets root through and stops anyone else, failing under CI.
func TestRoot(t *testing.T) {
	t.Setenv("CI", "true")
	r := run(t, func(t testing.TB) { Root(t, "buildah needs root") })
	if os.Geteuid() == 0 {
		if r.failed != "" || r.skipped != "" {
			t.Errorf("as root: failed %q, skipped %q; want neither", r.failed, r.skipped)
		}
		return
	}
	if !strings.Contains(r.failed, "not root") || !strings.Contains(r.failed, "buildah needs root") {
		t.Errorf("not root, CI: failure %q, want one saying not root and why", r.failed)
	}
}
