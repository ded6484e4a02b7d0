package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crossfade-io/crossfade/internal/cli"
)

// typeWords are the value names help may show after a flag: pflag's names of its types
// (what it prints when a usage has no backticked word), and the upper-case placeholders a
// usage may choose on purpose. Anything else is a backticked word in a usage that pflag
// took for the value name ("--kube make test" in the help).
var typeWords = map[string]bool{
	"": true, "string": true, "strings": true, "int": true, "int64": true, "uint": true, "float": true,
	"duration": true, "stringToString": true, "stringToInt64": true, "stringArray": true,
}

// TestHelpValueNames walks every flag of every command, inherited ones too: each shows a
// type-like value name in the help, so that no backticked word of a usage (a command to
// run, a flag to pair it with) reads as the flag's value.
func TestHelpValueNames(t *testing.T) {
	cli.Walk(newRootCmd(), func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			if name, _ := pflag.UnquoteUsage(f); !typeWords[name] {
				t.Errorf("%s --%s: help shows value name %q, want a type (usage %q)", c.CommandPath(), f.Name, name, f.Usage)
			}
		}
		c.LocalFlags().VisitAll(check)
		c.InheritedFlags().VisitAll(check)
	})
}

// renames are the flags renamed for one vocabulary across commands (issue 28): the old
// name stays, hidden and deprecated, for one minor version.
var renames = []struct {
	cmd       []string
	old, name string
	value     string
	// args complete a valid call.
	args []string
}{
	{[]string{"verify"}, "cloudmap", "cloudmap-service", "apps.local/api", nil},
	{[]string{"verify"}, "servicediscovery-endpoint", "cloudmap-endpoint", "http://127.0.0.1:1", []string{"--cloudmap-service=apps.local/api"}},
	{[]string{"cutover", "plan"}, "servicediscovery-endpoint", "cloudmap-endpoint", "http://127.0.0.1:1", []string{"plan.yaml"}},
}

// TestRenamedFlags: a renamed flag's old name still works, says so with the new name,
// and is not in the help, which shows the new name.
func TestRenamedFlags(t *testing.T) {
	for _, r := range renames {
		t.Run(strings.Join(r.cmd, " ")+" --"+r.old, func(t *testing.T) {
			code, stdout, stderr := runLine(t, slices.Concat(r.cmd, []string{"--" + r.old + "=" + r.value}, r.args))
			if code != cli.ExitFailure || !strings.Contains(stderr, errRan.Error()) {
				t.Errorf("--%s: exit %d, want the call to get past the checks (%q):\n%s", r.old, code, errRan, stderr)
			}
			// cobra prints the note to the command's out writer, which is stderr in the
			// binary (main sets no other) and runLine's stdout here.
			if want := "Flag --" + r.old + " has been deprecated, use --" + r.name + "\n"; !strings.Contains(stdout, want) {
				t.Errorf("--%s: output lacks %q:\n%s", r.old, want, stdout)
			}
			code, help, _ := runLine(t, append(slices.Clone(r.cmd), "--help"))
			if code != 0 || strings.Contains(help, "--"+r.old+" ") || !strings.Contains(help, "--"+r.name+" ") {
				t.Errorf("help: exit %d, want 0, --%s listed and --%s not:\n%s", code, r.name, r.old, help)
			}
		})
	}
}
