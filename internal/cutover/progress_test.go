package cutover

import (
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
)

func TestProgress(t *testing.T) {
	holding := Event{Phase: PhaseHolding, Step: 1, Total: 4, Weights: map[string]int64{"blue": 90, "green": 10}, Left: 90 * time.Second,
		Gates: []gate.Result{{Gate: "answers", Pass: true, Detail: "blue 91%"}, {Gate: "errors", Pass: false, Detail: "0.2 > 0.1"}}}
	if got, want := describe(holding), "step 2/4  blue=90 green=10  holding, 1m30s left"; got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
	rb := Event{Phase: PhaseRollingBack, Step: 0, Total: 2, Weights: map[string]int64{"blue": 50, "green": 50}}
	if got := describe(rb); !strings.HasPrefix(got, "rollback 1/2  ") {
		t.Errorf("describe(rollback) = %q, want it labelled as a rollback stop", got)
	}

	var plain strings.Builder
	p := NewProgress(&plain, false)
	p.Event(holding)
	p.Event(holding) // the same hold again: no new line
	p.Event(Event{Phase: PhaseDone, Message: "cutover completed"})
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
