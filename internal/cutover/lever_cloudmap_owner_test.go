package cutover

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	sdtypes "github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/cloudmap"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// The Cloud Map lever moves only instances its owner owns (crossfade.io/owner, written by
// crossfade's publisher): against the sandbox's Cloud Map API through aws-sdk-go-v2, an
// instance of from or to without an owner, or a cluster with two owners, refuses the
// start, and one that appears during a run is never written, rollback included.

// cmInst is an instance to register: owner "" registers it without crossfade.io/owner.
type cmInst struct {
	id, cluster, owner string
	healthy            bool
}

// ownerCM is a Cloud Map service with custom health on a sandbox started for the test,
// its UpdateInstanceCustomHealthStatus calls recorded.
type ownerCM struct {
	api   *sd.Client
	svcID string
	mu    sync.Mutex
	calls []string // "id=STATUS" in the order sent
}

// owned is the usual fixture: blue-1, blue-2 HEALTHY and green-1, green-2 UNHEALTHY,
// each registered by its cluster's controller (owner blue-ctl, green-ctl).
func owned() []cmInst {
	return []cmInst{{"blue-1", "blue", "blue-ctl", true}, {"blue-2", "blue", "blue-ctl", true},
		{"green-1", "green", "green-ctl", false}, {"green-2", "green", "green-ctl", false}}
}

func newOwnerCM(t *testing.T, insts []cmInst) *ownerCM {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a sandbox; not in -short")
	}
	sb := sandboxtest.Start(t)
	m := &ownerCM{api: cloudmap.NewServiceDiscovery(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}, sb.APIURL())}
	svc := sandboxtest.CloudMapService(t, m.api, "apps", "", sd.CreateServiceInput{Name: aws.String("orders"),
		HealthCheckCustomConfig: &sdtypes.HealthCheckCustomConfig{}})
	m.svcID = aws.ToString(svc.Id)
	for _, in := range insts {
		m.register(t, in)
	}
	return m
}

// register registers in and sets its status (as its registrar would: the test's own
// client, not recorded).
func (m *ownerCM) register(t *testing.T, in cmInst) {
	t.Helper()
	ctx := context.Background()
	attrs := map[string]string{"AWS_INSTANCE_IPV4": "10.0.0.1", "cluster": in.cluster}
	if in.owner != "" {
		attrs[cloudmap.OwnerAttribute] = in.owner
	}
	if _, err := m.api.RegisterInstance(ctx, &sd.RegisterInstanceInput{ServiceId: aws.String(m.svcID), InstanceId: aws.String(in.id), Attributes: attrs}); err != nil {
		t.Fatal(err)
	}
	st := sdtypes.CustomHealthStatusHealthy
	if !in.healthy {
		st = sdtypes.CustomHealthStatusUnhealthy
	}
	if _, err := m.api.UpdateInstanceCustomHealthStatus(ctx, &sd.UpdateInstanceCustomHealthStatusInput{ServiceId: aws.String(m.svcID),
		InstanceId: aws.String(in.id), Status: st}); err != nil {
		t.Fatal(err)
	}
}

// health reads every instance's status as in effect: id → HEALTHY/UNHEALTHY.
func (m *ownerCM) health(t *testing.T) map[string]string {
	t.Helper()
	out, err := m.api.GetInstancesHealthStatus(context.Background(), &sd.GetInstancesHealthStatusInput{ServiceId: aws.String(m.svcID)})
	if err != nil {
		t.Fatal(err)
	}
	h := map[string]string{}
	for id, st := range out.Status {
		h[id] = string(st)
	}
	return h
}

// written returns the lever's UpdateInstanceCustomHealthStatus calls on id.
func (m *ownerCM) written(id string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, c := range m.calls {
		if strings.HasPrefix(c, id+"=") {
			out = append(out, c)
		}
	}
	return out
}

// client is the sandbox's client with the lever's status writes recorded.
func (m *ownerCM) client() cloudmap.ServiceDiscovery { return recordingSD{Client: m.api, m: m} }

type recordingSD struct {
	*sd.Client
	m *ownerCM
}

func (r recordingSD) UpdateInstanceCustomHealthStatus(ctx context.Context, in *sd.UpdateInstanceCustomHealthStatusInput, o ...func(*sd.Options)) (*sd.UpdateInstanceCustomHealthStatusOutput, error) {
	r.m.mu.Lock()
	r.m.calls = append(r.m.calls, aws.ToString(in.InstanceId)+"="+string(in.Status))
	r.m.mu.Unlock()
	return r.Client.UpdateInstanceCustomHealthStatus(ctx, in, o...)
}

// ownerPlan moves orders from blue to green in 50 and 100 % steps.
func ownerPlan() *spec.Plan {
	return &spec.Plan{Name: "orders", CloudMap: &spec.CloudMap{Namespace: "apps", Service: "orders", ClusterAttribute: "cluster", HealthStatus: "HEALTHY_OR_ELSE_ALL"},
		From: "blue", To: "green", Rollback: spec.PlanRollback{Mode: spec.RollbackImmediate}, OnDrift: spec.DriftPause,
		InSyncTimeout: 5 * time.Second, StepTimeout: 5 * time.Second,
		Steps: []spec.PlanStep{{Weights: spec.Weights{From: 50, To: 50}}, {Weights: spec.Weights{From: 0, To: 100}}}}
}

func (m *ownerCM) config(t *testing.T, p *spec.Plan) Config {
	cfg := quietConfig(p, t.TempDir())
	cfg.Levers = cloudMapLevers(m.client())
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
		insts []cmInst
		want  []string
	}{
		{"from unowned", []cmInst{{"blue-1", "blue", "blue-ctl", true}, {"blue-2", "blue", "", true},
			{"green-1", "green", "green-ctl", false}, {"green-2", "green", "green-ctl", false}},
			[]string{"instance blue-2 of cluster blue in Cloud Map service apps/orders (", "has no crossfade.io/owner attribute",
				"register it through crossfade's publisher, or give it a cluster attribute the cutover does not move"}},
		{"to unowned", []cmInst{{"blue-1", "blue", "blue-ctl", true}, {"blue-2", "blue", "blue-ctl", true},
			{"green-1", "green", "", false}, {"green-2", "green", "", false}},
			[]string{"instance green-1 of cluster green", "instance green-2 of cluster green", "has no crossfade.io/owner attribute"}},
		{"two owners", []cmInst{{"blue-1", "blue", "blue-ctl", true}, {"blue-2", "blue", "blue-ctl", true},
			{"green-1", "green", "green-ctl", false}, {"green-2", "green", "green-old", false}},
			[]string{"cluster green in Cloud Map service apps/orders (", "has instances registered by 2 owners",
				"owner green-ctl (green-1)", "owner green-old (green-2)", "a cluster has one controller"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newOwnerCM(t, tc.insts)
			before := m.health(t)
			cfg := m.config(t, ownerPlan())
			_, perr := Plan(context.Background(), cfg)
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
			m.mu.Lock()
			calls := slices.Clone(m.calls)
			m.mu.Unlock()
			if len(calls) > 0 {
				t.Errorf("refused start wrote statuses: %v", calls)
			}
			if after := m.health(t); !maps.Equal(before, after) {
				t.Errorf("health changed by a refused start: %v, was %v", after, before)
			}
			tags, err := m.api.ListTagsForResource(context.Background(), &sd.ListTagsForResourceInput{ResourceARN: aws.String(serviceARN(t, m))})
			if err != nil {
				t.Fatal(err)
			}
			if len(tags.Tags) > 0 {
				t.Errorf("refused start tagged the service: %v", tags.Tags)
			}
		})
	}
}

func serviceARN(t *testing.T, m *ownerCM) string {
	t.Helper()
	out, err := m.api.GetService(context.Background(), &sd.GetServiceInput{Id: aws.String(m.svcID)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.Service.Arn)
}

// TestCloudMapOwnedRuns: every instance of blue and green owned (one owner each), and an
// unowned instance of a third cluster (grey) the clients' query also selects: the
// cutover runs as before, grey's instance never written, and ends with green's two
// HEALTHY, blue's two UNHEALTHY.
func TestCloudMapOwnedRuns(t *testing.T) {
	m := newOwnerCM(t, append(owned(), cmInst{"grey-1", "grey", "", false}))
	cfg := m.config(t, ownerPlan())
	rep, err := Run(context.Background(), cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != outcomeCompleted {
		t.Errorf("outcome %q, want %q", rep.Outcome, outcomeCompleted)
	}
	want := map[string]string{"blue-1": "UNHEALTHY", "blue-2": "UNHEALTHY", "green-1": "HEALTHY", "green-2": "HEALTHY", "grey-1": "UNHEALTHY"}
	if got := m.health(t); !maps.Equal(got, want) {
		t.Errorf("health after the run: %v, want %v", got, want)
	}
	if w := m.written("grey-1"); len(w) > 0 {
		t.Errorf("grey's unowned instance was written: %v", w)
	}
	if w := m.written("green-1"); len(w) == 0 {
		t.Errorf("green-1 was never written")
	}
}

// TestCloudMapUnownedMidRunNeverWritten: instances that appear after the start, one
// without crossfade.io/owner in each cluster (blue-x HEALTHY, green-x HEALTHY, as Cloud
// Map registers them) and one of green registered by another owner (green-y), are never
// written: not by the step that makes every blue instance UNHEALTHY, not by a new
// process's first write (which sends every status it moves), not by the rollback that
// makes green UNHEALTHY again. The write's detail and a partial read's skipped lines
// name them; the share assignment counts green-x as the HEALTHY green instance it is:
// 50/50 leaves one owned green instance HEALTHY, and the clients' answer is 2 of 4
// green. Before, the lever selected them by their cluster attribute and wrote them.
func TestCloudMapUnownedMidRunNeverWritten(t *testing.T) {
	ctx := context.Background()
	m := newOwnerCM(t, owned())
	p := ownerPlan()
	lv := cloudmap.New(p, m.client(), cloudmap.Poll(5*time.Millisecond))
	started := ReadOptions{Runner: testRunner}
	s, err := lv.Read(ctx, started)
	if err != nil {
		t.Fatal(err)
	}
	if pr := lv.StartProblems(s); len(pr) > 0 {
		t.Fatalf("start refused: %v", pr)
	}
	start := s.Weights()
	for _, in := range []cmInst{{"blue-x", "blue", "", true}, {"green-x", "green", "", true}, {"green-y", "green", "green-old", true}} {
		m.register(t, in)
	}
	started.Started = true
	write := func(lv Lever, o ReadOptions, w map[string]int64) Written {
		t.Helper()
		s, err := lv.Read(ctx, o)
		if err != nil {
			t.Fatalf("read for %s: %v", FormatWeights(w), err)
		}
		wr, err := lv.Write(ctx, s, Change{Weights: w}, testEnv())
		if err != nil {
			t.Fatalf("write %s: %v", FormatWeights(w), err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if ok, err := lv.InEffect(ctx, wr); err != nil {
				t.Fatal(err)
			} else if ok {
				return wr
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not in effect after 10 s", FormatWeights(w))
			}
		}
	}
	// 50/50: green-x and green-y (HEALTHY, not moved) and one owned green instance make
	// 3 of green; blue's three (blue-x with them) make 3: 50 %.
	wr := write(lv, started, map[string]int64{"blue": 50, "green": 50})
	for _, id := range []string{"blue-x of blue HEALTHY", "green-x of green HEALTHY", "green-y of green HEALTHY"} {
		if !strings.Contains(wr.Detail, id) {
			t.Errorf("write detail does not name %s as left as it is: %s", id, wr.Detail)
		}
	}
	answer, err := gate.Discover(ctx, m.api, *p.CloudMap, "HEALTHY", false)
	if err != nil {
		t.Fatal(err)
	}
	if answer.ByCluster["blue"] != 3 || answer.ByCluster["green"] != 3 {
		t.Errorf("50/50 with blue-x, green-x and green-y HEALTHY answers %v (%v), want blue 3 and green 3", answer.ByCluster, answer.Instances)
	}
	// 0/100 makes every blue instance the lever moves UNHEALTHY.
	write(lv, started, map[string]int64{"blue": 0, "green": 100})
	// The rollback (a partial read) back to the start.
	partial := started
	partial.Partial = true
	s, err = lv.Read(ctx, partial)
	if err != nil {
		t.Fatal(err)
	}
	sk := strings.Join(s.Skipped(), "\n")
	for _, w := range []string{"instance blue-x of blue", "instance green-x of green", "has no crossfade.io/owner attribute",
		"instance green-y of green in Cloud Map service apps/orders (", "is owner green-old's, and green's instances are owner green-ctl's"} {
		if !strings.Contains(sk, w) {
			t.Errorf("the rollback's read does not name %q among the instances it leaves out:\n%s", w, sk)
		}
	}
	write(lv, partial, start)
	want := map[string]string{"blue-1": "HEALTHY", "blue-2": "HEALTHY", "green-1": "UNHEALTHY", "green-2": "UNHEALTHY",
		"blue-x": "HEALTHY", "green-x": "HEALTHY", "green-y": "HEALTHY"}
	if h := m.health(t); !maps.Equal(h, want) {
		t.Errorf("health after the rollback: %v, want %v", h, want)
	}
	// A new process (an abort's, a resume's) sends every status it moves at its first
	// write: still none of the unowned ones. (green-y first deregistered: a new process
	// cannot tell which of green's two owners is its controller, see below.)
	if _, err := m.api.DeregisterInstance(ctx, &sd.DeregisterInstanceInput{ServiceId: aws.String(m.svcID), InstanceId: aws.String("green-y")}); err != nil {
		t.Fatal(err)
	}
	delete(want, "green-y")
	rb := cloudmap.New(p, m.client(), cloudmap.Poll(5*time.Millisecond))
	write(rb, partial, start)
	for _, id := range []string{"blue-x", "green-x", "green-y"} {
		if w := m.written(id); len(w) > 0 {
			t.Errorf("instance %s (not the cutover's) was written: %v", id, w)
		}
	}
	if w := m.written("green-1"); len(w) < 2 {
		t.Errorf("the new process's first write did not send green-1's status again: %v", w)
	}
	if h := m.health(t); !maps.Equal(h, want) {
		t.Errorf("health after the new process's write: %v, want %v", h, want)
	}
	// A new process that finds green with two owners does not guess: a run's read refuses,
	// naming both; a rollback's leaves green's instances out, naming them.
	m.register(t, cmInst{"green-y", "green", "green-old", true})
	rc := cloudmap.New(p, m.client())
	_, err = rc.Read(ctx, started)
	var nr *NotReadyError
	if !errors.As(err, &nr) || !strings.Contains(err.Error(), "owner green-ctl (green-1, green-2), owner green-old (green-y)") {
		t.Errorf("a resumed run's read with green's two owners: %v, want refused naming both", err)
	}
	s, err = cloudmap.New(p, m.client()).Read(ctx, partial)
	if err != nil {
		t.Fatal(err)
	}
	if sk := strings.Join(s.Skipped(), "\n"); !strings.Contains(sk, "instance green-1 of green") || !strings.Contains(sk, "does not guess") {
		t.Errorf("a rollback's read with green's two owners leaves out:\n%s", sk)
	}
}

// TestCloudMapUnownedMidRunRollback: the runner end to end: an instance of green without
// crossfade.io/owner registered while step 1 holds is drift (Cloud Map makes it
// HEALTHY); spec.onDrift rollback rolls back to blue's two HEALTHY and green's owned two
// UNHEALTHY, leaving it HEALTHY (it is not the cutover's), and the report names it
// among what the rollback could not restore.
func TestCloudMapUnownedMidRunRollback(t *testing.T) {
	m := newOwnerCM(t, owned())
	p := ownerPlan()
	p.OnDrift = spec.DriftRollback
	p.Steps[0].Pause = 2 * time.Second
	cfg := m.config(t, p)
	cfg.DriftInterval = 10 * time.Millisecond
	paths := PathsFor(cfg.StateDir, "orders")
	events, done := startRun(cfg, false)
	waitHolding(t, events, 0)
	m.register(t, cmInst{"green-x", "green", "", true})
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end")
	}
	if err == nil || !strings.Contains(err.Error(), "instance green-x of green") || !strings.Contains(err.Error(), "rolled back") {
		t.Errorf("run: %v, want rolled back on the drift of green-x", err)
	}
	if w := m.written("green-x"); len(w) > 0 {
		t.Errorf("green-x (no owner) was written: %v", w)
	}
	want := map[string]string{"blue-1": "HEALTHY", "blue-2": "HEALTHY", "green-1": "UNHEALTHY", "green-2": "UNHEALTHY", "green-x": "HEALTHY"}
	if got := m.health(t); !maps.Equal(got, want) {
		t.Errorf("health after the rollback: %v, want %v", got, want)
	}
	entries, _ := journal.Read(paths.Journal)
	rep := BuildReport("orders", entries)
	var b strings.Builder
	_ = rep.WriteText(&b)
	if rep.Outcome != outcomeRolledBack || !strings.Contains(b.String(), "instance green-x of green") {
		t.Errorf("outcome %q; the report does not name green-x:\n%s", rep.Outcome, b.String())
	}
}
