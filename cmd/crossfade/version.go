package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crossfade-io/crossfade/internal/cli"
)

// newVersionCmd is `crossfade version`: the same line as `crossfade --version`.
func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print crossfade's version, commit and Go version",
		Long: `version prints the release, the source commit and the Go release that built this
binary, e.g. "crossfade v0.4.0 (commit 1a2b3c4, go1.24.1 linux/amd64)": make build and
make image link them in; a plain go build or go run reads what the Go toolchain recorded
("(devel)", "unknown" for what it did not).`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), cli.BuildVersion())
			return err
		},
	}
}
