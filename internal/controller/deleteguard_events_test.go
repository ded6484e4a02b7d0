package controller

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestWarnController: the controller's own problems are Warning events on its Pod, one per
// problem (reason, subject and message) until Reemit, again after it, and at once when a
// resolved problem comes back; without a Pod they are only logged, with the same
// discipline.
func TestWarnController(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	pod := PodReference("crossfade", "crossfade-7d9f-abcde", "uid-pod")
	type step struct {
		name string
		at   time.Duration
		do   func(r *EventReporter)
		want []string // reason: message
	}
	held := func(zone, msg string) func(r *EventReporter) {
		return func(r *EventReporter) { r.WarnControllerAbout(ReasonDeletionsHeld, zone, msg) }
	}
	steps := []step{
		{"held in a zone", 0, held("Z1", "zone a.com: 20 held"), []string{"DNSDeletionsHeld: zone a.com: 20 held"}},
		{"same, next reconcile", time.Second, held("Z1", "zone a.com: 20 held"), nil},
		{"another zone", 2 * time.Second, held("Z2", "zone b.com: 11 held"), []string{"DNSDeletionsHeld: zone b.com: 11 held"}},
		{"more held in a zone: a new problem", 3 * time.Second, held("Z1", "zone a.com: 21 held"), []string{"DNSDeletionsHeld: zone a.com: 21 held"}},
		{"still held after reemit", time.Hour + 4*time.Second, held("Z1", "zone a.com: 21 held"), []string{"DNSDeletionsHeld: zone a.com: 21 held"}},
		{"resolved", time.Hour + 5*time.Second, func(r *EventReporter) { r.ResolveController(ReasonDeletionsHeld, "Z1") }, nil},
		{"other zone unaffected by the resolution", time.Hour + 6*time.Second, held("Z2", "zone b.com: 11 held"), []string{"DNSDeletionsHeld: zone b.com: 11 held"}},
		{"back: news at once", time.Hour + 7*time.Second, held("Z1", "zone a.com: 21 held"), []string{"DNSDeletionsHeld: zone a.com: 21 held"}},
		{"another reason, no subject", time.Hour + 8*time.Second, func(r *EventReporter) { r.WarnController("DiscoveryFailing", "services: forbidden") },
			[]string{"DiscoveryFailing: services: forbidden"}},
		{"again", time.Hour + 9*time.Second, func(r *EventReporter) { r.WarnController("DiscoveryFailing", "services: forbidden") }, nil},
	}
	for _, inPod := range []bool{true, false} {
		rec := &recorded{}
		var logs bytes.Buffer
		r := NewEventReporter(rec, nil, time.Hour, slog.New(slog.NewTextHandler(&logs, nil)))
		if inPod {
			r.SetController(pod)
		}
		now := t0
		r.now = func() time.Time { return now }
		for _, s := range steps {
			rec.events = nil
			logs.Reset()
			now = t0.Add(s.at)
			s.do(r)
			var got []string
			for _, e := range rec.events {
				if e.typ != corev1.EventTypeWarning || e.ref != *pod {
					t.Errorf("%s: event %+v, want a Warning on %+v", s.name, e, *pod)
				}
				got = append(got, e.reason+": "+e.m)
			}
			if !inPod {
				if len(got) > 0 {
					t.Errorf("%s: not in a pod, sent %q", s.name, got)
				}
				// The log lines stand for the events.
				for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
					if l == "" {
						continue
					}
					reason, _, _ := strings.Cut(strings.SplitN(l, "reason=", 2)[1], " ")
					msg := strings.SplitN(l, "message=", 2)[1]
					got = append(got, reason+": "+strings.Trim(msg, `"`))
				}
			} else if n := strings.Count(logs.String(), "\n"); n != len(s.want) {
				t.Errorf("%s: %d log lines, want one per event (%d):\n%s", s.name, n, len(s.want), logs.String())
			}
			if !slices.Equal(got, s.want) {
				t.Errorf("in pod %v, %s: sent %q, want %q", inPod, s.name, got, s.want)
			}
		}
	}
	if PodReference("", "crossfade-0", "") != nil || PodReference("crossfade", "", "") != nil {
		t.Errorf("a Pod reference without name or namespace, want nil (not in a pod)")
	}
}
