package cache_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsr53 "github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/cache"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// Load balancers that aliases name: an ALB in us-east-1 and an NLB in eu-west-1, each
// with its canonical hosted zone.
const (
	alb = "k8s-default-web-0123456789-1234567890.us-east-1.elb.amazonaws.com"
	nlb = "k8s-default-tcp-0123456789-0123456789abcdef.elb.eu-west-1.amazonaws.com"
)

// clock is a settable Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// env is a sandbox with one zone, the Route 53 provider on it through the real SDK, and
// the cache over that provider.
type env struct {
	sb    *sandbox.Sandbox
	inner *route53.Provider
	c     *cache.Provider
	clock *clock
	zone  provider.Zone
}

func newEnv(t testing.TB, cfg cache.Config) *env {
	t.Helper()
	sb := sandboxtest.Start(t)
	z, _, err := sb.Store().CreateZone("example.com", "ref", "", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, lb := range []string{alb, nlb} {
		setLoadBalancer(t, sb, lb, `{"addresses": ["198.51.100.7"]}`)
	}
	e := &env{sb: sb, inner: route53test.New(t, sb), clock: &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		zone: provider.Zone{ID: z.ID, Name: "example.com"}}
	if cfg.Now == nil {
		cfg.Now = e.clock.Now
	}
	e.c = cache.New(e.inner, cfg)
	return e
}

// setLoadBalancer gives the sandbox's DNS server addresses for a load balancer, through
// its admin API (PUT /_sandbox/loadbalancers/{name}).
func setLoadBalancer(t testing.TB, sb *sandbox.Sandbox, name, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, sb.APIURL()+sandbox.AdminPrefix+"loadbalancers/"+name, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT load balancer %s: %s", name, resp.Status)
	}
}

// lists counts the List calls the sandbox has answered, whatever their result.
func (e *env) lists(t testing.TB) int {
	t.Helper()
	n := 0
	for k, v := range sandboxtest.APICalls(t, e.sb) {
		if strings.HasPrefix(k, "List") {
			n += v
		}
	}
	return n
}

// records returns the zone through the cache.
func (e *env) records(t testing.TB) []*endpoint.Endpoint {
	t.Helper()
	recs, err := e.c.Records(context.Background(), e.zone)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// fresh lists the zone through the provider, around the cache.
func (e *env) fresh(t testing.TB) []*endpoint.Endpoint {
	t.Helper()
	recs, err := e.inner.Records(context.Background(), e.zone)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// prime lists the zone list and the zone into the cache.
func (e *env) prime(t testing.TB) {
	t.Helper()
	if _, err := e.c.Zones(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.records(t)
}

// syncer is a controller.Syncer over the cache for owner "blue".
func (e *env) syncer(t testing.TB) *controller.Syncer {
	t.Helper()
	reg, err := registry.New(registry.Config{OwnerID: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	return &controller.Syncer{Provider: e.c, Registry: reg}
}

// other is another writer of the zone: the SDK, around crossfade.
func (e *env) other(t testing.TB, action types.ChangeAction, rs types.ResourceRecordSet) {
	t.Helper()
	_, err := route53test.Client(e.sb).ChangeResourceRecordSets(context.Background(), &awsr53.ChangeResourceRecordSetsInput{
		HostedZoneId: aws.String(e.zone.ID),
		ChangeBatch:  &types.ChangeBatch{Changes: []types.Change{{Action: action, ResourceRecordSet: &rs}}},
	})
	if err != nil {
		t.Fatalf("other writer: %s %s: %v", action, aws.ToString(rs.Name), err)
	}
}

// render writes every field of every record set, one line each, sorted: two zones that
// render alike hold the same sets. withoutAliasZone leaves out explicit alias zone ids.
func render(recs []*endpoint.Endpoint, withoutAliasZone bool) []string {
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		props := maps.Clone(r.ProviderSpecific)
		if withoutAliasZone {
			delete(props, endpoint.PropAliasZoneID)
		}
		var ps []string
		for _, k := range slices.Sorted(maps.Keys(props)) {
			ps = append(ps, k+"="+props[k])
		}
		var ls []string
		for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
			ls = append(ls, k+"="+r.Labels[k])
		}
		out = append(out, fmt.Sprintf("%s %s ttl=%d %q props=%v labels=%v", r.Key(), r.Policy, r.TTL, []string(r.Targets), ps, ls))
	}
	slices.Sort(out)
	return out
}

// diff reports the lines only one side has.
func diff(got, want []string) string {
	var b strings.Builder
	for _, l := range got {
		if !slices.Contains(want, l) {
			fmt.Fprintf(&b, "\n  cache only:   %s", l)
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			fmt.Fprintf(&b, "\n  listing only: %s", l)
		}
	}
	return b.String()
}

func a(name string, ttl endpoint.TTL, values ...string) *endpoint.Endpoint {
	return &endpoint.Endpoint{Name: name, Type: endpoint.TypeA, Targets: endpoint.NewTargets(values...), TTL: ttl}
}

func withProps(e *endpoint.Endpoint, kv ...string) *endpoint.Endpoint {
	for i := 0; i+1 < len(kv); i += 2 {
		e.SetProp(kv[i], kv[i+1])
	}
	return e
}

func apply(t testing.TB, p provider.Provider, z provider.Zone, b changes.Batch) {
	t.Helper()
	if err := p.Apply(context.Background(), z, b); err != nil {
		t.Fatal(err)
	}
}

// TestIdleMakesNoListCalls: once a zone is listed, asking for the zone list and the zone
// again and again makes no call to Route 53 at all.
func TestIdleMakesNoListCalls(t *testing.T) {
	e := newEnv(t, cache.Config{})
	apply(t, e.inner, e.zone, changes.Batch{{Action: changes.Create, Endpoint: a("www.example.com", 60, "192.0.2.1")}})
	e.prime(t)
	first := render(e.records(t), false)
	before := sandboxtest.APICalls(t, e.sb)
	for range 50 {
		e.clock.Advance(time.Minute / 2) // 25 minutes in all: within the resync
		zones, err := e.c.Zones(context.Background())
		if err != nil || len(zones) != 1 {
			t.Fatalf("zones: %v, %v", zones, err)
		}
		if got := render(e.records(t), false); !slices.Equal(got, first) {
			t.Fatalf("cached records changed while idle:%s", diff(got, first))
		}
	}
	if after := sandboxtest.APICalls(t, e.sb); !maps.Equal(after, before) {
		t.Errorf("idle calls: before %v, after %v; want none", before, after)
	}
}

// TestResync: a zone and the zone list are listed again once the resync interval has
// passed since they were listed, and not a moment before.
func TestResync(t *testing.T) {
	for _, tc := range []struct {
		name   string
		resync time.Duration
		want   time.Duration // the interval in force
	}{
		{"default", 0, cache.DefaultResync},
		{"configured", 5 * time.Minute, 5 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, cache.Config{Resync: tc.resync})
			e.prime(t)
			ages := e.c.Ages()
			if got, ok := ages[e.zone.ID]; !ok || got != 0 {
				t.Fatalf("ages right after listing: %v", ages)
			}
			before := e.lists(t)
			e.clock.Advance(tc.want - time.Nanosecond)
			e.prime(t)
			if n := e.lists(t) - before; n != 0 {
				t.Fatalf("%d List calls before the resync interval passed", n)
			}
			if got := e.c.Ages()[e.zone.ID]; got != tc.want-time.Nanosecond {
				t.Errorf("age %v, want %v", got, tc.want-time.Nanosecond)
			}
			// Another writer's record shows once the zone is listed again.
			e.other(t, types.ChangeActionCreate, types.ResourceRecordSet{Name: aws.String("late.example.com."), Type: types.RRTypeA,
				TTL: aws.Int64(60), ResourceRecords: []types.ResourceRecord{{Value: aws.String("192.0.2.8")}}})
			e.clock.Advance(time.Nanosecond)
			e.prime(t)
			if n := e.lists(t) - before; n != 2 {
				t.Fatalf("%d List calls after the resync interval, want 2 (ListHostedZones, ListResourceRecordSets)", n)
			}
			if !slices.ContainsFunc(e.records(t), func(r *endpoint.Endpoint) bool { return r.Name == "late.example.com" }) {
				t.Errorf("the resync did not pick up another writer's record")
			}
			if got := e.c.Ages()[e.zone.ID]; got != 0 {
				t.Errorf("age after the resync %v, want 0", got)
			}
		})
	}
}

// TestRefusedWriteInvalidates: another writer changes the zone behind the cache; the sync
// over the cache plans from its stale copy, and Route 53 refuses the compare-and-swap
// without overwriting anything. The refusal invalidates the zone: the next Records lists
// it and shows the other writer's change.
func TestRefusedWriteInvalidates(t *testing.T) {
	rs := func(name, value string) types.ResourceRecordSet {
		return types.ResourceRecordSet{Name: aws.String(name), Type: types.RRTypeA, TTL: aws.Int64(300),
			ResourceRecords: []types.ResourceRecord{{Value: aws.String(value)}}}
	}
	for _, tc := range []struct {
		name    string
		other   types.ChangeAction
		set     types.ResourceRecordSet
		desired *endpoint.Endpoint
		refusal string
		want    string // the record as the other writer left it, "" for none
	}{
		{"changed", types.ChangeActionUpsert, rs("www.example.com.", "192.0.2.99"), a("www.example.com", 0, "192.0.2.2"),
			"values provided do not match", "192.0.2.99"},
		{"deleted", types.ChangeActionDelete, rs("www.example.com.", "192.0.2.1"), a("www.example.com", 0, "192.0.2.2"),
			"but it was not found", ""},
		{"created", types.ChangeActionCreate, rs("new.example.com.", "192.0.2.77"), a("new.example.com", 0, "192.0.2.3"),
			"but it already exists", "192.0.2.77"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, cache.Config{})
			s := e.syncer(t)
			ctx := context.Background()
			if rep, err := s.Sync(ctx, []*endpoint.Endpoint{a("www.example.com", 0, "192.0.2.1")}); err != nil || rep.Err() != nil || rep.Refused() > 0 {
				t.Fatalf("first sync: %v %v %v", err, rep.Err(), rep.Conflicts())
			}
			e.other(t, tc.other, tc.set)
			desired := []*endpoint.Endpoint{a("www.example.com", 0, "192.0.2.1"), tc.desired}
			if tc.desired.Name == "www.example.com" {
				desired = desired[1:]
			}
			rep, err := s.Sync(ctx, desired)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Refused() != 1 || !strings.Contains(fmt.Sprint(rep.Conflicts()), tc.refusal) {
				t.Fatalf("want one refusal saying %q, got %v", tc.refusal, rep.Conflicts())
			}
			before := e.lists(t)
			recs := e.records(t)
			if n := e.lists(t) - before; n != 1 {
				t.Errorf("Records after a refused write made %d List calls, want 1", n)
			}
			name := endpoint.NormalizeName(aws.ToString(tc.set.Name))
			i := slices.IndexFunc(recs, func(r *endpoint.Endpoint) bool { return r.Name == name && r.Type == "A" })
			switch {
			case tc.want == "" && i >= 0:
				t.Errorf("%s still in the cache after the other writer deleted it: %v", name, recs[i])
			case tc.want != "" && (i < 0 || !slices.Equal(recs[i].Targets, endpoint.Targets{tc.want})):
				t.Errorf("%s: the cache does not show the other writer's %s: %v", name, tc.want, render(recs, false))
			}
			if got, want := render(recs, false), render(e.fresh(t), false); !slices.Equal(got, want) {
				t.Errorf("cache differs from a listing:%s", diff(got, want))
			}
		})
	}
}

// TestFailedWriteInvalidates: a write that fails in any way other than a refusal
// (throttled past the SDK's retries, a server error, a cancelled context) may or may not
// have reached the zone, so the zone is listed again on the next Records.
func TestFailedWriteInvalidates(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults string // sandbox faults while the write is sent
		cancel bool
	}{
		{name: "throttled", faults: `{"throttleRate": 1, "operations": ["ChangeResourceRecordSets"]}`},
		{name: "prior request not complete", faults: `{"priorRequestRate": 1, "operations": ["ChangeResourceRecordSets"]}`},
		{name: "server error", faults: `{"serverErrorRate": 1, "operations": ["ChangeResourceRecordSets"]}`},
		{name: "cancelled", cancel: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, cache.Config{})
			e.prime(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			if tc.faults != "" {
				sandboxtest.SetFaults(t, e.sb, tc.faults)
			}
			err := e.c.Apply(ctx, e.zone, changes.Batch{{Action: changes.Create, Endpoint: a("www.example.com", 60, "192.0.2.1")}})
			sandboxtest.SetFaults(t, e.sb, `{}`)
			var rej *provider.RejectedError
			if err == nil || errors.As(err, &rej) {
				t.Fatalf("Apply: %v, want a failure that is not a refusal", err)
			}
			if _, ok := e.c.Ages()[e.zone.ID]; ok {
				t.Errorf("the zone is still cached after a failed write: %v", e.c.Ages())
			}
			before := e.lists(t)
			recs := e.records(t)
			if n := e.lists(t) - before; n != 1 {
				t.Errorf("Records after a failed write made %d List calls, want 1", n)
			}
			if got, want := render(recs, false), render(e.fresh(t), false); !slices.Equal(got, want) {
				t.Errorf("cache differs from a listing:%s", diff(got, want))
			}
		})
	}
}

// TestLostAnswerWriteIsCached: the sandbox commits a batch and loses its answer; the SDK
// retries, the retry is refused, and the Route 53 provider finds the zone holding the
// batch's outcome and reports success. The cache then holds the batch without listing the
// zone again.
func TestLostAnswerWriteIsCached(t *testing.T) {
	for _, fault := range []string{"commitThenFailRate", "commitThenDropRate"} {
		t.Run(fault, func(t *testing.T) {
			e := newEnv(t, cache.Config{})
			e.prime(t)
			sandboxtest.SetFaults(t, e.sb, `{"`+fault+`": 1, "operations": ["ChangeResourceRecordSets"]}`)
			apply(t, e.c, e.zone, changes.Batch{
				{Action: changes.Create, Endpoint: a("www.example.com", 60, "192.0.2.1")},
				{Action: changes.Create, Endpoint: &endpoint.Endpoint{Name: "a-www.example.com", Type: "TXT", Targets: endpoint.Targets{`"heritage=external-dns,external-dns/owner=blue"`}}},
			})
			sandboxtest.SetFaults(t, e.sb, `{}`)
			before := e.lists(t)
			recs := e.records(t)
			if n := e.lists(t) - before; n != 0 {
				t.Errorf("Records after a write confirmed applied made %d List calls, want 0", n)
			}
			if got, want := render(recs, false), render(e.fresh(t), false); !slices.Equal(got, want) {
				t.Errorf("cache differs from a listing:%s", diff(got, want))
			}
		})
	}
}

// TestUnbuildableBatchKeepsTheCache: a batch the provider cannot build (an alias whose
// target no zone holds) is never sent, so the zone cannot have changed: it stays cached,
// and a bad object does not cost a listing of its zone at every reconcile.
func TestUnbuildableBatchKeepsTheCache(t *testing.T) {
	e := newEnv(t, cache.Config{})
	e.prime(t)
	bad := withProps(a("nowhere.example.com", 0, "lb.nowhere.test"), endpoint.PropAlias, "true")
	err := e.c.Apply(context.Background(), e.zone, changes.Batch{{Action: changes.Create, Endpoint: bad}})
	var inv *provider.InvalidChangeError
	if !errors.As(err, &inv) {
		t.Fatalf("Apply: %v, want an InvalidChangeError", err)
	}
	before := e.lists(t)
	e.records(t)
	if n := e.lists(t) - before; n != 0 {
		t.Errorf("Records after a batch that was never sent made %d List calls, want 0", n)
	}
}

// TestInvalidate: Invalidate lists one zone again, InvalidateAll the zone list and every
// zone; Ages leaves out what is invalidated.
func TestInvalidate(t *testing.T) {
	for _, tc := range []struct {
		name       string
		invalidate func(c *cache.Provider, zoneID string)
		want       int // List calls of the next Zones and Records
	}{
		{"zone", func(c *cache.Provider, id string) { c.Invalidate(id) }, 1},
		{"another zone", func(c *cache.Provider, _ string) { c.Invalidate("Z-OTHER") }, 0},
		{"all", func(c *cache.Provider, _ string) { c.InvalidateAll() }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, cache.Config{})
			e.prime(t)
			tc.invalidate(e.c, e.zone.ID)
			if _, cached := e.c.Ages()[e.zone.ID]; cached != (tc.want == 0) {
				t.Errorf("Ages after invalidating: %v", e.c.Ages())
			}
			before := e.lists(t)
			e.prime(t)
			if n := e.lists(t) - before; n != tc.want {
				t.Errorf("%d List calls after invalidating, want %d", n, tc.want)
			}
		})
	}
}

// TestGoneZoneIsDropped: a zone that is no longer listed (deleted, or no longer passing
// the provider's filters) leaves the cache and its ages when the zone list is listed again.
func TestGoneZoneIsDropped(t *testing.T) {
	e := newEnv(t, cache.Config{})
	z, _, err := e.sb.Store().CreateZone("example.org", "ref2", "", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e.prime(t)
	if _, err := e.c.Records(ctx, provider.Zone{ID: z.ID, Name: "example.org"}); err != nil {
		t.Fatal(err)
	}
	if ages := e.c.Ages(); len(ages) != 2 {
		t.Fatalf("ages of two listed zones: %v", ages)
	}
	if _, err := e.sb.Store().DeleteZone(z.ID); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(cache.DefaultResync)
	zones, err := e.c.Zones(ctx)
	if err != nil || len(zones) != 1 {
		t.Fatalf("zones after one was deleted: %v, %v", zones, err)
	}
	if ages := e.c.Ages(); len(ages) != 1 || ages[e.zone.ID] != cache.DefaultResync {
		t.Errorf("ages after the zone list dropped a zone: %v, want only %s at %v", ages, e.zone.ID, cache.DefaultResync)
	}
}

// gatedProvider runs during once, after the wrapped provider has listed a zone and before
// the listing is returned: what happens to the zone while a listing is on its way.
type gatedProvider struct {
	provider.Provider
	once   sync.Once
	during func()
}

func (g *gatedProvider) Records(ctx context.Context, z provider.Zone) ([]*endpoint.Endpoint, error) {
	recs, err := g.Provider.Records(ctx, z)
	g.once.Do(g.during)
	return recs, err
}

// TestListingOvertakenIsNotKept: a write or an invalidation that completes while a
// listing is on its way may not show in it; the listing is returned but not kept, and the
// next Records lists again.
func TestListingOvertakenIsNotKept(t *testing.T) {
	for _, tc := range []struct {
		name   string
		during func(t *testing.T, e *env, c *cache.Provider)
	}{
		{"write", func(t *testing.T, e *env, c *cache.Provider) {
			apply(t, c, e.zone, changes.Batch{{Action: changes.Create, Endpoint: a("www.example.com", 60, "192.0.2.1")}})
		}},
		{"invalidation", func(t *testing.T, e *env, c *cache.Provider) {
			e.other(t, types.ChangeActionCreate, types.ResourceRecordSet{Name: aws.String("www.example.com."), Type: types.RRTypeA,
				TTL: aws.Int64(60), ResourceRecords: []types.ResourceRecord{{Value: aws.String("192.0.2.1")}}})
			c.Invalidate(e.zone.ID)
		}},
		{"invalidation of all", func(t *testing.T, e *env, c *cache.Provider) {
			e.other(t, types.ChangeActionCreate, types.ResourceRecordSet{Name: aws.String("www.example.com."), Type: types.RRTypeA,
				TTL: aws.Int64(60), ResourceRecords: []types.ResourceRecord{{Value: aws.String("192.0.2.1")}}})
			c.InvalidateAll()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, cache.Config{})
			g := &gatedProvider{Provider: e.inner}
			c := cache.New(g, cache.Config{Now: e.clock.Now})
			g.during = func() { tc.during(t, e, c) }
			if _, err := c.Zones(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Records(context.Background(), e.zone); err != nil {
				t.Fatal(err)
			}
			recs, err := c.Records(context.Background(), e.zone)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(recs, func(r *endpoint.Endpoint) bool { return r.Name == "www.example.com" }) {
				t.Errorf("the cache kept a listing that predates a change: %v", render(recs, false))
			}
		})
	}
}

// TestRecordsAreCopies: callers may change what Records returns (the registry labels the
// records it reads) without changing the cache.
func TestRecordsAreCopies(t *testing.T) {
	e := newEnv(t, cache.Config{})
	apply(t, e.inner, e.zone, changes.Batch{
		{Action: changes.Create, Endpoint: a("one.example.com", 60, "192.0.2.1", "192.0.2.2")},
		{Action: changes.Create, Endpoint: a("two.example.com", 60, "192.0.2.3")},
		{Action: changes.Create, Endpoint: withProps(a("alias.example.com", 0, alb), endpoint.PropAlias, "true", endpoint.PropEvaluateTargetHealth, "false")},
		{Action: changes.Create, Endpoint: &endpoint.Endpoint{Name: "a-one.example.com", Type: "TXT", Targets: endpoint.Targets{`"heritage=external-dns,external-dns/owner=blue"`}}},
	})
	e.prime(t)
	want := render(e.records(t), false)
	for _, tc := range []struct {
		name   string
		mutate func(recs []*endpoint.Endpoint)
	}{
		{"registry read", func(recs []*endpoint.Endpoint) {
			reg, _ := registry.New(registry.Config{OwnerID: "blue"})
			reg.Read(recs)
		}},
		{"fields", func(recs []*endpoint.Endpoint) {
			for _, r := range recs {
				r.Name, r.TTL, r.Policy = "x", 1, endpoint.WeightedPolicy(1)
			}
		}},
		{"values", func(recs []*endpoint.Endpoint) {
			for _, r := range recs {
				if len(r.Targets) > 0 {
					r.Targets[0] = "x"
				}
				r.Targets = append(r.Targets, "appended")
			}
		}},
		{"maps", func(recs []*endpoint.Endpoint) {
			for _, r := range recs {
				if r.ProviderSpecific != nil {
					r.ProviderSpecific[endpoint.PropEvaluateTargetHealth] = "true"
				}
				r.SetProp("x", "y")
				if r.Labels == nil {
					r.Labels = endpoint.Labels{}
				}
				r.Labels["owner"] = "x"
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := e.records(t)
			tc.mutate(recs)
			if got := render(e.records(t), false); !slices.Equal(got, want) {
				t.Errorf("changing a result changed the cache:%s", diff(got, want))
			}
		})
	}
	// Within one result: appending to one record's values must not write into the next
	// record's (they share one backing array).
	recs := e.records(t)
	second := render(recs[1:2], false)
	recs[0].Targets = append(recs[0].Targets, "appended")
	if got := render(recs[1:2], false); !slices.Equal(got, second) {
		t.Errorf("appending to one record's values changed the next record: %v, was %v", got, second)
	}
}

// TestWrittenFormIsListedForm: the cache holds a written set as the Route 53 provider lists
// it, for sets written in every form the provider accepts but reads back otherwise:
// upper-case names and hostnames, trailing dots, unsorted values, an unset TTL, TTL 0, an
// alias with a TTL, alias properties spelled otherwise, labels and properties the provider
// does not store, a simple policy with a stray weight, TXT values whose case and quotes
// matter. Then some of them are replaced (UPSERT and DELETE+CREATE) and deleted.
func TestWrittenFormIsListedForm(t *testing.T) {
	e := newEnv(t, cache.Config{})
	e.prime(t)
	labels := endpoint.Labels{endpoint.OwnerLabel: "blue", endpoint.ResourceLabel: "service/default/web"}
	sets := []*endpoint.Endpoint{
		{Name: "Upper.Example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.3", "192.0.2.1"}, Labels: labels},
		{Name: "zero.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.4"}, TTL: endpoint.TTLZero},
		{Name: "cname.example.com", Type: "CNAME", Targets: endpoint.Targets{"Web.Example.NET."}, TTL: 60},
		{Name: "mx.example.com", Type: "MX", Targets: endpoint.Targets{"20 Mail2.Example.com.", "10 mail.example.com"}, TTL: 60},
		{Name: "txt.example.com", Type: "TXT", Targets: endpoint.Targets{`"Hello World"`, `"heritage=external-dns,external-dns/owner=Blue"`}},
		{Name: "*.wild.example.com", Type: "AAAA", Targets: endpoint.Targets{"2001:db8::2", "2001:db8::1"}, TTL: 30},
		{Name: "stray.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.5"}, Policy: endpoint.RoutingPolicy{Weight: 7, Role: "PRIMARY"}},
		{Name: "w.example.com", Type: "A", SetIdentifier: "blue", Targets: endpoint.Targets{"192.0.2.6"}, TTL: 60, Policy: endpoint.WeightedPolicy(10), Labels: labels},
		{Name: "w.example.com", Type: "A", SetIdentifier: "green", Targets: endpoint.Targets{"192.0.2.7"}, TTL: 60, Policy: endpoint.WeightedPolicy(0)},
		{Name: "f.example.com", Type: "A", SetIdentifier: "p", Targets: endpoint.Targets{"192.0.2.8"}, Policy: endpoint.FailoverPolicy("primary"),
			ProviderSpecific: map[string]string{endpoint.PropHealthCheckID: "hc-1", "x/unknown": "1"}},
		{Name: "f.example.com", Type: "A", SetIdentifier: "s", Targets: endpoint.Targets{"192.0.2.9"}, Policy: endpoint.FailoverPolicy(endpoint.Secondary),
			ProviderSpecific: map[string]string{endpoint.PropHealthCheckID: ""}},
		withProps(&endpoint.Endpoint{Name: "lb.example.com", Type: "A", Targets: endpoint.Targets{"Dualstack." + strings.ToUpper(alb) + "."}, TTL: 60},
			endpoint.PropAlias, "True", endpoint.PropEvaluateTargetHealth, "TRUE"),
		withProps(&endpoint.Endpoint{Name: "nlb.example.com", Type: "A", SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(5), Targets: endpoint.Targets{nlb}},
			endpoint.PropAlias, "1", endpoint.PropEvaluateTargetHealth, "0"),
		withProps(&endpoint.Endpoint{Name: "inzone.example.com", Type: "A", Targets: endpoint.Targets{"upper.example.com"}, TTL: endpoint.TTLZero},
			endpoint.PropAlias, "true", endpoint.PropEvaluateTargetHealth, "false"),
		withProps(&endpoint.Endpoint{Name: "plain.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.10"}},
			endpoint.PropAlias, "false", endpoint.PropEvaluateTargetHealth, "false", endpoint.PropAliasZoneID, "Z1"),
	}
	var batch changes.Batch
	for _, s := range sets {
		batch = append(batch, changes.Change{Action: changes.Create, Endpoint: s})
	}
	apply(t, e.c, e.zone, batch)
	check := func(step string) {
		t.Helper()
		if got, want := render(e.records(t), false), render(e.fresh(t), false); !slices.Equal(got, want) {
			t.Errorf("%s: cache differs from a listing:%s", step, diff(got, want))
		}
	}
	check("created")

	up := sets[0].Clone()
	up.Targets = endpoint.Targets{"192.0.2.33"}
	lbRead := withProps(a("lb.example.com", 0, "dualstack."+alb), endpoint.PropAlias, "true")
	lbNew := withProps(a("lb.example.com", 0, nlb), endpoint.PropAlias, "true", endpoint.PropEvaluateTargetHealth, "false")
	apply(t, e.c, e.zone, changes.Batch{
		{Action: changes.Upsert, Endpoint: up},
		{Action: changes.Upsert, Endpoint: &endpoint.Endpoint{Name: "new.example.com", Type: "TXT", Targets: endpoint.Targets{`"v=spf1 -all"`}}},
		{Action: changes.Delete, Endpoint: lbRead},
		{Action: changes.Create, Endpoint: lbNew},
		{Action: changes.Delete, Endpoint: sets[1]},
		{Action: changes.Delete, Endpoint: sets[3]},
	})
	check("replaced and deleted")

	// An explicit alias zone id that is the one the provider would find itself: the
	// listing leaves it out, the cache keeps it (the one documented difference), and a
	// DELETE from the cached form is accepted.
	explicit := withProps(a("explicit.example.com", 0, alb), endpoint.PropAlias, "true", endpoint.PropAliasZoneID, "/hostedzone/Z35SXDOTRQ7X7K")
	apply(t, e.c, e.zone, changes.Batch{{Action: changes.Create, Endpoint: explicit}})
	if got, want := render(e.records(t), true), render(e.fresh(t), true); !slices.Equal(got, want) {
		t.Errorf("with an explicit alias zone id: cache differs from a listing beyond that id:%s", diff(got, want))
	}
	var cached *endpoint.Endpoint
	for _, r := range e.records(t) {
		if r.Name == "explicit.example.com" {
			cached = r
		}
	}
	if cached == nil || cached.ProviderSpecific[endpoint.PropAliasZoneID] != "Z35SXDOTRQ7X7K" {
		t.Fatalf("explicit alias zone id not kept as written: %v", cached)
	}
	apply(t, e.c, e.zone, changes.Batch{{Action: changes.Delete, Endpoint: cached}})
	check("explicit alias deleted from the cached form")
}

// randomDesired returns what sources might want of six names in a step: nothing, a simple
// A, a multi-value AAAA, weighted members, a failover pair, an alias to another record or
// to a load balancer (weighted or not, as a source states it: a CNAME marked alias, with a
// TTL the provider drops), or a CNAME; TTLs unset, 0, 60 or 300.
func randomDesired(rng *rand.Rand) []*endpoint.Endpoint {
	ttls := []endpoint.TTL{0, endpoint.TTLZero, 60, 300}
	ttl := func() endpoint.TTL { return ttls[rng.IntN(len(ttls))] }
	values := func(format string, n int) []string {
		var out []string
		for _, i := range rng.Perm(4)[:n] {
			out = append(out, fmt.Sprintf(format, i+1))
		}
		return out
	}
	out := []*endpoint.Endpoint{a("target.example.com", 60, "192.0.2.250")}
	for i := range 6 {
		name := fmt.Sprintf("n%d.example.com", i)
		add := func(e *endpoint.Endpoint) {
			e.Name = name
			e.Labels = endpoint.Labels{endpoint.ResourceLabel: "service/default/" + e.SetIdentifier + name}
			out = append(out, e)
		}
		eval := func(e *endpoint.Endpoint) *endpoint.Endpoint {
			switch rng.IntN(3) {
			case 1:
				e.SetProp(endpoint.PropEvaluateTargetHealth, "true")
			case 2:
				e.SetProp(endpoint.PropEvaluateTargetHealth, "false")
			}
			return e
		}
		switch rng.IntN(9) {
		case 0: // absent
		case 1:
			add(a("", ttl(), values("192.0.2.%d", 1+rng.IntN(3))...))
		case 2:
			add(&endpoint.Endpoint{Type: "AAAA", Targets: endpoint.NewTargets(values("2001:db8::%d", 1+rng.IntN(3))...), TTL: ttl()})
		case 3:
			for _, id := range []string{"blue", "green"}[rng.IntN(2):] {
				add(&endpoint.Endpoint{Type: "A", SetIdentifier: id, Policy: endpoint.WeightedPolicy(int64(rng.IntN(256))),
					Targets: endpoint.NewTargets(values("198.51.100.%d", 1)...), TTL: ttl()})
			}
		case 4:
			for _, role := range []string{endpoint.Primary, endpoint.Secondary}[:1+rng.IntN(2)] {
				add(&endpoint.Endpoint{Type: "A", SetIdentifier: strings.ToLower(role), Policy: endpoint.FailoverPolicy(role),
					Targets: endpoint.NewTargets(values("203.0.113.%d", 1)...), TTL: ttl()})
			}
		case 5:
			add(eval(withProps(a("", 0, "target.example.com"), endpoint.PropAlias, "true")))
		case 6:
			add(eval(withProps(&endpoint.Endpoint{Type: "CNAME", Targets: endpoint.NewTargets([]string{alb, "dualstack." + alb, nlb}[rng.IntN(3)]), TTL: ttl()},
				endpoint.PropAlias, "true")))
		case 7:
			add(&endpoint.Endpoint{Type: "CNAME", Targets: endpoint.NewTargets(values("host%d.example.net", 1)...), TTL: ttl()})
		case 8:
			for _, id := range []string{"blue", "green"}[rng.IntN(2):] {
				add(eval(withProps(&endpoint.Endpoint{Type: "CNAME", SetIdentifier: id, Policy: endpoint.WeightedPolicy(int64(rng.IntN(256))),
					Targets: endpoint.NewTargets([]string{alb, nlb}[rng.IntN(2)])}, endpoint.PropAlias, "true")))
			}
		}
	}
	return out
}

// TestCacheEqualsListing is the property the cache lives by: after every sync, the zone it
// holds is exactly what a fresh listing returns, and planning the same desired records
// over either finds nothing to do. Random syncs over simple, multi-value, weighted,
// failover, alias (to a record, to a load balancer) records and their TXT ownership
// records, TTLs unset and 0, moving each name between those shapes, through
// controller.Syncer and the Route 53 provider against the sandbox. A cache that held
// anything but what the zone holds would also show as a refusal: every replacement and
// delete is sent as read from it.
func TestCacheEqualsListing(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			e := newEnv(t, cache.Config{})
			s := e.syncer(t)
			rng := rand.New(rand.NewPCG(seed, 14))
			ctx := context.Background()
			var total changes.Summary
			conflicts := 0
			for step := range 30 {
				desired := randomDesired(rng)
				before := e.lists(t)
				rep, err := s.Sync(ctx, desired)
				if err != nil {
					t.Fatal(err)
				}
				if err := rep.Err(); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				if rep.Refused() > 0 {
					t.Fatalf("step %d: refused: %v", step, rep.Conflicts())
				}
				sum := rep.Zones[0].Changes.Summary
				total.Create, total.Update, total.Delete, total.Replace = total.Create+sum.Create, total.Update+sum.Update, total.Delete+sum.Delete, total.Replace+sum.Replace
				conflicts += len(rep.Conflicts())
				if n := e.lists(t) - before; step > 0 && n != 0 {
					t.Errorf("step %d: the sync made %d List calls", step, n)
				}
				cached, listed := e.records(t), e.fresh(t)
				if got, want := render(cached, false), render(listed, false); !slices.Equal(got, want) {
					t.Fatalf("step %d: cache differs from a listing:%s", step, diff(got, want))
				}
				for _, side := range []struct {
					name string
					recs []*endpoint.Endpoint
				}{{"cache", cached}, {"listing", listed}} {
					p := changes.Calculate(changes.Input{Desired: e.c.AdjustEndpoints(desired), Current: side.recs, Registry: s.Registry, Zone: e.zone.Name})
					if len(p.Batches) > 0 {
						t.Fatalf("step %d: planning the same desired records over the %s: %+v, batches %v", step, side.name, p.Summary, p.Batches)
					}
				}
			}
			t.Logf("30 syncs: %+v, %d conflicts", total, conflicts)
			if total.Create == 0 || total.Update == 0 || total.Delete == 0 || total.Replace == 0 {
				t.Errorf("the random syncs did not create, update, delete and replace: %+v", total)
			}
		})
	}
}

// TestSecondSyncMakesNoCalls: controller.Syncer over the cache, twice with the same
// desired records: the second sync makes no Route 53 call of any kind. The records include
// an alias stated as sources state it (a CNAME marked alias), which the Syncer must have
// the provider's AdjustEndpoints turn into an alias A through the cache.
func TestSecondSyncMakesNoCalls(t *testing.T) {
	e := newEnv(t, cache.Config{})
	s := e.syncer(t)
	desired := []*endpoint.Endpoint{
		a("www.example.com", 0, "192.0.2.1", "192.0.2.2"),
		withProps(&endpoint.Endpoint{Name: "app.example.com", Type: "CNAME", SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(100), Targets: endpoint.NewTargets(alb)}, endpoint.PropAlias, "true"),
		{Name: "db.example.com", Type: "A", SetIdentifier: "primary", Policy: endpoint.FailoverPolicy("PRIMARY"), Targets: endpoint.NewTargets("192.0.2.9")},
	}
	ctx := context.Background()
	rep, err := s.Sync(ctx, desired)
	if err != nil || rep.Err() != nil || len(rep.Conflicts()) > 0 {
		t.Fatalf("first sync: %v %v %v", err, rep.Err(), rep.Conflicts())
	}
	if rep.Zones[0].Applied == 0 {
		t.Fatal("first sync wrote nothing")
	}
	if !slices.ContainsFunc(e.fresh(t), func(r *endpoint.Endpoint) bool {
		return r.Key() == endpoint.Key{Name: "app.example.com", Type: "A", SetIdentifier: "blue"} && r.IsAlias()
	}) {
		t.Errorf("the alias was not written as an alias A: %v", render(e.fresh(t), false))
	}
	before := sandboxtest.APICalls(t, e.sb)
	rep, err = s.Sync(ctx, desired)
	if err != nil || rep.Err() != nil {
		t.Fatalf("second sync: %v %v", err, rep.Err())
	}
	if after := sandboxtest.APICalls(t, e.sb); !maps.Equal(after, before) {
		t.Errorf("second sync made API calls: before %v, after %v", before, after)
	}
	if z := rep.Zones[0]; len(z.Changes.Batches) > 0 {
		t.Errorf("second sync planned %v", z.Changes.Batches)
	}
}

// narrow is a provider that reads and writes through inner but has BaseProvider's
// AdjustEndpoints and DryRun: a back end without either of its own.
type narrow struct {
	provider.BaseProvider
	inner provider.Provider
}

func (n narrow) Zones(ctx context.Context) ([]provider.Zone, error) { return n.inner.Zones(ctx) }
func (n narrow) Records(ctx context.Context, z provider.Zone) ([]*endpoint.Endpoint, error) {
	return n.inner.Records(ctx, z)
}
func (n narrow) Apply(ctx context.Context, z provider.Zone, b changes.Batch) error {
	return n.inner.Apply(ctx, z, b)
}
func (n narrow) Limits() changes.Limits { return n.inner.Limits() }

// TestOptionalInterfaces: the cache hands AdjustEndpoints and DryRun on to the wrapped
// provider: its own when it has them, else BaseProvider's records unchanged and
// ErrNoDryRun.
func TestOptionalInterfaces(t *testing.T) {
	e := newEnv(t, cache.Config{})
	aliasCNAME := withProps(&endpoint.Endpoint{Name: "lb.example.com", Type: "CNAME", Targets: endpoint.NewTargets(alb), TTL: 60}, endpoint.PropAlias, "true")
	batch := changes.Batch{{Action: changes.Create, Endpoint: a("www.example.com", 0, "192.0.2.1")}}
	ctx := context.Background()
	if _, err := e.c.Zones(ctx); err != nil {
		t.Fatal(err)
	}

	got := e.c.AdjustEndpoints([]*endpoint.Endpoint{aliasCNAME})
	if want := e.inner.AdjustEndpoints([]*endpoint.Endpoint{aliasCNAME}); !slices.Equal(render(got, false), render(want, false)) || got[0].Type != "A" {
		t.Errorf("AdjustEndpoints: %v, want the provider's %v", render(got, false), render(want, false))
	}
	doc, err := e.c.DryRun(ctx, e.zone, batch)
	want, werr := e.inner.DryRun(ctx, e.zone, batch)
	if err != nil || werr != nil || string(doc) != string(want) {
		t.Errorf("DryRun: %s, %v; want the provider's %s, %v", doc, err, want, werr)
	}

	bare := cache.New(narrow{inner: e.inner}, cache.Config{})
	in := []*endpoint.Endpoint{aliasCNAME}
	if got := bare.AdjustEndpoints(in); len(got) != 1 || got[0] != aliasCNAME {
		t.Errorf("AdjustEndpoints without the provider's: %v, want the input", got)
	}
	if _, err := bare.DryRun(ctx, e.zone, batch); !errors.Is(err, provider.ErrNoDryRun) {
		t.Errorf("DryRun without the provider's: %v, want ErrNoDryRun", err)
	}
	if got := bare.Limits(); got != e.inner.Limits() {
		t.Errorf("Limits %+v, want the provider's", got)
	}

	// A dry run through the Syncer renders what the provider renders, and sends nothing.
	s := e.syncer(t)
	s.DryRun = true
	before := sandboxtest.APICalls(t, e.sb)
	rep, err := s.Sync(ctx, []*endpoint.Endpoint{aliasCNAME})
	if err != nil || rep.Err() != nil || len(rep.Zones[0].DryRun) != 1 {
		t.Fatalf("dry run: %v %v %v", err, rep.Err(), rep.Zones)
	}
	if !strings.Contains(string(rep.Zones[0].DryRun[0]), `"AliasTarget"`) {
		t.Errorf("dry run did not render the alias: %s", rep.Zones[0].DryRun[0])
	}
	after := sandboxtest.APICalls(t, e.sb)
	if after["ChangeResourceRecordSets ok"] != before["ChangeResourceRecordSets ok"] {
		t.Errorf("a dry run wrote")
	}
}

// TestConcurrentUse runs readers, writers and invalidations at once (under -race it checks
// the locking); afterwards the cache still equals a listing.
func TestConcurrentUse(t *testing.T) {
	e := newEnv(t, cache.Config{})
	e.prime(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 10 {
				name := fmt.Sprintf("w%d-%d.example.com", w, i)
				if err := e.c.Apply(ctx, e.zone, changes.Batch{{Action: changes.Create, Endpoint: a(name, 60, "192.0.2.1")}}); err != nil {
					t.Error(err)
				}
				if _, err := e.c.Records(ctx, e.zone); err != nil {
					t.Error(err)
				}
				switch i % 3 {
				case 0:
					e.c.Invalidate(e.zone.ID)
				case 1:
					_ = e.c.Ages()
				case 2:
					if _, err := e.c.Zones(ctx); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if got, want := render(e.records(t), false), render(e.fresh(t), false); !slices.Equal(got, want) {
		t.Errorf("cache differs from a listing:%s", diff(got, want))
	}
}

// acceptWrites takes every batch without sending it: the benchmark of Apply measures the
// cache's own work, not the sandbox's.
type acceptWrites struct{ provider.Provider }

func (acceptWrites) Apply(context.Context, provider.Zone, changes.Batch) error { return nil }

// benchZone fills the zone with n A records through the provider.
func benchZone(b *testing.B, n int) *env {
	e := newEnv(b, cache.Config{})
	var batch changes.Batch
	for i := range n {
		batch = append(batch, changes.Change{Action: changes.Create, Endpoint: a(fmt.Sprintf("r%05d.example.com", i), 300, fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))})
		if len(batch) == 500 || i == n-1 {
			apply(b, e.inner, e.zone, batch)
			batch = nil
		}
	}
	return e
}

// primed returns a cache over inner holding e's zone.
func primed(b *testing.B, e *env, inner provider.Provider) *cache.Provider {
	c := cache.New(inner, cache.Config{})
	if _, err := c.Zones(context.Background()); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Records(context.Background(), e.zone); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkRecords measures Records of a 10,000-record zone: "cached" is the cache's deep
// copy, "listed" a fresh listing through the SDK from the sandbox (34 pages), for scale.
func BenchmarkRecords(b *testing.B) {
	e := benchZone(b, 10000)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		p    provider.Provider
	}{{"cached", primed(b, e, e.inner)}, {"listed", e.inner}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.p.Records(ctx, e.zone); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkApply measures a 100-change batch (50 compare-and-swap replacements, a TTL
// change each) into a cached 10,000-record zone, alternately there and back: "cache" is
// the cache's own work with the write not sent, "sandbox" the whole write through the
// SDK to the sandbox and into the cache.
func BenchmarkApply(b *testing.B) {
	e := benchZone(b, 10000)
	ctx := context.Background()
	recs, err := e.inner.Records(ctx, e.zone)
	if err != nil {
		b.Fatal(err)
	}
	var there, back changes.Batch
	for _, r := range recs[len(recs)-50:] {
		moved := r.Clone()
		moved.TTL = 60
		there = append(there, changes.Change{Action: changes.Delete, Endpoint: r}, changes.Change{Action: changes.Create, Endpoint: moved})
		back = append(back, changes.Change{Action: changes.Delete, Endpoint: moved}, changes.Change{Action: changes.Create, Endpoint: r})
	}
	for _, bc := range []struct {
		name  string
		inner provider.Provider
	}{{"cache", acceptWrites{e.inner}}, {"sandbox", e.inner}} {
		b.Run(bc.name, func(b *testing.B) {
			c := primed(b, e, bc.inner)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				batch := there
				if i%2 == 1 {
					batch = back
				}
				i++
				if err := c.Apply(ctx, e.zone, batch); err != nil {
					b.Fatal(err)
				}
			}
			if i%2 == 1 {
				apply(b, c, e.zone, back)
			}
			if ages := c.Ages(); len(ages) != 1 {
				b.Fatalf("the zone left the cache: %v", ages)
			}
		})
	}
}
