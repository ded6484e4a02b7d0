package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	sdtypes "github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// discoveryCLI is the CLI for DiscoverInstances. The service model gives that operation the
// host prefix "data-", so the CLI sends it to http://data-127.0.0.1:<port>/, which does not
// resolve. Newer CLIs turn the prefix off with AWS_DISABLE_HOST_PREFIX_INJECTION=true; the
// AWS CLI 2.9 of Debian has no such setting (its botocore always injects the prefix), so
// its requests go through an HTTP proxy: the sandbox's API address itself, which serves a
// proxy-form request ("POST http://data-127.0.0.1:<port>/") as any other.
func discoveryCLI(c *cli, sb *sandbox.Sandbox) *cli {
	d := *c
	d.env = []string{"AWS_DISABLE_HOST_PREFIX_INJECTION=true",
		"HTTP_PROXY=" + sb.APIURL(), "http_proxy=" + sb.APIURL(), "NO_PROXY=", "no_proxy="}
	return &d
}

type sdOperation struct {
	Operation struct {
		Id, Type, Status, ErrorCode, ErrorMessage string
		Targets                                   map[string]string
		CreateDate, UpdateDate                    string
	}
}

// sdDone reads an operation and requires SUCCESS; it returns the operation's targets.
func sdDone(aws *cli, opID string) map[string]string {
	aws.t.Helper()
	var op sdOperation
	aws.must(&op, "servicediscovery", "get-operation", "--operation-id", opID)
	if op.Operation.Status != "SUCCESS" || op.Operation.CreateDate == "" {
		aws.t.Fatalf("operation %s: %+v", opID, op.Operation)
	}
	return op.Operation.Targets
}

type sdDiscovered struct {
	Instances []struct {
		InstanceId, NamespaceName, ServiceName, HealthStatus string
		Attributes                                           map[string]string
	}
}

func (d sdDiscovered) ids() []string {
	var out []string
	for _, i := range d.Instances {
		out = append(out, i.InstanceId+":"+i.HealthStatus)
	}
	slices.Sort(out)
	return out
}

// TestServiceDiscoveryCLI drives the sandbox's Cloud Map API with the real AWS CLI: every
// operation it has, two clusters registering into one shared private DNS namespace told
// apart by attributes, discovery by attribute and health, custom health, the records the
// DNS server answers (dig), Route 53's view of the namespace's zone, Cloud Map's errors as
// the CLI prints them, and the state across a restart.
func TestServiceDiscoveryCLI(t *testing.T) {
	needTool(t, awsBin, "awscli")
	state := filepath.Join(t.TempDir(), "state.db")
	first, closeFirst := sandboxtest.StartStateful(t, state)
	aws := newCLI(t, first)
	data := discoveryCLI(aws, first)

	// Namespaces of the three kinds.
	var op struct{ OperationId string }
	aws.must(&op, "servicediscovery", "create-private-dns-namespace", "--name", "corp.local", "--vpc", "vpc-0a1b2c",
		"--properties", `{"DnsProperties": {"SOA": {"TTL": 60}}}`, "--tags", "Key=team,Value=sre")
	nsID := sdDone(aws, op.OperationId)["NAMESPACE"]
	aws.must(&op, "servicediscovery", "create-http-namespace", "--name", "shop", "--description", "API only")
	httpNS := sdDone(aws, op.OperationId)["NAMESPACE"]
	aws.must(&op, "servicediscovery", "create-public-dns-namespace", "--name", "example.com")
	publicNS := sdDone(aws, op.OperationId)["NAMESPACE"]

	var ns struct {
		Namespace struct {
			Id, Arn, Name, Type string
			ServiceCount        int
			Properties          struct {
				DnsProperties struct {
					HostedZoneId string
					SOA          struct{ TTL int }
				}
				HttpProperties struct{ HttpName string }
			}
		}
	}
	aws.must(&ns, "servicediscovery", "get-namespace", "--id", nsID)
	zoneID := ns.Namespace.Properties.DnsProperties.HostedZoneId
	if ns.Namespace.Type != "DNS_PRIVATE" || ns.Namespace.Properties.HttpProperties.HttpName != "corp.local" || zoneID == "" ||
		ns.Namespace.Properties.DnsProperties.SOA.TTL != 60 || ns.Namespace.Arn != "arn:aws:servicediscovery:us-east-1:123456789012:namespace/"+nsID {
		t.Fatalf("namespace %+v", ns.Namespace)
	}
	// The namespace's hosted zone, as Route 53's API shows it.
	var hz struct {
		HostedZone struct {
			Name   string
			Config struct{ PrivateZone bool }
		}
	}
	aws.must(&hz, "route53", "get-hosted-zone", "--id", zoneID)
	if hz.HostedZone.Name != "corp.local." || !hz.HostedZone.Config.PrivateZone {
		t.Errorf("hosted zone %+v", hz.HostedZone)
	}
	var list struct {
		Namespaces []struct{ Id, Name, Type string }
	}
	aws.must(&list, "servicediscovery", "list-namespaces", "--filters", "Name=TYPE,Values=DNS_PRIVATE,Condition=EQ")
	if len(list.Namespaces) != 1 || list.Namespaces[0].Id != nsID {
		t.Errorf("private namespaces %+v", list.Namespaces)
	}
	list.Namespaces = nil
	aws.must(&list, "servicediscovery", "list-namespaces", "--page-size", "1")
	if len(list.Namespaces) != 3 {
		t.Errorf("namespaces (the CLI follows NextToken): %+v", list.Namespaces)
	}

	// One service, A and SRV records, multivalue, custom health; one for API discovery only.
	var svc struct {
		Service struct {
			Id, Arn, Name, Type string
			InstanceCount       int
			DnsConfig           struct {
				RoutingPolicy string
				DnsRecords    []struct {
					Type string
					TTL  int
				}
			}
			HealthCheckCustomConfig struct{ FailureThreshold int }
		}
	}
	aws.must(&svc, "servicediscovery", "create-service", "--name", "api", "--namespace-id", nsID,
		"--dns-config", "RoutingPolicy=MULTIVALUE,DnsRecords=[{Type=A,TTL=20},{Type=SRV,TTL=20}]",
		"--health-check-custom-config", "FailureThreshold=1")
	svcID := svc.Service.Id
	if svc.Service.Type != "DNS_HTTP" || svc.Service.DnsConfig.RoutingPolicy != "MULTIVALUE" || len(svc.Service.DnsConfig.DnsRecords) != 2 {
		t.Fatalf("service %+v", svc.Service)
	}
	aws.must(&svc, "servicediscovery", "create-service", "--name", "worker", "--namespace-id", httpNS)
	workerID := svc.Service.Id

	// Two clusters register into the one service, each instance carrying its cluster.
	type reg struct{ id, ip, cluster, ver string }
	regs := []reg{{"blue-1", "10.0.1.1", "blue", "v1-20"}, {"blue-2", "10.0.1.2", "blue", "v1-20"}, {"green-1", "10.0.2.1", "green", "v1-21"}}
	for _, r := range regs {
		aws.must(&op, "servicediscovery", "register-instance", "--service-id", svcID, "--instance-id", r.id,
			"--attributes", fmt.Sprintf("AWS_INSTANCE_IPV4=%s,AWS_INSTANCE_PORT=8080,cluster=%s,ver=%s,env=prod", r.ip, r.cluster, r.ver))
		if targets := sdDone(aws, op.OperationId); targets["INSTANCE"] != r.id || targets["SERVICE"] != svcID {
			t.Errorf("targets %v", targets)
		}
	}
	aws.must(&op, "servicediscovery", "register-instance", "--service-id", workerID, "--instance-id", "w-1", "--attributes", "queue=orders")
	sdDone(aws, op.OperationId)

	aws.must(&svc, "servicediscovery", "get-service", "--id", svcID)
	if svc.Service.InstanceCount != 3 || svc.Service.HealthCheckCustomConfig.FailureThreshold != 1 {
		t.Errorf("service %+v", svc.Service)
	}
	var services struct {
		Services []struct {
			Id            string
			InstanceCount int
		}
	}
	aws.must(&services, "servicediscovery", "list-services", "--filters", "Name=NAMESPACE_ID,Values="+nsID+",Condition=EQ")
	if len(services.Services) != 1 || services.Services[0].Id != svcID || services.Services[0].InstanceCount != 3 {
		t.Errorf("services %+v", services.Services)
	}
	var inst struct {
		Instance struct {
			Id         string
			Attributes map[string]string
		}
	}
	aws.must(&inst, "servicediscovery", "get-instance", "--service-id", svcID, "--instance-id", "green-1")
	if inst.Instance.Attributes["cluster"] != "green" || inst.Instance.Attributes["AWS_INSTANCE_IPV4"] != "10.0.2.1" {
		t.Errorf("instance %+v", inst.Instance)
	}
	var insts struct {
		Instances []struct {
			Id         string
			Attributes map[string]string
		}
	}
	aws.must(&insts, "servicediscovery", "list-instances", "--service-id", svcID, "--page-size", "2")
	if len(insts.Instances) != 3 {
		t.Errorf("instances %+v", insts.Instances)
	}

	// Custom health: blue-2 goes UNHEALTHY.
	aws.must(nil, "servicediscovery", "update-instance-custom-health-status", "--service-id", svcID, "--instance-id", "blue-2", "--status", "UNHEALTHY")
	var health struct{ Status map[string]string }
	aws.must(&health, "servicediscovery", "get-instances-health-status", "--service-id", svcID)
	if fmt.Sprint(health.Status) != "map[blue-1:HEALTHY blue-2:UNHEALTHY green-1:HEALTHY]" {
		t.Errorf("health %v", health.Status)
	}
	health.Status = nil // Unmarshal would add to the map
	aws.must(&health, "servicediscovery", "get-instances-health-status", "--service-id", svcID, "--instances", "blue-2")
	if fmt.Sprint(health.Status) != "map[blue-2:UNHEALTHY]" {
		t.Errorf("health of blue-2 %v", health.Status)
	}

	// Discovery by attribute, as the clients of each cluster select.
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"blue, healthy", []string{"--query-parameters", "cluster=blue"}, []string{"blue-1:HEALTHY"}},
		{"blue, all", []string{"--query-parameters", "cluster=blue", "--health-status", "ALL"}, []string{"blue-1:HEALTHY", "blue-2:UNHEALTHY"}},
		{"green by version", []string{"--query-parameters", "ver=v1-21,env=prod"}, []string{"green-1:HEALTHY"}},
		{"prefer green", []string{"--optional-parameters", "cluster=green"}, []string{"green-1:HEALTHY"}},
		{"prefer red: none, so all healthy", []string{"--optional-parameters", "cluster=red"}, []string{"blue-1:HEALTHY", "green-1:HEALTHY"}},
		{"unhealthy", []string{"--health-status", "UNHEALTHY"}, []string{"blue-2:UNHEALTHY"}},
		{"healthy or else all", []string{"--query-parameters", "cluster=blue", "--health-status", "HEALTHY_OR_ELSE_ALL"}, []string{"blue-1:HEALTHY"}},
		{"one", []string{"--health-status", "ALL", "--max-results", "1"}, nil},
	} {
		t.Run("discover "+tc.name, func(t *testing.T) {
			var got sdDiscovered
			data.must(&got, append([]string{"servicediscovery", "discover-instances", "--namespace-name", "corp.local", "--service-name", "api"}, tc.args...)...)
			if tc.want == nil {
				if len(got.Instances) != 1 {
					t.Errorf("max results 1: %v", got.ids())
				}
				return
			}
			if !slices.Equal(got.ids(), tc.want) {
				t.Errorf("got %v, want %v", got.ids(), tc.want)
			}
		})
	}
	// Every instance carries what the clients read.
	var all sdDiscovered
	data.must(&all, "servicediscovery", "discover-instances", "--namespace-name", "shop", "--service-name", "worker")
	if len(all.Instances) != 1 || all.Instances[0].HealthStatus != "UNKNOWN" || all.Instances[0].Attributes["queue"] != "orders" || all.Instances[0].NamespaceName != "shop" {
		t.Errorf("worker %+v", all.Instances)
	}

	// The DNS server answers the records Cloud Map wrote: blue-2 is out of the multivalue
	// answer while UNHEALTHY, its host name stays.
	if got := strings.Fields(dig(t, first, "api.corp.local", "A", "+short")); !sameItems(got, []string{"10.0.1.1", "10.0.2.1"}) {
		t.Errorf("dig A: %v", got)
	}
	srv := strings.Split(strings.TrimSpace(dig(t, first, "api.corp.local", "SRV", "+short")), "\n")
	if !sameItems(srv, []string{"1 1 8080 blue-1.api.corp.local.", "1 1 8080 green-1.api.corp.local."}) {
		t.Errorf("dig SRV: %q", srv)
	}
	if got := strings.TrimSpace(dig(t, first, "blue-2.api.corp.local", "A", "+short")); got != "10.0.1.2" {
		t.Errorf("dig SRV target: %q", got)
	}
	var rrsets struct {
		ResourceRecordSets []struct{ Name, Type string }
	}
	aws.must(&rrsets, "route53", "list-resource-record-sets", "--hosted-zone-id", zoneID)
	var names []string
	for _, s := range rrsets.ResourceRecordSets {
		names = append(names, s.Name+" "+s.Type)
	}
	if want := []string{"corp.local. NS", "corp.local. SOA", "api.corp.local. A", "api.corp.local. SRV", "blue-1.api.corp.local. A",
		"blue-2.api.corp.local. A", "green-1.api.corp.local. A"}; !slices.Equal(names, want) {
		t.Errorf("record sets %v, want %v", names, want)
	}

	// Operations and tags.
	var ops struct {
		Operations []struct{ Id, Status string }
	}
	aws.must(&ops, "servicediscovery", "list-operations", "--filters", "Name=SERVICE_ID,Values="+svcID+",Condition=EQ", "Name=STATUS,Values=SUCCESS,Condition=IN")
	if len(ops.Operations) != 3 {
		t.Errorf("operations %+v", ops.Operations)
	}
	aws.must(nil, "servicediscovery", "tag-resource", "--resource-arn", ns.Namespace.Arn, "--tags", "Key=env,Value=dev", "Key=owner,Value=crossfade")
	aws.must(nil, "servicediscovery", "untag-resource", "--resource-arn", ns.Namespace.Arn, "--tag-keys", "owner")
	var tags struct{ Tags []struct{ Key, Value string } }
	aws.must(&tags, "servicediscovery", "list-tags-for-resource", "--resource-arn", ns.Namespace.Arn)
	if fmt.Sprint(tags.Tags) != "[{team sre} {env dev}]" {
		t.Errorf("tags %v", tags.Tags)
	}

	// Cloud Map's errors as the CLI prints them; none changes anything.
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"namespace in use", []string{"delete-namespace", "--id", nsID},
			"(ResourceInUse) when calling the DeleteNamespace operation: Namespace has associated services; delete the services before deleting the namespace"},
		{"service in use", []string{"delete-service", "--id", svcID},
			"(ResourceInUse) when calling the DeleteService operation: Service contains registered instances; delete the instances before deleting the service"},
		{"unknown namespace", []string{"get-namespace", "--id", "ns-doesnotexist0000"}, "(NamespaceNotFound) when calling the GetNamespace operation"},
		{"unknown service", []string{"get-service", "--id", "srv-doesnotexist000"}, "(ServiceNotFound) when calling the GetService operation"},
		{"unknown instance", []string{"get-instance", "--service-id", svcID, "--instance-id", "red-1"}, "(InstanceNotFound) when calling the GetInstance operation"},
		{"unknown operation", []string{"get-operation", "--operation-id", "nope"}, "(OperationNotFound) when calling the GetOperation operation"},
		{"namespace exists", []string{"create-http-namespace", "--name", "shop"}, "(NamespaceAlreadyExists) when calling the CreateHttpNamespace operation"},
		{"service exists", []string{"create-service", "--name", "api", "--namespace-id", nsID, "--dns-config", "DnsRecords=[{Type=A,TTL=20}]"},
			"(ServiceAlreadyExists) when calling the CreateService operation"},
		{"no custom health", []string{"update-instance-custom-health-status", "--service-id", workerID, "--instance-id", "w-1", "--status", "HEALTHY"},
			"(CustomHealthNotFound) when calling the UpdateInstanceCustomHealthStatus operation"},
		{"A record without an address", []string{"register-instance", "--service-id", svcID, "--instance-id", "red-1", "--attributes", "AWS_INSTANCE_PORT=80"},
			"(InvalidInput) when calling the RegisterInstance operation"},
		{"attribute value with a leading space", []string{"register-instance", "--service-id", workerID, "--instance-id", "w-2", "--attributes", `{"queue": " orders"}`},
			"(InvalidInput) when calling the RegisterInstance operation: 1 validation error detected"},
		{"unknown tagged resource", []string{"list-tags-for-resource", "--resource-arn", strings.Replace(ns.Namespace.Arn, nsID, "ns-gone", 1)},
			"(ResourceNotFoundException) when calling the ListTagsForResource operation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := aws.run(append([]string{"servicediscovery"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("aws error:\n%v\nwant it to contain\n%s", err, tc.want)
			}
		})
	}
	t.Run("discover in an unknown namespace", func(t *testing.T) {
		_, err := data.run("servicediscovery", "discover-instances", "--namespace-name", "nope", "--service-name", "api")
		if err == nil || !strings.Contains(err.Error(), "(NamespaceNotFound) when calling the DiscoverInstances operation") {
			t.Fatalf("error %v", err)
		}
	})

	// A restart keeps namespaces, services, instances, health and records.
	if err := closeFirst(); err != nil {
		t.Fatal(err)
	}
	second := startSandbox(t, sandbox.Config{StatePath: state})
	aws = newCLI(t, second)
	data = discoveryCLI(aws, second)
	var after sdDiscovered
	data.must(&after, "servicediscovery", "discover-instances", "--namespace-name", "corp.local", "--service-name", "api", "--health-status", "ALL")
	if !slices.Equal(after.ids(), []string{"blue-1:HEALTHY", "blue-2:UNHEALTHY", "green-1:HEALTHY"}) {
		t.Errorf("after restart: %v", after.ids())
	}
	if got := strings.Fields(dig(t, second, "api.corp.local", "A", "+short")); !sameItems(got, []string{"10.0.1.1", "10.0.2.1"}) {
		t.Errorf("dig A after restart: %v", got)
	}

	// Teardown in the order Cloud Map requires; the namespace takes its hosted zone along.
	for _, r := range regs {
		aws.must(&op, "servicediscovery", "deregister-instance", "--service-id", svcID, "--instance-id", r.id)
		sdDone(aws, op.OperationId)
	}
	aws.must(&op, "servicediscovery", "deregister-instance", "--service-id", workerID, "--instance-id", "w-1")
	sdDone(aws, op.OperationId)
	if out := dig(t, second, "api.corp.local", "A"); !strings.Contains(out, "status: NXDOMAIN") {
		t.Errorf("records left after the deregistrations:\n%s", out)
	}
	aws.must(nil, "servicediscovery", "delete-service", "--id", svcID)
	aws.must(nil, "servicediscovery", "delete-service", "--id", workerID)
	for _, id := range []string{nsID, httpNS, publicNS} {
		aws.must(&op, "servicediscovery", "delete-namespace", "--id", id)
		sdDone(aws, op.OperationId)
	}
	var zones struct{ HostedZones []json.RawMessage }
	aws.must(&zones, "route53", "list-hosted-zones")
	if len(zones.HostedZones) != 0 {
		t.Errorf("hosted zones left: %s", zones.HostedZones)
	}
	list.Namespaces = nil
	aws.must(&list, "servicediscovery", "list-namespaces")
	if len(list.Namespaces) != 0 {
		t.Errorf("namespaces left: %+v", list.Namespaces)
	}
}

func sameItems(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestServiceDiscoverySDK: what the AWS CLI registers, aws-sdk-go-v2 discovers, with the
// host prefix turned off the way a Go client must (a middleware inside the stack: the client
// clears the stack values of the caller's context, so smithyhttp.DisableEndpointHostPrefix
// set there is lost), and a DNS client (miekg/dns) gets the instance's A and SRV records from
// the sandbox's DNS server.
func TestServiceDiscoverySDK(t *testing.T) {
	sb := startSandbox(t, sandbox.Config{})
	cliAWS := newCLI(t, sb)
	var op struct{ OperationId string }
	cliAWS.must(&op, "servicediscovery", "create-private-dns-namespace", "--name", "mesh.local", "--vpc", "vpc-1")
	nsID := sdDone(cliAWS, op.OperationId)["NAMESPACE"]
	var svc struct{ Service struct{ Id string } }
	cliAWS.must(&svc, "servicediscovery", "create-service", "--name", "orders", "--namespace-id", nsID,
		"--dns-config", "RoutingPolicy=WEIGHTED,DnsRecords=[{Type=SRV,TTL=10}]", "--health-check-custom-config", "FailureThreshold=1")
	cliAWS.must(&op, "servicediscovery", "register-instance", "--service-id", svc.Service.Id, "--instance-id", "orders-7f9c",
		"--attributes", "AWS_INSTANCE_IPV4=127.0.0.42,AWS_INSTANCE_PORT=50051,cluster=green,ver=v1-21")
	sdDone(cliAWS, op.OperationId)

	ctx := context.Background()
	c := sd.New(sd.Options{Region: "us-east-1", BaseEndpoint: aws.String(sb.APIURL()),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
		APIOptions: []func(*middleware.Stack) error{func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("DisableEndpointHostPrefix",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
				}), middleware.Before)
		}}})
	out, err := c.DiscoverInstances(ctx, &sd.DiscoverInstancesInput{NamespaceName: aws.String("mesh.local"), ServiceName: aws.String("orders"),
		QueryParameters: map[string]string{"cluster": "green"}, HealthStatus: sdtypes.HealthStatusFilterHealthyOrElseAll})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Instances) != 1 || aws.ToString(out.Instances[0].InstanceId) != "orders-7f9c" || out.Instances[0].Attributes["ver"] != "v1-21" ||
		out.Instances[0].HealthStatus != sdtypes.HealthStatusHealthy || aws.ToInt64(out.InstancesRevision) != 1 {
		t.Fatalf("discovered %+v", out)
	}
	rev, err := c.DiscoverInstancesRevision(ctx, &sd.DiscoverInstancesRevisionInput{NamespaceName: aws.String("mesh.local"), ServiceName: aws.String("orders")})
	if err != nil || aws.ToInt64(rev.InstancesRevision) != 1 {
		t.Fatalf("revision %+v, %v", rev, err)
	}

	ask := func(name string, qtype uint16) []dns.RR {
		t.Helper()
		m := new(dns.Msg)
		m.SetQuestion(name, qtype)
		r, err := dns.Exchange(m, sb.DNSAddr())
		if err != nil || r.Rcode != dns.RcodeSuccess || !r.Authoritative {
			t.Fatalf("dns %s %s: %v, %v", name, dns.TypeToString[qtype], r, err)
		}
		return r.Answer
	}
	ans := ask("orders.mesh.local.", dns.TypeSRV)
	if len(ans) != 1 {
		t.Fatalf("SRV answer %v", ans)
	}
	srv, ok := ans[0].(*dns.SRV)
	if !ok || srv.Priority != 1 || srv.Weight != 1 || srv.Port != 50051 || srv.Target != "orders-7f9c.orders.mesh.local." || srv.Hdr.Ttl != 10 {
		t.Fatalf("SRV %v", ans[0])
	}
	ans = ask(srv.Target, dns.TypeA)
	if a, ok := ans[0].(*dns.A); len(ans) != 1 || !ok || a.A.String() != "127.0.0.42" {
		t.Fatalf("A of the SRV target: %v", ans)
	}
}
