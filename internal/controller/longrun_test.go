package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/metrics"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
	"github.com/crossfade-io/crossfade/internal/source"
)

// The tests of this file run a controller as it runs for months: reconcile after
// reconcile, through throttled listings, with problems that stand.

// throttled fails the zone list or a zone's listing while told to, as Route 53 does when
// ListHostedZones or ListResourceRecordSets is throttled.
type throttled struct {
	provider.Provider
	zones, records atomic.Bool
}

var errThrottled = errors.New("operation error Route 53: ListResourceRecordSets, exceeded maximum number of attempts, 3, api error Throttling: Rate exceeded")

func (p *throttled) Zones(ctx context.Context) ([]provider.Zone, error) {
	if p.zones.Load() {
		return nil, errThrottled
	}
	return p.Provider.Zones(ctx)
}

func (p *throttled) Records(ctx context.Context, z provider.Zone) ([]*endpoint.Endpoint, error) {
	if p.records.Load() {
		return nil, errThrottled
	}
	return p.Provider.Records(ctx, z)
}

// snapshots is an objects source whose snapshot the test sets; it never signals a change
// (the tests call ReconcileOnce themselves).
type snapshots struct {
	mu   sync.Mutex
	snap *source.Snapshot
}

func (s *snapshots) Changed() <-chan struct{} { return nil }
func (s *snapshots) Snapshot() (*source.Snapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap, true
}
func (s *snapshots) set(snap *source.Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap = snap
}

// statsObserver keeps every reconcile's Stats, and exports them into real metrics as
// crossfade controller's observer does.
type statsObserver struct {
	m     *metrics.Metrics
	stats []Stats
}

func (o *statsObserver) Reconciled(s Stats) {
	o.stats = append(o.stats, s)
	if o.m == nil {
		return
	}
	s.Record(o.m)
}

// gauges renders the gauges a failed listing must leave alone, series by series.
func gauges(t *testing.T, m *metrics.Metrics) map[string]float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		// The time of the last successful reconcile moves on by design.
		if mf.GetType() != dto.MetricType_GAUGE || !strings.HasPrefix(mf.GetName(), "crossfade_") ||
			mf.GetName() == "crossfade_last_successful_reconcile_timestamp_seconds" {
			continue
		}
		for _, s := range mf.Metric {
			var labels []string
			for _, l := range s.Label {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			out[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = s.GetGauge().GetValue()
		}
	}
	return out
}

// dnsEndpoint is a DNSEndpoint wanting one record, with provider-specific properties given
// as name, value pairs.
func dnsEndpoint(name string, rec source.DNSEndpointRecord, props ...string) *source.DNSEndpoint {
	de := &source.DNSEndpoint{}
	de.Namespace, de.Name = "team", name
	for i := 0; i+1 < len(props); i += 2 {
		rec.ProviderSpecific = append(rec.ProviderSpecific, source.ProviderSpecificProp{Name: props[i], Value: props[i+1]})
	}
	de.Spec.Endpoints = []*source.DNSEndpointRecord{&rec}
	return de
}

// TestFailedListingForgetsNothing: a controller in a steady state with 20 conflicts and 1
// refused name goes through a throttled zone listing, then a throttled zone list. Neither
// says anything about the problems, so neither may make the controller forget them: the
// reconciles after send no event again, send the refused name no sooner than its backoff
// says, and the gauges stay as they were all along.
func TestFailedListingForgetsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	e := newEnv(t)
	var green []*endpoint.Endpoint
	snap := &source.Snapshot{}
	for i := range 20 {
		n := fmt.Sprintf("c%d.example.com", i)
		green = append(green, &endpoint.Endpoint{Name: n, Type: "A", Targets: endpoint.NewTargets("192.0.2.1")})
		snap.DNSEndpoints = append(snap.DNSEndpoints, dnsEndpoint(fmt.Sprintf("s%d", i),
			source.DNSEndpointRecord{DNSName: n, RecordType: "A", Targets: []string{"192.0.2.2"}}))
	}
	e.sync(t, "green", changes.Sync, green...)
	snap.DNSEndpoints = append(snap.DNSEndpoints, dnsEndpoint("dangling",
		source.DNSEndpointRecord{DNSName: "dangling.example.com", RecordType: "A", Targets: []string{"missing.example.com"}},
		endpoint.PropAlias, "true"))

	now := time.Unix(1_700_000_000, 0)
	p := &throttled{Provider: e.p}
	s := e.syncer(t, "blue", changes.Sync)
	s.Provider = p
	s.Refusals = &Refusals{Now: func() time.Time { return now }}
	s.QuietConflicts = true
	src, err := source.New(source.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorded{}
	obs := &statsObserver{m: metrics.New()}
	ctl, err := New(&snapshots{snap: snap}, Config{Syncer: s, Source: src, Events: NewEventReporter(rec, nil, 0, nil), Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	refusedCalls := func() int { return sandboxtest.APICalls(t, e.sb)["ChangeResourceRecordSets InvalidChangeBatch"] }

	steps := []struct {
		name           string
		zones, records bool // throttled
		wantEvents     int
		wantErr        bool
	}{
		{"first reconcile", false, false, 21, false},
		{"steady", false, false, 0, false},
		{"zone listing throttled", false, true, 0, true},
		{"after the throttled listing", false, false, 0, false},
		{"zone list throttled", true, false, 0, true},
		{"after the throttled zone list", false, false, 0, false},
	}
	var steady map[string]float64
	var steadyStats Stats
	for i, st := range steps {
		p.zones.Store(st.zones)
		p.records.Store(st.records)
		rec.events = nil
		before := refusedCalls()
		_, err := ctl.ReconcileOnce(context.Background())
		if (err != nil) != st.wantErr {
			t.Fatalf("%s: err %v, want an error: %v", st.name, err, st.wantErr)
		}
		sent := refusedCalls() - before
		t.Logf("%-30s events %2d, refused calls %d", st.name, len(rec.events), sent)
		if len(rec.events) != st.wantEvents {
			t.Errorf("%s: %d events sent, want %d: %v", st.name, len(rec.events), st.wantEvents, rec.events)
		}
		if i > 0 && sent != 0 {
			t.Errorf("%s: the refused name was sent again %d times within its backoff", st.name, sent)
		}
		got := gauges(t, obs.m)
		last := obs.stats[len(obs.stats)-1]
		switch i {
		case 0:
			if last.Conflicts != 21 || last.Refused != 1 {
				t.Fatalf("first reconcile: %d conflicts, %d refused; want 21 and 1", last.Conflicts, last.Refused)
			}
		case 1:
			steady, steadyStats = got, last
		default:
			if !maps.Equal(got, steady) {
				t.Errorf("%s: gauges changed:\n got %v\nwant %v", st.name, got, steady)
			}
			if last.Conflicts != steadyStats.Conflicts || last.Refused != steadyStats.Refused ||
				!maps.Equal(last.Desired, steadyStats.Desired) || !maps.Equal(last.ZoneNames, steadyStats.ZoneNames) {
				t.Errorf("%s: stats %+v, want the steady state's %+v", st.name, last, steadyStats)
			}
		}
		now = now.Add(10 * time.Second)
	}
}

// countingHandler counts the log records of one message at Info or above.
type countingHandler struct {
	msg string
	n   atomic.Int64
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelInfo && r.Message == h.msg {
		h.n.Add(1)
	}
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// TestAdjustedRecordReportedOnce: a record written otherwise than its object asks (a
// weighted member asking for another TTL than its group's) is reported as conflicts are:
// one event and one log line while it stands, not a warning at every reconcile.
func TestAdjustedRecordReportedOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	e := newEnv(t)
	e.sync(t, "green", changes.Sync, svc("w.example.com", "192.0.2.1", "green", 1))
	snap := &source.Snapshot{DNSEndpoints: []*source.DNSEndpoint{dnsEndpoint("w", source.DNSEndpointRecord{
		DNSName: "w.example.com", RecordType: "A", Targets: []string{"192.0.2.2"}, SetIdentifier: "blue", RecordTTL: 300},
		"aws/weight", "1")}}
	h := &countingHandler{msg: "written otherwise than asked"}
	log := slog.New(h)
	s := e.syncer(t, "blue", changes.Sync)
	s.QuietConflicts = true
	s.Logger = log
	src, err := source.New(source.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorded{}
	ctl, err := New(&snapshots{snap: snap}, Config{Syncer: s, Source: src, Events: NewEventReporter(rec, nil, 0, log), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		rep, err := ctl.ReconcileOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Notes()) != 1 {
			t.Fatalf("notes %v, want the TTL note", rep.Notes())
		}
	}
	t.Logf("10 reconciles: %d events, %d log lines", len(rec.events), h.n.Load())
	if len(rec.events) != 1 || h.n.Load() != 1 {
		t.Fatalf("10 reconciles with one record written otherwise than asked: %d events and %d log lines, want 1 and 1", len(rec.events), h.n.Load())
	}
	ev := rec.events[0]
	if ev.reason != ReasonAdjusted || ev.typ != corev1.EventTypeWarning || ev.ref.Kind != "DNSEndpoint" || ev.ref.Name != "w" ||
		!strings.Contains(ev.m, "published with TTL 60") {
		t.Errorf("event %+v", ev)
	}
}

var sentAgainAfter = regexp.MustCompile(`sent again after (\S+),`)

// TestRefusedNameOneEventPerBackoff: a name the provider refuses, reconciled every 10 s for
// 6 h, yields one event per refusal (its message says when it is sent again, so holding it
// back says nothing new), and every message's promise of a resend is kept: the name is
// sent at the first reconcile at or after the time the message names, never before.
func TestRefusedNameOneEventPerBackoff(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox; 2,160 reconciles")
	}
	e := newEnv(t)
	dangling := &endpoint.Endpoint{Name: "dangling.example.com", Type: "A", Targets: endpoint.NewTargets("missing.example.com"),
		Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/dangling"}}
	dangling.SetProp(endpoint.PropAlias, "true")
	start := time.Unix(1_700_000_000, 0)
	now := start
	s := e.syncer(t, "blue", changes.Sync)
	s.Refusals = &Refusals{Now: func() time.Time { return now }}
	rec := &recorded{}
	r := NewEventReporter(rec, nil, 0, nil)
	refusedCalls := func() int { return sandboxtest.APICalls(t, e.sb)["ChangeResourceRecordSets InvalidChangeBatch"] }

	const step = 10 * time.Second
	end := start.Add(6 * time.Hour)
	var sends []time.Time
	var promised []time.Time // the resend time of each event, in order
	var unpromised, wrongPromise int
	for ; now.Before(end); now = now.Add(step) {
		before := refusedCalls()
		rep, err := s.Sync(context.Background(), []*endpoint.Endpoint{dangling})
		if err != nil {
			t.Fatal(err)
		}
		if refusedCalls() > before {
			sends = append(sends, now)
		}
		n := len(rec.events)
		r.Report(source.Result{Endpoints: []*endpoint.Endpoint{dangling}}, rep, now)
		for _, ev := range rec.events[n:] {
			if strings.Contains(ev.m, "next sync sends") {
				if wrongPromise++; wrongPromise == 1 {
					t.Errorf("at %s: %q promises the next sync sends it, but the name is held back", now.Sub(start), ev.m)
				}
			}
			m := sentAgainAfter.FindStringSubmatch(ev.m)
			if m == nil {
				if unpromised++; unpromised == 1 {
					t.Errorf("at %s: event %q does not say when the name is sent again", now.Sub(start), ev.m)
				}
				continue
			}
			at, err := time.Parse(time.RFC3339, m[1])
			if err != nil {
				t.Fatal(err)
			}
			promised = append(promised, at)
		}
	}
	t.Logf("6 h, one refused name every %s: %d refusals (backoff cycles), %d events (%d saying the next sync sends it, %d not saying when it is sent)",
		step, len(sends), len(rec.events), wrongPromise, unpromised)
	if len(rec.events) > len(sends)+1 {
		t.Errorf("%d events for %d refusals; want at most %d", len(rec.events), len(sends), len(sends)+1)
	}
	// Each promise is kept by the first send at or after it, within one reconcile.
	for _, p := range promised {
		if !p.Before(end) {
			continue
		}
		kept := false
		for _, s := range sends {
			if !s.Before(p) && s.Before(p.Add(step)) {
				kept = true
			}
		}
		if !kept {
			t.Errorf("an event promised a resend after %s; sends at %v", p.Sub(start), sends)
		}
	}
	// And no send comes before the promise of the event before it.
	for i, s := range sends[1:] {
		if i < len(promised) && s.Before(promised[i]) {
			t.Errorf("send %d at %s, before the promised %s", i+1, s.Sub(start), promised[i].Sub(start))
		}
	}
}

// TestInvalidSeriesBounded: objects naming properties or annotations crossfade does not
// know, each with another name, make one series of crossfade_invalid_objects per kind, not
// one per name: names are user input, and the series are never deleted.
func TestInvalidSeriesBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	e := newEnv(t)
	src, err := source.New(source.Config{})
	if err != nil {
		t.Fatal(err)
	}
	objs := &snapshots{snap: &source.Snapshot{}}
	obs := &statsObserver{m: metrics.New()}
	ctl, err := New(objs, Config{Syncer: e.syncer(t, "blue", changes.Sync), Source: src, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.ReconcileOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	base := seriesByKind(t, obs.m)
	const n = 50
	for i := range n {
		// One object after another, each naming something else, as a user fixing typos.
		de := dnsEndpoint(fmt.Sprintf("x%d", i), source.DNSEndpointRecord{DNSName: "a.example.com", RecordType: "A", Targets: []string{"192.0.2.1"}},
			fmt.Sprintf("aws/typo-%d", i), "1")
		sv := &corev1.Service{}
		sv.Namespace, sv.Name = "default", fmt.Sprintf("web%d", i)
		sv.Annotations = map[string]string{source.PrefixAlpha + fmt.Sprintf("aws-typo-%d", i): "1"}
		objs.set(&source.Snapshot{DNSEndpoints: []*source.DNSEndpoint{de}, Services: []*corev1.Service{sv}})
		if _, err := ctl.ReconcileOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := obs.stats[len(obs.stats)-1].Invalid; len(got) != 2 {
			t.Fatalf("object %d: invalid %v, want one DNSEndpoint and one Service problem", i, got)
		}
	}
	after := seriesByKind(t, obs.m)
	t.Logf("%d distinct unknown names per kind: series by kind %v (before %v)", n, after, base)
	for _, kind := range []string{"DNSEndpoint", "Service"} {
		if added := after[kind] - base[kind]; added > 1 {
			t.Errorf("%s: %d distinct unknown names made %d series, want at most 1", kind, n, added)
		}
	}
}

func seriesByKind(t *testing.T, m *metrics.Metrics) map[string]int {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, mf := range mfs {
		if mf.GetName() != metrics.NameInvalidObjects {
			continue
		}
		for _, s := range mf.Metric {
			for _, l := range s.Label {
				if l.GetName() == "kind" {
					out[l.GetValue()]++
				}
			}
		}
	}
	return out
}
