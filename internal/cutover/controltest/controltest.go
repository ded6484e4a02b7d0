// Package controltest is a stand-in for a cutover's runner, for tests of the sending side
// of the control protocol (cutover.Control and the CLI commands on it): it holds the
// cutover's lock and journal as a started runner does, and journals the commands that
// arrive in its control directory as the runner's poll would.
//
// It does not import package cutover, whose own tests use it: callers name the files
// (cutover.PathsFor's), and the journal kinds it writes are cutover's, spelled here (the
// cutover package's tests check that they agree).
package controltest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// The journal entries a Runner writes, as a real runner writes them.
const (
	// KindStart is the kind of a run's first entry.
	KindStart = "start"
	// KindControl is the kind of the entry that records what became of a command.
	KindControl = "control"
	// StepNone is the step of an entry that is not a step's.
	StepNone = -1
	// By is who a Runner's lock says holds the cutover.
	By = "runner@test"
)

// poll is how often a Runner looks in its control directory.
const poll = 10 * time.Millisecond

// Cutover names the files of the cutover a Runner holds (those of cutover.PathsFor).
type Cutover struct {
	// Name is the cutover's name, as its lock's holder records it.
	Name string
	// Lock, Journal and Control are its lock file, journal file and control directory.
	Lock, Journal, Control string
}

// command is the part of a command file (cutover.Command) a Runner reads.
type command struct {
	ID      string `json:"id"`
	Command string `json:"command"`
	By      string `json:"by"`
}

// Runner holds a started cutover's lock as its runner does, and journals each command
// that arrives with the detail its answer gives it (none: it never reads them), as the
// runner's poll would. It stands in for the runner's side of the protocol only: it never
// moves traffic.
type Runner struct {
	c      Cutover
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// mu guards j and lock: Stop runs from StopOnceSent's goroutine and from t.Cleanup.
	mu   sync.Mutex
	j    *journal.Journal
	lock *journal.Lock
}

// Start starts cutover c (a start entry at blue 100, green 0) and holds it until Stop or
// the end of the test. With answer nil it never reads the commands sent to it; otherwise
// it journals each as acted on or ignored with the detail answer(command) gives.
func Start(t testing.TB, c Cutover, answer func(command string) string) *Runner {
	t.Helper()
	lock, err := journal.Acquire(c.Lock, journal.Holder{By: By, Cutover: c.Name})
	if err != nil {
		t.Fatalf("stub runner of cutover %s: %v", c.Name, err)
	}
	j, _, err := journal.Open(c.Journal)
	if err != nil {
		lock.Release()
		t.Fatalf("stub runner of cutover %s: %v", c.Name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{c: c, lock: lock, j: j, cancel: cancel}
	t.Cleanup(r.Stop)
	if _, err := j.Append(journal.Entry{Kind: KindStart, Step: StepNone, Weights: map[string]int64{"blue": 100, "green": 0}}); err != nil {
		t.Fatalf("stub runner of cutover %s: start entry: %v", c.Name, err)
	}
	if answer == nil {
		return r
	}
	r.wg.Go(func() {
		for ctx.Err() == nil {
			r.answer(t, answer)
			select {
			case <-ctx.Done():
			case <-time.After(poll):
			}
		}
	})
	return r
}

// answer journals each command in the control directory with answer's detail, and
// removes its file, as a runner's poll does.
func (r *Runner) answer(t testing.TB, answer func(string) string) {
	des, _ := os.ReadDir(r.c.Control)
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), ".json") || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		file := filepath.Join(r.c.Control, de.Name())
		data, err := os.ReadFile(file)
		var c command
		// A file still being written or not a command: the next poll looks again, as
		// a runner's does.
		if err != nil || json.Unmarshal(data, &c) != nil {
			continue
		}
		if _, err := r.j.Append(journal.Entry{Kind: KindControl, Step: StepNone, By: c.By, Detail: answer(c.Command), ID: c.ID}); err != nil {
			t.Errorf("stub runner of cutover %s: journal command %s: %v", r.c.Name, c.ID, err)
		}
		// The sender may have removed it first (a cutover that had ended): gone is done.
		if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stub runner of cutover %s: remove command file: %v", r.c.Name, err)
		}
	}
}

// Stop ends the runner and lets go of the lock, as a runner that exits. It is safe to
// call more than once, and from any goroutine.
func (r *Runner) Stop() {
	r.cancel()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.j != nil {
		r.j.Close()
		r.lock.Release()
		r.j = nil
	}
}

// StopOnceSent stops r (lets go of the lock) a second after a command has landed in its
// control directory, without reading it: long after the sender, which looks for a runner
// right after sending, found this one (stopping at once would race that look, and the
// sender would rightly say no runner held it). Its watcher ends with the test.
func (r *Runner) StopOnceSent(t testing.TB) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			if des, _ := os.ReadDir(r.c.Control); len(des) > 0 {
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
				r.Stop()
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(poll):
			}
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}
