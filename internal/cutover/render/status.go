package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
)

// Status writes `cutover status`: the report, with a line saying which runner holds the
// cutover now (or, when none does, what continues an unfinished one), the commands
// queued for it, and its latest resume.
func Status(w io.Writer, s *cutover.Status) error {
	var rep strings.Builder
	if err := Report(&rep, s.Report); err != nil {
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
		fmt.Fprintf(&b, "  queued: %s by %s, sent at %s: %s\n", c.Name(), c.By, c.At.Format(time.RFC3339), queuedWhen(s))
	}
	if n := len(s.Resumes); n > 0 {
		fmt.Fprintf(&b, "  last %s\n", Resume(s.Resumes[n-1]))
	}
	b.WriteString(rest)
	_, err := io.WriteString(w, b.String())
	return err
}

// queuedWhen says when a queued command will be read.
func queuedWhen(s *cutover.Status) string {
	switch {
	case s.Outcome != "":
		return "the cutover has ended: no run will act on it"
	case s.Runner != nil:
		return "not yet read; its runner reads commands at every check, and once it has, the command is listed below with what it did"
	}
	return "not yet read; no runner holds the cutover: `crossfade cutover run --resume` reads it when it starts"
}
