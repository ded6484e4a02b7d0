package cutover

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

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

// Error names the cutover and where it was looked for.
func (e *NotRunHereError) Error() string {
	return fmt.Sprintf("cutover %s has not run here (no journal under state dir %s): %v", e.Cutover, e.StateDir, e.Err)
}

// Unwrap gives the underlying error (os.ErrNotExist).
func (e *NotRunHereError) Unwrap() error { return e.Err }

// ReadStatus reads the status of the cutover named name from its journal and lock under
// the state directory dir. It takes no lock and writes nothing: it is safe while the
// cutover runs.
func ReadStatus(dir, name string) (*Status, error) {
	paths := PathsFor(dir, name)
	entries, torn, err := journal.ReadTail(paths.Journal)
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
	switch err := journal.Held(paths.Lock); {
	case errors.As(err, &locked):
		st.Runner = &locked.Holder
	case err != nil:
		return nil, fmt.Errorf("cutover %s: %w", name, err)
	}
	return st, nil
}

// WriteText writes the status: the report, with a line saying which runner holds the
// cutover now (or, when none does, what continues an unfinished one), and its latest
// resume.
func (s *Status) WriteText(w io.Writer) error {
	var rep strings.Builder
	if err := s.Report.WriteText(&rep); err != nil {
		return err
	}
	head, rest, _ := strings.Cut(rep.String(), "\n")
	file := s.PlanFile
	if file == "" {
		file = "FILE"
	}
	var b strings.Builder
	b.WriteString(head + "\n")
	switch {
	case s.Runner != nil:
		fmt.Fprintf(&b, "  runner now: %s\n", s.Runner)
	case s.Outcome == "" && s.Started.IsZero():
		// The journal has no start entry: its runner stopped before writing anything.
		fmt.Fprintf(&b, "  runner now: none on this machine; the cutover wrote nothing yet: `crossfade cutover run --resume %s` starts it\n", file)
	case s.Outcome == "" && s.RollingBack:
		fmt.Fprintf(&b, "  runner now: none on this machine; the rollback stopped unfinished: "+
			"`crossfade cutover run --resume %s` (or `crossfade cutover abort %s`) finishes it\n", file, file)
	case s.Outcome == "":
		fmt.Fprintf(&b, "  runner now: none on this machine; the run stopped unfinished: "+
			"`crossfade cutover run --resume %s` continues it, `crossfade cutover abort %s` rolls it back\n", file, file)
	default:
		b.WriteString("  runner now: none (the cutover has ended)\n")
	}
	if s.TornBytes > 0 {
		fmt.Fprintf(&b, "  the journal %s ends in a torn line of %d bytes (a crash mid-write): not an entry, its action was never taken; the next run cuts it off\n", s.Journal, s.TornBytes)
	}
	for _, c := range s.Queued {
		fmt.Fprintf(&b, "  queued: %s by %s, sent at %s: %s\n", c.detail(), c.By, c.At.Format(time.RFC3339), s.queuedWhen())
	}
	if n := len(s.Resumes); n > 0 {
		fmt.Fprintf(&b, "  last %s\n", s.Resumes[n-1])
	}
	b.WriteString(rest)
	_, err := io.WriteString(w, b.String())
	return err
}

// queuedWhen says when a queued command will be read.
func (s *Status) queuedWhen() string {
	switch {
	case s.Outcome != "":
		return "the cutover has ended: no run will act on it"
	case s.Runner != nil:
		return "not yet read; its runner reads commands at every check, and once it has, the command is listed below with what it did"
	}
	return "not yet read; no runner holds the cutover: `crossfade cutover run --resume` reads it when it starts"
}

// WriteJSON writes the status as JSON: the report's fields, with runner and journal.
func (s *Status) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
