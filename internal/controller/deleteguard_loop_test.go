package controller

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/metrics"
	"github.com/crossfade-io/crossfade/internal/source"
)

// TestControllerHeldDeletions: a controller whose objects all vanish holds the deletions
// (the records stay), says so once with a Warning event on its Pod and sets
// crossfade_deletions_held. With --allow-mass-delete (Syncer.Guard.Allow) the controller
// lets through, at its first reconcile only, the deletions the guard held before it
// started: a flag left in the Deployment lets no new mass deletion through.
func TestControllerHeldDeletions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("allow-mass-delete=%v", allow), func(t *testing.T) {
			e := newEnv(t)
			// What a wrong label filter leaves: one object of another team, none of these.
			other := &source.Snapshot{DNSEndpoints: []*source.DNSEndpoint{dnsEndpoint("other",
				source.DNSEndpointRecord{DNSName: "other.example.com", RecordType: "A", Targets: []string{"192.0.2.9"}})}}
			twenty := &source.Snapshot{DNSEndpoints: slices.Clone(other.DNSEndpoints)}
			for i := range 20 {
				twenty.DNSEndpoints = append(twenty.DNSEndpoints, dnsEndpoint(fmt.Sprintf("s%d", i),
					source.DNSEndpointRecord{DNSName: fmt.Sprintf("r%d.example.com", i), RecordType: "A", Targets: []string{"192.0.2.1"}}))
			}
			s := e.syncer(t, "blue", changes.Sync)
			s.QuietConflicts = true
			s.Guard.Allow = allow
			src, err := source.New(source.Config{})
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			rec := &recorded{}
			ev := NewEventReporter(rec, nil, 0, log)
			pod := PodReference("crossfade", "crossfade-0", "uid-pod")
			ev.SetController(pod)
			reg := prometheus.NewRegistry()
			held, err := metrics.NewDeletionsHeld(reg)
			if err != nil {
				t.Fatal(err)
			}
			obs := &statsObserver{}
			objs := &snapshots{snap: twenty}
			ctl, err := New(objs, Config{Syncer: s, Source: src, Events: ev, Observer: obs, Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			published := func() int {
				n := 0
				for _, r := range e.state(t) {
					if strings.Contains(r, " A ") && strings.HasPrefix(r, "r") {
						n++
					}
				}
				return n
			}
			type step struct {
				name      string
				snap      *source.Snapshot
				published int      // of the twenty records
				held      float64  // crossfade_deletions_held{zone="example.com"}
				events    []string // reasons sent on the Pod
			}
			steps := []step{
				{"publish", twenty, 20, 0, nil},
				{"the filter matches none", other, 20, 20, []string{ReasonDeletionsHeld}},
				{"still none: no new event", other, 20, 20, nil},
				{"back", twenty, 20, 0, nil},
				{"none again: news again", other, 20, 20, []string{ReasonDeletionsHeld}},
			}
			if allow {
				steps = []step{
					{"publish: the first reconcile spends the allowance", twenty, 20, 0, nil},
					{"the filter matches none: held, nobody was told of it before", other, 20, 20, []string{ReasonDeletionsHeld}},
				}
			}
			for _, st := range steps {
				rec.events = nil
				objs.set(st.snap)
				if _, err := ctl.ReconcileOnce(context.Background()); err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				last := obs.stats[len(obs.stats)-1]
				last.RecordHeld(held)
				if got := published(); got != st.published {
					t.Errorf("%s: %d of the 20 records published, want %d:\n%s", st.name, got, st.published, strings.Join(e.state(t), "\n"))
				}
				if got := gaugeValue(t, reg, metrics.NameDeletionsHeld); got != st.held {
					t.Errorf("%s: %s = %v, want %v", st.name, metrics.NameDeletionsHeld, got, st.held)
				}
				var reasons []string
				for _, ev := range rec.events {
					if ev.ref == *pod {
						reasons = append(reasons, ev.reason)
						if !strings.Contains(ev.m, "zone example.com") || !strings.Contains(ev.m, "20") {
							t.Errorf("%s: event message %q does not name the zone and the count", st.name, ev.m)
						}
					}
				}
				if !slices.Equal(reasons, st.events) {
					t.Errorf("%s: events on the Pod %q, want %q", st.name, reasons, st.events)
				}
			}
			if s.Guard.Allow || s.Guard.AllowRemembered {
				t.Errorf("the allowance was not spent: %+v", s.Guard)
			}
			if !allow {
				return
			}
			if !strings.Contains(logs.String(), "the guard is whole again") {
				t.Errorf("no log line says the guard is whole again:\n%s", logs.String())
			}
			// The operator, told by the event, restarts the controller with the flag: its first
			// reconcile lets through what was held, and only that.
			s2 := e.syncer(t, "blue", changes.Sync)
			s2.Guard.Allow = true
			ctl2, err := New(&snapshots{snap: other}, Config{Syncer: s2, Source: src, Events: ev, Observer: obs, Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ctl2.ReconcileOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := published(); got != 0 {
				t.Errorf("restarted with --allow-mass-delete: %d of the 20 records still published, want 0", got)
			}
			if _, mark := splitMarker(e.state(t)); len(mark) != 0 {
				t.Errorf("the guard's marker stayed after its deletions went: %q", mark)
			}
			if s2.Guard.Allow || s2.Guard.AllowRemembered {
				t.Errorf("the restarted controller's allowance was not spent: %+v", s2.Guard)
			}
		})
	}
}

// gaugeValue returns the value of the one series of the gauge name in reg, -1 when none.
func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}
