package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCompletionScripts runs the binary's `completion SHELL` for the shells docs/cli.md
// installs: each exits 0 with a script for crossfade on stdout and nothing on stderr
// (bash's parses); and what the scripts call back, `crossfade __complete`, completes
// commands, subcommands and flags, without the deprecated flag names.
func TestCompletionScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildCrossfade(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		shell string
		// first is the script's first line; has what else it must hold.
		first string
		has   []string
	}{
		{"bash", "# bash completion V2 for crossfade", []string{"__start_crossfade()", "complete -o default -F __start_crossfade crossfade"}},
		{"zsh", "#compdef crossfade", []string{"compdef _crossfade crossfade", "__complete"}},
		{"fish", "# fish completion for crossfade", []string{"complete -c crossfade ", "__complete"}},
	} {
		t.Run(tc.shell, func(t *testing.T) {
			code, script, stderr := runBinary(t, bin, dir, "completion", tc.shell)
			if code != 0 || stderr != "" {
				t.Fatalf("completion %s: exit %d, want 0 and no stderr:\n%s", tc.shell, code, stderr)
			}
			if first, _, _ := strings.Cut(script, "\n"); !strings.HasPrefix(first, tc.first) {
				t.Errorf("completion %s: first line %q, want %q", tc.shell, first, tc.first)
			}
			for _, h := range tc.has {
				if !strings.Contains(script, h) {
					t.Errorf("completion %s: script lacks %q", tc.shell, h)
				}
			}
			if tc.shell != "bash" {
				return
			}
			path := filepath.Join(dir, "crossfade.bash")
			if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.CommandContext(t.Context(), "bash", "-n", path).CombinedOutput(); err != nil {
				t.Errorf("bash -n: %v\n%s", err, out)
			}
		})
	}

	for _, tc := range []struct {
		line []string
		want []string
		not  []string
	}{
		{[]string{""}, []string{"completion", "controller", "cutover", "demo", "handover", "kubectl", "sandbox", "sync", "verify", "version"}, nil},
		{[]string{"kubectl", "pro"}, []string{"promote"}, nil},
		{[]string{"cutover", "ab"}, []string{"abort"}, nil},
		{[]string{"completion", ""}, []string{"bash", "fish", "powershell", "zsh"}, nil},
		{[]string{"verify", "--cloud"}, []string{"--cloudmap-endpoint", "--cloudmap-service"}, []string{"--cloudmap"}},
		{[]string{"cutover", "plan", "--service"}, nil, []string{"--servicediscovery-endpoint"}},
	} {
		t.Run("complete "+strings.Join(tc.line, " "), func(t *testing.T) {
			code, stdout, stderr := runBinary(t, bin, dir, append([]string{"__complete"}, tc.line...)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			// One candidate a line, its description after a tab; the last line is cobra's
			// directive (":4").
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
				if c, _, _ := strings.Cut(l, "\t"); !strings.HasPrefix(c, ":") {
					got = append(got, c)
				}
			}
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("candidates %q lack %q", got, w)
				}
			}
			for _, n := range tc.not {
				if slices.Contains(got, n) {
					t.Errorf("candidates %q offer %q, a deprecated name", got, n)
				}
			}
		})
	}
}
