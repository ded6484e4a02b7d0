package controller

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kcache "k8s.io/client-go/tools/cache"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider/cache"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
	"github.com/crossfade-io/crossfade/internal/source"
)

// memServices is an in-memory Service cache that notes changes as the Watcher does (the
// subject is the controller's incremental path, not Kubernetes).
type memServices struct {
	changed chan struct{}

	mu       sync.Mutex
	services map[string]*corev1.Service
	log      changeLog
}

func newMemServices() *memServices {
	return &memServices{changed: make(chan struct{}, 1), services: map[string]*corev1.Service{}}
}

func (m *memServices) Changed() <-chan struct{} { return m.changed }

func (m *memServices) Snapshot() (*source.Snapshot, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	snap := &source.Snapshot{}
	for _, k := range slices.Sorted(mapKeys(m.services)) {
		snap.Services = append(snap.Services, m.services[k])
	}
	return snap, true
}

func (m *memServices) TakeChanges() ObjectChanges { return m.log.take() }

func (m *memServices) Service(key string) (*corev1.Service, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	svc, ok := m.services[key]
	return svc, ok
}

func (m *memServices) Complete() bool        { return true }
func (m *memServices) FollowsServices() bool { return true }

// put stores svc (nil: deletes default/name) and notes the change.
func (m *memServices) put(name string, svc *corev1.Service) {
	m.mu.Lock()
	if svc == nil {
		old := m.services["default/"+name]
		delete(m.services, "default/"+name)
		m.mu.Unlock()
		if old != nil {
			m.log.add(kcache.DeletedFinalStateUnknown{Key: "default/" + name, Obj: old})
		}
		return
	}
	m.services["default/"+name] = svc
	m.mu.Unlock()
	m.log.add(svc)
}

// other notes a change of an object of another kind.
func (m *memServices) other() { m.log.add(&corev1.Node{}) }

func lbService(name, hosts, ip string, ann map[string]string) *corev1.Service {
	a := map[string]string{"external-dns.alpha.kubernetes.io/hostname": hosts}
	for k, v := range ann {
		a[k] = v
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Annotations: a},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
		Status:     corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: ip}}}},
	}
}

// planLines renders a zone's plan (its changes in any batching, conflicts, notes, kept
// records and summary) for comparison.
func planLines(set *changes.Set) []string {
	var out []string
	for _, b := range set.Batches {
		for _, c := range b {
			e := c.Endpoint
			out = append(out, fmt.Sprintf("change %s %s ttl=%d %v labels=%v props=%v", c.Action, e, e.TTL, e.Policy, e.Labels, e.ProviderSpecific))
		}
	}
	slices.Sort(out)
	for _, list := range []struct {
		what string
		cs   []changes.Conflict
	}{{"conflict", set.Conflicts}, {"note", set.Notes}, {"kept", set.Kept}} {
		for _, c := range list.cs {
			out = append(out, fmt.Sprintf("%s %s: %s (%s)", list.what, c.Key, c.Reason, c.Advice))
		}
	}
	s := set.Summary
	return append(out, fmt.Sprintf("summary create=%d update=%d delete=%d replace=%d held=%d kept=%d", s.Create, s.Update, s.Delete, s.Replace, s.Held, s.Kept))
}

func recordLines(recs []*endpoint.Endpoint) []string {
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%s ttl=%d %v props=%v", r, r.TTL, r.Policy, r.ProviderSpecific))
	}
	slices.Sort(out)
	return out
}

func resultLines(r source.Result) []string {
	var out []string
	for _, e := range r.Endpoints {
		out = append(out, fmt.Sprintf("record %s ttl=%d %v by %s", e, e.TTL, e.Policy, e.Resource()))
	}
	for _, e := range r.Invalid {
		out = append(out, "invalid "+e.Error())
	}
	for _, h := range r.Held {
		out = append(out, "held "+h)
	}
	for _, p := range r.Pending {
		out = append(out, "pending "+p.String())
	}
	for _, s := range r.Skipped {
		out = append(out, "skipped "+s.String())
	}
	return out
}

// TestIncrementalEqualsFull drives a controller through random Service events (fixed
// seeds) against the sandbox, and checks after every event that what the reconcile planned
// (incremental or not) is the plan a full reconcile makes from scratch of the same objects
// and zone, that the source's result it keeps is the full one, and that its copy of the
// zone is what the zone cache lists. The events include load balancer names (alias A
// records, both ownership forms) and moves between them and addresses. The changes it
// follows (a Service's address, TTL or names added) must take the incremental path.
func TestIncrementalEqualsFull(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t)
			zones := cache.New(e.p, cache.Config{Resync: time.Hour})
			reg, src := incParts(t)
			syncer := &Syncer{Provider: zones, Registry: reg, Policy: changes.Sync, ManagedTypes: changes.DefaultManagedTypes, Refusals: &Refusals{}}
			objs := newMemServices()
			ctl, err := New(objs, Config{Syncer: syncer, Source: src, Interval: time.Hour, Incremental: true})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(seed, 32))
			ip := func() string { return fmt.Sprintf("10.%d.%d.%d", rng.IntN(256), rng.IntN(256), 1+rng.IntN(254)) }
			// elb is a load balancer's name, as an AWS load balancer Service's status gives
			// it: its records are aliases (A, with both ownership forms).
			elb := func() string {
				return fmt.Sprintf("k8s-default-lb%d-%d.elb.us-east-1.amazonaws.com", rng.IntN(4), rng.IntN(1000))
			}
			// lb, when set, is the Service's load balancer name instead of its ip.
			type svcState struct{ hosts, ip, lb, ttl string }
			state := map[string]*svcState{}
			put := func(name string) {
				s := state[name]
				if s == nil {
					objs.put(name, nil)
					return
				}
				ann := map[string]string{}
				if s.ttl != "" {
					ann["external-dns.alpha.kubernetes.io/ttl"] = s.ttl
				}
				svc := lbService(name, s.hosts, s.ip, ann)
				if s.lb != "" {
					svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{Hostname: s.lb}}
				}
				objs.put(name, svc)
			}
			for i := range 24 {
				name := fmt.Sprintf("svc-%d", i)
				state[name] = &svcState{hosts: fmt.Sprintf("h%d.example.com", i), ip: ip()}
				put(name)
			}
			// A record set no controller owns, beside a name a Service may want.
			if err := zones.Apply(ctx, e.zone, changes.Batch{{Action: changes.Create,
				Endpoint: &endpoint.Endpoint{Name: "h30.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.1"}, TTL: 60}}}); err != nil {
				t.Fatal(err)
			}
			pick := func() string {
				names := slices.Sorted(mapKeys(state))
				return names[rng.IntN(len(names))]
			}
			// alone says whether n's records are its own: no other Service wants one of
			// its names (their records are merged or conflict), and its input is valid.
			alone := func(n string) bool {
				if state[n].ttl == "bad" {
					return false
				}
				for o, s := range state {
					for _, h := range strings.Split(s.hosts, ",") {
						if o != n && slices.Contains(strings.Split(state[n].hosts, ","), h) {
							return false
						}
					}
				}
				return true
			}
			followed, incremental, aliasPlans := 0, 0, 0
			for step := range 80 {
				var what string
				follows := false // a change the incremental path must take
				invalidated := false
				switch k := rng.IntN(10); {
				case step == 0:
					what = "first reconcile"
				case k < 4 && rng.IntN(3) == 0:
					// An alias: a new load balancer name, or the first (the records' type and
					// form change: the full path may take it; the plan must be the same).
					n := pick()
					state[n].lb, what = elb(), "new load balancer name of "+n
					put(n)
				case k < 4:
					n := pick()
					// From an address to another, the incremental path must follow; from a
					// load balancer name, the alias is replaced and it may not.
					follows = alone(n) && state[n].lb == ""
					state[n].ip, state[n].lb, what = ip(), "", "new address of "+n
					put(n)
				case k == 4:
					n := pick()
					follows = alone(n)
					state[n].ttl, what = fmt.Sprint(60+rng.IntN(3)*60), "new TTL of "+n
					put(n)
				case k == 5:
					n := fmt.Sprintf("svc-%d", 24+step)
					// Some new Services want a name another one wants, or the unowned one.
					host := fmt.Sprintf("h%d.example.com", rng.IntN(32))
					state[n] = &svcState{hosts: host, ip: ip()}
					what = "new " + n + " at " + host
					put(n)
				case k == 6:
					n := pick()
					delete(state, n)
					what = "deleted " + n
					put(n)
				case k == 7:
					n := pick()
					state[n].hosts += fmt.Sprintf(",x%d.example.com", step)
					what = "one more name for " + n
					put(n)
				case k == 8 && step%2 == 0:
					n := pick()
					state[n].ttl, what = "bad", "invalid TTL of "+n
					put(n)
				case k == 8:
					// Another writer deletes one of the controller's records, and the hold
					// prober has the zone listed again: no object changed, yet the record
					// must come back.
					listed, err := e.p.Records(ctx, e.zone)
					if err != nil {
						t.Fatal(err)
					}
					var batch changes.Batch
					for _, r := range listed {
						if r.Type == endpoint.TypeA && strings.HasPrefix(r.Name, "h") && r.Name != "h30.example.com" {
							batch = append(batch, changes.Change{Action: changes.Delete, Endpoint: r})
							break
						}
					}
					if err := e.p.Apply(ctx, e.zone, batch); err != nil {
						t.Fatal(err)
					}
					zones.Invalidate(e.zone.ID)
					what, invalidated = "the zone changed by another writer and invalidated", true
				default:
					objs.other()
					what = "an object of another kind"
				}
				snap, _ := objs.Snapshot()
				res := src.Endpoints(snap)
				// The zone as the full path would read it: the cache's, unless it was
				// invalidated, which the cache's Records would hide by listing it again.
				read := zones.Records
				if invalidated {
					read = e.p.Records
				}
				current, err := read(ctx, e.zone)
				if err != nil {
					t.Fatal(err)
				}
				want := changes.Calculate(changes.Input{Desired: zones.AdjustEndpoints(res.Endpoints), Current: current, Registry: reg,
					Policy: changes.Sync, ManagedTypes: changes.DefaultManagedTypes, Zone: e.zone.Name, Keep: res.Held})
				rep, err := ctl.ReconcileOnce(ctx)
				if err != nil {
					t.Fatalf("step %d (%s): %v", step, what, err)
				}
				if rep.Incremental {
					incremental++
				}
				if follows {
					followed++
					if !rep.Incremental {
						t.Errorf("step %d (%s): the full path ran", step, what)
					}
				}
				if got, want := planLines(rep.Zones[0].Changes), planLines(want); !slices.Equal(got, want) {
					t.Fatalf("step %d (%s, incremental %v): plan\n%s\nwant the full plan\n%s", step, what, rep.Incremental,
						strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if slices.ContainsFunc(planLines(want), func(l string) bool { return strings.Contains(l, "alias:true") }) {
					aliasPlans++
				}
				if ctl.inc == nil {
					continue
				}
				if got, want := resultLines(ctl.inc.res), resultLines(res); !slices.Equal(got, want) {
					t.Fatalf("step %d (%s): kept result\n%s\nwant\n%s", step, what, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				listed, err := zones.Records(ctx, e.zone)
				if err != nil {
					t.Fatal(err)
				}
				var copied []*endpoint.Endpoint
				for _, recs := range ctl.inc.mirrors[e.zone.ID].byName {
					copied = append(copied, recs...)
				}
				if got, want := recordLines(copied), recordLines(listed); !slices.Equal(got, want) {
					t.Fatalf("step %d (%s): zone copy\n%s\nwant the cache's\n%s", step, what, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
			if followed == 0 || incremental < followed {
				t.Errorf("%d incremental reconciles for %d followed changes", incremental, followed)
			}
			if aliasPlans == 0 {
				t.Errorf("no reconcile planned an alias: the sequence does not cover them")
			}
			t.Logf("%d of 80 reconciles incremental, %d planned aliases", incremental, aliasPlans)
		})
	}
}

// TestChangeLog checks what the Watcher's events note for the incremental path: the
// Services changed, by themselves or through their EndpointSlices, and "all" for anything
// else or before the first take.
func TestChangeLog(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	slice := func(labels map[string]string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-abc", Labels: labels}}
	}
	for _, tc := range []struct {
		name      string
		untaken   bool // no take before the events
		stopped   bool // an informer stopped after the events (its CRD removed)
		events    []any
		want      ObjectChanges
		wantAfter ObjectChanges // the take after that one, with no event between
	}{
		{name: "before the first take", untaken: true, events: []any{svc}, want: ObjectChanges{All: true}},
		{name: "nothing", want: ObjectChanges{}},
		{name: "a Service", events: []any{svc, svc}, want: ObjectChanges{Services: []string{"ns/web"}}},
		{name: "a deleted Service's tombstone", events: []any{kcache.DeletedFinalStateUnknown{Key: "ns/web", Obj: svc}},
			want: ObjectChanges{Services: []string{"ns/web"}}},
		{name: "a Service's EndpointSlice", events: []any{slice(map[string]string{discoveryv1.LabelServiceName: "api"})},
			want: ObjectChanges{Services: []string{"ns/api"}}},
		{name: "a slice of no Service", events: []any{slice(nil)}, want: ObjectChanges{}},
		{name: "a Node", events: []any{svc, &corev1.Node{}}, want: ObjectChanges{All: true}},
		{name: "another kind after a Service", events: []any{svc, &corev1.Namespace{}, svc}, want: ObjectChanges{All: true}},
		{name: "an informer stopped after a Service", events: []any{svc}, stopped: true, want: ObjectChanges{All: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l changeLog
			if !tc.untaken {
				l.take()
			}
			for _, e := range tc.events {
				l.add(e)
			}
			if tc.stopped {
				l.all()
			}
			if got := l.take(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("take: %+v, want %+v", got, tc.want)
			}
			if got := l.take(); !reflect.DeepEqual(got, tc.wantAfter) {
				t.Errorf("take again: %+v, want %+v", got, tc.wantAfter)
			}
		})
	}
}

// TestIncrementalPath checks when a controller with Config.Incremental re-plans only a
// changed Service's names, and that its debug log says which path ran and why.
func TestIncrementalPath(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
		change   func(m *memServices)
		want     bool
		why      string
	}{
		{name: "a Service's address", interval: time.Hour, change: func(m *memServices) {
			m.put("a", lbService("a", "a.example.com", "10.0.0.9", nil))
		}, want: true},
		{name: "the periodic full reconcile is due", interval: time.Nanosecond, change: func(m *memServices) {
			m.put("a", lbService("a", "a.example.com", "10.0.0.9", nil))
		}, why: "the periodic full reconcile is due"},
		{name: "a NodePort Service", interval: time.Hour, change: func(m *memServices) {
			s := lbService("a", "a.example.com", "10.0.0.9", nil)
			s.Spec.Type = corev1.ServiceTypeNodePort
			m.put("a", s)
		}, why: "Service default/a reads Nodes or EndpointSlices"},
		{name: "a deleted Service", interval: time.Hour, change: func(m *memServices) { m.put("a", nil) },
			why: "the plan deletes records in zone example.com"},
		{name: "another kind", interval: time.Hour, change: func(m *memServices) { m.other() },
			why: "objects other than Services changed"},
		{name: "nothing", interval: time.Hour, change: func(*memServices) {}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t)
			reg, src := incParts(t)
			var logs strings.Builder
			syncer := &Syncer{Provider: cache.New(e.p, cache.Config{Resync: time.Hour}), Registry: reg, Policy: changes.Sync}
			objs := newMemServices()
			ctl, err := New(objs, Config{Syncer: syncer, Source: src, Interval: tc.interval, FullInterval: tc.interval, Incremental: true,
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			if err != nil {
				t.Fatal(err)
			}
			objs.put("a", lbService("a", "a.example.com", "10.0.0.1", nil))
			objs.put("b", lbService("b", "b.example.com", "10.0.0.2", nil))
			if rep, err := ctl.ReconcileOnce(ctx); err != nil || rep.Incremental {
				t.Fatalf("first reconcile: incremental %v, %v", rep.Incremental, err)
			}
			logs.Reset()
			tc.change(objs)
			rep, err := ctl.ReconcileOnce(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Incremental != tc.want {
				t.Errorf("incremental %v, want %v; log:\n%s", rep.Incremental, tc.want, logs.String())
			}
			wantLog := "path=incremental"
			if !tc.want {
				wantLog = "path=full why=" + strconv.Quote(tc.why)
			}
			if !strings.Contains(logs.String(), wantLog) && !strings.Contains(logs.String(), strings.TrimSuffix(wantLog, `"`)) {
				t.Errorf("log:\n%s\nwant a line with %s", logs.String(), wantLog)
			}
		})
	}
}

// TestIncrementalWriteFailure checks that an incremental reconcile whose write fails
// fails the reconcile (for the loop to back off), and that the next one is full and
// writes what the failed one could not.
func TestIncrementalWriteFailure(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	reg, src := incParts(t)
	syncer := &Syncer{Provider: cache.New(e.p, cache.Config{Resync: time.Hour}), Registry: reg, Policy: changes.Sync}
	objs := newMemServices()
	ctl, err := New(objs, Config{Syncer: syncer, Source: src, Interval: time.Hour, Incremental: true})
	if err != nil {
		t.Fatal(err)
	}
	objs.put("a", lbService("a", "a.example.com", "10.0.0.1", nil))
	if _, err := ctl.ReconcileOnce(ctx); err != nil {
		t.Fatal(err)
	}
	objs.put("a", lbService("a", "a.example.com", "10.0.0.2", nil))
	putFaults(t, e.sb, faults.Config{ServerErrorRate: 1, Operations: []string{"ChangeResourceRecordSets"}})
	rep, err := ctl.ReconcileOnce(ctx)
	if err == nil || !rep.Incremental {
		t.Fatalf("incremental reconcile with every write failing: incremental %v, error %v; want an incremental one that fails", rep.Incremental, err)
	}
	putFaults(t, e.sb, faults.Config{})
	rep, err = ctl.ReconcileOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Incremental {
		t.Error("the reconcile after a failed write was incremental, want full")
	}
	if !slices.Contains(e.state(t), "a.example.com A simple 10.0.0.2") {
		t.Errorf("zone %v: want a.example.com at 10.0.0.2", e.state(t))
	}
}

// TestIncrementalAliasOwnershipForms: with the managed types A and AAAA (no CNAME), an
// alias A that an incremental reconcile created is moved by the next one like the full
// path moves it: the "cname-" ownership form, which a bare A does not ask for, is planned
// with its name (else its CREATE would find it standing, and Route 53 refuse the batch).
func TestIncrementalAliasOwnershipForms(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	zones := cache.New(e.p, cache.Config{Resync: time.Hour})
	reg, src := incParts(t)
	for _, n := range []string{"t1.example.com", "t2.example.com"} {
		if err := e.p.Apply(ctx, e.zone, changes.Batch{{Action: changes.Create, Endpoint: &endpoint.Endpoint{Name: n, Type: "A", Targets: endpoint.Targets{"192.0.2.1"}, TTL: 60}}}); err != nil {
			t.Fatal(err)
		}
	}
	syncer := &Syncer{Provider: zones, Registry: reg, Policy: changes.Sync, ManagedTypes: []string{"A", "AAAA"}, Refusals: &Refusals{}}
	objs := newMemServices()
	ctl, err := New(objs, Config{Syncer: syncer, Source: src, Interval: time.Hour, Incremental: true})
	if err != nil {
		t.Fatal(err)
	}
	ext := func(target string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b", Annotations: map[string]string{
			"external-dns.alpha.kubernetes.io/hostname": "b.example.com", "external-dns.alpha.kubernetes.io/alias": "true"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: target}}
	}
	objs.put("a", lbService("a", "a.example.com", "10.0.0.1", nil))
	if _, err := ctl.ReconcileOnce(ctx); err != nil {
		t.Fatalf("first reconcile: %v", err)
	}
	for _, target := range []string{"t1.example.com", "t2.example.com"} {
		objs.put("b", ext(target))
		rep, err := ctl.ReconcileOnce(ctx)
		if err != nil || !rep.Incremental || len(rep.Zones[0].Refused) > 0 {
			t.Fatalf("b -> %s: incremental %v, err %v, refused %+v; want an incremental reconcile that lands", target, rep.Incremental, err, rep.Zones[0].Refused)
		}
		if st := e.state(t); !slices.ContainsFunc(st, func(l string) bool { return strings.HasPrefix(l, "b.example.com A") && strings.Contains(l, target) }) {
			t.Fatalf("b -> %s: zone %v", target, st)
		}
	}
}

// incParts are the registry (owner "inc") and the default source the incremental tests'
// controllers publish with.
func incParts(t *testing.T) (*registry.TXT, *source.Source) {
	t.Helper()
	reg, err := registry.New(registry.Config{OwnerID: "inc"})
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.New(source.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return reg, src
}
