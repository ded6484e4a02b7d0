package cutover

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
)

// Phases of a cutover, as progress events name them.
const (
	PhaseLoweringTTL = "lowering-ttl"
	PhaseWriting     = "writing"
	PhaseHolding     = "holding"
	PhasePaused      = "paused"
	PhaseRollingBack = "rolling-back"
	// PhaseRestoringTTL writes back the TTL the members had before PhaseLoweringTTL.
	PhaseRestoringTTL = "restoring-ttl"
	PhaseRetiring     = "retiring"
	PhaseDone         = "done"
)

// Event is one moment of a run, for the terminal.
type Event struct {
	Phase string
	// Step is the 0-based step (or, in PhaseRollingBack, rollback stop); Total the number
	// of them, 0 in the TTL phases and the retire check, which are not steps.
	Step, Total int
	Weights     map[string]int64
	Gates       []gate.Result
	// Left is the time the current hold still needs.
	Left    time.Duration
	Message string
}

// Progress shows a run's events.
type Progress interface {
	Event(Event)
}

type discardProgress struct{}

func (discardProgress) Event(Event) {}

// NewProgress returns a progress display on w: a table redrawn in place (with every gate's
// latest result) when w is a terminal, else one plain line per change of phase or step,
// so that CI logs stay readable; there a failed gate shows in the rollback's line, whose
// reason names it.
func NewProgress(w io.Writer, tty bool) Progress {
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

func (p *lineProgress) Event(e Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := fmt.Sprintf("%s/%d", e.Phase, e.Step)
	if key == p.last && (e.Phase == PhaseHolding || e.Phase == PhaseRetiring) {
		return
	}
	p.last = key
	fmt.Fprintf(p.w, "%s %s\n", time.Now().UTC().Format("15:04:05"), describe(e))
}

type ttyProgress struct {
	mu    sync.Mutex
	w     io.Writer
	lines int
}

func (p *ttyProgress) Event(e Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	// Move up over the previous drawing and clear it.
	for range p.lines {
		b.WriteString("\x1b[1A\x1b[2K")
	}
	rows := []string{describe(e)}
	for _, g := range e.Gates {
		mark := "ok  "
		if !g.Pass {
			mark = "FAIL"
		}
		rows = append(rows, fmt.Sprintf("  %s %-16s %s", mark, g.Gate, g.Detail))
	}
	for _, r := range rows {
		b.WriteString("\r" + r + "\n")
	}
	if e.Phase == PhaseDone {
		p.lines = 0
	} else {
		p.lines = len(rows)
	}
	io.WriteString(p.w, b.String())
}

// describe renders an event as one line: "step 2/4  blue=50 green=50  holding, 1m20s left".
func describe(e Event) string {
	var parts []string
	switch {
	case e.Total > 0 && e.Phase == PhaseRollingBack:
		parts = append(parts, fmt.Sprintf("rollback %d/%d", e.Step+1, e.Total))
	case e.Total > 0 && e.Phase != PhaseDone:
		parts = append(parts, fmt.Sprintf("step %d/%d", e.Step+1, e.Total))
	}
	if len(e.Weights) > 0 {
		parts = append(parts, FormatWeights(e.Weights))
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
func MultiProgress(ps ...Progress) Progress { return multiProgress(ps) }

type multiProgress []Progress

func (m multiProgress) Event(e Event) {
	for _, p := range m {
		p.Event(e)
	}
}
