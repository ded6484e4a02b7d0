package sandbox_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	"github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

func cloudMapClient(sb *sandbox.Sandbox) *sd.Client {
	return sd.New(sd.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(sb.APIURL()),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer:      retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = 5 * time.Millisecond }),
		// DiscoverInstances goes to data-<host> unless the prefix is turned off from inside
		// the stack: the client clears stack values set on the caller's context.
		APIOptions: []func(*middleware.Stack) error{func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("DisableEndpointHostPrefix",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
				}), middleware.Before)
		}},
	})
}

// query asks the sandbox's DNS server and returns the answer's records as text, sorted.
func query(t *testing.T, sb *sandbox.Sandbox, name string, qtype uint16) []string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	r, err := dns.Exchange(m, sb.DNSAddr())
	if err != nil {
		t.Fatalf("dns %s %s: %v", name, dns.TypeToString[qtype], err)
	}
	if r.Rcode != dns.RcodeSuccess || !r.Authoritative {
		t.Fatalf("dns %s %s: rcode %s, aa %v", name, dns.TypeToString[qtype], dns.RcodeToString[r.Rcode], r.Authoritative)
	}
	var out []string
	for _, rr := range r.Answer {
		switch v := rr.(type) {
		case *dns.A:
			out = append(out, fmt.Sprintf("A %d %s", v.Hdr.Ttl, v.A))
		case *dns.SRV:
			out = append(out, fmt.Sprintf("SRV %d %d %d %d %s", v.Hdr.Ttl, v.Priority, v.Weight, v.Port, v.Target))
		default:
			out = append(out, rr.String())
		}
	}
	slices.Sort(out)
	return out
}

func waitOp(t *testing.T, c *sd.Client, id *string) map[string]string {
	t.Helper()
	out, err := c.GetOperation(context.Background(), &sd.GetOperationInput{OperationId: id})
	if err != nil || out.Operation.Status != types.OperationStatusSuccess {
		t.Fatalf("operation %v: %+v, %v", aws.ToString(id), out, err)
	}
	return out.Operation.Targets
}

// TestCloudMapDNS checks the wiring: a private DNS namespace is a private hosted zone that
// Route 53's API lists, the instances of its services are answered by the sandbox's DNS
// server as Cloud Map's A and SRV records, custom health takes an instance out of the
// answer, Cloud Map calls are counted beside Route 53's, and the state shares the state
// file across a restart.
func TestCloudMapDNS(t *testing.T) {
	ctx := context.Background()
	state := filepath.Join(t.TempDir(), "state.db")
	sb, stop := sandboxtest.StartStateful(t, state)
	c := cloudMapClient(sb)
	r53 := sandboxtest.Route53Client(sb)

	op, err := c.CreatePrivateDnsNamespace(ctx, &sd.CreatePrivateDnsNamespaceInput{Name: aws.String("corp.local"), Vpc: aws.String("vpc-1")})
	if err != nil {
		t.Fatal(err)
	}
	nsID := waitOp(t, c, op.OperationId)["NAMESPACE"]
	ns, err := c.GetNamespace(ctx, &sd.GetNamespaceInput{Id: &nsID})
	if err != nil {
		t.Fatal(err)
	}
	zoneID := aws.ToString(ns.Namespace.Properties.DnsProperties.HostedZoneId)
	zonesOut, err := r53.ListHostedZones(ctx, &route53.ListHostedZonesInput{})
	if err != nil || len(zonesOut.HostedZones) != 1 || !strings.HasSuffix(aws.ToString(zonesOut.HostedZones[0].Id), zoneID) ||
		!zonesOut.HostedZones[0].Config.PrivateZone || aws.ToString(zonesOut.HostedZones[0].Name) != "corp.local." {
		t.Fatalf("hosted zones %+v, %v", zonesOut, err)
	}

	multi, err := c.CreateService(ctx, &sd.CreateServiceInput{Name: aws.String("api"), NamespaceId: &nsID,
		DnsConfig: &types.DnsConfig{RoutingPolicy: types.RoutingPolicyMultivalue,
			DnsRecords: []types.DnsRecord{{Type: types.RecordTypeA, TTL: aws.Int64(15)}, {Type: types.RecordTypeSrv, TTL: aws.Int64(15)}}},
		HealthCheckCustomConfig: &types.HealthCheckCustomConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	weighted, err := c.CreateService(ctx, &sd.CreateServiceInput{Name: aws.String("grpc"), NamespaceId: &nsID,
		DnsConfig:               &types.DnsConfig{RoutingPolicy: types.RoutingPolicyWeighted, DnsRecords: []types.DnsRecord{{Type: types.RecordTypeA, TTL: aws.Int64(5)}}},
		HealthCheckCustomConfig: &types.HealthCheckCustomConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ id, ip, cluster string }{{"blue-1", "10.0.1.1", "blue"}, {"green-1", "10.0.2.1", "green"}} {
		for _, svc := range []*string{multi.Service.Id, weighted.Service.Id} {
			out, err := c.RegisterInstance(ctx, &sd.RegisterInstanceInput{ServiceId: svc, InstanceId: aws.String(r.id),
				Attributes: map[string]string{"AWS_INSTANCE_IPV4": r.ip, "AWS_INSTANCE_PORT": "8443", "cluster": r.cluster}})
			if err != nil {
				t.Fatal(err)
			}
			waitOp(t, c, out.OperationId)
		}
	}

	checkDNS := func(sb *sandbox.Sandbox, wantA []string) {
		t.Helper()
		if got := query(t, sb, "api.corp.local", dns.TypeA); !slices.Equal(got, wantA) {
			t.Errorf("api A: %q, want %q", got, wantA)
		}
		var wantSRV []string
		for _, a := range wantA {
			host := map[string]string{"A 15 10.0.1.1": "blue-1", "A 15 10.0.2.1": "green-1"}[a]
			wantSRV = append(wantSRV, "SRV 15 1 1 8443 "+host+".api.corp.local.")
			// The SRV target answers the instance's address.
			if got := query(t, sb, host+".api.corp.local", dns.TypeA); !slices.Equal(got, []string{a}) {
				t.Errorf("SRV target %s: %q", host, got)
			}
		}
		if got := query(t, sb, "api.corp.local", dns.TypeSRV); !slices.Equal(got, wantSRV) {
			t.Errorf("api SRV: %q, want %q", got, wantSRV)
		}
	}
	checkDNS(sb, []string{"A 15 10.0.1.1", "A 15 10.0.2.1"})
	seen := map[string]bool{}
	for range 50 {
		for _, a := range query(t, sb, "grpc.corp.local", dns.TypeA) {
			seen[a] = true
		}
	}
	if len(seen) != 2 {
		t.Errorf("weighted answers over 50 queries: %v", seen)
	}

	// Route 53's view of the same records.
	sets, err := r53.ListResourceRecordSets(ctx, &route53.ListResourceRecordSetsInput{HostedZoneId: &zoneID})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, s := range sets.ResourceRecordSets {
		if s.Type == r53types.RRTypeNs || s.Type == r53types.RRTypeSoa {
			continue
		}
		l := aws.ToString(s.Name) + " " + string(s.Type)
		if s.SetIdentifier != nil {
			l += fmt.Sprintf(" %s w=%d hc=%v", *s.SetIdentifier, aws.ToInt64(s.Weight), s.HealthCheckId != nil)
		}
		listed = append(listed, l)
	}
	want := []string{"api.corp.local. A", "api.corp.local. SRV", "blue-1.api.corp.local. A", "green-1.api.corp.local. A",
		"grpc.corp.local. A blue-1 w=1 hc=true", "grpc.corp.local. A green-1 w=1 hc=true"}
	if !slices.Equal(listed, want) {
		t.Errorf("ListResourceRecordSets:\n got %q\nwant %q", listed, want)
	}

	// Custom health: blue UNHEALTHY leaves both answers.
	for _, svc := range []*string{multi.Service.Id, weighted.Service.Id} {
		if _, err := c.UpdateInstanceCustomHealthStatus(ctx, &sd.UpdateInstanceCustomHealthStatusInput{ServiceId: svc,
			InstanceId: aws.String("blue-1"), Status: types.CustomHealthStatusUnhealthy}); err != nil {
			t.Fatal(err)
		}
	}
	checkDNS(sb, []string{"A 15 10.0.2.1"})
	for range 20 {
		if got := query(t, sb, "grpc.corp.local", dns.TypeA); !slices.Equal(got, []string{"A 5 10.0.2.1"}) {
			t.Fatalf("weighted answer with blue unhealthy: %q", got)
		}
	}
	calls := sandboxtest.APICalls(t, sb)
	if calls["RegisterInstance ok"] != 4 || calls["UpdateInstanceCustomHealthStatus ok"] != 2 || calls["ListHostedZones ok"] != 1 {
		t.Errorf("call counters %v", calls)
	}

	// A restart keeps it all.
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	sb = sandboxtest.StartWith(t, sandbox.Config{StatePath: state})
	c = cloudMapClient(sb)
	checkDNS(sb, []string{"A 15 10.0.2.1"})
	d, err := c.DiscoverInstances(ctx, &sd.DiscoverInstancesInput{NamespaceName: aws.String("corp.local"), ServiceName: aws.String("api"),
		QueryParameters: map[string]string{"cluster": "blue"}, HealthStatus: types.HealthStatusFilterAll})
	if err != nil || len(d.Instances) != 1 || d.Instances[0].HealthStatus != types.HealthStatusUnhealthy {
		t.Fatalf("discover after restart: %+v, %v", d, err)
	}
	if _, err := c.DeregisterInstance(ctx, &sd.DeregisterInstanceInput{ServiceId: multi.Service.Id, InstanceId: aws.String("green-1")}); err != nil {
		t.Fatal(err)
	}
	// blue-1 is the only instance left: unhealthy, it is answered all the same (Route 53
	// answers every record when none is healthy).
	checkDNS(sb, []string{"A 15 10.0.1.1"})
}
