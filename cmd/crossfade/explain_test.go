package main

import (
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

func TestCutoverExplain(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    string // the whole of stdout, from spec.Explain
		wantStderr string
	}{
		{name: "top level", args: []string{"cutover", "explain"}, wantOut: explained(t, "")},
		{name: "field", args: []string{"cutover", "explain", "spec.gates.http"}, wantOut: explained(t, "spec.gates.http")},
		{name: "unknown field", args: []string{"cutover", "explain", "spec.gatez.http"}, wantCode: cli.ExitUsage,
			wantStderr: "crossfade cutover explain: unknown field \"spec.gatez.http\": spec has no field \"gatez\"; did you mean \"spec.gates\"?\n" +
				"Run 'crossfade cutover explain --help' for usage.\n"},
		{name: "two fields", args: []string{"cutover", "explain", "spec", "spec.steps"}, wantCode: cli.ExitUsage,
			wantStderr: "unexpected argument \"spec.steps\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runCLI(t, tc.args...)
			if code != tc.wantCode {
				t.Fatalf("%v: exit %d, want %d (stderr %q)", tc.args, code, tc.wantCode, stderr)
			}
			if out != tc.wantOut {
				t.Errorf("%v: stdout\n%s\nwant\n%s", tc.args, out, tc.wantOut)
			}
			if !strings.Contains(stderr, tc.wantStderr) || (tc.wantStderr == "") != (stderr == "") {
				t.Errorf("%v: stderr %q, want %q", tc.args, stderr, tc.wantStderr)
			}
		})
	}
}

func explained(t *testing.T, path string) string {
	t.Helper()
	s, err := spec.Explain(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
