package cutover

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// Status is what `cutover status` shows: the cutover's report so far, and which process,
// if any, runs it now.
type Status struct {
	*Report
	// Runner is the process that holds the cutover's lock now; nil when none does. The
	// lock is an flock on this machine's state directory: a runner on another machine
	// (with its own journal) is not seen here.
	Runner *journal.Holder `json:"runner,omitempty"`
	// Journal is the journal the report was read from.
	Journal string `json:"journal"`
	// PlanFile names the plan file in the commands the text suggests; "" writes FILE.
	PlanFile string `json:"-"`
	// TornBytes is the length of a torn last line in the journal (a crash mid-write): not
	// an entry, and cut off by the next run; 0 when there is none.
	TornBytes int64 `json:"tornBytes,omitempty"`
	// Queued are the control commands sent and not yet read by a runner, oldest first:
	// once one is, the journal (Controls) says what it did with it, and when.
	Queued []Command `json:"queued,omitempty"`
}

// NotRunHereError says a cutover has no journal under the state directory looked in.
type NotRunHereError struct {
	Cutover, StateDir string
	Err               error
}

// Error names the cutover and the journal looked for, once: Err (the open's error)
// names the same file again and says only that it does not exist.
func (e *NotRunHereError) Error() string {
	return fmt.Sprintf("cutover %s has not run here: no journal at %s (is --state-dir the one its run used?)",
		e.Cutover, PathsFor(e.StateDir, e.Cutover).Journal)
}

// Unwrap gives the underlying error (os.ErrNotExist).
func (e *NotRunHereError) Unwrap() error { return e.Err }

// ReadStatus reads the status of the cutover named name from its journal and lock under
// the state directory dir. It takes no lock and writes nothing: it is safe while the
// cutover runs.
func ReadStatus(dir, name string) (*Status, error) {
	paths := PathsFor(dir, name)
	entries, torn, err := paths.store().Read()
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, &NotRunHereError{Cutover: name, StateDir: dir, Err: err}
	case err != nil:
		// A damaged journal is for a person to look at, not to be taken for "never ran".
		return nil, fmt.Errorf("cutover %s: %w", name, err)
	}
	st := &Status{Report: BuildReport(name, entries), Journal: paths.Journal, TornBytes: torn}
	seen := replay(entries).seen
	cmds, _ := readCommands(paths.Control)
	for _, c := range cmds {
		// A runner journals a command before it removes its file.
		if !seen[c.ID] {
			st.Queued = append(st.Queued, c)
		}
	}
	var locked *journal.LockedError
	switch err := paths.store().Held(); {
	case errors.As(err, &locked):
		st.Runner = &locked.Holder
	case err != nil:
		return nil, fmt.Errorf("cutover %s: %w", name, err)
	}
	return st, nil
}

// Name is how the journal and `status` name c: the command, and --skip-gates on a promote
// that skips the gates.
func (c Command) Name() string { return c.detail() }

// WriteJSON writes the status as JSON: the report's fields, with runner and journal.
func (s *Status) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
