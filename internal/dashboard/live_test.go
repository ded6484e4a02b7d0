package dashboard

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// eventLog is a cutover.Progress that keeps the events it is shown.
type eventLog struct {
	mu     sync.Mutex
	events []cutover.Event
}

func (l *eventLog) Event(e cutover.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

// TestServeLive: `run --ui`'s dashboard shows the lever the plan pulls (as the lever
// factory decides it) from the start, and is fed the same events as the terminal's
// progress, which still gets them all; a refused address leaves the progress alone.
func TestServeLive(t *testing.T) {
	for _, tc := range []struct {
		name      string
		plan      *spec.Plan
		terminal  bool // cfg.Progress set before, as `run` sets the terminal's
		wantLever string
	}{
		{"route53", &spec.Plan{Name: "app", From: "blue", To: "green"}, true, lever.Route53},
		{"alb", &spec.Plan{Name: "app", From: "blue", To: "green", ALB: &spec.ALB{}}, true, lever.ALB},
		{"cloud map", &spec.Plan{Name: "app", From: "blue", To: "green", CloudMap: &spec.CloudMap{}}, true, lever.CloudMap},
		{"no terminal progress", &spec.Plan{Name: "app", From: "blue", To: "green"}, false, lever.Route53},
	} {
		t.Run(tc.name, func(t *testing.T) {
			term := &eventLog{}
			cfg := cutover.Config{Plan: tc.plan}
			if tc.terminal {
				cfg.Progress = term
			}
			url, stop, err := ServeLive(t.Context(), &cfg, "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			cfg.Progress.Event(cutover.Event{Phase: cutover.PhaseHolding, Step: 0, Total: 2, Weights: map[string]int64{"blue": 50, "green": 50}, Message: "step 1 of 2"})
			resp, err := http.Get(url + "api/v1/state")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var st State
			if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
				t.Fatal(err)
			}
			if st.Lever != tc.wantLever || st.Cutover != "app" || st.Current.Message != "step 1 of 2" {
				t.Errorf("state: lever %q, cutover %q, message %q; want lever %q, cutover app, the event's message", st.Lever, st.Cutover, st.Current.Message, tc.wantLever)
			}
			if tc.terminal && len(term.events) != 1 {
				t.Errorf("the terminal's progress got %d events, want 1", len(term.events))
			}
		})
	}
	cfg := cutover.Config{Plan: &spec.Plan{Name: "app"}, Progress: &eventLog{}}
	before := cfg.Progress
	if _, _, err := ServeLive(t.Context(), &cfg, "0.0.0.0:0"); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("ServeLive(0.0.0.0:0) = %v, want a refusal naming loopback", err)
	}
	if cfg.Progress != before {
		t.Error("a refused dashboard replaced the progress")
	}
}
