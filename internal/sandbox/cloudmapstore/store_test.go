package cloudmapstore

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

func TestCreateNamespace(t *testing.T) {
	f := newFixture(t, Options{})
	httpNS := f.namespace(NamespaceHTTP, "shop", "")
	private := f.namespace(NamespaceDNSPrivate, "corp.local", "vpc-1")
	public := f.namespace(NamespaceDNSPublic, "example.com", "")

	if httpNS.HostedZoneID != "" || httpNS.HTTPName != "shop" || !strings.HasPrefix(httpNS.ID, "ns-") || len(httpNS.ID) != 19 ||
		httpNS.ARN != "arn:aws:servicediscovery:us-east-1:123456789012:namespace/"+httpNS.ID {
		t.Errorf("http namespace %+v", httpNS)
	}
	for _, ns := range []Namespace{private, public} {
		z, err := f.zones.Zone(ns.HostedZoneID)
		if err != nil {
			t.Fatalf("%s: hosted zone: %v", ns.Name, err)
		}
		if z.Name != ns.Name+"." || z.Private != (ns.Type == NamespaceDNSPrivate) || ns.SOATTL == nil || *ns.SOATTL != 900 {
			t.Errorf("%s: zone %+v, namespace %+v", ns.Name, z, ns)
		}
	}

	for _, tc := range []struct {
		name string
		in   CreateNamespaceInput
		code string
		msg  string
	}{
		{"http name taken", CreateNamespaceInput{Type: NamespaceHTTP, Name: "shop"}, CodeNamespaceAlreadyExists, httpNS.ID},
		{"public name taken", CreateNamespaceInput{Type: NamespaceDNSPublic, Name: "Example.COM"}, CodeNamespaceAlreadyExists, public.ID},
		{"no name", CreateNamespaceInput{Type: NamespaceHTTP}, CodeInvalidInput, "Value null at 'name'"},
		{"space in http name", CreateNamespaceInput{Type: NamespaceHTTP, Name: "a b"}, CodeInvalidInput, "regular expression pattern"},
		{"public name not a domain", CreateNamespaceInput{Type: NamespaceDNSPublic, Name: "under_score.com"}, CodeInvalidInput, "regular expression pattern"},
		{"private without vpc", CreateNamespaceInput{Type: NamespaceDNSPrivate, Name: "x.local"}, CodeInvalidInput, "Value null at 'vpc'"},
		{"bad type", CreateNamespaceInput{Type: "DNS", Name: "x"}, CodeInvalidInput, "enum value set"},
		{"soa ttl out of range", CreateNamespaceInput{Type: NamespaceDNSPublic, Name: "x.com", SOATTL: ptr(int64(-1))}, CodeInvalidInput, "greater than or equal to 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.s.CreateNamespace(tc.in)
			wantCode(t, err, tc.code, tc.msg)
		})
	}

	t.Run("already exists names the existing namespace", func(t *testing.T) {
		_, err := f.s.CreateNamespace(CreateNamespaceInput{Type: NamespaceHTTP, Name: "shop"})
		if e := err.(*Error); e.Fields["NamespaceId"] != httpNS.ID {
			t.Errorf("fields %v", e.Fields)
		}
	})
	t.Run("private name taken in the same VPC fails the operation", func(t *testing.T) {
		opID, err := f.s.CreateNamespace(CreateNamespaceInput{Type: NamespaceDNSPrivate, Name: "corp.local", VPC: "vpc-1"})
		if err != nil {
			t.Fatal(err)
		}
		op, _ := f.s.GetOperation(opID)
		if op.Status != StatusFail || op.ErrorCode != OpErrCannotCreateHostedZone || !strings.Contains(op.ErrorMessage, "has already been associated with the hosted zone "+private.HostedZoneID) {
			t.Errorf("operation %+v", op)
		}
		if _, err := f.s.GetNamespace(op.Targets[TargetNamespace]); code(err) != CodeNamespaceNotFound {
			t.Errorf("failed namespace exists: %v", err)
		}
	})
	t.Run("private name in another VPC gets its own HTTP name", func(t *testing.T) {
		other := f.namespace(NamespaceDNSPrivate, "corp.local", "vpc-2")
		if other.HTTPName == "corp.local" || !strings.HasPrefix(other.HTTPName, "corp.local-") {
			t.Errorf("HTTP name %q", other.HTTPName)
		}
	})
	t.Run("a retry with the creator request id returns the first operation", func(t *testing.T) {
		in := CreateNamespaceInput{Type: NamespaceHTTP, Name: "retry", CreatorRequestID: "req-1"}
		first, err := f.s.CreateNamespace(in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := f.s.CreateNamespace(in)
		if err != nil || again != first {
			t.Errorf("retry: %q, %v; first %q", again, err, first)
		}
	})
	t.Run("SOA TTL", func(t *testing.T) {
		opID, err := f.s.CreateNamespace(CreateNamespaceInput{Type: NamespaceDNSPrivate, Name: "soa.local", VPC: "vpc-1", SOATTL: ptr(int64(15))})
		if err != nil {
			t.Fatal(err)
		}
		op, _ := f.s.GetOperation(opID)
		ns, _ := f.s.GetNamespace(op.Targets[TargetNamespace])
		if ns.SOATTL == nil || *ns.SOATTL != 15 || *soaTTL(f.zones, ns.HostedZoneID, "soa.local.") != 15 {
			t.Errorf("SOA TTL %v", ns.SOATTL)
		}
	})
}

func ptr[T any](v T) *T { return &v }

func TestListNamespacesPagesThenFilters(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := newFixture(t, Options{Now: func() time.Time { now = now.Add(time.Second); return now }})
	for i := range 5 {
		typ, vpc := NamespaceHTTP, ""
		if i%2 == 1 {
			typ, vpc = NamespaceDNSPrivate, "vpc-1"
		}
		f.namespace(typ, fmt.Sprintf("ns%d.local", i), vpc)
	}
	for _, tc := range []struct {
		name    string
		filters []Filter
		size    int32
		pages   [][]string
	}{
		{"all, two a page", nil, 2, [][]string{{"ns0.local", "ns1.local"}, {"ns2.local", "ns3.local"}, {"ns4.local"}}},
		// Cloud Map takes MaxResults namespaces, then filters: a page may be empty and still
		// point at the next one.
		{"private, two a page", []Filter{{Name: "TYPE", Values: []string{NamespaceDNSPrivate}}}, 2, [][]string{{"ns1.local"}, {"ns3.local"}, nil}},
		{"name begins with", []Filter{{Name: "NAME", Values: []string{"ns4"}, Condition: "BEGINS_WITH"}}, 100, [][]string{{"ns4.local"}}},
		{"http name", []Filter{{Name: "HTTP_NAME", Values: []string{"ns3.local"}}}, 3, [][]string{nil, {"ns3.local"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got [][]string
			token := ""
			for {
				nss, next, err := f.s.ListNamespaces(ListInput{Filters: slices.Clone(tc.filters), MaxResults: &tc.size, NextToken: token})
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, n := range nss {
					names = append(names, n.Name)
				}
				got = append(got, names)
				if next == "" {
					break
				}
				token = next
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.pages) {
				t.Errorf("pages %v, want %v", got, tc.pages)
			}
		})
	}
	for _, tc := range []struct {
		name string
		in   ListInput
		msg  string
	}{
		{"max results 0", ListInput{MaxResults: ptr(int32(0))}, "greater than or equal to 1"},
		{"max results 101", ListInput{MaxResults: ptr(int32(101))}, "less than or equal to 100"},
		{"bad token", ListInput{NextToken: "!!"}, "NextToken"},
		{"unknown filter", ListInput{Filters: []Filter{{Name: "VPC", Values: []string{"x"}}}}, "enum value set: [HTTP_NAME, NAME, TYPE]"},
		{"EQ with two values", ListInput{Filters: []Filter{{Name: "TYPE", Values: []string{"HTTP", "DNS_PUBLIC"}}}}, "exactly one value"},
		{"IN on namespaces", ListInput{Filters: []Filter{{Name: "TYPE", Values: []string{"HTTP"}, Condition: "IN"}}}, "not supported for the filter TYPE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := f.s.ListNamespaces(tc.in)
			wantCode(t, err, CodeInvalidInput, tc.msg)
		})
	}
}

func TestDeleteNamespace(t *testing.T) {
	f := newFixture(t, Options{})
	ns := f.namespace(NamespaceDNSPrivate, "corp.local", "vpc-1")
	svc := f.service(ns, "api", dnsA(RoutingMultivalue, "A"), false)

	_, err := f.s.DeleteNamespace(ns.ID)
	wantCode(t, err, CodeResourceInUse, "Namespace has associated services; delete the services before deleting the namespace")
	f.register(svc, "i-1", AttrIPv4, "10.0.0.1")
	wantCode(t, f.s.DeleteService(svc.ID), CodeResourceInUse, "Service contains registered instances; delete the instances before deleting the service")
	if _, err := f.s.DeregisterInstance(svc.ID, "i-1"); err != nil {
		t.Fatal(err)
	}
	if err := f.s.DeleteService(svc.ID); err != nil {
		t.Fatal(err)
	}

	// A record someone added through Route 53 keeps the zone, and so the namespace.
	ttl := int64(60)
	extra := zones.RRSet{Name: "extra.corp.local.", Type: "TXT", TTL: &ttl, Records: []string{`"x"`}}
	if _, err := f.zones.Apply(ns.HostedZoneID, "", []zones.Change{{Action: zones.Create, Set: extra}}); err != nil {
		t.Fatal(err)
	}
	opID, err := f.s.DeleteNamespace(ns.ID)
	if err != nil {
		t.Fatal(err)
	}
	if op, _ := f.s.GetOperation(opID); op.Status != StatusFail || !strings.Contains(op.ErrorMessage, "non-required resource record sets") {
		t.Fatalf("operation %+v", op)
	}
	if _, err := f.s.GetNamespace(ns.ID); err != nil {
		t.Fatalf("namespace gone after a failed delete: %v", err)
	}
	if _, err := f.zones.Apply(ns.HostedZoneID, "", []zones.Change{{Action: zones.Delete, Set: extra}}); err != nil {
		t.Fatal(err)
	}
	opID, err = f.s.DeleteNamespace(ns.ID)
	if err != nil {
		t.Fatal(err)
	}
	if op, _ := f.s.GetOperation(opID); op.Status != StatusSuccess || op.Type != OpDeleteNamespace || op.Targets[TargetNamespace] != ns.ID {
		t.Errorf("operation %+v", op)
	}
	if _, err := f.zones.Zone(ns.HostedZoneID); err == nil {
		t.Error("hosted zone outlived its namespace")
	}
	_, err = f.s.DeleteNamespace(ns.ID)
	wantCode(t, err, CodeNamespaceNotFound, ns.ID)
	_, err = f.s.GetNamespace("")
	wantCode(t, err, CodeInvalidInput, "Value null at 'id' failed to satisfy constraint: Member must not be null")
}

func TestCreateService(t *testing.T) {
	f := newFixture(t, Options{})
	httpNS := f.namespace(NamespaceHTTP, "shop", "")
	dnsNS := f.namespace(NamespaceDNSPrivate, "corp.local", "vpc-1")
	api := f.service(dnsNS, "api", dnsA("", "A", "SRV"), true)
	if api.Type != ServiceDNSHTTP || api.DNS.RoutingPolicy != RoutingMultivalue || !strings.HasPrefix(api.ID, "srv-") || len(api.ID) != 20 {
		t.Errorf("service %+v", api)
	}
	if h := f.service(httpNS, "worker", nil, false); h.Type != ServiceHTTP {
		t.Errorf("http service type %s", h.Type)
	}
	if h := f.service(dnsNS, "api-only", nil, false); h.Type != ServiceHTTP {
		t.Errorf("dns namespace service without DnsConfig: %+v", h)
	}

	for _, tc := range []struct {
		name string
		in   CreateServiceInput
		code string
		msg  string
	}{
		{"same name", CreateServiceInput{Name: "api", NamespaceID: dnsNS.ID, DNS: dnsA("", "A")}, CodeServiceAlreadyExists, api.ID},
		{"same DNS name in another case", CreateServiceInput{Name: "API", NamespaceID: dnsNS.ID, DNS: dnsA("", "A")}, CodeServiceAlreadyExists, api.ID},
		{"no namespace", CreateServiceInput{Name: "x"}, CodeInvalidInput, "namespace ID must be specified"},
		{"unknown namespace", CreateServiceInput{Name: "x", NamespaceID: "ns-nope"}, CodeNamespaceNotFound, "ns-nope"},
		{"bad name", CreateServiceInput{Name: "-x", NamespaceID: httpNS.ID}, CodeInvalidInput, "regular expression pattern"},
		{"DnsConfig in an HTTP namespace", CreateServiceInput{Name: "x", NamespaceID: httpNS.ID, DNS: dnsA("", "A")}, CodeInvalidInput, "HTTP namespace"},
		{"DnsConfig and type HTTP", CreateServiceInput{Name: "x", NamespaceID: dnsNS.ID, Type: ServiceHTTP, DNS: dnsA("", "A")}, CodeInvalidInput, "type HTTP"},
		{"record type", CreateServiceInput{Name: "x", NamespaceID: dnsNS.ID, DNS: dnsA("", "MX")}, CodeInvalidInput, "enum value set: [SRV, A, AAAA, CNAME]"},
		{"two A records", CreateServiceInput{Name: "x", NamespaceID: dnsNS.ID, DNS: dnsA("", "A", "A")}, CodeInvalidInput, "more than one DnsRecord of type A"},
		{"CNAME multivalue", CreateServiceInput{Name: "x", NamespaceID: dnsNS.ID, DNS: dnsA(RoutingMultivalue, "CNAME")}, CodeInvalidInput, "WEIGHTED"},
		{"CNAME with A", CreateServiceInput{Name: "x", NamespaceID: dnsNS.ID, DNS: dnsA(RoutingWeighted, "CNAME", "A")}, CodeInvalidInput, "can't be combined"},
		{"routing policy", CreateServiceInput{Name: "x", NamespaceID: dnsNS.ID, DNS: dnsA("LATENCY", "A")}, CodeInvalidInput, "[MULTIVALUE, WEIGHTED]"},
		{"TTL", CreateServiceInput{Name: "x", NamespaceID: dnsNS.ID, DNS: &DNSConfig{Records: []DNSRecord{{Type: "A", TTL: -1}}}}, CodeInvalidInput, "TTL"},
		{"Route 53 health check in a private namespace", CreateServiceInput{Name: "x", NamespaceID: dnsNS.ID, DNS: dnsA("", "A"), HealthCheckConfig: true}, CodeInvalidInput, "private DNS namespace"},
		{"Route 53 health check", CreateServiceInput{Name: "x", NamespaceID: httpNS.ID, HealthCheckConfig: true}, CodeInvalidInput, "not supported by the crossfade sandbox"},
		{"failure threshold", CreateServiceInput{Name: "x", NamespaceID: httpNS.ID, CustomHealth: true, FailureThreshold: ptr(int32(11))}, CodeInvalidInput, "less than or equal to 10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.s.CreateService(tc.in)
			wantCode(t, err, tc.code, tc.msg)
		})
	}
	t.Run("retry with the creator request id", func(t *testing.T) {
		in := CreateServiceInput{Name: "retry", NamespaceID: httpNS.ID, CreatorRequestID: "r-1"}
		a, err := f.s.CreateService(in)
		if err != nil {
			t.Fatal(err)
		}
		b, err := f.s.CreateService(in)
		if err != nil || b.ID != a.ID {
			t.Errorf("retry: %v, %v", b.ID, err)
		}
	})
	t.Run("list by namespace", func(t *testing.T) {
		got, _, err := f.s.ListServices(ListInput{Filters: []Filter{{Name: "NAMESPACE_ID", Values: []string{dnsNS.ID}}}})
		if err != nil || len(got) != 2 {
			t.Fatalf("services %v, %v", got, err)
		}
		ns, _ := f.s.GetNamespace(dnsNS.ID)
		if ns.ServiceCount != 2 {
			t.Errorf("service count %d", ns.ServiceCount)
		}
	})
	t.Run("by ARN", func(t *testing.T) {
		got, err := f.s.GetService(api.ARN)
		if err != nil || got.ID != api.ID {
			t.Errorf("%v, %v", got.ID, err)
		}
	})
}

func TestTags(t *testing.T) {
	f := newFixture(t, Options{})
	ns := f.namespace(NamespaceHTTP, "shop", "")
	if err := f.s.TagResource(ns.ARN, []Tag{{"team", "web"}, {"env", "dev"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.TagResource(ns.ARN, []Tag{{"env", "prod"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.UntagResource(ns.ARN, []string{"team", "absent"}); err != nil {
		t.Fatal(err)
	}
	got, err := f.s.ListTagsForResource(ns.ARN)
	if err != nil || fmt.Sprint(got) != "[{env prod}]" {
		t.Errorf("tags %v, %v", got, err)
	}
	_, err = f.s.ListTagsForResource(strings.Replace(ns.ARN, ns.ID, "ns-gone", 1))
	wantCode(t, err, CodeResourceNotFound, "ns-gone")
	var many []Tag
	for i := range 51 {
		many = append(many, Tag{Key: fmt.Sprint("k", i)})
	}
	wantCode(t, f.s.TagResource(ns.ARN, many), CodeTooManyTags, "50")
}

func TestOperations(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	f := newFixture(t, Options{Now: clock, OperationDelay: 10 * time.Second, MaxOperations: 4})
	opID, err := f.s.CreateNamespace(CreateNamespaceInput{Type: NamespaceHTTP, Name: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	op, _ := f.s.GetOperation(opID)
	if op.Status != StatusPending || !op.UpdateDate.Equal(now) {
		t.Fatalf("new operation %+v", op)
	}
	ns, _ := f.s.GetNamespace(op.Targets[TargetNamespace])
	svc, _ := f.s.CreateService(CreateServiceInput{Name: "api", NamespaceID: ns.ID})
	now = now.Add(time.Second)
	reg := func(id string) (string, error) {
		return f.s.RegisterInstance(RegisterInstanceInput{ServiceID: svc.ID, InstanceID: id, Attributes: map[string]string{"v": "1"}})
	}
	first, err := reg("i-1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = reg("i-1")
	wantCode(t, err, CodeDuplicateRequest, first)
	if e := err.(*Error); e.Fields["DuplicateOperationId"] != first {
		t.Errorf("fields %v", e.Fields)
	}
	_, err = f.s.DeregisterInstance(svc.ID, "i-1")
	wantCode(t, err, CodeDuplicateRequest, first)

	now = now.Add(10 * time.Second)
	op, _ = f.s.GetOperation(first)
	if op.Status != StatusSuccess || !op.UpdateDate.Equal(now) || op.Targets[TargetInstance] != "i-1" || op.Targets[TargetService] != svc.ID {
		t.Fatalf("done operation %+v", op)
	}
	if _, err := reg("i-1"); err != nil {
		t.Fatalf("re-register after the first completed: %v", err)
	}
	now = now.Add(time.Minute)
	if _, err := reg("i-2"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		filters []Filter
		want    int
	}{
		{"all", nil, 4},
		{"pending", []Filter{{Name: "STATUS", Values: []string{StatusPending}}}, 1},
		{"registrations", []Filter{{Name: "TYPE", Values: []string{OpRegisterInstance, OpDeregisterInstance}, Condition: "IN"}}, 3},
		{"namespace", []Filter{{Name: "NAMESPACE_ID", Values: []string{ns.ID}}}, 4},
		{"service", []Filter{{Name: "SERVICE_ID", Values: []string{svc.ID}}}, 3},
		{"updated in the last minute", []Filter{{Name: "UPDATE_DATE", Values: []string{fmt.Sprint(now.Add(-30 * time.Second).Unix()), fmt.Sprint(now.Unix())}, Condition: "BETWEEN"}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := f.s.ListOperations(ListInput{Filters: tc.filters})
			if err != nil || len(got) != tc.want {
				t.Errorf("%d operations (%v), want %d", len(got), err, tc.want)
			}
		})
	}
	// The fifth operation pushes the oldest (the namespace's) out.
	if _, err := reg("i-3"); err != nil {
		t.Fatal(err)
	}
	_, err = f.s.GetOperation(opID)
	wantCode(t, err, CodeOperationNotFound, opID)
	all, _, _ := f.s.ListOperations(ListInput{})
	if len(all) != 4 {
		t.Errorf("%d operations kept, want 4", len(all))
	}
	_, _, err = f.s.ListOperations(ListInput{Filters: []Filter{{Name: "STATUS", Values: []string{"SUCCEEDED"}}}})
	wantCode(t, err, CodeInvalidInput, "[SUBMITTED, PENDING, SUCCESS, FAIL]")
}
