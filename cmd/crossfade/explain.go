package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// explainCmd is `cutover explain [FIELD]`: the plan file's fields, from the types the
// plan decoder reads, like `kubectl explain`.
func explainCmd(g *globalFlags) *cobra.Command {
	var field string
	c := &cobra.Command{
		Use:   "explain [FIELD]",
		Short: "Describe a plan file field: its type, default and meaning",
		Long: `explain prints the type, default and meaning of a plan file field and of the fields
under it, from the types the plan decoder reads (docs/plan-reference.md is generated from
the same). With no FIELD it describes the top level; FIELD is a dotted path such as
spec.steps or spec.gates.http (list indices, as in spec.steps[0].gates, are ignored).`,
		Example: "  crossfade cutover explain spec.gates.http",
		// The field is checked with the flags (below), so that an unknown one is a usage
		// error (exit status 2) with the field it probably means.
		Args: func(c *cobra.Command, args []string) error {
			if err := cobra.MaximumNArgs(1)(c, args); err != nil {
				return err
			}
			field = ""
			if len(args) == 1 {
				field = args[0]
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := spec.Explain(field)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), text)
			return err
		},
	}
	g.Checks.Check(c, func() error {
		_, err := spec.Explain(field)
		return err
	})
	return c
}
