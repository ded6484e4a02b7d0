// Package cli is crossfade's command line: each command's flags (Options structs with
// AddFlags, and Config building the configuration the command's package takes), the
// rules their values must meet (FlagChecks), the external-dns flags the controller
// accepts, and usage errors with their exit status (Execute, EnforceUsage). It reads
// flags only: what a command takes from its environment, cmd/crossfade reads and passes in.
package cli
