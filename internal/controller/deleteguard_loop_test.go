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

	"github.com/crossfade-io/crossfade/internal/metrics"
	"github.com/crossfade-io/crossfade/internal/plan"
	"github.com/crossfade-io/crossfade/internal/source"
)

// TestControllerHeldDeletions: a controller whose objects all vanish holds the deletions
// (the records stay), says so once with a Warning event on its Pod and sets
// crossfade_deletions_held; a Syncer told to allow mass deletions (--allow-mass-delete)
// lets them through once, at the first reconcile that would hold some, and holds again
// after.
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
			// The same, and other's record changed: its replacement goes with the first sync, the
			// deletions with the second, and both are counted.
			moved := &source.Snapshot{DNSEndpoints: []*source.DNSEndpoint{dnsEndpoint("other",
				source.DNSEndpointRecord{DNSName: "other.example.com", RecordType: "A", Targets: []string{"192.0.2.10"}})}}
			twenty := &source.Snapshot{DNSEndpoints: slices.Clone(other.DNSEndpoints)}
			for i := range 20 {
				twenty.DNSEndpoints = append(twenty.DNSEndpoints, dnsEndpoint(fmt.Sprintf("s%d", i),
					source.DNSEndpointRecord{DNSName: fmt.Sprintf("r%d.example.com", i), RecordType: "A", Targets: []string{"192.0.2.1"}}))
			}
			s := e.syncer(t, "blue", plan.Sync)
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
					{"publish: nothing held, the allowance stands", twenty, 20, 0, nil},
					{"the filter matches none: let through once", moved, 0, 0, nil},
					{"back", twenty, 20, 0, nil},
					{"none again: held, the allowance is spent", other, 20, 20, []string{ReasonDeletionsHeld}},
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
				if allow && strings.HasPrefix(st.name, "the filter matches none") {
					if last.Written[plan.Delete] < 20 || last.Written[plan.Create] < 1 {
						t.Errorf("%s: written %v, want the first sync's replacement of other and the second's 20 deletions", st.name, last.Written)
					}
					if !strings.Contains(logs.String(), "the guard is on again") {
						t.Errorf("%s: no log line says the guard is on again:\n%s", st.name, logs.String())
					}
				}
			}
			if s.Guard.Allow {
				t.Errorf("the allowance was not spent")
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
