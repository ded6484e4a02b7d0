package render

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
)

func TestProgress(t *testing.T) {
	holding := cutover.Event{Phase: cutover.PhaseHolding, Step: 1, Total: 4, Weights: map[string]int64{"blue": 90, "green": 10}, Left: 90 * time.Second,
		Gates: []gate.Result{{Gate: "answers", Pass: true, Detail: "blue 91%"}, {Gate: "errors", Pass: false, Detail: "0.2 > 0.1"}}}
	if got, want := EventLine(holding), "step 2/4  blue=90 green=10  holding, 1m30s left"; got != want {
		t.Errorf("EventLine = %q, want %q", got, want)
	}
	rb := cutover.Event{Phase: cutover.PhaseRollingBack, Step: 0, Total: 2, Weights: map[string]int64{"blue": 50, "green": 50}}
	if got := EventLine(rb); !strings.HasPrefix(got, "rollback 1/2  ") {
		t.Errorf("EventLine(rollback) = %q, want it labelled as a rollback stop", got)
	}

	var plain strings.Builder
	p := NewProgress(&plain, false)
	p.Event(holding)
	p.Event(holding) // the same hold again: no new line
	p.Event(cutover.Event{Phase: cutover.PhaseDone, Message: "cutover completed"})
	if lines := strings.Split(strings.TrimSpace(plain.String()), "\n"); len(lines) != 2 || strings.Contains(plain.String(), "\x1b") {
		t.Errorf("plain output:\n%s", plain.String())
	}

	var tty strings.Builder
	p = NewProgress(&tty, true)
	p.Event(holding)
	p.Event(holding)
	out := tty.String()
	// The second drawing first moves up over the three lines of the first.
	if strings.Count(out, "\x1b[1A\x1b[2K") != 3 || !strings.Contains(out, "FAIL errors") || !strings.Contains(out, "ok   answers") {
		t.Errorf("tty output %q", out)
	}
}

// screen is a terminal's screen as far as the progress table drives it: text, "\r",
// "\n", cursor up (ESC [1A) and clear line (ESC [2K).
type screen struct {
	lines    [][]rune
	row, col int
}

func (s *screen) Write(b []byte) (int, error) {
	text := string(b)
	for len(text) > 0 {
		switch {
		case strings.HasPrefix(text, "\x1b[1A"):
			s.row, text = max(s.row-1, 0), text[4:]
			continue
		case strings.HasPrefix(text, "\x1b[2K"):
			if s.row < len(s.lines) {
				s.lines[s.row] = nil
			}
			text = text[4:]
			continue
		}
		r := []rune(text)[0]
		text = text[len(string(r)):]
		switch r {
		case '\r':
			s.col = 0
		case '\n':
			s.row, s.col = s.row+1, 0
		default:
			for len(s.lines) <= s.row {
				s.lines = append(s.lines, nil)
			}
			for len(s.lines[s.row]) <= s.col {
				s.lines[s.row] = append(s.lines[s.row], ' ')
			}
			s.lines[s.row][s.col] = r
			s.col++
		}
	}
	return len(b), nil
}

func (s *screen) String() string {
	var out []string
	for _, l := range s.lines {
		out = append(out, strings.TrimRight(string(l), " "))
	}
	return strings.Join(out, "\n")
}

// TestLogsDoNotBreakTheTable: with stdout and stderr on one terminal, log lines written
// while the table is drawn stay on the screen, whole, above the table, and the table is
// drawn once, not left behind in stale rows.
func TestLogsDoNotBreakTheTable(t *testing.T) {
	term := &screen{}
	p := NewProgress(term, true)
	log := slog.New(slog.NewTextHandler(LogWriter(p, term), &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	gates := []gate.Result{{Gate: "answers", Pass: true, Detail: "green 10%"}, {Gate: "errors", Pass: true, Detail: "0.01"}}
	hold := func(step int, left time.Duration) cutover.Event {
		return cutover.Event{Phase: cutover.PhaseHolding, Step: step, Total: 4, Weights: map[string]int64{"blue": 90, "green": 10}, Gates: gates, Left: left}
	}
	p.Event(hold(1, 3*time.Second))
	log.Info("weights written", "step", "step 2 of 4")
	p.Event(hold(1, 2*time.Second))
	log.Warn("the zone changed under the write")
	p.Event(hold(1, time.Second))
	want := strings.Join([]string{
		`level=INFO msg="weights written" step="step 2 of 4"`,
		`level=WARN msg="the zone changed under the write"`,
		"step 2/4  blue=90 green=10  holding, 1s left",
		"  ok   answers          green 10%",
		"  ok   errors           0.01",
	}, "\n")
	if got := term.String(); got != want {
		t.Errorf("screen:\n%s\nwant:\n%s", got, want)
	}
	// Not on a terminal there is no table to keep clear: logs go to their writer as is.
	var plain strings.Builder
	if w := LogWriter(NewProgress(&plain, false), os.Stderr); w != os.Stderr {
		t.Errorf("LogWriter for plain lines wraps the log writer")
	}
	// The live view beside the table does not hide it.
	if w := LogWriter(MultiProgress(nopProgress{}, p), os.Stderr); w == io.Writer(os.Stderr) {
		t.Errorf("LogWriter does not find the table in a MultiProgress")
	}
}

// nopProgress stands for the live view beside the table.
type nopProgress struct{}

func (nopProgress) Event(cutover.Event) {}
