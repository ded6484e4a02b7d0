package cloudmapstore

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

func TestRegisterInstanceValidation(t *testing.T) {
	f := newFixture(t, Options{})
	httpNS := f.namespace(NamespaceHTTP, "shop", "")
	dnsNS := f.namespace(NamespaceDNSPrivate, "corp.local", "vpc-1")
	plain := f.service(httpNS, "worker", nil, false)
	a := f.service(dnsNS, "a", dnsA("", "A"), false)
	both := f.service(dnsNS, "both", dnsA("", "A", "AAAA"), false)
	srv := f.service(dnsNS, "srv", dnsA("", "SRV"), false)
	cname := f.service(dnsNS, "cname", dnsA(RoutingWeighted, "CNAME"), false)
	custom := f.service(httpNS, "custom", nil, true)
	many := map[string]string{}
	for i := range 31 {
		many[fmt.Sprint("k", i)] = "v"
	}
	for _, tc := range []struct {
		name  string
		svc   string
		id    string
		attrs map[string]string
		code  string
		msg   string
	}{
		{"no service id", "", "i", map[string]string{"k": "v"}, CodeInvalidInput, "Value null at 'serviceId'"},
		{"unknown service", "srv-nope", "i", map[string]string{"k": "v"}, CodeServiceNotFound, "srv-nope"},
		{"no instance id", plain.ID, "", map[string]string{"k": "v"}, CodeInvalidInput, "Value null at 'instanceId'"},
		{"instance id with a space", plain.ID, "a b", map[string]string{"k": "v"}, CodeInvalidInput, "^[0-9a-zA-Z_/:.@-]+$"},
		{"instance id of 65", plain.ID, strings.Repeat("i", 65), map[string]string{"k": "v"}, CodeInvalidInput, "less than or equal to 64"},
		{"no attributes", plain.ID, "i", nil, CodeInvalidInput, "Value null at 'attributes'"},
		{"empty attributes", plain.ID, "i", map[string]string{}, CodeInvalidInput, "at least one attribute"},
		{"key with a space", plain.ID, "i", map[string]string{"a b": "v"}, CodeInvalidInput, "Map keys must satisfy constraint"},
		{"key of 256", plain.ID, "i", map[string]string{strings.Repeat("k", 256): "v"}, CodeInvalidInput, "less than or equal to 255"},
		{"value of 1025", plain.ID, "i", map[string]string{"k": strings.Repeat("v", 1025)}, CodeInvalidInput, "less than or equal to 1024"},
		{"value starting with a space", plain.ID, "i", map[string]string{"k": " v"}, CodeInvalidInput, "Map value must satisfy constraint"},
		{"31 custom attributes", plain.ID, "i", many, CodeInvalidInput, "31 custom attributes"},
		{"5,001 characters", plain.ID, "i", map[string]string{"a": strings.Repeat("v", 1000), "b": strings.Repeat("v", 1000), "c": strings.Repeat("v", 1000), "d": strings.Repeat("v", 1000), "e": strings.Repeat("v", 1000)}, CodeInvalidInput, "5005 characters"},
		{"A without IPv4", a.ID, "i", map[string]string{AttrIPv6: "2001:db8::1"}, CodeInvalidInput, "needs AWS_INSTANCE_IPV4"},
		{"bad IPv4", a.ID, "i", map[string]string{AttrIPv4: "10.0.0.256"}, CodeInvalidInput, "not a valid IPv4 address"},
		{"IPv6 as IPv4", a.ID, "i", map[string]string{AttrIPv4: "2001:db8::1"}, CodeInvalidInput, "not a valid IPv4 address"},
		{"A and AAAA without either", both.ID, "i", map[string]string{"k": "v"}, CodeInvalidInput, "AWS_INSTANCE_IPV4, AWS_INSTANCE_IPV6 or both"},
		{"SRV without port", srv.ID, "i", map[string]string{AttrIPv4: "10.0.0.1"}, CodeInvalidInput, "needs AWS_INSTANCE_PORT"},
		{"SRV without address", srv.ID, "i", map[string]string{AttrPort: "80"}, CodeInvalidInput, "AWS_INSTANCE_IPV4, AWS_INSTANCE_IPV6 or both"},
		{"port 0", srv.ID, "i", map[string]string{AttrIPv4: "10.0.0.1", AttrPort: "0"}, CodeInvalidInput, "not a valid port"},
		{"CNAME without AWS_INSTANCE_CNAME", cname.ID, "i", map[string]string{AttrIPv4: "10.0.0.1"}, CodeInvalidInput, "needs AWS_INSTANCE_CNAME"},
		{"init health", custom.ID, "i", map[string]string{AttrInitHealth: "SICK"}, CodeInvalidInput, "HEALTHY or UNHEALTHY"},
		{"alias", a.ID, "i", map[string]string{AttrAlias: "lb.elb.amazonaws.com"}, CodeInvalidInput, "not supported by the crossfade sandbox"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.s.RegisterInstance(RegisterInstanceInput{ServiceID: tc.svc, InstanceID: tc.id, Attributes: tc.attrs})
			wantCode(t, err, tc.code, tc.msg)
		})
	}
	// Both addresses in an A-and-AAAA service, one in the other.
	f.register(both, "v6-only", AttrIPv6, "2001:db8::1")
	f.register(both, "dual", AttrIPv4, "10.0.0.1", AttrIPv6, "2001:db8::2")
}

// TestDNSRecords checks the records Cloud Map writes for each kind of service, as they
// stand after registrations, a health change and a deregistration.
func TestDNSRecords(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dns     *DNSConfig
		custom  bool
		names   []string
		initial []string
		// after i-2 is set UNHEALTHY (custom health) and i-3 is deregistered
		after []string
	}{
		{
			name: "multivalue A", dns: dnsA(RoutingMultivalue, "A"), names: []string{"api"},
			initial: []string{"api: A 10.0.0.1,10.0.0.2,10.0.0.3"},
			after:   []string{"api: A 10.0.0.1,10.0.0.2"},
		},
		{
			name: "multivalue A, custom health", dns: dnsA(RoutingMultivalue, "A"), custom: true, names: []string{"api"},
			initial: []string{"api: A 10.0.0.1,10.0.0.2,10.0.0.3"},
			after:   []string{"api: A 10.0.0.1"},
		},
		{
			name: "multivalue A and SRV", dns: dnsA(RoutingMultivalue, "A", "SRV"), names: []string{"api", "i-1.api", "i-3.api"},
			initial: []string{
				"api: A 10.0.0.1,10.0.0.2,10.0.0.3",
				"api: SRV 1 1 8080 i-1.api.corp.local.,1 1 8080 i-2.api.corp.local.,1 1 8080 i-3.api.corp.local.",
				"i-1.api: A 10.0.0.1", "i-1.api: AAAA 2001:db8::1", "i-3.api: A 10.0.0.3", "i-3.api: AAAA 2001:db8::3",
			},
			after: []string{
				"api: A 10.0.0.1,10.0.0.2",
				"api: SRV 1 1 8080 i-1.api.corp.local.,1 1 8080 i-2.api.corp.local.",
				"i-1.api: A 10.0.0.1", "i-1.api: AAAA 2001:db8::1",
			},
		},
		{
			name: "weighted A, custom health", dns: dnsA(RoutingWeighted, "A"), custom: true, names: []string{"api"},
			initial: []string{"api: A [i-1] w=1 hc 10.0.0.1", "api: A [i-2] w=1 hc 10.0.0.2", "api: A [i-3] w=1 hc 10.0.0.3"},
			// The unhealthy one stays, with its health check failing: the DNS server skips it.
			after: []string{"api: A [i-1] w=1 hc 10.0.0.1", "api: A [i-2] w=1 hc 10.0.0.2"},
		},
		{
			name: "weighted SRV", dns: dnsA(RoutingWeighted, "SRV"), names: []string{"api", "i-2.api"},
			initial: []string{
				"api: SRV [i-1] w=1 1 1 8080 i-1.api.corp.local.", "api: SRV [i-2] w=1 1 1 8080 i-2.api.corp.local.",
				"api: SRV [i-3] w=1 1 1 8080 i-3.api.corp.local.", "i-2.api: A [i-2] w=1 10.0.0.2", "i-2.api: AAAA [i-2] w=1 2001:db8::2",
			},
			after: []string{"api: SRV [i-1] w=1 1 1 8080 i-1.api.corp.local.", "api: SRV [i-2] w=1 1 1 8080 i-2.api.corp.local.",
				"i-2.api: A [i-2] w=1 10.0.0.2", "i-2.api: AAAA [i-2] w=1 2001:db8::2"},
		},
		{
			name: "AAAA", dns: dnsA(RoutingMultivalue, "AAAA"), names: []string{"api"},
			initial: []string{"api: AAAA 2001:db8::1,2001:db8::2,2001:db8::3"},
			after:   []string{"api: AAAA 2001:db8::1,2001:db8::2"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Options{})
			ns := f.namespace(NamespaceDNSPrivate, "corp.local", "vpc-1")
			svc := f.service(ns, "api", tc.dns, tc.custom)
			for i := 1; i <= 3; i++ {
				f.register(svc, fmt.Sprint("i-", i), AttrIPv4, fmt.Sprint("10.0.0.", i), AttrIPv6, fmt.Sprint("2001:db8::", i), AttrPort, "8080", "ver", "v1")
			}
			state := func() []string {
				var out []string
				for _, n := range tc.names {
					for _, r := range f.records(ns, n+".corp.local") {
						out = append(out, n+": "+r)
					}
				}
				return out
			}
			if got := state(); !slices.Equal(got, tc.initial) {
				t.Errorf("after registering:\n got %q\nwant %q", got, tc.initial)
			}
			if tc.custom {
				if err := f.s.UpdateInstanceCustomHealthStatus(svc.ID, "i-2", HealthUnhealthy); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.s.DeregisterInstance(svc.ID, "i-3"); err != nil {
				t.Fatal(err)
			}
			if got := state(); !slices.Equal(got, tc.after) {
				t.Errorf("after the health change and the deregistration:\n got %q\nwant %q", got, tc.after)
			}
			if f.records(ns, "i-3.api.corp.local") != nil {
				t.Error("the deregistered instance's host name is left")
			}
			if tc.custom && tc.dns.RoutingPolicy == RoutingWeighted {
				i2, _ := f.s.GetInstance(svc.ID, "i-2")
				i1, _ := f.s.GetInstance(svc.ID, "i-1")
				if f.zones.Healthy(i2.HealthCheckID) || !f.zones.Healthy(i1.HealthCheckID) {
					t.Error("health checks in the zones store do not follow the custom health")
				}
			}
			// Every instance gone, nothing left but the zone's own records.
			for _, id := range []string{"i-1", "i-2"} {
				if _, err := f.s.DeregisterInstance(svc.ID, id); err != nil {
					t.Fatal(err)
				}
			}
			if got := state(); got != nil {
				t.Errorf("records left: %q", got)
			}
		})
	}
}

// TestRegistrationTheZoneRefuses: a zone that cannot take the records fails the operation
// and undoes the registration; a record of a type the service does not write is left
// alone, whoever added it.
func TestRegistrationTheZoneRefuses(t *testing.T) {
	f := newFixture(t, Options{})
	ns := f.namespace(NamespaceDNSPrivate, "corp.local", "vpc-1")
	svc := f.service(ns, "api", dnsA(RoutingMultivalue, "A"), false)
	f.register(svc, "i-1", AttrIPv4, "10.0.0.1")
	// A CNAME someone put at the service's name leaves no room for an A record there.
	if _, err := f.s.DeregisterInstance(svc.ID, "i-1"); err != nil {
		t.Fatal(err)
	}
	ttl := int64(60)
	if _, err := f.zones.Apply(ns.HostedZoneID, "", []zones.Change{{Action: zones.Create,
		Set: zones.RRSet{Name: "api.corp.local.", Type: "CNAME", TTL: &ttl, Records: []string{"elsewhere.example.com."}}}}); err != nil {
		t.Fatal(err)
	}
	opID, err := f.s.RegisterInstance(RegisterInstanceInput{ServiceID: svc.ID, InstanceID: "i-2", Attributes: map[string]string{AttrIPv4: "10.0.0.2"}})
	if err != nil {
		t.Fatal(err)
	}
	op, _ := f.s.GetOperation(opID)
	if op.Status != StatusFail || op.ErrorCode != OpErrInvalidChangeBatch || !strings.Contains(op.ErrorMessage, "conflicting RRSet of type CNAME") {
		t.Errorf("operation %+v", op)
	}
	_, err = f.s.GetInstance(svc.ID, "i-2")
	wantCode(t, err, CodeInstanceNotFound, "i-2")
	if got, _ := f.s.GetService(svc.ID); got.InstanceCount != 0 || got.Revision != 2 {
		t.Errorf("service after the failed registration: %+v", got)
	}
}

func TestCustomHealth(t *testing.T) {
	f := newFixture(t, Options{HealthDelay: 150 * time.Millisecond})
	ns := f.namespace(NamespaceHTTP, "shop", "")
	svc := f.service(ns, "api", nil, true)
	plain := f.service(ns, "plain", nil, false)
	f.register(svc, "i-1", "k", "v")
	f.register(svc, "i-2", "k", "v", AttrInitHealth, HealthUnhealthy)
	f.register(plain, "p-1", "k", "v")

	health := func(id string) map[string]string {
		got, _, err := f.s.GetInstancesHealthStatus(id, nil, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, h := range got {
			m[h.InstanceID] = h.Status
		}
		return m
	}
	if got := fmt.Sprint(health(svc.ID)); got != "map[i-1:HEALTHY i-2:UNHEALTHY]" {
		t.Errorf("initial health %s", got)
	}
	if got := fmt.Sprint(health(plain.ID)); got != "map[p-1:UNKNOWN]" {
		t.Errorf("health without a health check %s", got)
	}
	wantCode(t, f.s.UpdateInstanceCustomHealthStatus(plain.ID, "p-1", HealthUnhealthy), CodeCustomHealthNotFound, "isn't a custom health check")
	wantCode(t, f.s.UpdateInstanceCustomHealthStatus(svc.ID, "i-9", HealthUnhealthy), CodeInstanceNotFound, "i-9")
	wantCode(t, f.s.UpdateInstanceCustomHealthStatus(svc.ID, "i-1", "DOWN"), CodeInvalidInput, "[HEALTHY, UNHEALTHY]")

	// The status waits for the delay, as Cloud Map's 30 seconds.
	if err := f.s.UpdateInstanceCustomHealthStatus(svc.ID, "i-1", HealthUnhealthy); err != nil {
		t.Fatal(err)
	}
	if got := health(svc.ID)["i-1"]; got != HealthHealthy {
		t.Errorf("status took effect at once: %s", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for health(svc.ID)["i-1"] != HealthUnhealthy {
		if time.Now().After(deadline) {
			t.Fatal("UNHEALTHY never took effect")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Asking for the status in effect cancels the change on its way.
	if err := f.s.UpdateInstanceCustomHealthStatus(svc.ID, "i-2", HealthHealthy); err != nil {
		t.Fatal(err)
	}
	if err := f.s.UpdateInstanceCustomHealthStatus(svc.ID, "i-2", HealthUnhealthy); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if got := health(svc.ID)["i-2"]; got != HealthUnhealthy {
		t.Errorf("cancelled change took effect: %s", got)
	}
	// Registering again starts a new health check: HEALTHY.
	f.register(svc, "i-1", "k", "v2")
	if got := health(svc.ID)["i-1"]; got != HealthHealthy {
		t.Errorf("after re-registering: %s", got)
	}
	_, _, err := f.s.GetInstancesHealthStatus(svc.ID, []string{"i-1", "i-9"}, nil, "")
	wantCode(t, err, CodeInstanceNotFound, "i-9")
	got, _, err := f.s.GetInstancesHealthStatus(svc.ID, []string{"i-2"}, nil, "")
	if err != nil || len(got) != 1 || got[0].Status != HealthUnhealthy {
		t.Errorf("one instance: %v, %v", got, err)
	}
}

func TestDiscoverInstances(t *testing.T) {
	f := newFixture(t, Options{})
	ns := f.namespace(NamespaceHTTP, "shop", "")
	svc := f.service(ns, "api", nil, true)
	plain := f.service(ns, "plain", nil, false)
	for _, r := range []struct{ id, cluster, ver, az string }{
		{"blue-1", "blue", "v1", "a"}, {"blue-2", "blue", "v1", "b"}, {"green-1", "green", "v2", "a"}, {"green-2", "green", "v2", "b"},
	} {
		f.register(svc, r.id, "cluster", r.cluster, "ver", r.ver, "az", r.az)
		f.register(plain, r.id, "cluster", r.cluster)
	}
	for _, id := range []string{"green-1", "green-2", "blue-2"} {
		if err := f.s.UpdateInstanceCustomHealthStatus(svc.ID, id, HealthUnhealthy); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		in   DiscoverInput
		want string
	}{
		{"healthy by default", DiscoverInput{}, "[blue-1]"},
		{"all", DiscoverInput{HealthStatus: FilterAll}, "[blue-1 blue-2 green-1 green-2]"},
		{"unhealthy", DiscoverInput{HealthStatus: HealthUnhealthy}, "[blue-2 green-1 green-2]"},
		{"query", DiscoverInput{HealthStatus: FilterAll, QueryParameters: map[string]string{"cluster": "green"}}, "[green-1 green-2]"},
		{"query, every key", DiscoverInput{HealthStatus: FilterAll, QueryParameters: map[string]string{"cluster": "green", "az": "b"}}, "[green-2]"},
		{"query matches none", DiscoverInput{HealthStatus: FilterAll, QueryParameters: map[string]string{"cluster": "red"}}, "[]"},
		{"query, missing key", DiscoverInput{HealthStatus: FilterAll, QueryParameters: map[string]string{"zone": "a"}}, "[]"},
		{"healthy or else all: some healthy", DiscoverInput{HealthStatus: FilterHealthyOrElseAll}, "[blue-1]"},
		{"healthy or else all: none healthy fails open", DiscoverInput{HealthStatus: FilterHealthyOrElseAll, QueryParameters: map[string]string{"cluster": "green"}}, "[green-1 green-2]"},
		{"healthy, none healthy", DiscoverInput{QueryParameters: map[string]string{"cluster": "green"}}, "[]"},
		{"optional narrows when some match", DiscoverInput{HealthStatus: FilterAll, OptionalParameters: map[string]string{"az": "a"}}, "[blue-1 green-1]"},
		{"optional ignored when none match", DiscoverInput{HealthStatus: FilterAll, QueryParameters: map[string]string{"cluster": "blue"}, OptionalParameters: map[string]string{"ver": "v2"}}, "[blue-1 blue-2]"},
		{"optional after health", DiscoverInput{OptionalParameters: map[string]string{"az": "b"}}, "[blue-1]"},
		{"max results", DiscoverInput{HealthStatus: FilterAll, MaxResults: ptr(int32(2))}, "2 instances"},
		{"health ignored without a health check", DiscoverInput{ServiceName: "plain", HealthStatus: HealthUnhealthy}, "[blue-1 blue-2 green-1 green-2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.NamespaceName = "shop"
			if in.ServiceName == "" {
				in.ServiceName = "api"
			}
			got, rev, err := f.s.DiscoverInstances(in)
			if err != nil {
				t.Fatal(err)
			}
			ids := []string{}
			for _, d := range got {
				ids = append(ids, d.InstanceID)
				if d.NamespaceName != "shop" || d.ServiceName != in.ServiceName || d.Attributes["cluster"] == "" {
					t.Errorf("instance %+v", d)
				}
			}
			slices.Sort(ids)
			text := fmt.Sprint(ids)
			if strings.HasSuffix(tc.want, "instances") {
				text = fmt.Sprint(len(ids), " instances")
			}
			if text != tc.want {
				t.Errorf("got %s, want %s", text, tc.want)
			}
			if rev != 4 {
				t.Errorf("revision %d, want 4", rev)
			}
		})
	}
	for _, tc := range []struct {
		name string
		in   DiscoverInput
		code string
		msg  string
	}{
		{"unknown namespace", DiscoverInput{NamespaceName: "nope", ServiceName: "api"}, CodeNamespaceNotFound, "nope"},
		{"unknown service", DiscoverInput{NamespaceName: "shop", ServiceName: "nope"}, CodeServiceNotFound, "nope"},
		{"no namespace", DiscoverInput{ServiceName: "api"}, CodeInvalidInput, "Value null at 'namespaceName'"},
		{"health filter", DiscoverInput{NamespaceName: "shop", ServiceName: "api", HealthStatus: "SICK"}, CodeInvalidInput, "HEALTHY_OR_ELSE_ALL"},
		{"max results 1001", DiscoverInput{NamespaceName: "shop", ServiceName: "api", MaxResults: ptr(int32(1001))}, CodeInvalidInput, "less than or equal to 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := f.s.DiscoverInstances(tc.in)
			wantCode(t, err, tc.code, tc.msg)
		})
	}
	// Health changes leave the revision alone; registrations move it.
	if err := f.s.UpdateInstanceCustomHealthStatus(svc.ID, "green-1", HealthHealthy); err != nil {
		t.Fatal(err)
	}
	if rev, _ := f.s.DiscoverInstancesRevision("shop", "api"); rev != 4 {
		t.Errorf("revision after a health change %d", rev)
	}
	if _, err := f.s.DeregisterInstance(svc.ID, "green-1"); err != nil {
		t.Fatal(err)
	}
	if rev, _ := f.s.DiscoverInstancesRevision("shop", "api"); rev != 5 {
		t.Errorf("revision after a deregistration %d", rev)
	}
}

func TestListInstancesPages(t *testing.T) {
	f := newFixture(t, Options{})
	ns := f.namespace(NamespaceHTTP, "shop", "")
	svc := f.service(ns, "api", nil, false)
	for i := range 5 {
		f.register(svc, fmt.Sprint("i-", i), "k", "v")
	}
	var all []string
	token := ""
	for {
		got, next, err := f.s.ListInstances(svc.ID, ptr(int32(2)), token)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range got {
			all = append(all, i.ID)
		}
		if next == "" {
			break
		}
		// An instance registered between pages comes in its place.
		if token == "" {
			f.register(svc, "i-9", "k", "v")
		}
		token = next
	}
	if fmt.Sprint(all) != "[i-0 i-1 i-2 i-3 i-4 i-9]" {
		t.Errorf("pages %v", all)
	}
	_, _, err := f.s.ListInstances("srv-nope", nil, "")
	wantCode(t, err, CodeServiceNotFound, "srv-nope")
}

// TestPersistence: the whole state survives a restart, in the file the zones share; a
// pending health status takes effect after it; and records that a crash kept out of the
// zone are written again.
func TestPersistence(t *testing.T) {
	f, reopen := fileFixture(t, Options{HealthDelay: 100 * time.Millisecond})
	ns := f.namespace(NamespaceDNSPrivate, "corp.local", "vpc-1")
	svc := f.service(ns, "api", dnsA(RoutingMultivalue, "A", "SRV"), true)
	f.register(svc, "i-1", AttrIPv4, "10.0.0.1", AttrPort, "80", "ver", "v1")
	f.register(svc, "i-2", AttrIPv4, "10.0.0.2", AttrPort, "80", "ver", "v2")
	if err := f.s.TagResource(svc.ARN, []Tag{{"team", "web"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.UpdateInstanceCustomHealthStatus(svc.ID, "i-2", HealthUnhealthy); err != nil {
		t.Fatal(err)
	}
	// The crash: the zone lost the service's records (as if the process died between the
	// two stores' writes).
	var dels []zones.Change
	for _, n := range []string{"api.corp.local.", "i-1.api.corp.local."} {
		for _, set := range f.zones.LookupIn(ns.HostedZoneID, n).Sets {
			dels = append(dels, zones.Change{Action: zones.Delete, Set: copySet(set)})
		}
	}
	if _, err := f.zones.Apply(ns.HostedZoneID, "", dels); err != nil {
		t.Fatal(err)
	}

	f = reopen()
	got, err := f.s.GetService(svc.ID)
	if err != nil || got.InstanceCount != 2 || got.Revision != 2 || fmt.Sprint(got.Tags) != "[{team web}]" {
		t.Fatalf("service after restart %+v, %v", got, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if r := f.records(ns, "api.corp.local"); slices.Equal(r, []string{"A 10.0.0.1", "SRV 1 1 80 i-1.api.corp.local."}) {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("records after restart: %q", r)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := f.records(ns, "i-2.api.corp.local"); !slices.Equal(r, []string{"A 10.0.0.2"}) {
		t.Errorf("host record %q", r)
	}
	ops, _, _ := f.s.ListOperations(ListInput{})
	if len(ops) != 3 {
		t.Errorf("%d operations after restart", len(ops))
	}
}

// TestMultivalueAnswersEight: a multivalue name holds up to eight instances, as Route 53
// answers up to eight; the ones left out come in as others leave or turn unhealthy.
func TestMultivalueAnswersEight(t *testing.T) {
	f := newFixture(t, Options{})
	ns := f.namespace(NamespaceDNSPrivate, "corp.local", "vpc-1")
	svc := f.service(ns, "api", dnsA(RoutingMultivalue, "A"), true)
	for i := range 10 {
		f.register(svc, fmt.Sprintf("i-%02d", i), AttrIPv4, fmt.Sprint("10.0.0.", 10+i))
	}
	want := func(last ...int) []string {
		var vals []string
		for _, i := range last {
			vals = append(vals, fmt.Sprint("10.0.0.", 10+i))
		}
		slices.Sort(vals)
		return []string{"A " + strings.Join(vals, ",")}
	}
	if got := f.records(ns, "api.corp.local"); !slices.Equal(got, want(0, 1, 2, 3, 4, 5, 6, 7)) {
		t.Errorf("ten instances: %q", got)
	}
	if err := f.s.UpdateInstanceCustomHealthStatus(svc.ID, "i-02", HealthUnhealthy); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.DeregisterInstance(svc.ID, "i-05"); err != nil {
		t.Fatal(err)
	}
	if got := f.records(ns, "api.corp.local"); !slices.Equal(got, want(0, 1, 3, 4, 6, 7, 8, 9)) {
		t.Errorf("one unhealthy, one gone: %q", got)
	}
}

// TestReconcileLargeService: the reconciliation after a restart rewrites a service of 300
// SRV instances, more than one change batch holds.
func TestReconcileLargeService(t *testing.T) {
	f, reopen := fileFixture(t, Options{})
	ns := f.namespace(NamespaceDNSPrivate, "corp.local", "vpc-1")
	svc := f.service(ns, "api", dnsA(RoutingWeighted, "SRV"), false)
	f2 := f.service(ns, "multi", dnsA(RoutingMultivalue, "A", "SRV"), false)
	// 90 weighted instances: Route 53 holds at most 100 weighted sets of a name and type.
	for i := range 300 {
		f.register(f2, fmt.Sprint("i-", i), AttrIPv4, fmt.Sprintf("10.0.%d.%d", i/200, i%200+1), AttrPort, "80")
	}
	for i := range 90 {
		f.register(svc, fmt.Sprint("w-", i), AttrIPv4, fmt.Sprintf("10.1.0.%d", i+1), AttrPort, "80")
	}
	// The crash: every host record is gone from the zone.
	var dels []zones.Change
	for _, v := range []Service{f2, svc} {
		for _, inst := range f.s.instancesOf(v.ID) {
			for _, set := range f.zones.LookupIn(ns.HostedZoneID, zones.CanonicalName(inst.ID+"."+v.Name+".corp.local")).Sets {
				dels = append(dels, zones.Change{Action: zones.Delete, Set: copySet(set)})
			}
		}
	}
	if len(dels) != 390 {
		t.Fatalf("%d host records", len(dels))
	}
	for _, b := range splitBatches(dels) {
		if _, err := f.zones.Apply(ns.HostedZoneID, "", b); err != nil {
			t.Fatal(err)
		}
	}
	f = reopen()
	for _, host := range []string{"i-0.multi", "i-299.multi", "w-89.api"} {
		if got := f.records(ns, host+".corp.local"); len(got) != 1 {
			t.Errorf("%s after restart: %q", host, got)
		}
	}
}

func TestSplitBatches(t *testing.T) {
	ttl := int64(60)
	set := func(n, size int) zones.RRSet {
		var vals []string
		for i := range n {
			vals = append(vals, fmt.Sprintf("%0*d", size, i))
		}
		return zones.RRSet{Name: "x.", Type: "TXT", TTL: &ttl, Records: vals}
	}
	for _, tc := range []struct {
		name    string
		changes []zones.Change
		want    []int
	}{
		{"none", nil, nil},
		{"small", []zones.Change{{Action: zones.Upsert, Set: set(3, 5)}, {Action: zones.Delete, Set: set(3, 5)}}, []int{2}},
		{"upserts count twice", []zones.Change{{Action: zones.Upsert, Set: set(300, 5)}, {Action: zones.Upsert, Set: set(300, 5)}}, []int{1, 1}},
		{"deletes once", []zones.Change{{Action: zones.Delete, Set: set(500, 5)}, {Action: zones.Delete, Set: set(500, 5)}}, []int{2}},
		{"characters", []zones.Change{{Action: zones.Delete, Set: set(20, 1000)}, {Action: zones.Delete, Set: set(20, 1000)}}, []int{1, 1}},
		{"one too large alone", []zones.Change{{Action: zones.Upsert, Set: set(600, 5)}, {Action: zones.Delete, Set: set(1, 5)}}, []int{1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			for _, b := range splitBatches(tc.changes) {
				got = append(got, len(b))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("batches of %v, want %v", got, tc.want)
			}
		})
	}
}
