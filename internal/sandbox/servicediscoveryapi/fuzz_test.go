package servicediscoveryapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/sandbox/cloudmapstore"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// fuzzOps are the operations FuzzJSONBodies sends bodies to: the ones crossfade's
// publisher and Cloud Map lever call with input of their own making, and the creation
// and tagging calls that take the most members.
var fuzzOps = []string{"RegisterInstance", "DiscoverInstances", "CreateService", "ListInstances", "DeregisterInstance", "TagResource"}

// FuzzJSONBodies feeds arbitrary JSON 1.1 bodies to a few Cloud Map operations, against a
// store holding an HTTP namespace with a service of three instances and a private DNS
// namespace with a DNS service of one. In a body, $NS, $DNS, $SRV, $DSRV, $ARN and $TOKEN
// stand for the HTTP namespace's id, the DNS namespace's, the two services', the HTTP
// service's ARN and a real NextToken of its instances, so that the fuzzer reaches past
// the lookups. The API must never panic nor answer 5xx; a refusal is a 4xx in the JSON
// 1.1 error shape (__type, Message, and the code in X-Amzn-ErrorType), and leaves every
// namespace, service, instance, health status, operation, tag and DNS record as it was;
// an answer is a JSON object.
func FuzzJSONBodies(f *testing.F) {
	for _, s := range []struct {
		op   string
		body string
	}{
		{"RegisterInstance", `{"ServiceId": "$SRV", "InstanceId": "i-4", "Attributes": {"AWS_INSTANCE_IPV4": "10.0.0.4", "AWS_INSTANCE_PORT": "80", "cluster": "blue"}}`},
		{"RegisterInstance", `{"ServiceId": "$DSRV", "InstanceId": "d-2", "CreatorRequestId": "r-1", "Attributes": {"AWS_INSTANCE_IPV4": "10.0.1.2"}}`},
		{"RegisterInstance", `{"ServiceId": "$DSRV", "InstanceId": "d-3", "Attributes": {"AWS_INSTANCE_IPV6": "fd00::3"}}`},
		{"RegisterInstance", `{"ServiceId": "$SRV", "InstanceId": "i-1", "Attributes": {"AWS_INSTANCE_IPV4": "10.0.0.1", "AWS_INSTANCE_PORT": "70000"}}`},
		{"RegisterInstance", `{"ServiceId": "$SRV", "InstanceId": "bad id!", "Attributes": {}}`},
		{"RegisterInstance", `{"ServiceId": "$SRV", "InstanceId": "i-5", "Attributes": {"k": " v"}}`},
		{"RegisterInstance", `{"ServiceId": "$SRV", "InstanceId": "i-5", "Attributes": null}`},
		{"RegisterInstance", `{"ServiceId": 7}`},
		{"RegisterInstance", `[]`},
		{"RegisterInstance", `{"ServiceId": "$SRV", "InstanceId": "i-5", "Attributes": {"a": "b"}} trailing`},
		{"DiscoverInstances", `{"NamespaceName": "shop", "ServiceName": "web", "QueryParameters": {"cluster": "blue"}, "HealthStatus": "HEALTHY_OR_ELSE_ALL", "MaxResults": 2}`},
		{"DiscoverInstances", `{"NamespaceName": "corp.local", "ServiceName": "api", "OptionalParameters": {"v": "1"}, "HealthStatus": "ALL"}`},
		{"DiscoverInstances", `{"NamespaceName": "shop", "ServiceName": "web", "MaxResults": 0}`},
		{"DiscoverInstances", `{"NamespaceName": "shop", "ServiceName": "web", "HealthStatus": "SOMETIMES", "OwnerAccount": "999"}`},
		{"CreateService", `{"Name": "cart", "NamespaceId": "$NS", "Tags": [{"Key": "team", "Value": "pay"}]}`},
		{"CreateService", `{"Name": "db", "NamespaceId": "$DNS", "DnsConfig": {"RoutingPolicy": "WEIGHTED", "DnsRecords": [{"Type": "A", "TTL": 60}, {"Type": "SRV", "TTL": 60}]}, "HealthCheckCustomConfig": {"FailureThreshold": 1}}`},
		{"CreateService", `{"Name": "db", "DnsConfig": {"NamespaceId": "$DNS", "DnsRecords": [{"Type": "CNAME"}]}}`},
		{"CreateService", `{"Name": "web", "NamespaceId": "$NS"}`},
		{"CreateService", `{"Name": "x", "NamespaceId": "$NS", "Tags": [{"Key": "k"}], "HealthCheckConfig": {"Type": "HTTP"}}`},
		{"ListInstances", `{"ServiceId": "$SRV", "MaxResults": 1}`},
		{"ListInstances", `{"ServiceId": "$SRV", "NextToken": "$TOKEN", "MaxResults": 1}`},
		{"ListInstances", `{"ServiceId": "$SRV", "NextToken": "$TOKENx"}`},
		{"ListInstances", `{"ServiceId": "$SRV", "NextToken": "YWZ0ZXI6"}`},
		{"ListInstances", `{"ServiceId": "$SRV", "NextToken": "!!", "MaxResults": 101}`},
		{"DeregisterInstance", `{"ServiceId": "$SRV", "InstanceId": "i-2"}`},
		{"DeregisterInstance", `{"ServiceId": "$DSRV", "InstanceId": "nope"}`},
		{"TagResource", `{"ResourceARN": "$ARN", "Tags": [{"Key": "crossfade.io/cutover/shop/0a1b", "Value": "0a1b@h:1"}]}`},
		{"TagResource", `{"ResourceARN": "$ARN", "Tags": [{"Key": "", "Value": ""}]}`},
		{"TagResource", `{"ResourceARN": "arn:aws:servicediscovery:us-east-1:123456789012:service/srv-nope", "Tags": []}`},
		{"ListInstances", ``},
		{"ListInstances", `{`},
		{"ListInstances", "{\"ServiceId\": \"\xff\"}"},
	} {
		op := -1
		for i, name := range fuzzOps {
			if name == s.op {
				op = i
			}
		}
		f.Add(uint8(op), s.body)
	}
	f.Fuzz(func(t *testing.T, op uint8, body string) {
		fx := newFuzzStore(t)
		body = fx.placeholders.Replace(body)
		before := fx.dump(t)
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		req.Header.Set("X-Amz-Target", TargetPrefix+"."+fuzzOps[int(op)%len(fuzzOps)])
		rec := httptest.NewRecorder()
		fx.api.ServeHTTP(rec, req)
		var out map[string]any
		decodeErr := json.Unmarshal(rec.Body.Bytes(), &out)
		switch {
		case rec.Code == http.StatusOK:
			if decodeErr != nil {
				t.Fatalf("answer is not a JSON object: %v: %s", decodeErr, rec.Body)
			}
			return
		case rec.Code >= 400 && rec.Code < 500:
			code, _ := out["__type"].(string)
			msg, _ := out["Message"].(string)
			if decodeErr != nil || code == "" || msg == "" || rec.Header().Get("X-Amzn-ErrorType") != code ||
				rec.Header().Get("Content-Type") != "application/x-amz-json-1.1" {
				t.Fatalf("status %d without the JSON 1.1 error shape: %v %s", rec.Code, rec.Header(), rec.Body)
			}
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		if after := fx.dump(t); !reflect.DeepEqual(before, after) {
			t.Fatalf("refused request (%d %s) changed the store:\nbefore %+v\nafter  %+v", rec.Code, rec.Body, before, after)
		}
	})
}

// fuzzStore is the store FuzzJSONBodies sends its bodies to.
type fuzzStore struct {
	api          *API
	store        *cloudmapstore.Store
	zones        *zones.Store
	placeholders *strings.Replacer
}

func newFuzzStore(t *testing.T) *fuzzStore {
	t.Helper()
	zs, err := zones.Open(zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store, err := cloudmapstore.Open(cloudmapstore.Options{Zones: zs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	api, err := New(Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	must := func(v string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	namespace := func(in cloudmapstore.CreateNamespaceInput) string {
		o, err := store.GetOperation(must(store.CreateNamespace(in)))
		if err != nil || o.Status != cloudmapstore.StatusSuccess {
			t.Fatalf("create namespace %s: %+v %v", in.Name, o, err)
		}
		return o.Targets[cloudmapstore.TargetNamespace]
	}
	service := func(in cloudmapstore.CreateServiceInput) cloudmapstore.Service {
		v, err := store.CreateService(in)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ns := namespace(cloudmapstore.CreateNamespaceInput{Type: cloudmapstore.NamespaceHTTP, Name: "shop"})
	dns := namespace(cloudmapstore.CreateNamespaceInput{Type: cloudmapstore.NamespaceDNSPrivate, Name: "corp.local", VPC: "vpc-1"})
	web := service(cloudmapstore.CreateServiceInput{Name: "web", NamespaceID: ns, Tags: []cloudmapstore.Tag{{Key: "team", Value: "web"}}})
	api2 := service(cloudmapstore.CreateServiceInput{Name: "api", NamespaceID: dns, CustomHealth: true,
		DNS: &cloudmapstore.DNSConfig{RoutingPolicy: "MULTIVALUE", Records: []cloudmapstore.DNSRecord{{Type: "A", TTL: 60}}}})
	for i, ip := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"} {
		must(store.RegisterInstance(cloudmapstore.RegisterInstanceInput{ServiceID: web.ID, InstanceID: "i-" + string(rune('1'+i)),
			Attributes: map[string]string{"AWS_INSTANCE_IPV4": ip, "AWS_INSTANCE_PORT": "80", "cluster": "blue"}}))
	}
	must(store.RegisterInstance(cloudmapstore.RegisterInstanceInput{ServiceID: api2.ID, InstanceID: "d-1",
		Attributes: map[string]string{"AWS_INSTANCE_IPV4": "10.0.1.1"}}))
	one := int32(1)
	_, token, err := store.ListInstances(web.ID, &one, "")
	if err != nil || token == "" {
		t.Fatalf("no NextToken: %v", err)
	}
	return &fuzzStore{api: api, store: store, zones: zs,
		placeholders: strings.NewReplacer("$NS", ns, "$DNS", dns, "$SRV", web.ID, "$DSRV", api2.ID, "$ARN", web.ARN, "$TOKEN", token)}
}

// storeDump is everything a request could change, as the store's readers report it.
type storeDump struct {
	Namespaces []cloudmapstore.Namespace
	Services   []cloudmapstore.Service
	Instances  map[string][]cloudmapstore.Instance
	Health     map[string][]cloudmapstore.InstanceHealth
	Operations []cloudmapstore.OperationView
	Tags       map[string][]cloudmapstore.Tag
	Records    map[string][]zones.RRSet
}

func (fx *fuzzStore) dump(t *testing.T) storeDump {
	t.Helper()
	s := fx.store
	d := storeDump{Instances: map[string][]cloudmapstore.Instance{}, Health: map[string][]cloudmapstore.InstanceHealth{},
		Tags: map[string][]cloudmapstore.Tag{}, Records: map[string][]zones.RRSet{}}
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var err error
	d.Namespaces, _, err = s.ListNamespaces(cloudmapstore.ListInput{})
	check(err)
	d.Services, _, err = s.ListServices(cloudmapstore.ListInput{})
	check(err)
	d.Operations, _, err = s.ListOperations(cloudmapstore.ListInput{})
	check(err)
	for _, n := range d.Namespaces {
		d.Tags[n.ARN], err = s.ListTagsForResource(n.ARN)
		check(err)
		if n.HostedZoneID != "" {
			p, err := fx.zones.ListRecords(n.HostedZoneID, "", "", "", 1000)
			check(err)
			for _, set := range p.Sets {
				d.Records[n.ID] = append(d.Records[n.ID], *set)
			}
		}
	}
	for _, v := range d.Services {
		d.Tags[v.ARN], err = s.ListTagsForResource(v.ARN)
		check(err)
		d.Instances[v.ID], _, err = s.ListInstances(v.ID, nil, "")
		check(err)
		d.Health[v.ID], _, err = s.GetInstancesHealthStatus(v.ID, nil, nil, "")
		check(err)
	}
	return d
}
