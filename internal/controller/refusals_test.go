package controller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// TestRefusalsHoldBackARefusedName: a name Route 53 refuses (an alias to a target that
// does not exist) is not sent again at every reconcile: it is held back, reported as
// refused with when it will be tried, retried once its backoff ends (which then
// doubles), and sent at once when its object asks for something else.
func TestRefusalsHoldBackARefusedName(t *testing.T) {
	e := newEnv(t)
	res := endpoint.Labels{endpoint.ResourceLabel: "service/default/dangling"}
	dangling := &endpoint.Endpoint{Name: "dangling.example.com", Type: "A", Targets: endpoint.NewTargets("missing.example.com"), Labels: res}
	dangling.SetProp(endpoint.PropAlias, "true")
	ok := &endpoint.Endpoint{Name: "ok.example.com", Type: "A", Targets: endpoint.NewTargets("192.0.2.1"),
		Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/ok"}}

	now := time.Unix(1_700_000_000, 0)
	s := e.syncer(t, "blue", changes.Sync)
	s.Refusals = &Refusals{Min: time.Minute, Max: 4 * time.Minute, Now: func() time.Time { return now }}
	writes := func() int { return sandboxtest.APICalls(t, e.sb)["ChangeResourceRecordSets InvalidChangeBatch"] }
	sync := func(desired ...*endpoint.Endpoint) *Report {
		t.Helper()
		rep, err := s.Sync(context.Background(), desired)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	steps := []struct {
		name        string
		advance     time.Duration
		desired     []*endpoint.Endpoint
		wantRefused int // refused calls sent in this step
	}{
		{"first refusal: the batch, then the name alone", 0, []*endpoint.Endpoint{ok, dangling}, 2},
		{"held back", 30 * time.Second, []*endpoint.Endpoint{ok, dangling}, 0},
		{"backoff over: sent again", 31 * time.Second, []*endpoint.Endpoint{ok, dangling}, 1},
		{"backoff doubled: still held", 90 * time.Second, []*endpoint.Endpoint{ok, dangling}, 0},
		{"backoff over again", 31 * time.Second, []*endpoint.Endpoint{ok, dangling}, 1},
	}
	for _, st := range steps {
		now = now.Add(st.advance)
		before := writes()
		rep := sync(st.desired...)
		if got := writes() - before; got != st.wantRefused {
			t.Errorf("%s: %d refused calls, want %d", st.name, got, st.wantRefused)
		}
		if rep.Refused() != 1 {
			t.Errorf("%s: %d names reported refused, want 1 (the held one too)", st.name, rep.Refused())
		}
	}
	// The object changes what it asks for: sent at once, no backoff.
	fixed := dangling.Clone()
	fixed.Targets = endpoint.NewTargets("ok.example.com")
	before := writes()
	if rep := sync(ok, fixed); rep.Refused() != 0 || rep.Err() != nil {
		t.Errorf("fixed object: refused %d, err %v", rep.Refused(), rep.Err())
	}
	if writes() != before {
		t.Errorf("fixed object refused again")
	}
}

// staleListing is a provider whose listing of one record set is always stale: it shows
// name with an old value whatever the zone holds, as a read path lagging behind Route 53
// (or a writer that keeps putting the value back) would.
type staleListing struct {
	provider.Provider
	name  string
	shown endpoint.Targets
}

func (s *staleListing) Records(ctx context.Context, z provider.Zone) ([]*endpoint.Endpoint, error) {
	recs, err := s.Provider.Records(ctx, z)
	for _, r := range recs {
		if r.Name == s.name && r.Type == endpoint.TypeA {
			r.Targets = s.shown
		}
	}
	return recs, err
}

// TestMovedRefusalThatRepeatsIsHeldBack: a change refused as "another writer moved the
// records" is sent again at the next sync, planned from a fresh listing; but the very same
// change refused so movedRepeats times in a row is held back like any refusal, so that a
// listing that disagrees with Route 53 does not cost a refused write and a re-list at
// every reconcile for months.
func TestMovedRefusalThatRepeatsIsHeldBack(t *testing.T) {
	e := newEnv(t)
	res := endpoint.Labels{endpoint.ResourceLabel: "service/default/web"}
	web := &endpoint.Endpoint{Name: "web.example.com", Type: "A", Targets: endpoint.NewTargets("192.0.2.1"), Labels: res}
	e.sync(t, "blue", changes.Sync, web)
	// The zone holds .9 now (another writer); the listing keeps showing .1.
	e.sync(t, "blue", changes.Sync, &endpoint.Endpoint{Name: "web.example.com", Type: "A", Targets: endpoint.NewTargets("192.0.2.9"), Labels: res})
	now := time.Unix(1_700_000_000, 0)
	s := e.syncer(t, "blue", changes.Sync)
	s.Provider = &staleListing{Provider: e.p, name: "web.example.com", shown: endpoint.NewTargets("192.0.2.1")}
	s.Refusals = &Refusals{Min: time.Minute, Max: 4 * time.Minute, Now: func() time.Time { return now }}
	wanted := web.Clone()
	wanted.Targets = endpoint.NewTargets("192.0.2.2")
	refusedCalls := func() int { return sandboxtest.APICalls(t, e.sb)["ChangeResourceRecordSets InvalidChangeBatch"] }

	var sent []int
	var advice string
	for range 20 {
		now = now.Add(10 * time.Second)
		before := refusedCalls()
		rep, err := s.Sync(context.Background(), []*endpoint.Endpoint{wanted})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Refused() != 1 {
			t.Fatalf("%d names reported refused, want 1 (held or not)", rep.Refused())
		}
		sent = append(sent, refusedCalls()-before)
		advice = rep.Zones[0].Refused[0].Advice
	}
	// A sync every 10 s: three refusals as "moved" (10, 20, 30 s), the third holding it
	// for a minute; sent once more at 90 s and refused, now held for two.
	want := []int{1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if !slices.Equal(sent, want) {
		t.Errorf("refused calls per sync %v, want %v", sent, want)
	}
	if !strings.Contains(advice, "3 times in a row") || !strings.Contains(advice, "sent again after") {
		t.Errorf("advice of the held change: %q", advice)
	}
}
