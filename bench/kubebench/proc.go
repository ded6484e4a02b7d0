package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/child"
)

// stopGrace is how long a controller gets to exit after SIGTERM before its process group
// is killed. crossfade lets the batch in flight finish for up to 25 s.
const stopGrace = 30 * time.Second

// logTailLines is how much of a controller's log an error shows.
const logTailLines = 20

// startChild runs args, a controller process under test named name, with env added to
// this process's environment, output to logPath. It runs in its own process group, so
// that a Ctrl-C at the terminal reaches only kubebench, which then stops it in order;
// and the kernel kills it if kubebench dies without stopping it. The caller stops it
// with stopChild.
func startChild(name, logPath string, env []string, args ...string) (*child.Process, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	return child.StartWith(cmd, logPath, child.Options{Name: name})
}

// stopChildInto is stopChild deferred by a measurement returning *err: how the child
// exited is joined into what the measurement returns, so a crash is never lost.
func stopChildInto(c *child.Process, err *error) {
	if serr := stopChild(c); serr != nil {
		*err = errors.Join(*err, serr)
	}
}

// stopChild ends the child: SIGTERM so it can shut down as it would in a pod, then
// SIGKILL to its whole group after stopGrace. It reports how the child exited: nil for a
// clean exit after SIGTERM.
func stopChild(c *child.Process) error {
	if c.Exited() {
		return c.ExitError()
	}
	if err := c.Stop(stopGrace); err != nil {
		return err
	}
	var exit *exec.ExitError
	if errors.As(c.Err(), &exit) && exit.ExitCode() != 0 {
		return fmt.Errorf("%s exited with %w after SIGTERM; log tail:\n%s", c.Name(), c.Err(), c.Tail(logTailLines))
	}
	return nil
}

// output runs a short command and returns its trimmed combined output.
func output(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}
