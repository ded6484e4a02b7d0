package child

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/testenv"
)

// TestStop: Stop lets a child that heeds SIGTERM exit by itself, and
// kills one that does not once the grace is over, saying so. Real processes: sh and sleep.
func TestStop(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	testenv.LookPath(t, "sh", "dash")
	for _, tc := range []struct {
		name, script string
		grace        time.Duration
		wantErr      bool
	}{
		// The grace is a failure bound here: sleep dies of SIGTERM at once.
		{"heeds SIGTERM", "echo ready; exec sleep 300", time.Minute, false},
		// SIGTERM ignored, and still ignored after exec: only the kill ends it.
		{"ignores SIGTERM", `trap "" TERM; echo ready; exec sleep 300`, 200 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "log")
			p, err := Start(exec.Command("sh", "-c", tc.script), log)
			if err != nil {
				t.Fatal(err)
			}
			// The trap must be in place before the SIGTERM.
			for deadline := time.Now().Add(time.Minute); !strings.Contains(Tail(log, 1), "ready"); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					p.Stop(0)
					t.Fatalf("the script never got ready: %s", Tail(log, 5))
				}
			}
			err = p.Stop(tc.grace)
			if (err != nil) != tc.wantErr {
				t.Errorf("stop = %v, want error %v", err, tc.wantErr)
			}
			select {
			case <-p.Done():
			default:
				t.Fatal("stop returned before the process exited")
			}
			if again := p.Stop(tc.grace); !errors.Is(again, err) && again != err {
				t.Errorf("a second stop = %v, the first said %v", again, err)
			}
		})
	}
}

// TestStartWith: the options name the child in errors, a Stdout the caller set gets the
// child's output while its stderr goes to the log, and a child that ends by itself is
// described with the end of its log. Real processes: sh.
func TestStartWith(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	testenv.LookPath(t, "sh", "dash")
	log := filepath.Join(t.TempDir(), "log")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command("sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 3")
	cmd.Stdout = w
	p, err := StartWith(cmd, log, Options{Name: "the server"})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	select {
	case <-p.Done():
	case <-time.After(time.Minute):
		t.Fatal("sh did not exit")
	}
	if !p.Exited() {
		t.Error("Exited = false after Done")
	}
	buf := make([]byte, 64)
	n, _ := r.Read(buf)
	if got := string(buf[:n]); got != "to-stdout\n" {
		t.Errorf("stdout = %q, want the child's stdout only", got)
	}
	if got := p.Tail(5); got != "to-stderr" {
		t.Errorf("log = %q, want the child's stderr only", got)
	}
	err = p.ExitError()
	if !errors.Is(err, ErrExited) || !strings.HasPrefix(err.Error(), "the server exited on its own (exit status 3)") || !strings.HasSuffix(err.Error(), "\nto-stderr") {
		t.Errorf("ExitError = %v; want the name, the exit status and the log's end", err)
	}
}

// TestStopKillsOrphans: a child that exits on SIGTERM but leaves a process it forked
// behind (as a master whose workers outlive it) takes that one along when stopped.
func TestStopKillsOrphans(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	testenv.LookPath(t, "sh", "dash")
	testenv.File(t, "/proc/self/stat", "no /proc: no process groups to look at (Linux has one)")
	log := filepath.Join(t.TempDir(), "log")
	p, err := Start(exec.Command("sh", "-c", `trap "exit 0" TERM; sleep 300 & echo ready; wait`), log)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !strings.Contains(Tail(log, 1), "ready"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			p.Stop(0)
			t.Fatalf("the script never got ready: %s", Tail(log, 5))
		}
	}
	if err := p.Stop(time.Minute); err != nil {
		t.Fatalf("stop = %v, want a clean exit", err)
	}
	pgid := p.Pid()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		left := GroupMembers(pgid)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				if proc, err := os.FindProcess(pid); err == nil {
					_ = proc.Kill()
				}
			}
			t.Fatalf("processes %v of the child's group %d still ran after Stop", left, pgid)
		}
	}
}
