package cutover

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"

	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// The Cloud Map lever moves only instances its owner owns (crossfade.io/owner, written by
// crossfade's publisher): against the sandbox's Cloud Map API through aws-sdk-go-v2, an
// instance of from or to without an owner, or a cluster with two owners, refuses the
// start, and one that appears during a run is never written, rollback included. These
// are its runs through the engine; the lever alone is lever/cloudmap's lever_test.go.

// ownerConfig is a Config for p over m's service, its status writes recorded.
func ownerConfig(t *testing.T, m *levertest.Owner, p *spec.Plan) Config {
	cfg := quietConfig(p, t.TempDir())
	cfg.Levers = cloudMapLevers(m.Client())
	return cfg
}

// TestCloudMapStartRefusesUnowned: an instance of from or to the clients' query selects
// that has no crossfade.io/owner is another registrar's, and a cluster whose instances
// two owners registered has two controllers: `cutover plan` and `cutover run` refuse the
// start, naming each instance, its cluster and the service, with the fix; nothing is
// written (no status, no authority tag). An unowned instance of a third cluster, which
// the cutover leaves as it is anyway, refuses nothing. Before, the lever selected
// instances by the cluster attribute alone and moved another registrar's instances.
func TestCloudMapStartRefusesUnowned(t *testing.T) {
	for _, tc := range []struct {
		name  string
		insts []levertest.Inst
		want  []string
	}{
		{"from unowned", []levertest.Inst{{ID: "blue-1", Cluster: "blue", Owner: "blue-ctl", Healthy: true}, {ID: "blue-2", Cluster: "blue", Owner: "", Healthy: true},
			{ID: "green-1", Cluster: "green", Owner: "green-ctl", Healthy: false}, {ID: "green-2", Cluster: "green", Owner: "green-ctl", Healthy: false}},
			[]string{"instance blue-2 of cluster blue in Cloud Map service apps/orders (", "has no crossfade.io/owner attribute",
				"register it through crossfade's publisher, or give it a cluster attribute the cutover does not move"}},
		{"to unowned", []levertest.Inst{{ID: "blue-1", Cluster: "blue", Owner: "blue-ctl", Healthy: true}, {ID: "blue-2", Cluster: "blue", Owner: "blue-ctl", Healthy: true},
			{ID: "green-1", Cluster: "green", Owner: "", Healthy: false}, {ID: "green-2", Cluster: "green", Owner: "", Healthy: false}},
			[]string{"instance green-1 of cluster green", "instance green-2 of cluster green", "has no crossfade.io/owner attribute"}},
		{"two owners", []levertest.Inst{{ID: "blue-1", Cluster: "blue", Owner: "blue-ctl", Healthy: true}, {ID: "blue-2", Cluster: "blue", Owner: "blue-ctl", Healthy: true},
			{ID: "green-1", Cluster: "green", Owner: "green-ctl", Healthy: false}, {ID: "green-2", Cluster: "green", Owner: "green-old", Healthy: false}},
			[]string{"cluster green in Cloud Map service apps/orders (", "has instances registered by 2 owners",
				"owner green-ctl (green-1)", "owner green-old (green-2)", "a cluster has one controller"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := levertest.NewOwner(t, tc.insts)
			before := m.Health(t)
			cfg := ownerConfig(t, m, levertest.CloudMapPlan("orders"))
			_, perr := DryRun(context.Background(), cfg)
			_, rerr := Run(context.Background(), cfg, false)
			for what, err := range map[string]error{"plan": perr, "run": rerr} {
				var nr *NotReadyError
				if !errors.As(err, &nr) {
					t.Fatalf("%s: %v, want the start refused (*NotReadyError)", what, err)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: refusal lacks %q:\n%v", what, w, err)
					}
				}
				if !strings.HasPrefix(err.Error(), "the Cloud Map service is not ready for this cutover:") {
					t.Errorf("%s: %v", what, err)
				}
			}
			calls := m.Calls()
			if len(calls) > 0 {
				t.Errorf("refused start wrote statuses: %v", calls)
			}
			if after := m.Health(t); !maps.Equal(before, after) {
				t.Errorf("health changed by a refused start: %v, was %v", after, before)
			}
			tags, err := m.API.ListTagsForResource(context.Background(), &sd.ListTagsForResourceInput{ResourceARN: aws.String(m.ServiceARN(t))})
			if err != nil {
				t.Fatal(err)
			}
			if len(tags.Tags) > 0 {
				t.Errorf("refused start tagged the service: %v", tags.Tags)
			}
		})
	}
}

// TestCloudMapOwnedRuns: every instance of blue and green owned (one owner each), and an
// unowned instance of a third cluster (grey) the clients' query also selects: the
// cutover runs as before, grey's instance never written, and ends with green's two
// HEALTHY, blue's two UNHEALTHY.
func TestCloudMapOwnedRuns(t *testing.T) {
	m := levertest.NewOwner(t, append(levertest.Owned(), levertest.Inst{ID: "grey-1", Cluster: "grey", Owner: "", Healthy: false}))
	cfg := ownerConfig(t, m, levertest.CloudMapPlan("orders"))
	rep, err := Run(context.Background(), cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != outcomeCompleted {
		t.Errorf("outcome %q, want %q", rep.Outcome, outcomeCompleted)
	}
	want := map[string]string{"blue-1": "UNHEALTHY", "blue-2": "UNHEALTHY", "green-1": "HEALTHY", "green-2": "HEALTHY", "grey-1": "UNHEALTHY"}
	if got := m.Health(t); !maps.Equal(got, want) {
		t.Errorf("health after the run: %v, want %v", got, want)
	}
	if w := m.Written("grey-1"); len(w) > 0 {
		t.Errorf("grey's unowned instance was written: %v", w)
	}
	if w := m.Written("green-1"); len(w) == 0 {
		t.Errorf("green-1 was never written")
	}
}

// TestCloudMapUnownedMidRunRollback: the runner end to end: an instance of green without
// crossfade.io/owner registered while step 1 holds is drift (Cloud Map makes it
// HEALTHY); spec.onDrift rollback rolls back to blue's two HEALTHY and green's owned two
// UNHEALTHY, leaving it HEALTHY (it is not the cutover's), and the report names it
// among what the rollback could not restore.
func TestCloudMapUnownedMidRunRollback(t *testing.T) {
	m := levertest.NewOwner(t, levertest.Owned())
	p := levertest.CloudMapPlan("orders")
	p.OnDrift = spec.DriftRollback
	p.Steps[0].Pause = 2 * time.Second
	cfg := ownerConfig(t, m, p)
	cfg.DriftInterval = 10 * time.Millisecond
	paths := PathsFor(cfg.StateDir, "orders")
	events, done := startRun(cfg, false)
	waitHolding(t, events, 0)
	m.Register(t, levertest.Inst{ID: "green-x", Cluster: "green", Owner: "", Healthy: true})
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end")
	}
	if err == nil || !strings.Contains(err.Error(), "instance green-x of green") || !strings.Contains(err.Error(), "rolled back") {
		t.Errorf("run: %v, want rolled back on the drift of green-x", err)
	}
	if w := m.Written("green-x"); len(w) > 0 {
		t.Errorf("green-x (no owner) was written: %v", w)
	}
	want := map[string]string{"blue-1": "HEALTHY", "blue-2": "HEALTHY", "green-1": "UNHEALTHY", "green-2": "UNHEALTHY", "green-x": "HEALTHY"}
	if got := m.Health(t); !maps.Equal(got, want) {
		t.Errorf("health after the rollback: %v, want %v", got, want)
	}
	if text := rolledBackReport(t, "orders", paths); !strings.Contains(text, "instance green-x of green") {
		t.Errorf("the report does not name green-x:\n%s", text)
	}
}
