package cloudmap

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	"github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// fixture is a sandbox with a private DNS namespace corp.local holding the service api
// (A and SRV records), and an SDK client for it, as crossfade and a foreign registrar use.
type fixture struct {
	t     *testing.T
	sb    *sandbox.Sandbox
	api   *sd.Client
	svcID string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	sb := sandboxtest.Start(t)
	f := &fixture{t: t, sb: sb, api: sd.New(sd.Options{Region: "us-east-1", BaseEndpoint: aws.String(sb.APIURL()),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts, o.MaxBackoff, o.RateLimiter = 2, time.Millisecond, ratelimit.None
		})})}
	f.svcID = aws.ToString(sandboxtest.CloudMapService(t, f.api, "corp.local", "vpc-1", sd.CreateServiceInput{Name: aws.String("api"),
		DnsConfig: &types.DnsConfig{DnsRecords: []types.DnsRecord{{Type: types.RecordTypeA, TTL: aws.Int64(10)}, {Type: types.RecordTypeSrv, TTL: aws.Int64(10)}}}}).Id)
	return f
}

// publisher is a Publisher for owner over the fixture's API.
func (f *fixture) publisher(owner string, tweak ...func(*Config)) *Publisher {
	f.t.Helper()
	cfg := Config{API: f.api, Identity: Identity{Owner: owner, Cluster: owner}}
	for _, fn := range tweak {
		fn(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

// foreign registers an instance directly, as another registrar would.
func (f *fixture) foreign(id string, attrs map[string]string) {
	f.t.Helper()
	if _, err := f.api.RegisterInstance(context.Background(), &sd.RegisterInstanceInput{ServiceId: aws.String(f.svcID),
		InstanceId: aws.String(id), Attributes: attrs}); err != nil {
		f.t.Fatalf("register %s: %v", id, err)
	}
}

// instances returns the service's instances as the store holds them.
func (f *fixture) instances() map[string]map[string]string {
	f.t.Helper()
	out := map[string]map[string]string{}
	pages := sd.NewListInstancesPaginator(f.api, &sd.ListInstancesInput{ServiceId: aws.String(f.svcID)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			f.t.Fatal(err)
		}
		for _, in := range page.Instances {
			out[aws.ToString(in.Id)] = in.Attributes
		}
	}
	return out
}

// calls returns the Cloud Map calls the sandbox answered since before, by operation.
func (f *fixture) calls(before map[string]int) map[string]int {
	out := map[string]int{}
	for k, n := range sandboxtest.APICalls(f.t, f.sb) {
		if d := n - before[k]; d > 0 {
			op, _, _ := strings.Cut(k, " ")
			out[op] += d
		}
	}
	return out
}

// web is shop/web annotated into corp.local/api, its endpoints the given IPv4 addresses.
func web(addrs ...string) ([]*corev1.Service, []*discoveryv1.EndpointSlice) {
	svc := service(map[string]string{LabelVersion: "v1"}, AnnotationService, "corp.local/api", AnnotationAttributes, "env=prod")
	var eps []discoveryv1.Endpoint
	for _, a := range addrs {
		eps = append(eps, ep(a, nil))
	}
	return []*corev1.Service{svc}, []*discoveryv1.EndpointSlice{slice("web-a", discoveryv1.AddressTypeIPv4, eps...)}
}

// reconcile runs one reconcile and requires no error and no problem unless said.
func reconcile(t *testing.T, p *Publisher, svcs []*corev1.Service, eps []*discoveryv1.EndpointSlice, complete bool) *Report {
	t.Helper()
	rep := p.Reconcile(context.Background(), svcs, eps, complete)
	if rep.Err != nil {
		t.Fatalf("reconcile: %v", rep.Err)
	}
	return rep
}

func id(addr string) string { return InstanceID("blue", "shop", "web", addr, 8080) }

// TestPublisherLifecycle runs the publisher against the sandbox's Cloud Map API over HTTP
// through one Service's life and counts the calls each reconcile makes.
func TestPublisherLifecycle(t *testing.T) {
	f := newFixture(t)
	// A foreign registrar's instance with attributes like crossfade's but another owner,
	// and one with no owner whose id looks like blue's.
	lookalike := id("10.0.1.1")[:len("blue-")] + strings.Repeat("0", 24)
	f.foreign("green-1", map[string]string{AttrIPv4: "10.0.2.1", AttrPort: "8080", AttrCluster: "green", AttrOwner: "green", AttrResource: "service/shop/web"})
	f.foreign(lookalike, map[string]string{AttrIPv4: "10.0.9.9", AttrPort: "8080", AttrCluster: "blue"})
	foreign := func() map[string]map[string]string {
		all := f.instances()
		return map[string]map[string]string{"green-1": all["green-1"], lookalike: all[lookalike]}
	}
	before := foreign()
	p := f.publisher("blue")
	svcs, eps := web("10.0.1.1", "10.0.1.2")

	calls := sandboxtest.APICalls(t, f.sb)
	rep := reconcile(t, p, svcs, eps, true)
	if rep.Written[Register] != 2 || len(rep.Problems) != 0 || rep.Instances[Target{"corp.local", "api"}] != 2 {
		t.Fatalf("first reconcile: %+v", rep)
	}
	// One lookup each, one list, and per registration a read, the call and the operation.
	if c := f.calls(calls); fmt.Sprint(c) != "map[GetInstance:2 GetOperation:2 ListInstances:1 ListNamespaces:1 ListServices:1 RegisterInstance:2]" {
		t.Errorf("first reconcile's calls: %v", c)
	}
	got := f.instances()
	wantAttrs := map[string]string{AttrIPv4: "10.0.1.1", AttrPort: "8080", AttrCluster: "blue", AttrVersion: "v1", "env": "prod",
		AttrOwner: "blue", AttrResource: "service/shop/web"}
	if !maps.Equal(got[id("10.0.1.1")], wantAttrs) || got[id("10.0.1.2")][AttrIPv4] != "10.0.1.2" {
		t.Fatalf("instances %v", got)
	}

	// Nothing changed: no call at all.
	calls = sandboxtest.APICalls(t, f.sb)
	for range 3 {
		if rep := reconcile(t, p, svcs, eps, true); len(rep.Written) != 0 {
			t.Fatalf("wrote with nothing changed: %v", rep.Written)
		}
	}
	if c := f.calls(calls); len(c) != 0 {
		t.Errorf("calls while nothing changed: %v", c)
	}

	// The version changes: both registered again. One endpoint goes, one comes.
	svcs[0].Labels[LabelVersion] = "v2"
	reconcile(t, p, svcs, eps, true)
	_, eps = web("10.0.1.2", "10.0.1.3")
	calls = sandboxtest.APICalls(t, f.sb)
	rep = reconcile(t, p, svcs, eps, true)
	if rep.Written[Register] != 1 || rep.Written[Deregister] != 1 {
		t.Errorf("endpoint replaced: %v", rep.Written)
	}
	if c := f.calls(calls); c["RegisterInstance"] != 1 || c["DeregisterInstance"] != 1 || c["ListInstances"] != 0 {
		t.Errorf("endpoint replaced: calls %v", c)
	}
	got = f.instances()
	if _, ok := got[id("10.0.1.1")]; ok || got[id("10.0.1.2")][AttrVersion] != "v2" || got[id("10.0.1.3")][AttrVersion] != "v2" {
		t.Errorf("after the replacement: %v", got)
	}

	// Objects not all known: what nothing asks for is kept.
	rep = reconcile(t, p, nil, nil, false)
	if len(rep.Written) != 0 || len(f.instances()) != 4 {
		t.Errorf("incomplete objects deregistered something: %v", rep.Written)
	}
	// The annotation turns invalid: its instances are kept, and it is reported.
	bad := svcs[0].DeepCopy()
	bad.Annotations[AnnotationAttributes] = "cluster=green"
	rep = reconcile(t, p, []*corev1.Service{bad}, eps, true)
	if len(rep.Written) != 0 || len(rep.Invalid) != 1 || len(f.instances()) != 4 {
		t.Errorf("invalid annotation: written %v, invalid %v", rep.Written, rep.Invalid)
	}
	// The Service goes while no controller runs. A restarted one that no Service tells
	// about corp.local has nothing to look at; one given the namespace
	// (--cloudmap-namespace) finds blue's instances there and deregisters them, no other.
	calls = sandboxtest.APICalls(t, f.sb)
	if rep := reconcile(t, f.publisher("blue"), nil, nil, true); len(rep.Written) != 0 || len(f.calls(calls)) != 0 {
		t.Errorf("a publisher with nothing to publish wrote %v, called %v", rep.Written, f.calls(calls))
	}
	scoped := f.publisher("blue", func(c *Config) { c.Identity.Namespaces = []string{"corp.local"} })
	if rep := reconcile(t, scoped, nil, nil, true); rep.Written[Deregister] != 2 {
		t.Errorf("Service deleted: %v", rep.Written)
	}
	if after := f.instances(); len(after) != 2 || !maps.EqualFunc(foreign(), before, maps.Equal) {
		t.Errorf("after blue left: %v, foreign instances before %v", after, before)
	}
	// The first publisher still has blue's instances cached: it reads each before the
	// write, finds it gone, writes nothing, and then forgets the namespace.
	if rep := reconcile(t, p, nil, nil, true); len(rep.Written) != 0 {
		t.Errorf("wrote over instances already gone: %v", rep.Written)
	}
	calls = sandboxtest.APICalls(t, f.sb)
	if rep := reconcile(t, p, nil, nil, true); len(rep.Written) != 0 || len(p.namespaces) != 0 || len(f.calls(calls)) != 0 {
		t.Errorf("after the namespace emptied: written %v, namespaces %v, calls %v", rep.Written, p.namespaces, f.calls(calls))
	}
}

// TestPublisherNeverTouchesOthers: an instance of another owner under the id crossfade
// wants is a conflict, found from the list and, when it appears after the list, from the
// read before the write; an instance of crossfade's that another registrar took over is
// not deregistered.
func TestPublisherNeverTouchesOthers(t *testing.T) {
	f := newFixture(t)
	taken := map[string]string{AttrIPv4: "10.0.9.1", AttrPort: "80", "team": "legacy"}
	f.foreign(id("10.0.1.1"), taken)
	p := f.publisher("blue")
	svcs, eps := web("10.0.1.1", "10.0.1.2")
	rep := reconcile(t, p, svcs, eps, true)
	if rep.Written[Register] != 1 || len(rep.Problems) != 1 || rep.Problems[0].Kind != ProblemConflict || rep.Problems[0].ID != id("10.0.1.1") ||
		rep.Problems[0].Object.Name != "web" || !strings.Contains(rep.Problems[0].Message, "another registrar") {
		t.Fatalf("conflict from the list: %+v", rep)
	}
	// Again: still a conflict, nothing sent.
	calls := sandboxtest.APICalls(t, f.sb)
	if rep := reconcile(t, p, svcs, eps, true); len(rep.Problems) != 1 || len(rep.Written) != 0 {
		t.Errorf("second reconcile: %+v", rep)
	}
	if c := f.calls(calls); len(c) != 0 {
		t.Errorf("calls with a standing conflict: %v", c)
	}

	// After the list: green registers the id blue's next endpoint will have.
	f.foreign(id("10.0.1.3"), map[string]string{AttrIPv4: "10.0.2.3", AttrPort: "8080", AttrOwner: "green"})
	_, eps = web("10.0.1.1", "10.0.1.2", "10.0.1.3")
	calls = sandboxtest.APICalls(t, f.sb)
	rep = reconcile(t, p, svcs, eps, true)
	if len(rep.Written) != 0 || len(rep.Problems) != 2 || !strings.Contains(rep.Problems[1].Message, `owner "green"`) {
		t.Errorf("conflict found by the read: %+v", rep)
	}
	if c := f.calls(calls); c["RegisterInstance"] != 0 || c["GetInstance"] != 1 {
		t.Errorf("calls: %v", c)
	}
	// Another registrar took over blue's instance of 10.0.1.2; blue stops wanting it.
	f.foreign(id("10.0.1.2"), map[string]string{AttrIPv4: "10.0.1.2", AttrPort: "8080", AttrOwner: "someone"})
	_, eps = web("10.0.1.1")
	rep = reconcile(t, p, svcs, eps, true)
	if len(rep.Written) != 0 {
		t.Errorf("deregistered an instance another registrar holds: %v", rep.Written)
	}
	got := f.instances()
	if !maps.Equal(got[id("10.0.1.1")], taken) || got[id("10.0.1.2")][AttrOwner] != "someone" || got[id("10.0.1.3")][AttrOwner] != "green" {
		t.Errorf("others' instances changed: %v", got)
	}
}

// TestPublisherRefusalsAndFailures: an instance Cloud Map refuses (an IPv6 address in a
// service with only an A record) is reported and held back, the rest registered; a
// registration whose answer is lost is not known to have landed, so the next reconcile
// lists the service again and finds it.
func TestPublisherRefusalsAndFailures(t *testing.T) {
	f := newFixture(t)
	now := time.Unix(1_800_000_000, 0)
	p := f.publisher("blue", func(c *Config) { c.Now = func() time.Time { return now } })
	svcs, eps := web("10.0.1.1")
	eps = append(eps, slice("web-6", discoveryv1.AddressTypeIPv6, ep("fd00::1", nil)))
	rep := p.Reconcile(context.Background(), svcs, eps, true)
	if rep.Err != nil || rep.Written[Register] != 1 || len(rep.Problems) != 1 || rep.Problems[0].Kind != ProblemRefused ||
		!strings.Contains(rep.Problems[0].Message, "InvalidInput") {
		t.Fatalf("refusal: %+v", rep)
	}
	calls := sandboxtest.APICalls(t, f.sb)
	rep = p.Reconcile(context.Background(), svcs, eps, true)
	if len(rep.Problems) != 1 || c(f.calls(calls), "RegisterInstance") != 0 {
		t.Errorf("held back: %+v, calls %v", rep.Problems, f.calls(calls))
	}
	now = now.Add(2 * time.Minute) // past the first backoff: sent again
	calls = sandboxtest.APICalls(t, f.sb)
	p.Reconcile(context.Background(), svcs, eps, true)
	if c(f.calls(calls), "RegisterInstance") != 1 {
		t.Errorf("not sent again after the backoff: %v", f.calls(calls))
	}

	// The registration lands but every answer is lost.
	sandboxtest.SetFaults(t, f.sb, `{"commitThenFailRate": 1, "operations": ["RegisterInstance"]}`)
	_, eps = web("10.0.1.1", "10.0.1.2")
	rep = p.Reconcile(context.Background(), svcs, eps, true)
	if rep.Err == nil {
		t.Fatalf("a lost answer is not an error: %+v", rep)
	}
	sandboxtest.SetFaults(t, f.sb, `{}`)
	calls = sandboxtest.APICalls(t, f.sb)
	rep = reconcile(t, p, svcs, eps, true)
	if cs := f.calls(calls); cs["ListInstances"] != 1 || cs["RegisterInstance"] != 0 || len(rep.Written) != 0 {
		t.Errorf("after the lost answer: calls %v, written %v", cs, rep.Written)
	}
	if got := f.instances(); len(got) != 2 {
		t.Errorf("instances %v", got)
	}
}

func c(calls map[string]int, op string) int { return calls[op] }

// TestPublisherKeepsWhatItCouldNotRead: one throttled list of a service is not "no
// problems there": the refusal stays held (nothing is sent again before its backoff) and
// the report still carries the service's problems, so that no event is sent again and no
// gauge drops; the same when the namespace's lookup fails.
func TestPublisherKeepsWhatItCouldNotRead(t *testing.T) {
	for _, tc := range []struct {
		name, failing string
	}{
		{"service list throttled", "ListInstances"},
		{"namespace lookup throttled", "ListNamespaces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			now := time.Unix(1_800_000_000, 0)
			// A resync shorter than the first backoff (1 m): the namespace is looked up
			// again while the refusal is still held.
			p := f.publisher("blue", func(c *Config) { c.Now, c.Resync = func() time.Time { return now }, 30*time.Second })
			svcs, eps := web("10.0.1.1")
			eps = append(eps, slice("web-6", discoveryv1.AddressTypeIPv6, ep("fd00::1", nil)))
			first := p.Reconcile(context.Background(), svcs, eps, true)
			if len(first.Problems) != 1 || first.Problems[0].Kind != ProblemRefused {
				t.Fatalf("want one refusal to start from: %+v", first)
			}
			// Past the resync, inside the backoff.
			now = now.Add(40 * time.Second)
			sandboxtest.SetFaults(t, f.sb, `{"throttleRate": 1, "operations": ["`+tc.failing+`"]}`)
			calls := sandboxtest.APICalls(t, f.sb)
			rep := p.Reconcile(context.Background(), svcs, eps, true)
			if rep.Err == nil || f.calls(calls)[tc.failing] == 0 {
				t.Fatalf("the fault did not bite: err %v, calls %v", rep.Err, f.calls(calls))
			}
			if len(rep.Problems) != 1 || rep.Problems[0] != first.Problems[0] {
				t.Errorf("problems while the service could not be read: %+v, want the last ones %+v", rep.Problems, first.Problems)
			}
			sandboxtest.SetFaults(t, f.sb, `{}`)
			calls = sandboxtest.APICalls(t, f.sb)
			rep = p.Reconcile(context.Background(), svcs, eps, true)
			if n := f.calls(calls)["RegisterInstance"]; n != 0 {
				t.Errorf("the refused registration was sent again %d times inside its backoff: its refusal was forgotten", n)
			}
			if len(rep.Problems) != 1 || rep.Problems[0].Message != first.Problems[0].Message {
				t.Errorf("problems once read again: %+v, want the same message as before (one event)", rep.Problems)
			}
		})
	}
}

// TestPublisherLookups: a namespace or service Cloud Map lacks is reported on the Service
// and holds its instances; it is looked up again after a minute, not at every reconcile;
// a dry run sends nothing.
func TestPublisherLookups(t *testing.T) {
	f := newFixture(t)
	now := time.Unix(1_800_000_000, 0)
	p := f.publisher("blue", func(c *Config) { c.Now = func() time.Time { return now } })
	svcs, eps := web("10.0.1.1")
	svcs[0].Annotations[AnnotationService] = "corp.local/orders"
	rep := reconcile(t, p, svcs, eps, true)
	if len(rep.Invalid) != 1 || !strings.Contains(rep.Invalid[0].Reason, `no service named "orders"`) {
		t.Fatalf("missing service: %+v", rep.Invalid)
	}
	calls := sandboxtest.APICalls(t, f.sb)
	reconcile(t, p, svcs, eps, true)
	if cs := f.calls(calls); len(cs) != 0 {
		t.Errorf("looked up again at once: %v", cs)
	}
	now = now.Add(time.Minute)
	calls = sandboxtest.APICalls(t, f.sb)
	reconcile(t, p, svcs, eps, true)
	if cs := f.calls(calls); cs["ListServices"] != 1 {
		t.Errorf("not looked up again after a minute: %v", cs)
	}
	svcs[0].Annotations[AnnotationService] = "nowhere/api"
	rep = reconcile(t, p, svcs, eps, true)
	if len(rep.Invalid) != 1 || !strings.Contains(rep.Invalid[0].Reason, `no namespace named "nowhere"`) {
		t.Errorf("missing namespace: %+v", rep.Invalid)
	}

	dry := f.publisher("blue", func(c *Config) { c.DryRun = true })
	svcs, eps = web("10.0.1.1")
	calls = sandboxtest.APICalls(t, f.sb)
	rep = reconcile(t, dry, svcs, eps, true)
	if rep.Written[Register] != 1 || len(f.instances()) != 0 {
		t.Errorf("dry run: written %v, instances %v", rep.Written, f.instances())
	}
	for op := range f.calls(calls) {
		if !slices.Contains([]string{"ListNamespaces", "ListServices", "ListInstances"}, op) {
			t.Errorf("dry run called %s", op)
		}
	}
}
