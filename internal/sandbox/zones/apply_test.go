package zones

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func i64(v int64) *int64 { return &v }

func simple(name, typ string, ttl int64, values ...string) RRSet {
	return RRSet{Name: name, Type: typ, TTL: i64(ttl), Records: values}
}

func weighted(name, typ, id string, w int64, values ...string) RRSet {
	return RRSet{Name: name, Type: typ, SetIdentifier: id, Weight: i64(w), TTL: i64(60), Records: values}
}

// withTTL returns set with another TTL.
func withTTL(set RRSet, ttl int64) RRSet {
	set.TTL = i64(ttl)
	return set
}

// weightedAlias is a weighted alias set pointing at target in the test's zone ("ZONE").
func weightedAlias(name, id string, w int64, target string) RRSet {
	return RRSet{Name: name, Type: "A", SetIdentifier: id, Weight: i64(w),
		Alias: &AliasTarget{HostedZoneID: "ZONE", DNSName: target}}
}

// lbAlias is a simple alias A to a load balancer (or whatever zoneID and target name).
func lbAlias(name, zoneID, target string) RRSet {
	return RRSet{Name: name, Type: "A", Alias: &AliasTarget{HostedZoneID: zoneID, DNSName: target, EvaluateTargetHealth: true}}
}

func failover(name, id, role string, values ...string) RRSet {
	return RRSet{Name: name, Type: "A", SetIdentifier: id, Failover: role, TTL: i64(60), Records: values}
}

func newZone(t *testing.T, s *Store, name string) Zone {
	t.Helper()
	z, _, err := s.CreateZone(name, "ref-"+name, "", false)
	if err != nil {
		t.Fatalf("CreateZone(%s): %v", name, err)
	}
	return z
}

// keys lists the zone's sets as "name type id" for comparisons.
func keys(t *testing.T, s *Store, zoneID string) []string {
	t.Helper()
	p, err := s.ListRecords(zoneID, "", "", "", 10000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, set := range p.Sets {
		k := set.Name + " " + set.Type
		if set.SetIdentifier != "" {
			k += " " + set.SetIdentifier
		}
		out = append(out, k)
	}
	return out
}

func TestApplyRules(t *testing.T) {
	const z = "example.com."
	tests := []struct {
		name    string
		setup   []Change
		batch   []Change
		code    string // expected error code, "" for success
		message string // substring of the message
		want    []string
	}{
		{
			name:  "create simple",
			batch: []Change{{Create, simple("www.example.com", "A", 60, "192.0.2.1")}},
			want:  []string{"example.com. NS", "example.com. SOA", "www.example.com. A"},
		},
		{
			name:    "create twice",
			setup:   []Change{{Create, simple("www.example.com.", "A", 60, "192.0.2.1")}},
			batch:   []Change{{Create, simple("www.example.com.", "A", 60, "192.0.2.2")}},
			code:    CodeInvalidChangeBatch,
			message: "[Tried to create resource record set [name='www.example.com.', type='A'] but it already exists]",
		},
		{
			name:    "delete missing names the set identifier",
			batch:   []Change{{Delete, weighted("www.example.com.", "A", "blue", 1, "192.0.2.1")}},
			code:    CodeInvalidChangeBatch,
			message: "Tried to delete resource record set [name='www.example.com.', type='A', set-identifier='blue'] but it was not found",
		},
		{
			name:    "delete with other values",
			setup:   []Change{{Create, simple("www.example.com.", "A", 60, "192.0.2.1")}},
			batch:   []Change{{Delete, simple("www.example.com.", "A", 300, "192.0.2.1")}},
			code:    CodeInvalidChangeBatch,
			message: "but the values provided do not match the current values",
		},
		{
			name:  "delete matches values in any order and case",
			setup: []Change{{Create, simple("www.example.com.", "CNAME", 60, "Target.Example.net.")}},
			batch: []Change{{Delete, simple("WWW.example.com", "CNAME", 60, "target.example.net.")}},
			want:  []string{"example.com. NS", "example.com. SOA"},
		},
		{
			name:    "weighted beside simple (external-dns issue 1411)",
			setup:   []Change{{Create, simple("www.example.com.", "A", 60, "192.0.2.1")}},
			batch:   []Change{{Create, weighted("www.example.com.", "A", "blue", 1, "192.0.2.1")}},
			code:    CodeInvalidChangeBatch,
			message: "[RRSet with DNS name www.example.com., type A, SetIdentifier blue cannot be created as a non-weighted set exists with the same name and type.]",
		},
		{
			name:    "simple beside weighted",
			setup:   []Change{{Create, weighted("www.example.com.", "A", "blue", 1, "192.0.2.1")}},
			batch:   []Change{{Upsert, simple("www.example.com.", "A", 60, "192.0.2.1")}},
			code:    CodeInvalidChangeBatch,
			message: "RRSet with DNS name www.example.com., type A cannot be created as other RRSets exist with the same name and type.",
		},
		{
			name:  "transition simple to weighted in one batch",
			setup: []Change{{Create, simple("www.example.com.", "A", 60, "192.0.2.1")}},
			batch: []Change{
				{Delete, simple("www.example.com.", "A", 60, "192.0.2.1")},
				{Create, weighted("www.example.com.", "A", "blue", 1, "192.0.2.1")},
			},
			want: []string{"example.com. NS", "example.com. SOA", "www.example.com. A blue"},
		},
		{
			name:    "failover beside weighted",
			setup:   []Change{{Create, weighted("www.example.com.", "A", "blue", 1, "192.0.2.1")}},
			batch:   []Change{{Create, failover("www.example.com.", "p", Primary, "192.0.2.9")}},
			code:    CodeInvalidChangeBatch,
			message: "cannot be created as a non-failover set exists",
		},
		{
			name:    "second primary",
			setup:   []Change{{Create, failover("www.example.com.", "p", Primary, "192.0.2.1")}},
			batch:   []Change{{Create, failover("www.example.com.", "q", Primary, "192.0.2.2")}},
			code:    CodeInvalidChangeBatch,
			message: "PRIMARY failover set exists",
		},
		{
			name:    "CNAME beside A",
			setup:   []Change{{Create, simple("www.example.com.", "A", 60, "192.0.2.1")}},
			batch:   []Change{{Create, simple("www.example.com.", "CNAME", 60, "x.example.net.")}},
			code:    CodeInvalidChangeBatch,
			message: "RRSet of type CNAME with DNS name www.example.com. is not permitted as it conflicts with other records with the same DNS name in zone example.com.",
		},
		{
			name:    "A beside CNAME",
			setup:   []Change{{Create, simple("www.example.com.", "CNAME", 60, "x.example.net.")}},
			batch:   []Change{{Create, simple("www.example.com.", "A", 60, "192.0.2.1")}},
			code:    CodeInvalidChangeBatch,
			message: "RRSet of type A with DNS name www.example.com. is not permitted because a conflicting RRSet of type CNAME with the same DNS name already exists in zone example.com.",
		},
		{
			name:    "CNAME at apex",
			batch:   []Change{{Create, simple("example.com.", "CNAME", 60, "x.example.net.")}},
			code:    CodeInvalidChangeBatch,
			message: "not permitted at apex",
		},
		{
			name:    "name outside zone",
			batch:   []Change{{Create, simple("www.example.org.", "A", 60, "192.0.2.1")}},
			code:    CodeInvalidChangeBatch,
			message: "RRSet with DNS name www.example.org. is not permitted in zone example.com.",
		},
		{
			name:    "set identifier without weight",
			batch:   []Change{{Create, RRSet{Name: "www.example.com.", Type: "A", SetIdentifier: "blue", TTL: i64(60), Records: []string{"192.0.2.1"}}}},
			code:    CodeInvalidInput,
			message: "but found none in Change with [Action=CREATE, Name=www.example.com., Type=A, SetIdentifier=blue]",
		},
		{
			name:    "weight without set identifier",
			batch:   []Change{{Create, RRSet{Name: "www.example.com.", Type: "A", Weight: i64(1), TTL: i64(60), Records: []string{"192.0.2.1"}}}},
			code:    CodeInvalidInput,
			message: "Invalid request: Missing field 'SetIdentifier' in Change with [Action=CREATE, Name=www.example.com., Type=A, SetIdentifier=null]",
		},
		{
			name:    "weight above 255",
			batch:   []Change{{Create, weighted("www.example.com.", "A", "blue", 256, "192.0.2.1")}},
			code:    CodeInvalidInput,
			message: "Value '256' at 'changeBatch.changes.1.member.resourceRecordSet.weight' failed to satisfy constraint: Member must have value less than or equal to 255",
		},
		{
			name:    "negative weight",
			batch:   []Change{{Create, weighted("www.example.com.", "A", "blue", -1, "192.0.2.1")}},
			code:    CodeInvalidInput,
			message: "greater than or equal to 0",
		},
		{
			name:    "no TTL",
			batch:   []Change{{Create, RRSet{Name: "www.example.com.", Type: "A", Records: []string{"192.0.2.1"}}}},
			code:    CodeInvalidInput,
			message: "Expected exactly one of [AliasTarget, all of [TTL, and ResourceRecords], or TrafficPolicyInstanceId], but found none",
		},
		{
			name:    "bad IPv4",
			batch:   []Change{{Create, simple("www.example.com.", "A", 60, "300.1.1.1")}},
			code:    CodeInvalidChangeBatch,
			message: "ARRDATAIllegalIPv4Address",
		},
		{
			name:    "unknown action",
			batch:   []Change{{"REPLACE", simple("www.example.com.", "A", 60, "192.0.2.1")}},
			code:    CodeInvalidInput,
			message: "Value 'REPLACE' at 'changeBatch.changes.1.member.action'",
		},
		{
			name:    "deleting the same set twice",
			setup:   []Change{{Create, simple("www.example.com.", "A", 60, "192.0.2.1")}},
			batch:   []Change{{Delete, simple("www.example.com.", "A", 60, "192.0.2.1")}, {Delete, simple("www.example.com.", "A", 60, "192.0.2.1")}},
			code:    CodeInvalidChangeBatch,
			message: "but it was not found",
		},
		{
			name:    "apex SOA cannot go",
			batch:   []Change{{Delete, simple("example.com.", "SOA", 900, "ns-1.awsdns-01.com. awsdns-hostmaster.amazon.com. 1 7200 900 1209600 86400")}},
			code:    CodeInvalidChangeBatch,
			message: "do not match", // the values differ from the generated SOA, and even a match would be refused
		},
		{
			name: "one bad change fails the whole batch",
			batch: []Change{
				{Create, simple("a.example.com.", "A", 60, "192.0.2.1")},
				{Create, simple("b.example.com.", "A", 60, "not-an-ip")},
			},
			code:    CodeInvalidChangeBatch,
			message: "ARRDATAIllegalIPv4Address",
			want:    []string{"example.com. NS", "example.com. SOA"},
		},
		{
			name: "every broken rule is reported",
			setup: []Change{
				{Create, simple("a.example.com.", "A", 60, "192.0.2.1")},
			},
			batch: []Change{
				{Create, simple("a.example.com.", "A", 60, "192.0.2.1")},
				{Delete, simple("b.example.com.", "A", 60, "192.0.2.1")},
			},
			code:    CodeInvalidChangeBatch,
			message: "already exists, Tried to delete resource record set [name='b.example.com.', type='A'] but it was not found]",
		},
		{
			name:    "alias to a missing target",
			batch:   []Change{{Create, RRSet{Name: "www.example.com.", Type: "A", Alias: &AliasTarget{HostedZoneID: "ZONE", DNSName: "lb.example.com.", EvaluateTargetHealth: true}}}},
			code:    CodeInvalidChangeBatch,
			message: "Tried to create an alias that targets lb.example.com., type A in zone",
		},
		{
			name:    "weighted set with another TTL than its group",
			setup:   []Change{{Create, weighted("www.example.com.", "A", "blue", 1, "192.0.2.1")}},
			batch:   []Change{{Create, withTTL(weighted("www.example.com.", "A", "green", 1, "192.0.2.2"), 300)}},
			code:    CodeInvalidChangeBatch,
			message: "[RRSet with DNS name www.example.com., type A, SetIdentifier green cannot be created as weighted sets must contain the same TTL.]",
		},
		{
			name: "upsert changing one member's TTL",
			setup: []Change{
				{Create, weighted("www.example.com.", "A", "blue", 1, "192.0.2.1")},
				{Create, weighted("www.example.com.", "A", "green", 1, "192.0.2.2")},
			},
			batch:   []Change{{Upsert, withTTL(weighted("www.example.com.", "A", "blue", 1, "192.0.2.1"), 30)}},
			code:    CodeInvalidChangeBatch,
			message: "[RRSet with DNS name www.example.com., type A, SetIdentifier blue cannot be created as weighted sets must contain the same TTL.]",
		},
		{
			// Each change is checked against the state the ones before it leave, so the first
			// UPSERT meets the other member's old TTL.
			name: "upsert of every member with a new TTL",
			setup: []Change{
				{Create, weighted("www.example.com.", "A", "blue", 1, "192.0.2.1")},
				{Create, weighted("www.example.com.", "A", "green", 1, "192.0.2.2")},
			},
			batch: []Change{
				{Upsert, withTTL(weighted("www.example.com.", "A", "blue", 1, "192.0.2.1"), 30)},
				{Upsert, withTTL(weighted("www.example.com.", "A", "green", 1, "192.0.2.2"), 30)},
			},
			code:    CodeInvalidChangeBatch,
			message: "SetIdentifier blue cannot be created as weighted sets must contain the same TTL.",
		},
		{
			name: "delete every member, then create every member with a new TTL",
			setup: []Change{
				{Create, weighted("www.example.com.", "A", "blue", 1, "192.0.2.1")},
				{Create, weighted("www.example.com.", "A", "green", 1, "192.0.2.2")},
			},
			batch: []Change{
				{Delete, weighted("www.example.com.", "A", "blue", 1, "192.0.2.1")},
				{Delete, weighted("www.example.com.", "A", "green", 1, "192.0.2.2")},
				{Create, withTTL(weighted("www.example.com.", "A", "blue", 1, "192.0.2.1"), 30)},
				{Create, withTTL(weighted("www.example.com.", "A", "green", 1, "192.0.2.2"), 30)},
			},
			want: []string{"example.com. NS", "example.com. SOA", "www.example.com. A blue", "www.example.com. A green"},
		},
		{
			name:  "a lone weighted set changes its TTL",
			setup: []Change{{Create, weighted("www.example.com.", "A", "blue", 1, "192.0.2.1")}},
			batch: []Change{{Upsert, withTTL(weighted("www.example.com.", "A", "blue", 1, "192.0.2.1"), 30)}},
			want:  []string{"example.com. NS", "example.com. SOA", "www.example.com. A blue"},
		},
		{
			name:  "another type at the name keeps its own TTL",
			setup: []Change{{Create, weighted("www.example.com.", "A", "blue", 1, "192.0.2.1")}},
			batch: []Change{{Create, withTTL(weighted("www.example.com.", "TXT", "blue", 1, `"x"`), 300)}},
			want:  []string{"example.com. NS", "example.com. SOA", "www.example.com. A blue", "www.example.com. TXT blue"},
		},
		{
			// An alias has no TTL: it sits beside any TTL and does not set the group's.
			name: "weighted alias beside weighted sets of any TTL",
			setup: []Change{
				{Create, simple("target.example.com.", "A", 60, "192.0.2.9")},
				{Create, weighted("www.example.com.", "A", "blue", 1, "192.0.2.1")},
			},
			batch: []Change{{Create, weightedAlias("www.example.com.", "green", 1, "target.example.com.")}},
			want:  []string{"example.com. NS", "example.com. SOA", "target.example.com. A", "www.example.com. A blue", "www.example.com. A green"},
		},
		{
			name: "an alias member does not hide a TTL mismatch",
			setup: []Change{
				{Create, simple("target.example.com.", "A", 60, "192.0.2.9")},
				{Create, weightedAlias("www.example.com.", "green", 1, "target.example.com.")},
				{Create, weighted("www.example.com.", "A", "blue", 1, "192.0.2.1")},
			},
			batch:   []Change{{Create, withTTL(weighted("www.example.com.", "A", "red", 1, "192.0.2.3"), 300)}},
			code:    CodeInvalidChangeBatch,
			message: "SetIdentifier red cannot be created as weighted sets must contain the same TTL.",
		},
		{
			name:  "alias to an ALB through its canonical zone",
			batch: []Change{{Create, lbAlias("www.example.com.", "Z1H1FL5HABSF5", "k8s-default-web-0123456789-1234567890.us-west-2.elb.amazonaws.com")}},
			want:  []string{"example.com. NS", "example.com. SOA", "www.example.com. A"},
		},
		{
			name: "alias to a dualstack ALB name and to an NLB",
			batch: []Change{
				{Create, lbAlias("www.example.com.", "Z35SXDOTRQ7X7K", "dualstack.x-123.us-east-1.elb.amazonaws.com.")},
				{Create, lbAlias("tcp.example.com.", "Z2IFOLAFXWLO4F", "k8s-default-tcp-0123456789-0123456789abcdef.elb.eu-west-1.amazonaws.com")},
			},
			want: []string{"example.com. NS", "example.com. SOA", "tcp.example.com. A", "www.example.com. A"},
		},
		{
			name:    "alias to an NLB with the ALB zone of its region",
			batch:   []Change{{Create, lbAlias("www.example.com.", "Z32O12XQLNTSW2", "k8s-default-tcp-0123456789-0123456789abcdef.elb.eu-west-1.amazonaws.com")}},
			code:    CodeInvalidChangeBatch,
			message: "[Tried to create an alias that targets k8s-default-tcp-0123456789-0123456789abcdef.elb.eu-west-1.amazonaws.com., type A in zone Z32O12XQLNTSW2, but the alias target name does not lie within the target zone, Tried to create an alias that targets k8s-default-tcp-0123456789-0123456789abcdef.elb.eu-west-1.amazonaws.com., type A in zone Z32O12XQLNTSW2, but that target was not found]",
		},
		{
			name:    "alias to a load balancer with the hosted zone's own id",
			batch:   []Change{{Create, lbAlias("www.example.com.", "ZONE", "x-123.us-east-1.elb.amazonaws.com")}},
			code:    CodeInvalidChangeBatch,
			message: "but the alias target name does not lie within the target zone",
		},
		{
			name:    "alias to a canonical load balancer zone with another name",
			batch:   []Change{{Create, lbAlias("www.example.com.", "Z35SXDOTRQ7X7K", "www.example.net")}},
			code:    CodeInvalidChangeBatch,
			message: "[Tried to create an alias that targets www.example.net., type A in zone Z35SXDOTRQ7X7K, but the alias target name does not lie within the target zone",
		},
		{
			name:    "alias to CloudFront is the sandbox's limit",
			batch:   []Change{{Create, lbAlias("www.example.com.", "Z2FDTNDATAQYW2", "d111111abcdef8.cloudfront.net")}},
			code:    CodeInvalidChangeBatch,
			message: "[Alias www.example.com., type A targets d111111abcdef8.cloudfront.net. in zone Z2FDTNDATAQYW2: alias targets in AWS services other than Elastic Load Balancing are not supported by the crossfade sandbox",
		},
		{
			name:  "upsert replaces",
			setup: []Change{{Create, weighted("www.example.com.", "A", "blue", 1, "192.0.2.1")}},
			batch: []Change{{Upsert, weighted("www.example.com.", "A", "blue", 0, "192.0.2.1")}},
			want:  []string{"example.com. NS", "example.com. SOA", "www.example.com. A blue"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(Options{})
			if err != nil {
				t.Fatal(err)
			}
			zone := newZone(t, s, z)
			// Alias cases refer to the zone by its real id.
			for _, c := range append(slices.Clone(tt.setup), tt.batch...) {
				if a := c.Set.Alias; a != nil && a.HostedZoneID == "ZONE" {
					a.HostedZoneID = zone.ID
				}
			}
			if len(tt.setup) > 0 {
				if _, err := s.Apply(zone.ID, "", tt.setup); err != nil {
					t.Fatalf("setup: %v", err)
				}
			}
			before := keys(t, s, zone.ID)
			_, err = s.Apply(zone.ID, "", tt.batch)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Apply: %v", err)
				}
			} else {
				var ze *Error
				if !errors.As(err, &ze) || ze.Code != tt.code || !strings.Contains(ze.Message, tt.message) {
					t.Fatalf("Apply error = %v\nwant code %s containing %q", err, tt.code, tt.message)
				}
				if got := keys(t, s, zone.ID); !slices.Equal(got, before) {
					t.Fatalf("a refused batch changed the zone: %v, was %v", got, before)
				}
			}
			if tt.want != nil {
				if got := keys(t, s, zone.ID); !slices.Equal(got, tt.want) {
					t.Fatalf("zone holds %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestWeightedLimit(t *testing.T) {
	s, _ := Open(Options{})
	zone := newZone(t, s, "example.com")
	var batch []Change
	for i := range MaxWeightedSets {
		batch = append(batch, Change{Create, weighted("w.example.com.", "A", fmt.Sprintf("m%03d", i), 1, "192.0.2.1")})
	}
	if _, err := s.Apply(zone.ID, "", batch); err != nil {
		t.Fatalf("100 weighted sets: %v", err)
	}
	_, err := s.Apply(zone.ID, "", []Change{{Create, weighted("w.example.com.", "A", "one-too-many", 1, "192.0.2.1")}})
	if err == nil || !strings.Contains(err.Error(), "100 weighted sets exist") {
		t.Fatalf("101st weighted set: err = %v", err)
	}
}

func TestBatchLimits(t *testing.T) {
	s, _ := Open(Options{})
	zone := newZone(t, s, "example.com")
	big := make([]Change, 0, 501)
	for i := range 501 {
		big = append(big, Change{Upsert, simple(fmt.Sprintf("h%d.example.com.", i), "A", 60, "192.0.2.1")})
	}
	if _, err := s.Apply(zone.ID, "", big); err == nil || !strings.Contains(err.Error(), "Number of records limit of 1000 exceeded") {
		t.Fatalf("501 UPSERTs (1002 records): err = %v", err)
	}
	if _, err := s.Apply(zone.ID, "", big[:500]); err != nil {
		t.Fatalf("500 UPSERTs (1000 records): %v", err)
	}
	long := `"` + strings.Repeat("x", 250) + `"`
	var chars []Change
	for i := range 130 { // 130 × 252 = 32,760 characters
		chars = append(chars, Change{Create, simple(fmt.Sprintf("t%d.example.com.", i), "TXT", 60, long)})
	}
	if _, err := s.Apply(zone.ID, "", chars); err == nil || !strings.Contains(err.Error(), "32000") {
		t.Fatalf("32,760 value characters: err = %v", err)
	}
}

func TestListOrderAndPaging(t *testing.T) {
	s, _ := Open(Options{})
	zone := newZone(t, s, "example.com")
	_, err := s.Apply(zone.ID, "", []Change{
		{Create, simple("b.example.com.", "A", 60, "192.0.2.1")},
		{Create, simple("a.b.example.com.", "TXT", 60, `"x"`)},
		{Create, simple("z.example.com.", "A", 60, "192.0.2.1")},
		{Create, weighted("w.example.com.", "A", "green", 1, "192.0.2.2")},
		{Create, weighted("w.example.com.", "A", "blue", 1, "192.0.2.1")},
		{Create, simple("w.example.com.", "TXT", 60, `"y"`)},
		{Create, simple("*.example.com.", "A", 60, "192.0.2.1")},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"example.com. NS", "example.com. SOA", "*.example.com. A", "b.example.com. A",
		"a.b.example.com. TXT", "w.example.com. A blue", "w.example.com. A green",
		"w.example.com. TXT", "z.example.com. A",
	}
	if got := keys(t, s, zone.ID); !slices.Equal(got, want) {
		t.Fatalf("order:\n got %v\nwant %v", got, want)
	}
	// Walk pages of 2 using Next, as a client does.
	var walked []string
	name, typ, id := "", "", ""
	for range 20 {
		p, err := s.ListRecords(zone.ID, name, typ, id, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, set := range p.Sets {
			k := set.Name + " " + set.Type
			if set.SetIdentifier != "" {
				k += " " + set.SetIdentifier
			}
			walked = append(walked, k)
		}
		if p.Next == nil {
			break
		}
		name, typ, id = p.Next.Name, p.Next.Type, p.Next.SetIdentifier
	}
	if !slices.Equal(walked, want) {
		t.Fatalf("paged walk:\n got %v\nwant %v", walked, want)
	}
	// Name alone starts at the first set with a name at or after it.
	p, _ := s.ListRecords(zone.ID, "c.example.com.", "", "", 1)
	if len(p.Sets) != 1 || p.Sets[0].Name != "w.example.com." {
		t.Fatalf("start at c.example.com. gave %v", p.Sets)
	}
}

func TestLookup(t *testing.T) {
	s, _ := Open(Options{})
	zone := newZone(t, s, "example.com")
	_, err := s.Apply(zone.ID, "", []Change{
		{Create, simple("a.b.c.example.com.", "A", 60, "192.0.2.1")},
		{Create, simple("*.w.example.com.", "A", 60, "192.0.2.2")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q      string
		ok     bool
		exists bool
		node   bool
	}{
		{"a.b.c.example.com.", true, true, true},
		{"b.c.example.com.", true, true, false}, // empty non-terminal
		{"c.example.com.", true, true, false},
		{"x.c.example.com.", true, false, false},
		{"example.com.", true, true, true},
		{"anything.w.example.com.", true, true, true}, // wildcard
		{"example.org.", false, false, false},
	} {
		a, ok := s.Lookup(tc.q)
		if ok != tc.ok || a.Exists != tc.exists || (a.Node != nil) != tc.node {
			t.Errorf("Lookup(%s) = ok %v exists %v node %v, want %v %v %v", tc.q, ok, a.Exists, a.Node != nil, tc.ok, tc.exists, tc.node)
		}
		if ok && a.SOA == nil {
			t.Errorf("Lookup(%s): no SOA", tc.q)
		}
	}
	// Removing the only record below c.example.com. makes its ancestors disappear.
	if _, err := s.Apply(zone.ID, "", []Change{{Delete, simple("a.b.c.example.com.", "A", 60, "192.0.2.1")}}); err != nil {
		t.Fatal(err)
	}
	if a, _ := s.Lookup("b.c.example.com."); a.Exists {
		t.Fatal("b.c.example.com. still exists after its only descendant was deleted")
	}
}

func TestPersistenceSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	zone := newZone(t, s, "example.com")
	change, err := s.Apply(zone.ID, "c", []Change{{Create, weighted("www.example.com.", "A", "blue", 3, "192.0.2.1")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ChangeTags(zone.ID, map[string]string{"team": "sre"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.SetHealth("hc-1", false); err != nil {
		t.Fatal(err)
	}
	// A refused batch must leave nothing behind on disk either.
	if _, err := s.Apply(zone.ID, "", []Change{{Create, simple("x.example.com.", "A", 60, "bad")}}); err == nil {
		t.Fatal("bad batch accepted")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got, want := keys(t, s2, zone.ID), []string{"example.com. NS", "example.com. SOA", "www.example.com. A blue"}; !slices.Equal(got, want) {
		t.Fatalf("after restart %v, want %v", got, want)
	}
	z2, err := s2.Zone(zone.ID)
	if err != nil || z2.Tags["team"] != "sre" || z2.Name != "example.com." {
		t.Fatalf("zone after restart %+v, %v", z2, err)
	}
	if _, err := s2.Change(change.ID); err != nil {
		t.Fatalf("change after restart: %v", err)
	}
	if s2.Healthy("hc-1") {
		t.Fatal("health check status lost on restart")
	}
	a, _ := s2.Lookup("www.example.com.")
	if a.Node == nil || len(a.Node.Sets[0].DNSRecords()) != 1 {
		t.Fatal("records not parsed after restart")
	}
}

func TestDeleteZone(t *testing.T) {
	s, _ := Open(Options{})
	zone := newZone(t, s, "example.com")
	if _, err := s.Apply(zone.ID, "", []Change{{Create, simple("www.example.com.", "A", 60, "192.0.2.1")}}); err != nil {
		t.Fatal(err)
	}
	var ze *Error
	if _, err := s.DeleteZone(zone.ID); !errors.As(err, &ze) || ze.Code != CodeHostedZoneNotEmpty {
		t.Fatalf("delete non-empty zone: %v", err)
	}
	if _, err := s.Apply(zone.ID, "", []Change{{Delete, simple("www.example.com.", "A", 60, "192.0.2.1")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteZone(zone.ID); err != nil {
		t.Fatalf("delete empty zone: %v", err)
	}
	if _, err := s.Zone(zone.ID); !errors.As(err, &ze) || ze.Code != CodeNoSuchHostedZone {
		t.Fatalf("zone after delete: %v", err)
	}
	if _, ok := s.Lookup("www.example.com."); ok {
		t.Fatal("deleted zone still answers")
	}
}

func TestApexSOAAndNSStay(t *testing.T) {
	s, _ := Open(Options{})
	zone := newZone(t, s, "example.com")
	p, _ := s.ListRecords(zone.ID, "", "", "", 10)
	for _, set := range p.Sets { // the apex NS and SOA, exactly as stored
		_, err := s.Apply(zone.ID, "", []Change{{Delete, *set}})
		want := map[string]string{"SOA": "exactly one SOA record", "NS": "at least one NS record"}[set.Type]
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("delete apex %s: err = %v, want %q", set.Type, err, want)
		}
	}
}
