package controller

import (
	"context"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/plan"
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
	s := e.syncer(t, "blue", plan.Sync)
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
