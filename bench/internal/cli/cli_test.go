package cli

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// options is a benchmark's settings, as a test program parses them.
type options struct{ n int }

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("testbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&o.n, "n", 1, "a count")
	return o, Parse(fs, args)
}

// TestMainExitCodes: what a benchmark program exits with, and logs, for each outcome of
// its flags and its run.
func TestMainExitCodes(t *testing.T) {
	errRun := errors.New("the server broke")
	for _, tc := range []struct {
		name    string
		args    []string
		runErr  error
		want    int
		wantLog string // "": nothing logged
		wantN   int    // what run got; 0: run not called
	}{
		{name: "ok", args: []string{"-n", "3"}, want: ExitOK, wantN: 3},
		{name: "help", args: []string{"-h"}, want: ExitOK},
		{name: "unknown flag", args: []string{"-x"}, want: ExitBadFlags, wantLog: "testbench: bad flags"},
		{name: "not a flag", args: []string{"-n", "2", "extra"}, want: ExitBadFlags, wantLog: `unexpected arguments [\"extra\"]`},
		{name: "run fails", args: nil, runErr: errRun, want: ExitFailed, wantLog: "testbench failed", wantN: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log strings.Builder
			gotN := 0
			code := mainTo(&log, "testbench", tc.args, parse, func(ctx context.Context, o options, _ *slog.Logger) error {
				if ctx.Err() != nil {
					t.Error("run got a context already done")
				}
				if _, ok := ctx.Deadline(); ok {
					t.Error("run got a deadline it did not ask for")
				}
				gotN = o.n
				return tc.runErr
			})
			if code != tc.want || gotN != tc.wantN {
				t.Errorf("exit %d, run got n=%d; want exit %d, n=%d", code, gotN, tc.want, tc.wantN)
			}
			if (tc.wantLog == "") != (log.Len() == 0) || !strings.Contains(log.String(), tc.wantLog) {
				t.Errorf("log %q; want it to hold %q", log.String(), tc.wantLog)
			}
		})
	}
}

func TestTempDir(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, keep := range []bool{false, true} {
		var log strings.Builder
		dir, done, err := TempDir("testbench-", slog.New(slog.NewTextHandler(&log, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "server.log"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		done(keep)
		_, err = os.Stat(dir)
		if kept := err == nil; kept != keep || !strings.HasPrefix(filepath.Base(dir), "testbench-") {
			t.Errorf("done(%v): dir %s kept %v (stat: %v)", keep, dir, kept, err)
		}
		if said := strings.Contains(log.String(), dir); said != keep {
			t.Errorf("done(%v) logged %q; want the dir named only when kept", keep, log.String())
		}
	}
}
