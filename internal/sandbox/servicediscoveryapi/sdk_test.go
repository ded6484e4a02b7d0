package servicediscoveryapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	"github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/sandbox/cloudmapstore"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

type fixture struct {
	api    *API
	store  *cloudmapstore.Store
	zones  *zones.Store
	faults *faults.Injector
	srv    *httptest.Server
	client *sd.Client
}

// newFixture serves the API on loopback and points the real SDK client at it.
func newFixture(t *testing.T, opts cloudmapstore.Options) *fixture {
	t.Helper()
	zs, err := zones.Open(zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts.Zones = zs
	store, err := cloudmapstore.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	inj, _ := faults.New(faults.Config{})
	api, err := New(Config{Store: store, Faults: inj, Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &fixture{api: api, store: store, zones: zs, faults: inj, srv: srv, client: newClient(srv.URL, disableHostPrefix)}
}

func newClient(endpoint string, optFns ...func(*sd.Options)) *sd.Client {
	return sd.New(sd.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer:      retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = 5 * time.Millisecond }),
	}, optFns...)
}

// disableHostPrefix keeps DiscoverInstances on the endpoint's own host. The client clears
// the stack values at the start of every operation, so smithyhttp.DisableEndpointHostPrefix
// on the caller's context is lost: it has to be set by a middleware inside the stack.
func disableHostPrefix(o *sd.Options) {
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("DisableEndpointHostPrefix",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
			}), middleware.Before)
	})
}

// succeeded waits for an operation to leave PENDING and requires SUCCESS; it returns the
// operation's targets.
func (f *fixture) succeeded(t *testing.T, ctx context.Context, id *string) map[string]string {
	t.Helper()
	for range 200 {
		out, err := f.client.GetOperation(ctx, &sd.GetOperationInput{OperationId: id})
		if err != nil {
			t.Fatal(err)
		}
		switch out.Operation.Status {
		case types.OperationStatusSuccess:
			return out.Operation.Targets
		case types.OperationStatusFail:
			t.Fatalf("operation %s failed: %s %s", *id, aws.ToString(out.Operation.ErrorCode), aws.ToString(out.Operation.ErrorMessage))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("operation %s never finished", *id)
	return nil
}

// TestSDK drives every served operation through aws-sdk-go-v2's servicediscovery client:
// a private DNS namespace with a service whose instances carry cluster attributes, custom
// health, discovery by attribute, the DNS records in the namespace's zone, operations,
// tags, and the whole teardown.
func TestSDK(t *testing.T) {
	f := newFixture(t, cloudmapstore.Options{OperationDelay: 30 * time.Millisecond})
	ctx := context.Background()
	c := f.client

	op, err := c.CreatePrivateDnsNamespace(ctx, &sd.CreatePrivateDnsNamespaceInput{Name: aws.String("corp.local"), Vpc: aws.String("vpc-1"),
		Properties: &types.PrivateDnsNamespaceProperties{DnsProperties: &types.PrivateDnsPropertiesMutable{SOA: &types.SOA{TTL: aws.Int64(30)}}},
		Tags:       []types.Tag{{Key: aws.String("team"), Value: aws.String("sre")}}})
	if err != nil {
		t.Fatal(err)
	}
	pending, err := c.GetOperation(ctx, &sd.GetOperationInput{OperationId: op.OperationId})
	if err != nil || pending.Operation.Status != types.OperationStatusPending || pending.Operation.Type != types.OperationTypeCreateNamespace {
		t.Fatalf("new operation %+v, %v", pending.Operation, err)
	}
	nsID := f.succeeded(t, ctx, op.OperationId)["NAMESPACE"]
	ns, err := c.GetNamespace(ctx, &sd.GetNamespaceInput{Id: &nsID})
	if err != nil {
		t.Fatal(err)
	}
	props := ns.Namespace.Properties
	if ns.Namespace.Type != types.NamespaceTypeDnsPrivate || aws.ToString(props.HttpProperties.HttpName) != "corp.local" ||
		aws.ToInt64(props.DnsProperties.SOA.TTL) != 30 || aws.ToString(ns.Namespace.ResourceOwner) != cloudmapstore.DefaultAccountID || ns.Namespace.CreateDate.IsZero() {
		t.Fatalf("namespace %+v", ns.Namespace)
	}
	zoneID := aws.ToString(props.DnsProperties.HostedZoneId)
	if z, err := f.zones.Zone(zoneID); err != nil || !z.Private || z.Name != "corp.local." {
		t.Fatalf("hosted zone %s: %+v, %v", zoneID, z, err)
	}
	httpOp, err := c.CreateHttpNamespace(ctx, &sd.CreateHttpNamespaceInput{Name: aws.String("shop")})
	if err != nil {
		t.Fatal(err)
	}
	pubOp, err := c.CreatePublicDnsNamespace(ctx, &sd.CreatePublicDnsNamespaceInput{Name: aws.String("example.com")})
	if err != nil {
		t.Fatal(err)
	}
	f.succeeded(t, ctx, httpOp.OperationId)
	pubID := f.succeeded(t, ctx, pubOp.OperationId)["NAMESPACE"]

	var names []string
	for p := sd.NewListNamespacesPaginator(c, &sd.ListNamespacesInput{MaxResults: aws.Int32(1)}); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range page.Namespaces {
			names = append(names, aws.ToString(n.Name)+"/"+string(n.Type))
		}
	}
	if fmt.Sprint(names) != "[corp.local/DNS_PRIVATE shop/HTTP example.com/DNS_PUBLIC]" {
		t.Errorf("namespaces %v", names)
	}

	svc, err := c.CreateService(ctx, &sd.CreateServiceInput{Name: aws.String("api"), NamespaceId: &nsID,
		DnsConfig: &types.DnsConfig{RoutingPolicy: types.RoutingPolicyMultivalue,
			DnsRecords: []types.DnsRecord{{Type: types.RecordTypeA, TTL: aws.Int64(10)}, {Type: types.RecordTypeSrv, TTL: aws.Int64(10)}}},
		HealthCheckCustomConfig: &types.HealthCheckCustomConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	svcID := svc.Service.Id
	got, err := c.GetService(ctx, &sd.GetServiceInput{Id: svcID})
	if err != nil || got.Service.Type != types.ServiceTypeDnsHttp || got.Service.HealthCheckCustomConfig == nil ||
		len(got.Service.DnsConfig.DnsRecords) != 2 || aws.ToString(got.Service.NamespaceId) != nsID || aws.ToString(got.Service.Arn) != "arn:aws:servicediscovery:us-east-1:123456789012:service/"+*svcID {
		t.Fatalf("service %+v, %v", got.Service, err)
	}

	// Two clusters register into the one service, told apart by attributes.
	for _, r := range []struct{ id, ip, cluster string }{{"blue-1", "10.0.1.1", "blue"}, {"blue-2", "10.0.1.2", "blue"}, {"green-1", "10.0.2.1", "green"}} {
		reg, err := c.RegisterInstance(ctx, &sd.RegisterInstanceInput{ServiceId: svcID, InstanceId: aws.String(r.id),
			Attributes: map[string]string{"AWS_INSTANCE_IPV4": r.ip, "AWS_INSTANCE_PORT": "8080", "cluster": r.cluster, "ver": "v1-21"}})
		if err != nil {
			t.Fatal(err)
		}
		targets := f.succeeded(t, ctx, reg.OperationId)
		if targets["INSTANCE"] != r.id || targets["SERVICE"] != *svcID {
			t.Errorf("targets %v", targets)
		}
	}
	inst, err := c.GetInstance(ctx, &sd.GetInstanceInput{ServiceId: svcID, InstanceId: aws.String("green-1")})
	if err != nil || inst.Instance.Attributes["cluster"] != "green" || aws.ToString(inst.ResourceOwner) != cloudmapstore.DefaultAccountID {
		t.Fatalf("instance %+v, %v", inst, err)
	}
	var ids []string
	for p := sd.NewListInstancesPaginator(c, &sd.ListInstancesInput{ServiceId: svcID, MaxResults: aws.Int32(2)}); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range page.Instances {
			ids = append(ids, aws.ToString(i.Id))
		}
	}
	if fmt.Sprint(ids) != "[blue-1 blue-2 green-1]" {
		t.Errorf("instances %v", ids)
	}

	if _, err := c.UpdateInstanceCustomHealthStatus(ctx, &sd.UpdateInstanceCustomHealthStatusInput{ServiceId: svcID,
		InstanceId: aws.String("blue-2"), Status: types.CustomHealthStatusUnhealthy}); err != nil {
		t.Fatal(err)
	}
	health, err := c.GetInstancesHealthStatus(ctx, &sd.GetInstancesHealthStatusInput{ServiceId: svcID})
	if err != nil || fmt.Sprint(health.Status) != "map[blue-1:HEALTHY blue-2:UNHEALTHY green-1:HEALTHY]" {
		t.Fatalf("health %v, %v", health, err)
	}

	discover := func(in sd.DiscoverInstancesInput) []string {
		t.Helper()
		in.NamespaceName, in.ServiceName = aws.String("corp.local"), aws.String("api")
		out, err := c.DiscoverInstances(ctx, &in)
		if err != nil {
			t.Fatal(err)
		}
		if aws.ToInt64(out.InstancesRevision) != 3 {
			t.Errorf("revision %d", aws.ToInt64(out.InstancesRevision))
		}
		var ids []string
		for _, i := range out.Instances {
			ids = append(ids, aws.ToString(i.InstanceId)+":"+string(i.HealthStatus))
		}
		slices.Sort(ids)
		return ids
	}
	for _, tc := range []struct {
		name string
		in   sd.DiscoverInstancesInput
		want string
	}{
		{"blue, healthy", sd.DiscoverInstancesInput{QueryParameters: map[string]string{"cluster": "blue"}}, "[blue-1:HEALTHY]"},
		{"blue, all", sd.DiscoverInstancesInput{QueryParameters: map[string]string{"cluster": "blue"}, HealthStatus: types.HealthStatusFilterAll}, "[blue-1:HEALTHY blue-2:UNHEALTHY]"},
		{"prefer green", sd.DiscoverInstancesInput{OptionalParameters: map[string]string{"cluster": "green"}}, "[green-1:HEALTHY]"},
		{"unhealthy", sd.DiscoverInstancesInput{HealthStatus: types.HealthStatusFilterUnhealthy}, "[blue-2:UNHEALTHY]"},
		{"healthy or else all", sd.DiscoverInstancesInput{HealthStatus: types.HealthStatusFilterHealthyOrElseAll, QueryParameters: map[string]string{"cluster": "blue"}}, "[blue-1:HEALTHY]"},
		{"max results", sd.DiscoverInstancesInput{HealthStatus: types.HealthStatusFilterAll, MaxResults: aws.Int32(1)}, "1"},
	} {
		t.Run("discover "+tc.name, func(t *testing.T) {
			got := discover(tc.in)
			if text := fmt.Sprint(got); text != tc.want && fmt.Sprint(len(got)) != tc.want {
				t.Errorf("got %v, want %s", got, tc.want)
			}
		})
	}
	rev, err := c.DiscoverInstancesRevision(ctx, &sd.DiscoverInstancesRevisionInput{NamespaceName: aws.String("corp.local"), ServiceName: aws.String("api")})
	if err != nil || aws.ToInt64(rev.InstancesRevision) != 3 {
		t.Errorf("revision %v, %v", rev, err)
	}

	// The records Cloud Map writes, in the namespace's zone: the unhealthy instance is out of
	// the multivalue answer, and keeps its host name.
	node := f.zones.LookupIn(zoneID, "api.corp.local.")
	var sets []string
	for _, s := range node.Sets {
		sets = append(sets, s.Type+" "+strings.Join(s.Records, ","))
	}
	slices.Sort(sets)
	want := []string{"A 10.0.1.1,10.0.2.1", "SRV 1 1 8080 blue-1.api.corp.local.,1 1 8080 green-1.api.corp.local."}
	if !slices.Equal(sets, want) {
		t.Errorf("records %q, want %q", sets, want)
	}
	if n := f.zones.LookupIn(zoneID, "blue-2.api.corp.local."); n == nil || len(n.Sets) != 1 || n.Sets[0].Records[0] != "10.0.1.2" {
		t.Errorf("host record of blue-2: %+v", n)
	}

	ops, err := c.ListOperations(ctx, &sd.ListOperationsInput{Filters: []types.OperationFilter{
		{Name: types.OperationFilterNameServiceId, Values: []string{*svcID}},
		{Name: types.OperationFilterNameType, Values: []string{"REGISTER_INSTANCE"}, Condition: types.FilterConditionIn},
	}})
	if err != nil || len(ops.Operations) != 3 || ops.Operations[0].Status != types.OperationStatusSuccess {
		t.Errorf("operations %+v, %v", ops, err)
	}
	services, err := c.ListServices(ctx, &sd.ListServicesInput{Filters: []types.ServiceFilter{{Name: types.ServiceFilterNameNamespaceId, Values: []string{nsID}}}})
	if err != nil || len(services.Services) != 1 || aws.ToInt32(services.Services[0].InstanceCount) != 3 {
		t.Errorf("services %+v, %v", services, err)
	}

	arn := ns.Namespace.Arn
	if _, err := c.TagResource(ctx, &sd.TagResourceInput{ResourceARN: arn, Tags: []types.Tag{{Key: aws.String("env"), Value: aws.String("dev")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UntagResource(ctx, &sd.UntagResourceInput{ResourceARN: arn, TagKeys: []string{"team"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := c.ListTagsForResource(ctx, &sd.ListTagsForResourceInput{ResourceARN: arn})
	if err != nil || len(tags.Tags) != 1 || aws.ToString(tags.Tags[0].Key) != "env" {
		t.Errorf("tags %+v, %v", tags, err)
	}

	// Teardown, in the order Cloud Map requires.
	for _, id := range []string{"blue-1", "blue-2", "green-1"} {
		out, err := c.DeregisterInstance(ctx, &sd.DeregisterInstanceInput{ServiceId: svcID, InstanceId: aws.String(id)})
		if err != nil {
			t.Fatal(err)
		}
		f.succeeded(t, ctx, out.OperationId)
	}
	if f.zones.LookupIn(zoneID, "api.corp.local.") != nil || f.zones.LookupIn(zoneID, "blue-2.api.corp.local.") != nil {
		t.Error("records left after the deregistrations")
	}
	if _, err := c.DeleteService(ctx, &sd.DeleteServiceInput{Id: svcID}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{nsID, pubID} {
		out, err := c.DeleteNamespace(ctx, &sd.DeleteNamespaceInput{Id: aws.String(id)})
		if err != nil {
			t.Fatal(err)
		}
		f.succeeded(t, ctx, out.OperationId)
	}
	if _, err := f.zones.Zone(zoneID); err == nil {
		t.Error("hosted zone left after DeleteNamespace")
	}
}

// TestSDKErrors checks that every refusal reaches the SDK as its typed exception, with the
// exception's members and HTTP 400.
func TestSDKErrors(t *testing.T) {
	f := newFixture(t, cloudmapstore.Options{})
	ctx := context.Background()
	c := f.client
	nsOp, _ := c.CreateHttpNamespace(ctx, &sd.CreateHttpNamespaceInput{Name: aws.String("shop"), CreatorRequestId: aws.String("req-ns")})
	nsID := f.succeeded(t, ctx, nsOp.OperationId)["NAMESPACE"]
	svc, err := c.CreateService(ctx, &sd.CreateServiceInput{Name: aws.String("api"), NamespaceId: &nsID, CreatorRequestId: aws.String("req-svc")})
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := c.CreateService(ctx, &sd.CreateServiceInput{Name: aws.String("plain"), NamespaceId: &nsID})
	if _, err := c.RegisterInstance(ctx, &sd.RegisterInstanceInput{ServiceId: plain.Service.Id, InstanceId: aws.String("i-1"), Attributes: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		call  func() error
		check func(err error) bool
		msg   string
	}{
		{"namespace not found", func() error {
			_, err := c.GetNamespace(ctx, &sd.GetNamespaceInput{Id: aws.String("ns-nope")})
			return err
		}, isA[*types.NamespaceNotFound], "ns-nope"},
		{"namespace exists", func() error {
			_, err := c.CreateHttpNamespace(ctx, &sd.CreateHttpNamespaceInput{Name: aws.String("shop")})
			return err
		}, func(err error) bool {
			var e *types.NamespaceAlreadyExists
			return errors.As(err, &e) && aws.ToString(e.NamespaceId) == nsID && aws.ToString(e.CreatorRequestId) == "req-ns"
		}, "already exists"},
		{"service exists", func() error {
			_, err := c.CreateService(ctx, &sd.CreateServiceInput{Name: aws.String("api"), NamespaceId: &nsID})
			return err
		}, func(err error) bool {
			var e *types.ServiceAlreadyExists
			return errors.As(err, &e) && aws.ToString(e.ServiceId) == *svc.Service.Id && aws.ToString(e.CreatorRequestId) == "req-svc"
		}, "same name already exists"},
		{"service not found", func() error {
			_, err := c.ListInstances(ctx, &sd.ListInstancesInput{ServiceId: aws.String("srv-nope")})
			return err
		}, isA[*types.ServiceNotFound], "srv-nope"},
		{"instance not found", func() error {
			_, err := c.DeregisterInstance(ctx, &sd.DeregisterInstanceInput{ServiceId: svc.Service.Id, InstanceId: aws.String("i-9")})
			return err
		}, isA[*types.InstanceNotFound], "i-9"},
		{"operation not found", func() error {
			_, err := c.GetOperation(ctx, &sd.GetOperationInput{OperationId: aws.String("nope")})
			return err
		}, isA[*types.OperationNotFound], "nope"},
		{"namespace in use", func() error {
			_, err := c.DeleteNamespace(ctx, &sd.DeleteNamespaceInput{Id: &nsID})
			return err
		}, isA[*types.ResourceInUse], "Namespace has associated services; delete the services before deleting the namespace"},
		{"service in use", func() error {
			_, err := c.DeleteService(ctx, &sd.DeleteServiceInput{Id: plain.Service.Id})
			return err
		}, isA[*types.ResourceInUse], "Service contains registered instances; delete the instances before deleting the service"},
		{"custom health not configured", func() error {
			_, err := c.UpdateInstanceCustomHealthStatus(ctx, &sd.UpdateInstanceCustomHealthStatusInput{ServiceId: plain.Service.Id, InstanceId: aws.String("i-1"), Status: types.CustomHealthStatusHealthy})
			return err
		}, isA[*types.CustomHealthNotFound], "isn't a custom health check"},
		{"invalid attributes", func() error {
			_, err := c.RegisterInstance(ctx, &sd.RegisterInstanceInput{ServiceId: svc.Service.Id, InstanceId: aws.String("i-1"), Attributes: map[string]string{"k": " v"}})
			return err
		}, isA[*types.InvalidInput], "Map value must satisfy constraint"},
		{"missing id", func() error {
			// The SDK checks required members itself; a raw client meets the service's check.
			_, err := rawCall(f.srv.URL, "GetService", `{}`)
			return err
		}, func(err error) bool { return strings.Contains(err.Error(), "InvalidInput") }, "Value null at 'id' failed to satisfy constraint: Member must not be null"},
		{"tags of an unknown resource", func() error {
			_, err := c.ListTagsForResource(ctx, &sd.ListTagsForResourceInput{ResourceARN: aws.String("arn:aws:servicediscovery:us-east-1:123456789012:namespace/ns-gone")})
			return err
		}, isA[*types.ResourceNotFoundException], "ns-gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || !tc.check(err) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %v (%T)", err, err)
			}
			var re *awshttp.ResponseError
			if errors.As(err, &re) && re.HTTPStatusCode() != http.StatusBadRequest {
				t.Errorf("HTTP %d, want 400", re.HTTPStatusCode())
			}
		})
	}

	t.Run("duplicate request while pending", func(t *testing.T) {
		slow := newFixture(t, cloudmapstore.Options{OperationDelay: time.Hour})
		op, _ := slow.client.CreateHttpNamespace(ctx, &sd.CreateHttpNamespaceInput{Name: aws.String("slow")})
		o, _ := slow.client.GetOperation(ctx, &sd.GetOperationInput{OperationId: op.OperationId})
		s, err := slow.client.CreateService(ctx, &sd.CreateServiceInput{Name: aws.String("api"), NamespaceId: aws.String(o.Operation.Targets["NAMESPACE"])})
		if err != nil {
			t.Fatal(err)
		}
		in := func() *sd.RegisterInstanceInput {
			return &sd.RegisterInstanceInput{ServiceId: s.Service.Id, InstanceId: aws.String("i-1"), Attributes: map[string]string{"k": "v"}}
		}
		firstIn := in()
		first, err := slow.client.RegisterInstance(ctx, firstIn)
		if err != nil {
			t.Fatal(err)
		}
		_, err = slow.client.RegisterInstance(ctx, in())
		var dup *types.DuplicateRequest
		if !errors.As(err, &dup) || aws.ToString(dup.DuplicateOperationId) != *first.OperationId {
			t.Fatalf("second registration: %v", err)
		}
		// The SDK wrote the idempotency token it generated into the first input: sent
		// again, it is a retry of the first registration, answered with its operation.
		again, err := slow.client.RegisterInstance(ctx, firstIn)
		if err != nil || *again.OperationId != *first.OperationId || aws.ToString(firstIn.CreatorRequestId) == "" {
			t.Fatalf("retry: %v, %v", again, err)
		}
	})
}

func isA[T error](err error) bool {
	var e T
	return errors.As(err, &e)
}

// TestSDKHostPrefix: without the middleware, the SDK sends DiscoverInstances to
// data-<host>, as the model says; the sandbox serves it on whatever host it arrives at.
func TestSDKHostPrefix(t *testing.T) {
	f := newFixture(t, cloudmapstore.Options{})
	ctx := context.Background()
	op, _ := f.client.CreateHttpNamespace(ctx, &sd.CreateHttpNamespaceInput{Name: aws.String("shop")})
	nsID := f.succeeded(t, ctx, op.OperationId)["NAMESPACE"]
	if _, err := f.client.CreateService(ctx, &sd.CreateServiceInput{Name: aws.String("api"), NamespaceId: &nsID}); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(f.srv.URL)
	var hosts []string
	// Every connection goes to the sandbox, whatever name the SDK asks for.
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, u.Host)
	}}
	c := newClient(f.srv.URL, func(o *sd.Options) {
		o.HTTPClient = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			hosts = append(hosts, r.URL.Host)
			return tr.RoundTrip(r)
		})}
	})
	out, err := c.DiscoverInstances(ctx, &sd.DiscoverInstancesInput{NamespaceName: aws.String("shop"), ServiceName: aws.String("api")})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Instances) != 0 || len(hosts) != 1 || hosts[0] != "data-"+u.Host {
		t.Errorf("hosts %v, answer %+v", hosts, out)
	}
	var ae smithy.APIError
	if _, err := c.GetNamespace(ctx, &sd.GetNamespaceInput{Id: &nsID}); err != nil || hosts[1] != u.Host || errors.As(err, &ae) {
		t.Errorf("GetNamespace went to %v: %v", hosts, err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
