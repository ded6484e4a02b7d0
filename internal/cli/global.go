package cli

import (
	"io"
	"log/slog"

	"github.com/spf13/cobra"
)

// Global are the flags every command shares, and the checks of every command's flags.
type Global struct {
	logLevel  string
	logFormat string
	// Checks are what every command's flag values must be, checked before it runs.
	Checks FlagChecks
}

// AddFlags defines the shared flags on root, for every command under it.
func (g *Global) AddFlags(root *cobra.Command) {
	fl := root.PersistentFlags()
	fl.StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fl.StringVar(&g.logFormat, "log-format", "text", "log format: text or json")
	g.Checks.Want(fl, "log-level", LogLevel)
	g.Checks.Want(fl, "log-format", OneOf("text", "json"))
}

// Logger builds the logger the --log-level and --log-format flags ask for, writing to w.
// Both values were checked before the command ran (AddFlags' rules).
func (g *Global) Logger(w io.Writer) *slog.Logger {
	level, _ := ParseLogLevel(g.logLevel)
	opts := &slog.HandlerOptions{Level: level}
	if g.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
