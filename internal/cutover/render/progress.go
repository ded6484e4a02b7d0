package render

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
)

// NewProgress returns a progress display on w: a table redrawn in place (with every gate's
// latest result) when w is a terminal, else one plain line per change of phase or step,
// so that CI logs stay readable; there a failed gate shows in the rollback's line, whose
// reason names it.
func NewProgress(w io.Writer, tty bool) cutover.Progress {
	if tty {
		return &ttyProgress{w: w}
	}
	return &lineProgress{w: w}
}

type lineProgress struct {
	mu   sync.Mutex
	w    io.Writer
	last string
}

func (p *lineProgress) Event(e cutover.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := fmt.Sprintf("%s/%d", e.Phase, e.Step)
	if key == p.last && (e.Phase == cutover.PhaseHolding || e.Phase == cutover.PhaseRetiring) {
		return
	}
	p.last = key
	fmt.Fprintf(p.w, "%s %s\n", time.Now().UTC().Format("15:04:05"), EventLine(e))
}

type ttyProgress struct {
	mu sync.Mutex
	w  io.Writer
	// rows are the lines of the table as last drawn; lines is how many of them are on
	// the screen to be redrawn (0 once the run is done: the last drawing stays).
	rows  []string
	lines int
}

func (p *ttyProgress) Event(e cutover.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rows := []string{EventLine(e)}
	for _, g := range e.Gates {
		mark := "ok  "
		switch {
		case !g.Pass:
			mark = "FAIL"
		case g.Pending:
			mark = "wait"
		}
		rows = append(rows, fmt.Sprintf("  %s %-16s %s", mark, g.Gate, g.Detail))
	}
	io.WriteString(p.w, p.erase()+draw(rows))
	p.rows = rows
	if e.Phase == cutover.PhaseDone {
		p.lines = 0
	} else {
		p.lines = len(rows)
	}
}

// erase moves up over the table on the screen and clears it.
func (p *ttyProgress) erase() string {
	return strings.Repeat("\x1b[1A\x1b[2K", p.lines)
}

func draw(rows []string) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString("\r" + r + "\n")
	}
	return b.String()
}

// LogWriter returns where log lines should be written while p shows a run: w itself,
// unless p redraws a table in place on a terminal that w shows on as well (stderr and
// stdout on one terminal). Then a line written straight to w would land below the table
// and the next redraw, which moves up over the table's lines only, would erase it and
// leave a stale row behind. The writer returned instead clears the table, writes the log
// line to w, and draws the table again below it: logs scroll above the table, on their
// own stream. Each Write must be whole lines, as slog's handlers write them.
func LogWriter(p cutover.Progress, w io.Writer) io.Writer {
	switch p := p.(type) {
	case *ttyProgress:
		return &aboveTable{p: p, w: w}
	case multiProgress:
		for _, q := range p {
			if lw := LogWriter(q, w); lw != w {
				return lw
			}
		}
	}
	return w
}

// aboveTable writes log lines above a ttyProgress's table.
type aboveTable struct {
	p *ttyProgress
	w io.Writer
}

func (a *aboveTable) Write(b []byte) (int, error) {
	a.p.mu.Lock()
	defer a.p.mu.Unlock()
	if a.p.lines == 0 {
		return a.w.Write(b)
	}
	if _, err := io.WriteString(a.p.w, a.p.erase()); err != nil {
		return 0, err
	}
	n, err := a.w.Write(b)
	// Drawn again even when the log write failed: the table was cleared.
	_, derr := io.WriteString(a.p.w, draw(a.p.rows))
	if err == nil {
		err = derr
	}
	return n, err
}

// EventLine renders an event as one line: "step 2/4  blue=50 green=50  holding, 1m20s left".
func EventLine(e cutover.Event) string {
	var parts []string
	if e.GatesSkipped {
		parts = append(parts, "[GATES SKIPPED]")
	}
	switch {
	case e.Total > 0 && e.Phase == cutover.PhaseRollingBack:
		parts = append(parts, fmt.Sprintf("rollback %d/%d", e.Step+1, e.Total))
	case e.Total > 0 && e.Phase != cutover.PhaseDone:
		parts = append(parts, fmt.Sprintf("step %d/%d", e.Step+1, e.Total))
	}
	if len(e.Weights) > 0 {
		parts = append(parts, cutover.FormatWeights(e.Weights))
	}
	phase := e.Phase
	if e.Left > 0 {
		phase += fmt.Sprintf(", %s left", e.Left.Round(time.Second))
	}
	parts = append(parts, phase)
	if e.Message != "" {
		parts = append(parts, e.Message)
	}
	return strings.Join(parts, "  ")
}

// MultiProgress shows every event on each of ps, in order: the terminal and the live
// view of `run --ui` see the same run.
func MultiProgress(ps ...cutover.Progress) cutover.Progress { return multiProgress(ps) }

type multiProgress []cutover.Progress

func (m multiProgress) Event(e cutover.Event) {
	for _, p := range m {
		p.Event(e)
	}
}
