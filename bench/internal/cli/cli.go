// Package cli is the command-line frame the benchmark programs share: their arguments are
// flags only, a bad flag exits 2 and a failed run 1, Ctrl-C or SIGTERM cancels the run's
// context so that it returns through its defers and stops every process it started, and
// the run's temp dir goes at the end unless asked to stay.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes of a benchmark program.
const (
	ExitOK       = 0
	ExitFailed   = 1
	ExitBadFlags = 2
)

// Parse parses args with fs, and rejects any argument that is not a flag.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return nil
}

// TempDir makes a temp dir for a run's files (configs, logs, data) named after prefix.
// The caller defers done, which removes it, or keeps it when keep is true (a -keep flag:
// the logs tell why a run failed) and logs where it is.
func TempDir(prefix string, log *slog.Logger) (dir string, done func(keep bool), err error) {
	dir, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, fmt.Errorf("temp dir: %w", err)
	}
	return dir, func(keep bool) {
		if keep {
			log.Info("kept the temp dir", "dir", dir)
			return
		}
		if err := os.RemoveAll(dir); err != nil {
			log.Warn("remove temp dir", "dir", dir, "err", err)
		}
	}, nil
}

// Main runs the program name: parse turns args into options (flag.ErrHelp: -h was asked,
// and the usage printed), then run does the work under a context that SIGINT and SIGTERM
// cancel, logging to stderr. It returns the exit code, for os.Exit.
func Main[O any](name string, args []string, parse func([]string) (O, error), run func(context.Context, O, *slog.Logger) error) int {
	return mainTo(os.Stderr, name, args, parse, run)
}

// mainTo is Main logging to w.
func mainTo[O any](w io.Writer, name string, args []string, parse func([]string) (O, error), run func(context.Context, O, *slog.Logger) error) int {
	log := slog.New(slog.NewTextHandler(w, nil))
	opts, err := parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		log.Error(name+": bad flags", "err", err)
		return ExitBadFlags
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, opts, log)
	stop()
	if err != nil {
		log.Error(name+" failed", "err", err)
		return ExitFailed
	}
	return ExitOK
}
