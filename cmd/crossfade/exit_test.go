package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryExitStatus runs the real binary: a mistyped or incomplete command line, or a
// bad flag value, exits 2 with a message naming the problem on stderr, so that a script's `crossfade cutover
// abrot plan.yaml` (an emergency abort) does not "succeed"; help exits 0.
func TestBinaryExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "crossfade")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args       []string
		wantCode   int
		wantStderr []string
		wantStdout string
	}{
		{[]string{"cutover", "abrot", "x.yaml"}, 2, []string{`crossfade cutover: unknown subcommand "abrot"; did you mean "abort"?`, "abort, dashboard, explain, pause, plan", "Run 'crossfade cutover --help' for usage."}, ""},
		{[]string{"cutover"}, 2, []string{"crossfade cutover: missing subcommand (want abort, dashboard, explain, pause, plan, promote, release, resume, run, status)"}, ""},
		{[]string{"cutover", "abort"}, 2, []string{"crossfade cutover abort: missing argument FILE"}, ""},
		{[]string{"bogus"}, 2, []string{`crossfade: unknown command "bogus"`, "cutover"}, ""},
		{[]string{"sync", "--no-such-flag"}, 2, []string{"crossfade sync: unknown flag: --no-such-flag", "Run 'crossfade sync --help' for usage."}, ""},
		{[]string{"sync", "--manifests=m", "--txt-owner-id=o", "stray"}, 2, []string{`crossfade sync: unexpected argument "stray" (sync takes no arguments)`}, ""},
		{[]string{"help", "bogus"}, 2, []string{`crossfade help: unknown help topic "bogus"`}, ""},
		// A bad flag value is a usage error too, refused before anything is read.
		{[]string{"cutover", "release", "--wait=-5s", "x.yaml"}, 2, []string{`crossfade cutover release: --wait "-5s": want a duration of 0s or more`, "Run 'crossfade cutover release --help' for usage."}, ""},
		{[]string{"--log-level", "bogus", "cutover", "status", "x.yaml"}, 2, []string{`crossfade cutover status: --log-level "bogus": want debug, info, warn or error`}, ""},
		{[]string{"verify", "--queries", "-1", "--dns-server", "127.0.0.1:53", "app.example.com"}, 2, []string{`crossfade verify: --queries "-1": want an integer 1..100000`}, ""},
		{[]string{"verify", "--tolerance", "7", "--dns-server", "127.0.0.1:53", "app.example.com"}, 2, []string{`crossfade verify: --tolerance "7": want a number 0..1`}, ""},
		{[]string{"verify", "--type", "BOGUS", "--dns-server", "127.0.0.1:53", "app.example.com"}, 2, []string{`crossfade verify: --type "BOGUS": want A, AAAA or CNAME`}, ""},
		{[]string{"--help"}, 0, nil, "Usage:"},
		{[]string{"help"}, 0, nil, "Usage:"},
		{[]string{"help", "cutover", "abort"}, 0, nil, "crossfade cutover abort FILE"},
		{[]string{"cutover", "--help"}, 0, nil, "crossfade cutover [command]"},
		// A failure that is not a usage error keeps exit status 1.
		{[]string{"cutover", "status", filepath.Join(t.TempDir(), "missing.yaml")}, 1, []string{"crossfade: ", "missing.yaml"}, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), bin, tc.args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.wantCode {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, stdout.String(), stderr.String())
			}
			for _, want := range tc.wantStderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
			if !strings.Contains(stdout.String(), tc.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.wantStdout, stdout.String())
			}
		})
	}
}
