package main

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crossfade-io/crossfade/internal/cli"
)

// cmdSpec is what a valid call of one command needs.
type cmdSpec struct {
	// group: the command only groups subcommands.
	group bool
	// args are the positional arguments of a valid call.
	args []string
	// refused are further command lines (after the command's path) that must be usage errors.
	refused [][]string
	// unknownFlags says why the command accepts unknown flags; "" = it refuses them.
	unknownFlags string
	// optionalArgs: args may be left out (`kubectl get [NAME]`), so leaving them out is no
	// usage error.
	optionalArgs bool
}

// cmdSpecs covers every command of the tree: TestUsageErrors fails on a command it lacks,
// so that a new command is checked too.
var cmdSpecs = map[string]cmdSpec{
	"crossfade":                       {group: true},
	"crossfade help":                  {refused: [][]string{{"no-such-topic"}, {"cutover", "abrot"}}},
	"crossfade completion":            {group: true},
	"crossfade completion bash":       {},
	"crossfade completion zsh":        {},
	"crossfade completion fish":       {},
	"crossfade completion powershell": {},
	"crossfade sandbox":               {},
	"crossfade demo":                  {},
	"crossfade sync":                  {},
	// External-dns's own flags are accepted (TestControllerExternalDNSFlags); a typo is not.
	"crossfade controller":        {refused: [][]string{{"--dryrun"}, {"--no-dry-run"}}},
	"crossfade handover":          {},
	"crossfade cutover":           {group: true},
	"crossfade cutover plan":      {args: []string{"plan.yaml"}},
	"crossfade cutover explain":   {refused: [][]string{{"spec.stepz"}, {"spec", "spec.steps"}}}, // FIELD is optional
	"crossfade cutover run":       {args: []string{"plan.yaml"}},
	"crossfade cutover status":    {args: []string{"plan.yaml"}},
	"crossfade cutover release":   {args: []string{"plan.yaml"}},
	"crossfade cutover pause":     {args: []string{"plan.yaml"}},
	"crossfade cutover resume":    {args: []string{"plan.yaml"}},
	"crossfade cutover promote":   {args: []string{"plan.yaml"}},
	"crossfade cutover abort":     {args: []string{"plan.yaml"}},
	"crossfade cutover dashboard": {args: []string{"app"}, refused: [][]string{{"app", "--ui=0.0.0.0:8080"}}},
	"crossfade version":           {},
	"crossfade kubectl":           {group: true},
	"crossfade kubectl get":       {args: []string{"app"}, optionalArgs: true, refused: [][]string{{"-o", "table"}, {"app", "web"}}},
	"crossfade kubectl status":    {args: []string{"app"}},
	"crossfade kubectl pause":     {args: []string{"app"}, refused: [][]string{{"app", "--timeout=0s"}}},
	"crossfade kubectl resume":    {args: []string{"app"}, refused: [][]string{{"app", "--timeout=-1s"}}},
	"crossfade kubectl promote":   {args: []string{"app"}, refused: [][]string{{"app", "--force"}}},
	"crossfade kubectl abort":     {args: []string{"app"}, refused: [][]string{{"app", "--skip-gates"}}},
	"crossfade kubectl release":   {args: []string{"app"}, refused: [][]string{{"app", "--skip-gates"}}},
	"crossfade verify":            {args: []string{"--dns-server=127.0.0.1:53", "app.example.com"}, refused: [][]string{{"--cloudmap-service", "ns/svc", "app.example.com"}, {"--cloudmap", "ns/svc", "app.example.com"}}},
}

// errRan is what every command's RunE returns in TestUsageErrors: a call that gets past
// the command line's checks says so instead of running.
var errRan = errors.New("ran past the usage checks")

// testRoot is the real command tree, every command's run replaced by errRan.
func testRoot() *cobra.Command {
	root := newRootCmd()
	cli.Walk(root, func(c *cobra.Command) {
		if c.HasSubCommands() || c.Name() == "help" && !c.Parent().HasParent() {
			return
		}
		c.Run = nil
		c.RunE = func(*cobra.Command, []string) error { return errRan }
	})
	return root
}

// runLine runs the command line args through cli.Execute, as main does.
func runLine(t *testing.T, args []string) (code int, stdout, stderr string) {
	t.Helper()
	root := testRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{}, args...))
	code = cli.Execute(t.Context(), root, &errOut)
	return code, out.String(), errOut.String()
}

// requiredValues are valid values of required flags that take more than any word.
var requiredValues = map[string]string{"source": "service", "from": "blue", "to": "green"}

// requiredFlags are c's flags marked required, each with a valid value.
func requiredFlags(c *cobra.Command) []string {
	var out []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if slices.Equal(f.Annotations[cobra.BashCompOneRequiredFlag], []string{"true"}) {
			v, ok := requiredValues[f.Name]
			if !ok {
				v = "x"
			}
			out = append(out, "--"+f.Name+"="+v)
		}
	})
	return out
}

// TestUsageErrors walks the whole command tree: every command refuses, with exit status
// 2 and a message naming the problem, an unknown flag, an unknown subcommand (groups) or a
// stray argument (leaves), a missing argument and a missing required flag; the valid call
// gets past the checks, and --help and help exit 0.
func TestUsageErrors(t *testing.T) {
	seen := map[string]bool{}
	cli.Walk(newRootCmd(), func(c *cobra.Command) {
		path := c.CommandPath()
		seen[path] = true
		spec, ok := cmdSpecs[path]
		if !ok {
			t.Errorf("%s: not in cmdSpecs: add what a valid call needs", path)
			return
		}
		if got := c.FParseErrWhitelist.UnknownFlags; got != (spec.unknownFlags != "") {
			t.Errorf("%s: accepts unknown flags = %v, cmdSpecs says %q", path, got, spec.unknownFlags)
		}
		words := strings.Fields(path)[1:]
		line := func(parts ...[]string) []string { return slices.Concat(append([][]string{words}, parts...)...) }
		req := requiredFlags(c)
		t.Run(path, func(t *testing.T) {
			type refusal struct {
				name string
				args []string
				want string // in the message
			}
			var refusals []refusal
			if spec.unknownFlags == "" {
				refusals = append(refusals, refusal{"unknown flag", line(spec.args, req, []string{"--no-such-flag"}), "unknown flag: --no-such-flag"})
			}
			if spec.group {
				refusals = append(refusals,
					refusal{"unknown subcommand", line([]string{"no-such-subcommand", "plan.yaml"}), `"no-such-subcommand"`},
					refusal{"no subcommand", line(), "missing "})
			} else {
				refusals = append(refusals, refusal{"stray argument", line(spec.args, []string{"stray-argument"}, req), "stray-argument"})
				if len(spec.args) > 0 && !spec.optionalArgs {
					refusals = append(refusals, refusal{"missing argument", line(spec.args[:len(spec.args)-1], req), "missing "})
				}
				for i, f := range req {
					name, _, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
					refusals = append(refusals, refusal{"missing required flag " + name,
						line(spec.args, slices.Delete(slices.Clone(req), i, i+1)), `"` + name + `"`})
				}
			}
			for _, extra := range spec.refused {
				refusals = append(refusals, refusal{"refused " + strings.Join(extra, " "), line(extra, req), ""})
			}
			for _, r := range refusals {
				code, _, stderr := runLine(t, r.args)
				if code != cli.ExitUsage || !strings.Contains(stderr, r.want) || !strings.Contains(stderr, path) {
					t.Errorf("%s: `crossfade %s` exited %d, stderr:\n%s\nwant exit status %d and a message from %q containing %q",
						r.name, strings.Join(r.args, " "), code, stderr, cli.ExitUsage, path, r.want)
				}
			}
			if !spec.group {
				// The valid call passes every check (so each refusal above is about what it
				// changed); help, not stubbed, prints the usage.
				code, _, stderr := runLine(t, line(spec.args, req))
				if path == "crossfade help" {
					if code != 0 {
						t.Errorf("`crossfade help` exited %d, stderr:\n%s", code, stderr)
					}
				} else if code != cli.ExitFailure || !strings.Contains(stderr, errRan.Error()) {
					t.Errorf("valid call `crossfade %s` exited %d, stderr:\n%s\nwant it to reach the command", strings.Join(line(spec.args, req), " "), code, stderr)
				}
			}
			for _, help := range [][]string{line([]string{"--help"}), append([]string{"help"}, words...)} {
				if path == "crossfade help" && help[0] == "help" {
					help = []string{"help", "help"}
				}
				code, stdout, stderr := runLine(t, help)
				if code != 0 || !strings.Contains(stdout, "Usage:") {
					t.Errorf("`crossfade %s` exited %d, stdout %q, stderr %q; want 0 and the usage", strings.Join(help, " "), code, stdout, stderr)
				}
			}
		})
	})
	for path := range cmdSpecs {
		if !seen[path] {
			t.Errorf("cmdSpecs names %q, which is not a command", path)
		}
	}
}

// TestControllerExternalDNSFlags: an external-dns command line copied unchanged parses (the
// flags crossfade has no use for are warned about when it runs), boolean ones in kingpin's
// --no- form too, while a flag neither knows is a usage error.
func TestControllerExternalDNSFlags(t *testing.T) {
	base := []string{"controller", "--txt-owner-id", "blue", "--source", "service"}
	for _, tc := range []struct {
		name  string
		extra []string
		code  int
	}{
		{"external-dns flags", []string{"--aws-zones-cache-duration=1m", "--aws-prefer-cname", "--no-aws-evaluate-target-health",
			"--txt-cache-interval", "1h", "--aws-sd-service-cleanup", "--domain-filter", "example.com"}, cli.ExitFailure},
		{"a typo of a crossfade flag", []string{"--dryrun"}, cli.ExitUsage},
		{"an external-dns flag's --no- form of a flag crossfade defines", []string{"--no-dry-run"}, cli.ExitUsage},
		{"a flag neither has", []string{"--no-such-flag=1"}, cli.ExitUsage},
	} {
		code, _, stderr := runLine(t, append(slices.Clone(base), tc.extra...))
		if code != tc.code || (code == cli.ExitFailure && !strings.Contains(stderr, errRan.Error())) {
			t.Errorf("%s: exited %d, stderr:\n%s\nwant %d", tc.name, code, stderr, tc.code)
		}
	}
}
