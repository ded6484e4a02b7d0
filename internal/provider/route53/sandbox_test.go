package route53

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// startSandbox runs an in-memory sandbox on free loopback ports for the test.
func startSandbox(t *testing.T) *sandbox.Sandbox { return sandboxtest.Start(t) }

// newTestProvider points a provider at sb through the real SDK, with static credentials so
// the test does not depend on the machine's AWS configuration.
func newTestProvider(t *testing.T, sb *sandbox.Sandbox, cfg Config) *Provider {
	t.Helper()
	cfg.Endpoint = sb.APIURL()
	cfg.Region = "us-east-1"
	cfg.Credentials = credentials.NewStaticCredentialsProvider("test", "test", "")
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 5 * time.Millisecond
	}
	p, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func createZone(t *testing.T, sb *sandbox.Sandbox, name string, private bool) provider.Zone {
	t.Helper()
	z, _, err := sb.Store().CreateZone(name, "ref-"+name+strconv.FormatBool(private), "", private)
	if err != nil {
		t.Fatalf("create zone %s: %v", name, err)
	}
	return provider.Zone{ID: z.ID, Name: name, Private: private}
}

// apiCalls reads the sandbox's API-call counters, keyed by "operation result".
func apiCalls(t *testing.T, sb *sandbox.Sandbox) map[string]int { return sandboxtest.APICalls(t, sb) }

func zoneNames(zs []provider.Zone) []string {
	var out []string
	for _, z := range zs {
		out = append(out, z.Name)
	}
	slices.Sort(out)
	return out
}

func TestZonesFilters(t *testing.T) {
	sb := startSandbox(t)
	ex := createZone(t, sb, "example.com", false)
	createZone(t, sb, "example.com", true)
	createZone(t, sb, "sub.example.com", false)
	org := createZone(t, sb, "example.org", false)
	createZone(t, sb, "internal.corp", true)
	// Enough zones to need a second ListHostedZones page (100 per page).
	for i := range 100 {
		createZone(t, sb, fmt.Sprintf("filler%03d.test", i), false)
	}

	for _, tc := range []struct {
		name string
		cfg  Config
		want []string
	}{
		{"domain filter", Config{DomainFilter: endpoint.NewDomainFilter([]string{"example.com"}, nil)},
			[]string{"example.com", "example.com", "sub.example.com"}},
		{"domain filter below a zone", Config{DomainFilter: endpoint.NewDomainFilter([]string{"app.sub.example.com"}, nil)},
			[]string{"example.com", "example.com", "sub.example.com"}},
		{"exclude", Config{DomainFilter: endpoint.NewDomainFilter([]string{"example.com", "example.org"}, []string{"sub.example.com"})},
			[]string{"example.com", "example.com", "example.org"}},
		{"public", Config{ZoneType: ZoneTypePublic, DomainFilter: endpoint.NewDomainFilter([]string{"example.com", "corp"}, nil)},
			[]string{"example.com", "sub.example.com"}},
		{"private", Config{ZoneType: ZoneTypePrivate}, []string{"example.com", "internal.corp"}},
		{"zone ids", Config{ZoneIDs: []string{ex.ID, "/hostedzone/" + org.ID}}, []string{"example.com", "example.org"}},
		{"zone ids and private", Config{ZoneIDs: []string{ex.ID, org.ID}, ZoneType: ZoneTypePrivate}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestProvider(t, sb, tc.cfg)
			zs, err := p.Zones(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := zoneNames(zs); !slices.Equal(got, tc.want) {
				t.Fatalf("zones = %v, want %v", got, tc.want)
			}
			for _, z := range zs {
				if z.Name == "example.com" && z.ID == ex.ID && z.Private {
					t.Fatalf("public zone reported private: %+v", z)
				}
			}
		})
	}

	// 105 zones, 100 per page: every Zones call takes two ListHostedZones calls.
	before := apiCalls(t, sb)["ListHostedZones ok"]
	p := newTestProvider(t, sb, Config{})
	zs, err := p.Zones(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(zs) != 105 {
		t.Fatalf("unfiltered: %d zones, want 105", len(zs))
	}
	if calls := apiCalls(t, sb)["ListHostedZones ok"] - before; calls != 2 {
		t.Fatalf("ListHostedZones calls = %d, want 2", calls)
	}

	if _, err := New(context.Background(), Config{ZoneType: "both"}); err == nil || !strings.Contains(err.Error(), `zone type "both"`) {
		t.Fatalf("bad zone type: %v", err)
	}
}

func apply(t *testing.T, p *Provider, z provider.Zone, b changes.Batch) {
	t.Helper()
	if err := p.Apply(context.Background(), z, b); err != nil {
		t.Fatal(err)
	}
}

func records(t *testing.T, p *Provider, z provider.Zone) []*endpoint.Endpoint {
	t.Helper()
	rs, err := p.Records(context.Background(), z)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// managed drops the SOA and apex NS that every zone has.
func managed(rs []*endpoint.Endpoint) []*endpoint.Endpoint {
	return slices.DeleteFunc(slices.Clone(rs), func(e *endpoint.Endpoint) bool { return e.Type == "SOA" || e.Type == "NS" })
}

func byKey(rs []*endpoint.Endpoint) map[endpoint.Key]*endpoint.Endpoint {
	m := map[endpoint.Key]*endpoint.Endpoint{}
	for _, e := range rs {
		m[e.Key()] = e
	}
	return m
}

// roundTripSet is one of each kind of record set crossfade writes.
func roundTripSet() []*endpoint.Endpoint {
	return []*endpoint.Endpoint{
		{Name: "simple.example.com", Type: "A", TTL: 60, Targets: endpoint.Targets{"192.0.2.1", "192.0.2.2"}},
		{Name: "app.example.com", Type: "A", TTL: 60, SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(90), Targets: endpoint.Targets{"192.0.2.10"}},
		{Name: "app.example.com", Type: "A", TTL: 60, SetIdentifier: "green", Policy: endpoint.WeightedPolicy(0), Targets: endpoint.Targets{"192.0.2.20"}},
		{Name: "fo.example.com", Type: "CNAME", TTL: 30, SetIdentifier: "one", Policy: endpoint.FailoverPolicy(endpoint.Primary),
			Targets: endpoint.Targets{"one.example.net"}, ProviderSpecific: props(endpoint.PropHealthCheckID, "11111111-2222-3333-4444-555555555555")},
		{Name: "fo.example.com", Type: "CNAME", TTL: 30, SetIdentifier: "two", Policy: endpoint.FailoverPolicy(endpoint.Secondary),
			Targets: endpoint.Targets{"two.example.net"}},
		{Name: "www.example.com", Type: "A", Targets: endpoint.Targets{"simple.example.com"},
			ProviderSpecific: props(endpoint.PropAlias, "true", endpoint.PropEvaluateTargetHealth, "false")},
		{Name: "apex-alias.example.com", Type: "A", Targets: endpoint.Targets{"app.example.com"},
			ProviderSpecific: props(endpoint.PropAlias, "true")},
		{Name: "a-app.example.com", Type: "TXT", TTL: 300, SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(90),
			Targets: endpoint.Targets{`"heritage=external-dns,external-dns/owner=Blue,external-dns/resource=service/default/App"`}},
		{Name: "*.example.com", Type: "A", TTL: 300, Targets: endpoint.Targets{"192.0.2.99"}},
		{Name: "txt.example.com", Type: "TXT", TTL: 300, Targets: endpoint.Targets{`"a b" "c"`, `"v=spf1 -all"`}},
		{Name: "mail.example.com", Type: "MX", TTL: 300, Targets: endpoint.Targets{"10 mx1.example.net", "20 mx2.example.net"}},
	}
}

func TestRecordsRoundTrip(t *testing.T) {
	sb := startSandbox(t)
	z := createZone(t, sb, "example.com", false)
	p := newTestProvider(t, sb, Config{})
	want := roundTripSet()
	var create changes.Batch
	for _, e := range want {
		create = append(create, changes.Change{Action: changes.Create, Endpoint: e})
	}
	apply(t, p, z, create)

	got := records(t, p, z)
	if n := len(got) - len(managed(got)); n != 2 {
		t.Fatalf("want SOA and apex NS returned too, got %d others", n)
	}
	gotByKey := byKey(managed(got))
	if len(gotByKey) != len(want) {
		t.Fatalf("read %d record sets, wrote %d: %v", len(gotByKey), len(want), managed(got))
	}
	for _, w := range want {
		g := gotByKey[w.Key()]
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n read  %#v\n wrote %#v", w.Key(), g, w)
		}
	}
	if g := gotByKey[endpoint.Key{Name: "*.example.com", Type: "A"}]; g == nil {
		t.Error("wildcard not read back as *.example.com")
	}

	// Every record read back deletes exactly: DELETE needs every value to match. Aliases
	// go first: Route 53 refuses to delete an alias target that an alias still points at.
	var del changes.Batch
	for _, e := range managed(got) {
		del = append(del, changes.Change{Action: changes.Delete, Endpoint: e})
	}
	slices.SortStableFunc(del, func(a, b changes.Change) int {
		return boolInt(!a.Endpoint.IsAlias()) - boolInt(!b.Endpoint.IsAlias())
	})
	apply(t, p, z, del)
	if left := managed(records(t, p, z)); len(left) != 0 {
		t.Fatalf("left after deleting all: %v", left)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestApplyRoutingTransition is the field problem of external-dns issue 1411: a simple
// record becomes weighted in one atomic batch, with no window without an answer.
func TestApplyRoutingTransition(t *testing.T) {
	sb := startSandbox(t)
	z := createZone(t, sb, "example.com", false)
	p := newTestProvider(t, sb, Config{})
	simple := &endpoint.Endpoint{Name: "app.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.1"}}
	txt := &endpoint.Endpoint{Name: "a-app.example.com", Type: "TXT", Targets: endpoint.Targets{`"heritage=external-dns,external-dns/owner=blue"`}}
	apply(t, p, z, changes.Batch{{Action: changes.Create, Endpoint: simple}, {Action: changes.Create, Endpoint: txt}})

	cur := byKey(records(t, p, z))
	weighted := &endpoint.Endpoint{Name: "app.example.com", Type: "A", SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(1), Targets: endpoint.Targets{"192.0.2.1"}}
	wtxt := &endpoint.Endpoint{Name: "a-app.example.com", Type: "TXT", SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(1), Targets: txt.Targets}
	before := apiCalls(t, sb)["ChangeResourceRecordSets ok"]
	apply(t, p, z, changes.Batch{
		{Action: changes.Delete, Endpoint: cur[simple.Key()]},
		{Action: changes.Delete, Endpoint: cur[txt.Key()]},
		{Action: changes.Create, Endpoint: weighted},
		{Action: changes.Create, Endpoint: wtxt},
	})
	if n := apiCalls(t, sb)["ChangeResourceRecordSets ok"] - before; n != 1 {
		t.Fatalf("ChangeResourceRecordSets calls = %d, want 1", n)
	}
	after := byKey(managed(records(t, p, z)))
	if len(after) != 2 || after[weighted.Key()] == nil || after[wtxt.Key()] == nil {
		t.Fatalf("after transition: %v", after)
	}
	if g := after[weighted.Key()]; g.Policy != endpoint.WeightedPolicy(1) || g.TTL != DefaultTTL {
		t.Fatalf("weighted record read back as %#v", g)
	}
}

func TestApplyRejected(t *testing.T) {
	sb := startSandbox(t)
	z := createZone(t, sb, "example.com", false)
	p := newTestProvider(t, sb, Config{})
	existing := &endpoint.Endpoint{Name: "www.example.com", Type: "A", TTL: 60, Targets: endpoint.Targets{"192.0.2.1"}}
	apply(t, p, z, changes.Batch{{Action: changes.Create, Endpoint: existing}})
	before := records(t, p, z)

	for _, tc := range []struct {
		name  string
		batch changes.Batch
		code  string
		msg   string
	}{
		{"create existing after a valid change", changes.Batch{
			{Action: changes.Create, Endpoint: &endpoint.Endpoint{Name: "new.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.7"}}},
			{Action: changes.Create, Endpoint: existing},
		}, "InvalidChangeBatch", "Tried to create resource record set [name='www.example.com.', type='A'] but it already exists"},
		{"delete with other values", changes.Batch{
			{Action: changes.Delete, Endpoint: &endpoint.Endpoint{Name: "www.example.com", Type: "A", TTL: 60, Targets: endpoint.Targets{"192.0.2.9"}}},
		}, "InvalidChangeBatch", "the values provided do not match the current values"},
		{"weighted beside simple", changes.Batch{
			{Action: changes.Create, Endpoint: &endpoint.Endpoint{Name: "www.example.com", Type: "A", SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(1), Targets: endpoint.Targets{"192.0.2.1"}}},
		}, "InvalidChangeBatch", "cannot be created as a non-weighted set exists"},
		{"weight out of range", changes.Batch{
			{Action: changes.Create, Endpoint: &endpoint.Endpoint{Name: "w.example.com", Type: "A", SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(256), Targets: endpoint.Targets{"192.0.2.1"}}},
		}, "InvalidInput", "less than or equal to 255"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := p.Apply(context.Background(), z, tc.batch)
			var rej *provider.RejectedError
			if !errors.As(err, &rej) {
				t.Fatalf("err = %v (%T), want a *provider.RejectedError", err, err)
			}
			if rej.Code != tc.code || rej.Zone != z || len(rej.Messages) == 0 || !strings.Contains(strings.Join(rej.Messages, "\n"), tc.msg) {
				t.Fatalf("rejected = %+v", rej)
			}
			prefix := fmt.Sprintf("zone example.com (%s): apply %d changes: change batch rejected: %s: ", z.ID, len(tc.batch), tc.code)
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Fatalf("error %q\nwant prefix %q", err, prefix)
			}
			if after := records(t, p, z); !reflect.DeepEqual(after, before) {
				t.Fatalf("zone changed by a rejected batch:\n before %v\n after  %v", before, after)
			}
		})
	}
	// A batch that cannot be converted is refused before any call.
	calls := apiCalls(t, sb)["ChangeResourceRecordSets InvalidChangeBatch"]
	err := p.Apply(context.Background(), z, changes.Batch{{Action: changes.Create, Endpoint: &endpoint.Endpoint{
		Name: "x.example.com", Type: "A", Targets: endpoint.Targets{"lb.example.org"}, ProviderSpecific: props(endpoint.PropAlias, "true")}}})
	if err == nil || !strings.Contains(err.Error(), "change 1 (CREATE x.example.com A): alias target lb.example.org") {
		t.Fatalf("unresolvable alias: %v", err)
	}
	if errors.As(err, new(*provider.RejectedError)) || apiCalls(t, sb)["ChangeResourceRecordSets InvalidChangeBatch"] != calls {
		t.Fatal("unresolvable alias reached Route 53")
	}
}

func TestRecordsPaging(t *testing.T) {
	sb := startSandbox(t)
	z := createZone(t, sb, "example.com", false)
	p := newTestProvider(t, sb, Config{})
	const n = 650
	var batch changes.Batch
	for i := range n {
		batch = append(batch, changes.Change{Action: changes.Create, Endpoint: &endpoint.Endpoint{
			Name: fmt.Sprintf("h%04d.example.com", i), Type: "A", Targets: endpoint.Targets{fmt.Sprintf("10.0.%d.%d", i/250, i%250+1)}}})
	}
	apply(t, p, z, batch)
	before := apiCalls(t, sb)["ListResourceRecordSets ok"]
	got := records(t, p, z)
	if len(got) != n+2 {
		t.Fatalf("read %d record sets, want %d", len(got), n+2)
	}
	// 652 sets at 300 per page.
	if calls := apiCalls(t, sb)["ListResourceRecordSets ok"] - before; calls != 3 {
		t.Fatalf("ListResourceRecordSets calls = %d, want 3", calls)
	}
	seen := map[string]bool{}
	for _, e := range got {
		if seen[e.Key().String()] {
			t.Fatalf("%s read twice across pages", e.Key())
		}
		seen[e.Key().String()] = true
	}
}

// clearingTransport clears the sandbox's faults once it has seen `after` answers to
// requests of operation path, so a fault hits exactly the first attempts.
type clearingTransport struct {
	sb     *sandbox.Sandbox
	after  int32
	seen   atomic.Int32
	method string
	path   string
}

func (c *clearingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if r.Method == c.method && strings.Contains(r.URL.Path, c.path) && c.seen.Add(1) == c.after {
		req, _ := http.NewRequest(http.MethodPut, c.sb.APIURL()+"/_sandbox/faults", strings.NewReader(`{}`))
		if r2, err2 := http.DefaultTransport.RoundTrip(req); err2 == nil {
			r2.Body.Close()
		}
	}
	return resp, err
}

func TestApplyRetries(t *testing.T) {
	for _, tc := range []struct {
		name, faults, code string
	}{
		{"throttling", `{"throttleRate": 1, "operations": ["ChangeResourceRecordSets"]}`, "Throttling"},
		{"prior request not complete", `{"priorRequestRate": 1, "operations": ["ChangeResourceRecordSets"]}`, "PriorRequestNotComplete"},
		{"server error", `{"serverErrorRate": 1, "operations": ["ChangeResourceRecordSets"]}`, "InternalFailure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := startSandbox(t)
			z := createZone(t, sb, "example.com", false)
			tr := &clearingTransport{sb: sb, after: 2, method: http.MethodPost, path: "/rrset"}
			p := newTestProvider(t, sb, Config{HTTPClient: &http.Client{Transport: tr}})
			sandboxtest.SetFaults(t, sb, tc.faults)
			apply(t, p, z, changes.Batch{{Action: changes.Create, Endpoint: &endpoint.Endpoint{Name: "a.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.1"}}}})
			calls := apiCalls(t, sb)
			if calls["ChangeResourceRecordSets "+tc.code] != 2 || calls["ChangeResourceRecordSets ok"] != 1 {
				t.Fatalf("calls = %v, want 2 × %s then 1 ok", calls, tc.code)
			}
		})
	}

	t.Run("gives up after MaxRetries", func(t *testing.T) {
		sb := startSandbox(t)
		z := createZone(t, sb, "example.com", false)
		p := newTestProvider(t, sb, Config{MaxRetries: 2})
		sandboxtest.SetFaults(t, sb, `{"throttleRate": 1, "operations": ["ChangeResourceRecordSets"]}`)
		err := p.Apply(context.Background(), z, changes.Batch{{Action: changes.Create, Endpoint: &endpoint.Endpoint{Name: "a.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.1"}}}})
		if err == nil || errors.As(err, new(*provider.RejectedError)) || !strings.Contains(err.Error(), "Throttling") {
			t.Fatalf("err = %v, want a throttling error that is not a rejection", err)
		}
		if n := apiCalls(t, sb)["ChangeResourceRecordSets Throttling"]; n != 3 {
			t.Fatalf("attempts = %d, want 3 (1 + 2 retries)", n)
		}
	})

	t.Run("list calls retry too", func(t *testing.T) {
		sb := startSandbox(t)
		z := createZone(t, sb, "example.com", false)
		tr := &clearingTransport{sb: sb, after: 1, method: http.MethodGet, path: "/rrset"}
		p := newTestProvider(t, sb, Config{HTTPClient: &http.Client{Transport: tr}})
		if _, err := p.Zones(context.Background()); err != nil {
			t.Fatal(err)
		}
		sandboxtest.SetFaults(t, sb, `{"throttleRate": 1, "operations": ["ListResourceRecordSets"]}`)
		if got := records(t, p, z); len(got) != 2 {
			t.Fatalf("records = %v", got)
		}
		calls := apiCalls(t, sb)
		if calls["ListResourceRecordSets Throttling"] != 1 || calls["ListResourceRecordSets ok"] != 1 {
			t.Fatalf("calls = %v", calls)
		}
	})
}

func TestDryRunMatchesApply(t *testing.T) {
	sb := startSandbox(t)
	z := createZone(t, sb, "example.com", false)
	p := newTestProvider(t, sb, Config{})
	batch := changes.Batch{{Action: changes.Create, Endpoint: &endpoint.Endpoint{Name: "a.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.1"}}}}
	got, err := p.DryRun(context.Background(), z, batch)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ChangeBatchJSON(z, batch, ChangeComment, []provider.Zone{z})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("DryRun:\n%s\nChangeBatchJSON:\n%s", got, want)
	}
	if calls := apiCalls(t, sb)["ChangeResourceRecordSets ok"]; calls != 0 {
		t.Fatalf("dry run sent %d changes", calls)
	}
}

// TestNewStandardChain finds credentials the way every AWS tool does, here in the
// environment, with no shared files in the way.
func TestNewStandardChain(t *testing.T) {
	sb := startSandbox(t)
	createZone(t, sb, "example.com", false)
	dir := t.TempDir()
	t.Setenv("AWS_ACCESS_KEY_ID", "env-key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
	t.Setenv("AWS_CONFIG_FILE", dir+"/config")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", dir+"/credentials")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	p, err := New(context.Background(), Config{Endpoint: sb.APIURL()}) // no region: DefaultRegion
	if err != nil {
		t.Fatal(err)
	}
	zs, err := p.Zones(context.Background())
	if err != nil || len(zs) != 1 || zs[0].Name != "example.com" {
		t.Fatalf("Zones = %v, %v", zs, err)
	}
}
