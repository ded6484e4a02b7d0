package main

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/crossfade-io/crossfade/internal/child"
)

// stopGrace is how long a child gets to exit on SIGTERM before its process group is killed.
const stopGrace = 5 * time.Second

// logTailLines is how much of a child's log an error shows.
const logTailLines = 20

// startChild starts args (nginx, or the albproxy in a process of its own) with extra
// environment env, its stdout going to stdout (nil: the log file) and its stderr to the
// log file, so that a failure can show why. It is not tied to a context: the caller stops
// it with stopChild (deferred), which also covers Ctrl-C, because run returns through its
// defers. If this program is killed, the kernel sends the child SIGTERM: nginx's master
// turns it into a fast shutdown of its workers, where SIGKILL would orphan them.
func startChild(name, logPath string, stdin io.Reader, stdout io.Writer, env []string, args ...string) (*child.Process, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout = stdin, stdout
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	return child.StartWith(cmd, logPath, child.Options{Name: name, DeathSignal: syscall.SIGTERM})
}

// stopChild ends a child and whatever it forked (nginx's workers): SIGTERM first so that
// it can shut down cleanly, SIGKILL to its process group after stopGrace.
func stopChild(c *child.Process, log *slog.Logger) {
	if err := c.Stop(stopGrace); err != nil {
		log.Warn("stop child", "child", c.Name(), "err", err)
	}
}
