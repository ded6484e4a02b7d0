package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Exit statuses. A usage error (unknown command, subcommand or flag, a missing or stray
// argument, a required flag not given) exits 2 before anything is read or written, as
// many CLIs do, so that a script tells a mistyped command from a command that ran and
// failed (1).
const (
	// ExitFailure is a command that ran and failed.
	ExitFailure = 1
	// ExitUsage is a command line that names nothing crossfade can run.
	ExitUsage = 2
)

// UsageError is a command line that names no command crossfade can run as given.
type UsageError struct {
	// path is the command the line reached, e.g. "crossfade cutover".
	path string
	err  error
}

// Error names the command and what is wrong with the line.
func (e *UsageError) Error() string { return e.path + ": " + e.err.Error() }

// Unwrap returns what is wrong with the line.
func (e *UsageError) Unwrap() error { return e.err }

// Execute runs root and returns the process's exit status, writing the error to stderr:
// 0, ExitUsage for a usage error (with where to read the usage), ExitFailure otherwise.
func Execute(ctx context.Context, root *cobra.Command, stderr io.Writer) int {
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, ue.Error())
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", ue.path)
		return ExitUsage
	}
	fmt.Fprintln(stderr, "crossfade:", err)
	return ExitFailure
}

// EnforceUsage makes every command of root's tree refuse, with a UsageError, what cobra
// lets through by default: a command with subcommands run with none, or with one it does
// not have (cobra prints the help and exits 0, so `crossfade cutover abrot plan.yaml`,
// a script's emergency abort, "succeeded"), a leaf given arguments it takes none of,
// and `help` on a topic that does not exist. Unknown flags, argument counts, required
// flags and the flag values checks refuses are reported as usage errors too, before the
// command runs. --help and `help` still exit 0.
func EnforceUsage(root *cobra.Command, checks *FlagChecks) {
	// Added here rather than when root runs, so that the walk below covers them.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			c.Args = helpTopicArgs
		}
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &UsageError{path: c.CommandPath(), err: err}
	})
	// A command with subcommands is runnable only so that its Args runs (cobra shows the
	// help of one that is not, and succeeds): its usage line stays "[command]".
	root.SetUsageTemplate(strings.Replace(root.UsageTemplate(), "{{if .Runnable}}", "{{if and .Runnable (not .HasAvailableSubCommands)}}", 1))
	Walk(root, func(c *cobra.Command) {
		if c.HasSubCommands() && !c.Runnable() {
			if c.SuggestionsMinimumDistance <= 0 {
				c.SuggestionsMinimumDistance = 2
			}
			c.Args = subcommandArgs
			// Not reached: subcommandArgs refuses every call that gets here.
			c.RunE = func(c *cobra.Command, args []string) error { return subcommandArgs(c, args) }
		}
		if c.Args == nil {
			// cobra's default for a subcommand accepts any argument.
			c.Args = cobra.NoArgs
		}
		validate := c.Args
		c.Args = func(c *cobra.Command, args []string) error {
			if err := validate(c, args); err != nil {
				var ue *UsageError
				if errors.As(err, &ue) {
					return err
				}
				return &UsageError{path: c.CommandPath(), err: fmt.Errorf("%w (usage: %s)", argError(c, validate, args, err), c.UseLine())}
			}
			// cobra checks these only after the pre-run hooks, as plain errors.
			if err := c.ValidateRequiredFlags(); err != nil {
				return &UsageError{path: c.CommandPath(), err: err}
			}
			if err := c.ValidateFlagGroups(); err != nil {
				return &UsageError{path: c.CommandPath(), err: err}
			}
			return checks.Run(c)
		}
	})
}

// argError rewords cobra's argument count errors ("accepts 1 arg(s), received 2") to name
// the first argument too many, or the ones missing by their names in c.Use. It probes
// validate with other counts, which count checks answer without looking at the values.
func argError(c *cobra.Command, validate cobra.PositionalArgs, args []string, err error) error {
	accepts := func(n int) bool { return validate(c, make([]string, n)) == nil }
	for k := len(args) - 1; k >= 0; k-- {
		if accepts(k) {
			takes := "no arguments"
			switch {
			case k == 1:
				takes = "1 argument"
			case k > 1:
				takes = fmt.Sprintf("%d arguments", k)
			}
			return fmt.Errorf("unexpected argument %q (%s takes %s)", args[k], c.Name(), takes)
		}
	}
	names := strings.Fields(c.Use)[1:]
	for k := len(args) + 1; k <= len(args)+len(names); k++ {
		if accepts(k) {
			return fmt.Errorf("missing argument %s", strings.Join(names[len(args):k], " "))
		}
	}
	return err
}

// Walk calls fn on c and every command below it.
func Walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		Walk(sub, fn)
	}
}

// subcommandArgs refuses every call of a command that only groups subcommands: with no
// subcommand, or one it does not have, naming the ones it has.
func subcommandArgs(c *cobra.Command, args []string) error {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	want := "want " + strings.Join(names, ", ")
	what := "subcommand"
	if !c.HasParent() {
		what = "command"
	}
	if len(args) == 0 {
		return &UsageError{path: c.CommandPath(), err: fmt.Errorf("missing %s (%s)", what, want)}
	}
	msg := fmt.Sprintf("unknown %s %q", what, args[0])
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	}
	return &UsageError{path: c.CommandPath(), err: fmt.Errorf("%s (%s)", msg, want)}
}

// helpTopicArgs refuses `help` on a command that does not exist (cobra's help prints
// "Unknown help topic" and succeeds).
func helpTopicArgs(c *cobra.Command, args []string) error {
	found, rest, err := c.Root().Find(args)
	if err == nil && len(rest) == 0 && found != nil {
		return nil
	}
	return &UsageError{path: c.CommandPath(), err: fmt.Errorf("unknown help topic %q", strings.Join(args, " "))}
}

// VerifyArgs wants verify's NAME, or --cloudmap-service (whose value *cloudMap holds once the
// flags are parsed) and no NAME.
func VerifyArgs(cloudMap *string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := VerifyArgCount(*cloudMap, args); err != nil {
			return &UsageError{path: c.CommandPath(), err: err}
		}
		return nil
	}
}

// VerifyArgCount is verifyArgs' check, with cloudMap the value of --cloudmap-service.
func VerifyArgCount(cloudMap string, args []string) error {
	switch {
	case cloudMap != "" && len(args) > 0:
		return fmt.Errorf("give a NAME or --cloudmap-service, not both (got NAME %q and --cloudmap-service %q)", args[0], cloudMap)
	case cloudMap == "" && len(args) == 0:
		return errors.New("missing the weighted NAME to verify, or --cloudmap-service NAMESPACE/SERVICE")
	case len(args) > 1:
		return fmt.Errorf("unexpected argument %q (verify takes one NAME)", args[1])
	}
	return nil
}
