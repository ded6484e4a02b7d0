package route53

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
)

func TestUnescapeName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"www.example.com.", "www.example.com"},
		{`\052.example.com.`, "*.example.com"},
		{`\052.Sub.Example.COM.`, "*.sub.example.com"},
		{`a\100b.example.com.`, "a@b.example.com"},
		{`a\.b.example.com.`, "a.b.example.com"},
		{`trailing\`, `trailing\`},
		{`\09.example.com`, "09.example.com"}, // not three octal digits: backslash escapes the next byte
		{"example.com", "example.com"},
	} {
		if got := UnescapeName(tc.in); got != tc.want {
			t.Errorf("UnescapeName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

var (
	zoneExample = provider.Zone{ID: "ZEX", Name: "example.com"}
	zonePrivate = provider.Zone{ID: "ZPRIV", Name: "example.com", Private: true}
	zoneSub     = provider.Zone{ID: "ZSUB", Name: "sub.example.com"}
	zoneELB     = provider.Zone{ID: "ZELB", Name: "elb.example.net"}
	knownZones  = []provider.Zone{zoneExample, zonePrivate, zoneSub, zoneELB}
)

func TestAliasResolver(t *testing.T) {
	r := aliasResolver{known: knownZones}
	for _, tc := range []struct {
		target  string
		private bool
		want    string
		ok      bool
	}{
		{"www.example.com", false, "ZEX", true},
		{"www.example.com.", true, "ZPRIV", true},
		{"a.sub.example.com", false, "ZSUB", true},
		{"sub.example.com", true, "ZSUB", true}, // deepest zone wins over the private parent
		{"lb-1.elb.example.net", false, "ZELB", true},
		{"example.org", false, "", false},
	} {
		got, ok := r.zoneFor(tc.target, tc.private)
		if got != tc.want || ok != tc.ok {
			t.Errorf("zoneFor(%q, private=%v) = %q, %v; want %q, %v", tc.target, tc.private, got, ok, tc.want, tc.ok)
		}
	}
	// Two public zones of one name: ambiguous.
	amb := aliasResolver{known: []provider.Zone{{ID: "Z1", Name: "example.com"}, {ID: "Z2", Name: "example.com"}}}
	if got, ok := amb.zoneFor("www.example.com", false); ok {
		t.Errorf("ambiguous zones resolved to %q", got)
	}
}

func props(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// TestRecordSetRoundTrip converts endpoints to record sets and back: the model survives,
// and the record set has the fields Route 53 wants.
func TestRecordSetRoundTrip(t *testing.T) {
	r := aliasResolver{known: knownZones}
	for _, tc := range []struct {
		name string
		e    *endpoint.Endpoint
		rs   types.ResourceRecordSet
		back *endpoint.Endpoint // nil: same as e
	}{
		{
			name: "simple default ttl",
			e:    &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.1", "192.0.2.2"}},
			rs: types.ResourceRecordSet{Name: aws.String("www.example.com."), Type: "A", TTL: aws.Int64(300),
				ResourceRecords: []types.ResourceRecord{{Value: aws.String("192.0.2.1")}, {Value: aws.String("192.0.2.2")}}},
			back: &endpoint.Endpoint{Name: "www.example.com", Type: "A", TTL: 300, Targets: endpoint.Targets{"192.0.2.1", "192.0.2.2"}},
		},
		{
			name: "weighted zero",
			e: &endpoint.Endpoint{Name: "app.example.com", Type: "A", TTL: 60, SetIdentifier: "blue",
				Policy: endpoint.WeightedPolicy(0), Targets: endpoint.Targets{"192.0.2.1"}},
			rs: types.ResourceRecordSet{Name: aws.String("app.example.com."), Type: "A", SetIdentifier: aws.String("blue"),
				Weight: aws.Int64(0), TTL: aws.Int64(60), ResourceRecords: []types.ResourceRecord{{Value: aws.String("192.0.2.1")}}},
		},
		{
			name: "failover with health check",
			e: &endpoint.Endpoint{Name: "app.example.com", Type: "CNAME", TTL: 30, SetIdentifier: "a",
				Policy: endpoint.FailoverPolicy("primary"), Targets: endpoint.Targets{"a.example.net"},
				ProviderSpecific: props(endpoint.PropHealthCheckID, "hc-1")},
			rs: types.ResourceRecordSet{Name: aws.String("app.example.com."), Type: "CNAME", SetIdentifier: aws.String("a"),
				Failover: "PRIMARY", TTL: aws.Int64(30), HealthCheckId: aws.String("hc-1"),
				ResourceRecords: []types.ResourceRecord{{Value: aws.String("a.example.net")}}},
		},
		{
			name: "txt verbatim",
			e: &endpoint.Endpoint{Name: "a-app.example.com", Type: "TXT", TTL: 300,
				Targets: endpoint.Targets{`"heritage=external-dns,external-dns/owner=Blue,external-dns/resource=service/default/App"`}},
			rs: types.ResourceRecordSet{Name: aws.String("a-app.example.com."), Type: "TXT", TTL: aws.Int64(300),
				ResourceRecords: []types.ResourceRecord{{Value: aws.String(`"heritage=external-dns,external-dns/owner=Blue,external-dns/resource=service/default/App"`)}}},
		},
		{
			name: "wildcard",
			e:    &endpoint.Endpoint{Name: "*.example.com", Type: "A", TTL: 300, Targets: endpoint.Targets{"192.0.2.9"}},
			rs: types.ResourceRecordSet{Name: aws.String("*.example.com."), Type: "A", TTL: aws.Int64(300),
				ResourceRecords: []types.ResourceRecord{{Value: aws.String("192.0.2.9")}}},
		},
		{
			name: "alias resolved from known zones",
			e: &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.Targets{"lb-1.elb.example.net"},
				ProviderSpecific: props(endpoint.PropAlias, "true")},
			rs: types.ResourceRecordSet{Name: aws.String("www.example.com."), Type: "A",
				AliasTarget: &types.AliasTarget{HostedZoneId: aws.String("ZELB"), DNSName: aws.String("lb-1.elb.example.net."), EvaluateTargetHealth: true}},
		},
		{
			name: "alias with zone id and health",
			e: &endpoint.Endpoint{Name: "www.example.com", Type: "AAAA", Targets: endpoint.Targets{"k8s-lb.us-east-1.elb.amazonaws.com"},
				ProviderSpecific: props(endpoint.PropAlias, "true", endpoint.PropAliasZoneID, "Z35SXDOTRQ7X7K", endpoint.PropEvaluateTargetHealth, "true")},
			rs: types.ResourceRecordSet{Name: aws.String("www.example.com."), Type: "AAAA",
				AliasTarget: &types.AliasTarget{HostedZoneId: aws.String("Z35SXDOTRQ7X7K"), DNSName: aws.String("k8s-lb.us-east-1.elb.amazonaws.com."), EvaluateTargetHealth: true}},
			// true is the default (external-dns's), and the zone id is the load balancer's
			// canonical one: neither is read back.
			back: &endpoint.Endpoint{Name: "www.example.com", Type: "AAAA", Targets: endpoint.Targets{"k8s-lb.us-east-1.elb.amazonaws.com"},
				ProviderSpecific: props(endpoint.PropAlias, "true")},
		},
		{
			name: "alias to an ALB gets its region's canonical zone",
			e: &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.Targets{"k8s-default-web-0123456789.eu-west-1.elb.amazonaws.com"},
				ProviderSpecific: props(endpoint.PropAlias, "true")},
			rs: types.ResourceRecordSet{Name: aws.String("www.example.com."), Type: "A",
				AliasTarget: &types.AliasTarget{HostedZoneId: aws.String("Z32O12XQLNTSW2"), DNSName: aws.String("k8s-default-web-0123456789.eu-west-1.elb.amazonaws.com."), EvaluateTargetHealth: true}},
		},
		{
			name: "weighted alias to an NLB, evaluate false",
			e: &endpoint.Endpoint{Name: "app.example.com", Type: "A", SetIdentifier: "blue", Policy: endpoint.WeightedPolicy(10),
				Targets:          endpoint.Targets{"k8s-default-tcp-0123456789abcdef.elb.us-west-2.amazonaws.com"},
				ProviderSpecific: props(endpoint.PropAlias, "true", endpoint.PropEvaluateTargetHealth, "false")},
			rs: types.ResourceRecordSet{Name: aws.String("app.example.com."), Type: "A", SetIdentifier: aws.String("blue"), Weight: aws.Int64(10),
				AliasTarget: &types.AliasTarget{HostedZoneId: aws.String("Z18D5FSROUN65G"), DNSName: aws.String("k8s-default-tcp-0123456789abcdef.elb.us-west-2.amazonaws.com.")}},
		},
		{
			name: "dualstack alias in the china partition",
			e: &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.Targets{"dualstack.web-1.cn-north-1.elb.amazonaws.com.cn"},
				ProviderSpecific: props(endpoint.PropAlias, "true")},
			rs: types.ResourceRecordSet{Name: aws.String("www.example.com."), Type: "A",
				AliasTarget: &types.AliasTarget{HostedZoneId: aws.String("Z1GDH35T77C1KE"), DNSName: aws.String("dualstack.web-1.cn-north-1.elb.amazonaws.com.cn."), EvaluateTargetHealth: true}},
		},
		{
			name: "an explicit zone id wins over the load balancer's and is read back",
			e: &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.Targets{"web-1.us-east-1.elb.amazonaws.com"},
				ProviderSpecific: props(endpoint.PropAlias, "true", endpoint.PropAliasZoneID, "ZOTHER")},
			rs: types.ResourceRecordSet{Name: aws.String("www.example.com."), Type: "A",
				AliasTarget: &types.AliasTarget{HostedZoneId: aws.String("ZOTHER"), DNSName: aws.String("web-1.us-east-1.elb.amazonaws.com."), EvaluateTargetHealth: true}},
		},
		{
			name: "ttl zero",
			e:    &endpoint.Endpoint{Name: "now.example.com", Type: "A", TTL: endpoint.TTLZero, Targets: endpoint.Targets{"192.0.2.1"}},
			rs: types.ResourceRecordSet{Name: aws.String("now.example.com."), Type: "A", TTL: aws.Int64(0),
				ResourceRecords: []types.ResourceRecord{{Value: aws.String("192.0.2.1")}}},
		},
		{
			name: "weighted ttl zero",
			e: &endpoint.Endpoint{Name: "app.example.com", Type: "CNAME", TTL: endpoint.TTLZero, SetIdentifier: "green",
				Policy: endpoint.WeightedPolicy(1), Targets: endpoint.Targets{"green.example.net"}},
			rs: types.ResourceRecordSet{Name: aws.String("app.example.com."), Type: "CNAME", SetIdentifier: aws.String("green"),
				Weight: aws.Int64(1), TTL: aws.Int64(0), ResourceRecords: []types.ResourceRecord{{Value: aws.String("green.example.net")}}},
		},
		{
			name: "alias evaluate false is kept, a resolvable zone id is not",
			e: &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.Targets{"lb-1.elb.example.net"},
				ProviderSpecific: props(endpoint.PropAlias, "true", endpoint.PropEvaluateTargetHealth, "false", endpoint.PropAliasZoneID, "/hostedzone/ZELB")},
			rs: types.ResourceRecordSet{Name: aws.String("www.example.com."), Type: "A",
				AliasTarget: &types.AliasTarget{HostedZoneId: aws.String("ZELB"), DNSName: aws.String("lb-1.elb.example.net.")}},
			back: &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.Targets{"lb-1.elb.example.net"},
				ProviderSpecific: props(endpoint.PropAlias, "true", endpoint.PropEvaluateTargetHealth, "false")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := toRecordSet(tc.e, zoneExample, r)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*rs, tc.rs) {
				t.Fatalf("toRecordSet:\n got %s\nwant %s", dumpRS(*rs), dumpRS(tc.rs))
			}
			want := tc.back
			if want == nil {
				want = tc.e
			}
			if got := toEndpoint(*rs, zoneExample, r); !reflect.DeepEqual(got, want) {
				t.Fatalf("toEndpoint:\n got %#v\nwant %#v", got, want)
			}
		})
	}
}

func dumpRS(rs types.ResourceRecordSet) string {
	b, _ := marshalChangeBatch(&types.ChangeBatch{Changes: []types.Change{{Action: "CREATE", ResourceRecordSet: &rs}}})
	return string(b)
}

func TestToEndpointReading(t *testing.T) {
	r := aliasResolver{known: knownZones}
	for _, tc := range []struct {
		name string
		rs   types.ResourceRecordSet
		want *endpoint.Endpoint
	}{
		{
			name: "escaped wildcard, hostname values normalised and sorted",
			rs: types.ResourceRecordSet{Name: aws.String(`\052.Example.com.`), Type: "NS", TTL: aws.Int64(172800),
				ResourceRecords: []types.ResourceRecord{{Value: aws.String("NS2.Example.net.")}, {Value: aws.String("ns1.example.net.")}}},
			want: &endpoint.Endpoint{Name: "*.example.com", Type: "NS", TTL: 172800, Targets: endpoint.Targets{"ns1.example.net", "ns2.example.net"}},
		},
		{
			name: "alias into an unknown zone keeps the zone id",
			rs: types.ResourceRecordSet{Name: aws.String("www.example.com."), Type: "A",
				AliasTarget: &types.AliasTarget{HostedZoneId: aws.String("/hostedzone/Z2FDTNDATAQYW2"), DNSName: aws.String("D111111abcdef8.cloudfront.net."), EvaluateTargetHealth: true}},
			want: &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.Targets{"d111111abcdef8.cloudfront.net"},
				ProviderSpecific: props(endpoint.PropAlias, "true", endpoint.PropAliasZoneID, "Z2FDTNDATAQYW2")},
		},
		{
			name: "alias to a load balancer in its canonical zone reads without the zone id",
			rs: types.ResourceRecordSet{Name: aws.String("www.example.com."), Type: "A",
				AliasTarget: &types.AliasTarget{HostedZoneId: aws.String("/hostedzone/Z35SXDOTRQ7X7K"), DNSName: aws.String("dualstack.LB.us-east-1.elb.amazonaws.com."), EvaluateTargetHealth: true}},
			want: &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.Targets{"dualstack.lb.us-east-1.elb.amazonaws.com"},
				ProviderSpecific: props(endpoint.PropAlias, "true")},
		},
		{
			name: "alias to a load balancer in another zone keeps the zone id",
			rs: types.ResourceRecordSet{Name: aws.String("www.example.com."), Type: "A",
				AliasTarget: &types.AliasTarget{HostedZoneId: aws.String("Z26RNL4JYFTOTI"), DNSName: aws.String("web-1.us-east-1.elb.amazonaws.com.")}},
			want: &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.Targets{"web-1.us-east-1.elb.amazonaws.com"},
				ProviderSpecific: props(endpoint.PropAlias, "true", endpoint.PropEvaluateTargetHealth, "false", endpoint.PropAliasZoneID, "Z26RNL4JYFTOTI")},
		},
		{
			name: "ttl zero is configured, not the default",
			rs: types.ResourceRecordSet{Name: aws.String("now.example.com."), Type: "TXT", TTL: aws.Int64(0),
				ResourceRecords: []types.ResourceRecord{{Value: aws.String(`"v"`)}}},
			want: &endpoint.Endpoint{Name: "now.example.com", Type: "TXT", TTL: endpoint.TTLZero, Targets: endpoint.Targets{`"v"`}},
		},
		{
			name: "latency set is marked",
			rs: types.ResourceRecordSet{Name: aws.String("lat.example.com."), Type: "A", SetIdentifier: aws.String("eu"), Region: "eu-west-1",
				TTL: aws.Int64(60), ResourceRecords: []types.ResourceRecord{{Value: aws.String("192.0.2.1")}}},
			want: &endpoint.Endpoint{Name: "lat.example.com", Type: "A", SetIdentifier: "eu", TTL: 60, Targets: endpoint.Targets{"192.0.2.1"},
				ProviderSpecific: props(PropRoutingPolicy, "latency")},
		},
		{
			name: "soa kept raw",
			rs: types.ResourceRecordSet{Name: aws.String("example.com."), Type: "SOA", TTL: aws.Int64(900),
				ResourceRecords: []types.ResourceRecord{{Value: aws.String("ns-1.Example.net. hostmaster.example.com. 1 7200 900 1209600 86400")}}},
			want: &endpoint.Endpoint{Name: "example.com", Type: "SOA", TTL: 900, Targets: endpoint.Targets{"ns-1.Example.net. hostmaster.example.com. 1 7200 900 1209600 86400"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := toEndpoint(tc.rs, zoneExample, r); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestToRecordSetErrors(t *testing.T) {
	r := aliasResolver{known: knownZones}
	for _, tc := range []struct {
		name string
		e    *endpoint.Endpoint
		want string
	}{
		{"nil", nil, "no endpoint"},
		{"no targets", &endpoint.Endpoint{Name: "a.example.com", Type: "A"}, "no targets"},
		{"alias unknown zone", &endpoint.Endpoint{Name: "a.example.com", Type: "A", Targets: endpoint.Targets{"x.example.org"},
			ProviderSpecific: props(endpoint.PropAlias, "true")}, "no single known hosted zone"},
		{"alias to a load balancer of an unknown region", &endpoint.Endpoint{Name: "a.example.com", Type: "A", Targets: endpoint.Targets{"web-1.xx-nowhere-1.elb.amazonaws.com"},
			ProviderSpecific: props(endpoint.PropAlias, "true")}, "alias target web-1.xx-nowhere-1.elb.amazonaws.com: not a load balancer of a known region"},
		{"alias to an ELB look-alike", &endpoint.Endpoint{Name: "a.example.com", Type: "A", Targets: endpoint.Targets{"web-1.us-east-1.elb.amazonaws.com.evil.test"},
			ProviderSpecific: props(endpoint.PropAlias, "true")}, "no single known hosted zone"},
		{"alias two targets", &endpoint.Endpoint{Name: "a.example.com", Type: "A", Targets: endpoint.Targets{"x.example.com", "y.example.com"},
			ProviderSpecific: props(endpoint.PropAlias, "true")}, "exactly one target"},
		{"bad evaluate", &endpoint.Endpoint{Name: "a.example.com", Type: "A", Targets: endpoint.Targets{"x.example.com"},
			ProviderSpecific: props(endpoint.PropAlias, "true", endpoint.PropEvaluateTargetHealth, "yes please")}, "want true or false"},
		{"latency", &endpoint.Endpoint{Name: "a.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.1"},
			ProviderSpecific: props(PropRoutingPolicy, "latency")}, "latency routing is not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := toRecordSet(tc.e, zoneExample, r)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	_, err := ChangeBatchJSON(zoneExample, changes.Batch{{Action: "REPLACE", Endpoint: &endpoint.Endpoint{Name: "a.example.com", Type: "A", Targets: endpoint.Targets{"192.0.2.1"}}}}, "", knownZones)
	if err == nil || !strings.Contains(err.Error(), `zone example.com (ZEX): change 1: action "REPLACE"`) {
		t.Fatalf("bad action: %v", err)
	}
}

func TestChangeBatchJSON(t *testing.T) {
	batch := changes.Batch{
		{Action: changes.Delete, Endpoint: &endpoint.Endpoint{Name: "app.example.com", Type: "A", TTL: 60, Targets: endpoint.Targets{"192.0.2.1"}}},
		{Action: changes.Create, Endpoint: &endpoint.Endpoint{Name: "app.example.com", Type: "A", SetIdentifier: "blue",
			Policy: endpoint.WeightedPolicy(1), Targets: endpoint.Targets{"192.0.2.1"}}},
		{Action: changes.Upsert, Endpoint: &endpoint.Endpoint{Name: "a-app.example.com", Type: "TXT", SetIdentifier: "blue",
			Policy: endpoint.WeightedPolicy(1), Targets: endpoint.Targets{`"heritage=external-dns,external-dns/owner=a&b"`}}},
		{Action: changes.Create, Endpoint: &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.Targets{"app.sub.example.com"},
			ProviderSpecific: props(endpoint.PropAlias, "true", endpoint.PropEvaluateTargetHealth, "true")}},
	}
	got, err := ChangeBatchJSON(zoneExample, batch, "crossfade", knownZones)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{
  "Comment": "crossfade",
  "Changes": [
    {
      "Action": "DELETE",
      "ResourceRecordSet": {
        "Name": "app.example.com.",
        "Type": "A",
        "TTL": 60,
        "ResourceRecords": [
          {
            "Value": "192.0.2.1"
          }
        ]
      }
    },
    {
      "Action": "CREATE",
      "ResourceRecordSet": {
        "Name": "app.example.com.",
        "Type": "A",
        "SetIdentifier": "blue",
        "Weight": 1,
        "TTL": 300,
        "ResourceRecords": [
          {
            "Value": "192.0.2.1"
          }
        ]
      }
    },
    {
      "Action": "UPSERT",
      "ResourceRecordSet": {
        "Name": "a-app.example.com.",
        "Type": "TXT",
        "SetIdentifier": "blue",
        "Weight": 1,
        "TTL": 300,
        "ResourceRecords": [
          {
            "Value": "\"heritage=external-dns,external-dns/owner=a&b\""
          }
        ]
      }
    },
    {
      "Action": "CREATE",
      "ResourceRecordSet": {
        "Name": "www.example.com.",
        "Type": "A",
        "AliasTarget": {
          "HostedZoneId": "ZSUB",
          "DNSName": "app.sub.example.com.",
          "EvaluateTargetHealth": true
        }
      }
    }
  ]
}
`
	if string(got) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	// The JSON carries exactly the fields of the batch Apply sends.
	cb, err := ChangeBatch(zoneExample, batch, "crossfade", knownZones)
	if err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Comment string
		Changes []struct {
			Action            types.ChangeAction
			ResourceRecordSet types.ResourceRecordSet
		}
	}
	if err := json.Unmarshal(got, &decoded); err != nil {
		t.Fatal(err)
	}
	if decoded.Comment != aws.ToString(cb.Comment) || len(decoded.Changes) != len(cb.Changes) {
		t.Fatalf("decoded %+v", decoded)
	}
	for i, c := range decoded.Changes {
		if c.Action != cb.Changes[i].Action || !reflect.DeepEqual(c.ResourceRecordSet, *cb.Changes[i].ResourceRecordSet) {
			t.Errorf("change %d: JSON %+v, Apply %+v", i+1, c, cb.Changes[i])
		}
	}
}

// TestAliasZoneLoadBalancerFirst: a load balancer's alias names AWS's canonical zone even
// when the account holds a zone whose name contains the load balancer's (a private zone
// overriding elb.amazonaws.com names inside a VPC, say); other targets still resolve to
// the known zones.
func TestAliasZoneLoadBalancerFirst(t *testing.T) {
	r := aliasResolver{known: []provider.Zone{{ID: "ZSHADOW", Name: "us-east-1.elb.amazonaws.com", Private: true}, zoneExample}}
	for _, tc := range []struct {
		target, want string
	}{
		{"web-1.us-east-1.elb.amazonaws.com", "Z35SXDOTRQ7X7K"},
		{"other.us-east-1.elb.amazonaws.com.", "Z35SXDOTRQ7X7K"},
		{"us-east-1.elb.amazonaws.com", "ZSHADOW"}, // the zone apex is no load balancer
		{"www.example.com", "ZEX"},
	} {
		got, ok := r.aliasZone(tc.target, true)
		if !ok || got != tc.want {
			t.Errorf("aliasZone(%q) = %q, %v; want %q", tc.target, got, ok, tc.want)
		}
	}
}

// TestChangeBatchJSONTTLZero: the dry run shows a TTL of 0 as 0, the TTL Apply sends.
func TestChangeBatchJSONTTLZero(t *testing.T) {
	batch := changes.Batch{{Action: changes.Delete, Endpoint: &endpoint.Endpoint{Name: "now.example.com", Type: "A", TTL: endpoint.TTLZero, Targets: endpoint.Targets{"192.0.2.1"}}}}
	got, err := ChangeBatchJSON(zoneExample, batch, "", knownZones)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"TTL": 0,`) {
		t.Fatalf("TTL 0 not rendered:\n%s", got)
	}
}
