package ec2

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func base() Document {
	return Document{
		VPCs:    []VPC{{ID: "vpc-1", CIDRBlock: "192.0.2.0/24"}},
		Subnets: []Subnet{{ID: "subnet-1", VPCID: "vpc-1", CIDRBlock: "192.0.2.0/25"}},
		SecurityGroups: []SecurityGroup{
			{ID: "sg-a", Name: "a", VPCID: "vpc-1"},
			{ID: "sg-b", Name: "b", VPCID: "vpc-1"},
		},
		Instances: []Instance{
			{ID: "i-run", SubnetID: "subnet-1", PrivateIP: "192.0.2.10", SecurityGroups: []string{"sg-a"}},
			{ID: "i-stop", SubnetID: "subnet-1", PrivateIP: "192.0.2.20", State: "stopped"},
		},
		NetworkInterfaces: []NetworkInterface{{ID: "eni-1", SubnetID: "subnet-1", PrivateIPs: []string{"192.0.2.11", "192.0.2.12"}}},
	}
}

func open(t *testing.T, db *bolt.DB) *Store {
	t.Helper()
	s, err := Open(Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func declared(t *testing.T) *Store {
	t.Helper()
	s := open(t, nil)
	if err := s.Declare(base()); err != nil {
		t.Fatal(err)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// manyRules is n distinct rules, one port each.
func manyRules(n int) []Rule {
	out := make([]Rule, 0, n)
	for i := range n {
		out = append(out, Rule{Protocol: "tcp", FromPort: int32(1000 + i), ToPort: int32(1000 + i), CIDR: "10.0.0.0/8"})
	}
	return out
}

func TestDeclareRefusals(t *testing.T) {
	for _, tc := range []struct {
		name       string
		doc        Document
		field, msg string
	}{
		{"VPC id of another kind", Document{VPCs: []VPC{{ID: "sg-1", CIDRBlock: "10.0.0.0/16"}}}, "vpcs[0].id", "vpc- followed by"},
		{"id with capitals", Document{VPCs: []VPC{{ID: "vpc-A", CIDRBlock: "10.0.0.0/16"}}}, "vpcs[0].id", "lower-case"},
		{"id twice", Document{VPCs: []VPC{{ID: "vpc-2", CIDRBlock: "10.0.0.0/16"}, {ID: "vpc-2", CIDRBlock: "10.0.0.0/16"}}}, "vpcs[1].id", "declared twice"},
		{"VPC CIDR too wide", Document{VPCs: []VPC{{ID: "vpc-2", CIDRBlock: "10.0.0.0/8"}}}, "vpcs[0].cidrBlock", "/16 to /28"},
		{"VPC CIDR not masked", Document{VPCs: []VPC{{ID: "vpc-2", CIDRBlock: "10.0.0.1/16"}}}, "vpcs[0].cidrBlock", ""},
		{"subnet of no VPC", Document{Subnets: []Subnet{{ID: "subnet-2", VPCID: "vpc-9", CIDRBlock: "192.0.2.128/25"}}}, "subnets[0].vpcId", `VPC "vpc-9" is not declared`},
		{"subnet wider than its VPC", Document{Subnets: []Subnet{{ID: "subnet-2", VPCID: "vpc-1", CIDRBlock: "192.0.0.0/16"}}}, "subnets[0].cidrBlock", "inside VPC vpc-1"},
		{"group of no VPC", Document{SecurityGroups: []SecurityGroup{{ID: "sg-c", VPCID: "vpc-9"}}}, "securityGroups[0].vpcId", "not declared"},
		{"group name taken", Document{SecurityGroups: []SecurityGroup{{ID: "sg-c", Name: "a", VPCID: "vpc-1"}}}, "securityGroups[0].name", `named "a" (sg-a)`},
		{"rule from an unknown group", Document{SecurityGroups: []SecurityGroup{{ID: "sg-c", VPCID: "vpc-1",
			Ingress: []Rule{{Protocol: "tcp", FromPort: 80, ToPort: 80, GroupID: "sg-9"}}}}}, "securityGroups[0].ingress[0]", "'sg-9' does not exist"},
		{"rule twice", Document{SecurityGroups: []SecurityGroup{{ID: "sg-c", VPCID: "vpc-1", Ingress: []Rule{
			{Protocol: "tcp", FromPort: 80, ToPort: 80, CIDR: "10.0.0.0/8"}, {Protocol: "6", FromPort: 80, ToPort: 80, CIDR: "10.0.0.0/8", Description: "x"}}}}},
			"securityGroups[0].ingress[1]", "declared twice"},
		{"rule with an unknown protocol", Document{SecurityGroups: []SecurityGroup{{ID: "sg-c", VPCID: "vpc-1",
			Ingress: []Rule{{Protocol: "sctp", CIDR: "10.0.0.0/8"}}}}}, "securityGroups[0].ingress[0]", "Unknown protocol"},
		{"instance outside its subnet", Document{Instances: []Instance{{ID: "i-x", SubnetID: "subnet-1", PrivateIP: "192.0.2.200"}}}, "instances[0].privateIp", "inside subnet subnet-1"},
		{"instance IPv6", Document{Instances: []Instance{{ID: "i-x", SubnetID: "subnet-1", PrivateIP: "2001:db8::1"}}}, "instances[0].privateIp", "IPv4"},
		{"instance in a group of another VPC", Document{
			VPCs:           []VPC{{ID: "vpc-2", CIDRBlock: "10.0.0.0/16"}},
			SecurityGroups: []SecurityGroup{{ID: "sg-other", VPCID: "vpc-2"}},
			Instances:      []Instance{{ID: "i-x", SubnetID: "subnet-1", PrivateIP: "192.0.2.30", SecurityGroups: []string{"sg-other"}}}},
			"instances[0].securityGroups[0]", "is in VPC vpc-2"},
		{"instance state", Document{Instances: []Instance{{ID: "i-x", SubnetID: "subnet-1", PrivateIP: "192.0.2.30", State: "Running"}}}, "instances[0].state", "not an instance state"},
		{"interface without addresses", Document{NetworkInterfaces: []NetworkInterface{{ID: "eni-2", SubnetID: "subnet-1"}}}, "networkInterfaces[0].privateIps", "at least one"},
		{"interface address twice", Document{NetworkInterfaces: []NetworkInterface{{ID: "eni-2", SubnetID: "subnet-1", PrivateIPs: []string{"192.0.2.40", "192.0.2.40"}}}},
			"networkInterfaces[0].privateIps[1]", "given twice"},
		{"interface address of another", Document{NetworkInterfaces: []NetworkInterface{{ID: "eni-2", SubnetID: "subnet-1", PrivateIPs: []string{"192.0.2.12"}}}},
			"networkInterfaces[0].privateIps", "already an address of network interface eni-1"},
		{"interface of an unknown instance", Document{NetworkInterfaces: []NetworkInterface{{ID: "eni-2", SubnetID: "subnet-1", PrivateIPs: []string{"192.0.2.40"}, InstanceID: "i-9"}}},
			"networkInterfaces[0].instanceId", `instance "i-9" is not declared`},
		{"VPC narrowed under its subnet", Document{VPCs: []VPC{{ID: "vpc-1", CIDRBlock: "192.0.2.128/25"}}}, "vpcs[0].cidrBlock", "would leave subnet subnet-1"},
		{"subnet narrowed under an instance", Document{Subnets: []Subnet{{ID: "subnet-1", VPCID: "vpc-1", CIDRBlock: "192.0.2.0/29"}}}, "subnets[0].cidrBlock",
			"would leave instance i-run's address 192.0.2.10 outside"},
		{"group moved from its members' VPC", Document{VPCs: []VPC{{ID: "vpc-2", CIDRBlock: "10.0.0.0/16"}},
			SecurityGroups: []SecurityGroup{{ID: "sg-a", Name: "a", VPCID: "vpc-2"}}}, "securityGroups[0].vpcId", "of instance i-run"},
		{"subnet moved from its members' groups", Document{VPCs: []VPC{{ID: "vpc-2", CIDRBlock: "192.0.2.0/24"}},
			Subnets: []Subnet{{ID: "subnet-1", VPCID: "vpc-2", CIDRBlock: "192.0.2.0/25"}}}, "subnets[0].vpcId", "security group sg-a"},
		{"rule id malformed", Document{SecurityGroups: []SecurityGroup{{ID: "sg-c", VPCID: "vpc-1",
			Ingress: []Rule{{ID: "rule-1", Protocol: "-1", CIDR: "10.0.0.0/8"}}}}}, "securityGroups[0].ingress[0].id", "not a rule id"},
		{"too many rules", Document{SecurityGroups: []SecurityGroup{{ID: "sg-c", VPCID: "vpc-1", Ingress: manyRules(maxIngressRules + 1)}}},
			"securityGroups[0].ingress", "at most 60 inbound rules"},
		{"empty tag key", Document{VPCs: []VPC{{ID: "vpc-2", CIDRBlock: "10.0.0.0/16", Tags: map[string]string{"": "x"}}}}, "vpcs[0].tags", "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := declared(t)
			before := s.Snapshot()
			err := s.Declare(tc.doc)
			var de *DeclareError
			if !errors.As(err, &de) || de.Field != tc.field || !strings.Contains(de.Msg, tc.msg) {
				t.Fatalf("err = %v, want field %s: …%s…", err, tc.field, tc.msg)
			}
			if !reflect.DeepEqual(s.Snapshot(), before) {
				t.Fatal("a refused declaration changed the state")
			}
		})
	}
}

// TestDeclareIsIdempotent declares, lets a rule be authorized, declares the same document
// again and finds nothing changed: ids, defaults and the authorized rule are kept.
func TestDeclareIsIdempotent(t *testing.T) {
	s := declared(t)
	doc := base()
	doc.SecurityGroups[1].Ingress = []Rule{{Protocol: "tcp", FromPort: 443, ToPort: 443, CIDR: "0.0.0.0/0"}}
	if err := s.Declare(doc); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AuthorizeIngress("sg-a", []Permission{{Protocol: "tcp", FromPort: ptr[int32](80), ToPort: ptr[int32](80), Groups: []Source{{Value: "sg-b"}}}}); err != nil {
		t.Fatal(err)
	}
	before := s.Snapshot()
	if err := s.Declare(doc); err != nil {
		t.Fatal(err)
	}
	if after := s.Snapshot(); !reflect.DeepEqual(after, before) {
		t.Fatalf("declaring again changed the state:\n got %+v\nwant %+v", after, before)
	}
	g := before.SecurityGroups[0]
	if g.ID != "sg-a" || len(g.Ingress) != 1 || g.Ingress[0].GroupID != "sg-b" || g.Description != "a" {
		t.Fatalf("sg-a = %+v, want the authorized rule kept by a declaration without ingress", g)
	}
	if b := before.SecurityGroups[1]; len(b.Ingress) != 1 || !strings.HasPrefix(b.Ingress[0].ID, "sgr-") {
		t.Fatalf("sg-b = %+v, want its declared rule with an id", b)
	}
	// An empty ingress list is a declaration that the group has no rules.
	doc.SecurityGroups[0].Ingress = []Rule{}
	if err := s.Declare(doc); err != nil {
		t.Fatal(err)
	}
	if g := s.Snapshot().SecurityGroups[0]; len(g.Ingress) != 0 {
		t.Fatalf("sg-a after ingress [] = %+v", g)
	}
	if in := s.Snapshot().Instances[0]; in.State != StateRunning {
		t.Fatalf("instance declared without a state = %q, want running", in.State)
	}
}

func TestIngressRules(t *testing.T) {
	tcp := func(port int32, src ...Source) Permission {
		return Permission{Protocol: "tcp", FromPort: &port, ToPort: &port, Groups: src}
	}
	for _, tc := range []struct {
		name      string
		authorize [][]Permission
		revoke    []Permission
		wantCode  string
		wantRules int
	}{
		{name: "one request, two sources", authorize: [][]Permission{{tcp(80, Source{Value: "sg-b"}, Source{Value: "sg-a"})}}, wantRules: 2},
		{name: "duplicate within a request refuses it whole", authorize: [][]Permission{{tcp(80, Source{Value: "sg-b"}), tcp(80, Source{Value: "sg-b", Description: "again"})}},
			wantCode: CodePermissionDuplicate},
		{name: "protocol by number is the same rule", authorize: [][]Permission{{tcp(80, Source{Value: "sg-b"})}, {{Protocol: "6", FromPort: ptr[int32](80), ToPort: ptr[int32](80), Groups: []Source{{Value: "sg-b"}}}}},
			wantCode: CodePermissionDuplicate, wantRules: 1},
		{name: "revoke by number, without the description", authorize: [][]Permission{{tcp(80, Source{Value: "sg-b", Description: "d"})}},
			revoke: []Permission{{Protocol: "6", FromPort: ptr[int32](80), ToPort: ptr[int32](80), Groups: []Source{{Value: "sg-b"}}}}, wantRules: 0},
		{name: "revoke one missing refuses it whole", authorize: [][]Permission{{tcp(80, Source{Value: "sg-b"})}},
			revoke: []Permission{tcp(80, Source{Value: "sg-b"}), tcp(81, Source{Value: "sg-b"})}, wantCode: CodePermissionNotFound, wantRules: 1},
		{name: "all protocols take no ports", authorize: [][]Permission{{{Protocol: "-1", FromPort: ptr[int32](5), IPRanges: []Source{{Value: "10.0.0.0/8"}}}}}, wantRules: 1},
		{name: "no source", authorize: [][]Permission{{tcp(80)}}, wantCode: CodeMissingParameter},
		{name: "ports reversed", authorize: [][]Permission{{{Protocol: "udp", FromPort: ptr[int32](90), ToPort: ptr[int32](80), IPRanges: []Source{{Value: "10.0.0.0/8"}}}}},
			wantCode: CodeInvalidParameterValue},
		{name: "IPv6 source", authorize: [][]Permission{{{Protocol: "tcp", FromPort: ptr[int32](1), ToPort: ptr[int32](2), IPv6Ranges: []Source{{Value: "2001:db8::/32"}}}}}, wantRules: 1},
		{name: "prefix list", authorize: [][]Permission{{{Protocol: "tcp", FromPort: ptr[int32](1), ToPort: ptr[int32](2), PrefixLists: []Source{{Value: "pl-1"}}}}}, wantRules: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := declared(t)
			var err error
			for _, perms := range tc.authorize {
				if _, err = s.AuthorizeIngress("sg-a", perms); err != nil {
					break
				}
			}
			if err == nil && tc.revoke != nil {
				_, err = s.RevokeIngress("sg-a", tc.revoke)
			}
			var ae *Error
			switch {
			case tc.wantCode == "" && err != nil:
				t.Fatal(err)
			case tc.wantCode != "" && (!errors.As(err, &ae) || ae.Code != tc.wantCode):
				t.Fatalf("err = %v, want %s", err, tc.wantCode)
			}
			if got := len(s.Snapshot().SecurityGroups[0].Ingress); got != tc.wantRules {
				t.Fatalf("rules = %d, want %d: %+v", got, tc.wantRules, s.Snapshot().SecurityGroups[0].Ingress)
			}
		})
	}
}

func TestRuleLimit(t *testing.T) {
	s := declared(t)
	for i := range maxIngressRules {
		port := int32(1000 + i)
		if _, err := s.AuthorizeIngress("sg-a", []Permission{{Protocol: "tcp", FromPort: &port, ToPort: &port, IPRanges: []Source{{Value: "10.0.0.0/8"}}}}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.AuthorizeIngress("sg-a", []Permission{{Protocol: "tcp", FromPort: ptr[int32](1), ToPort: ptr[int32](1), IPRanges: []Source{{Value: "10.0.0.0/8"}}}})
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != "RulesPerSecurityGroupLimitExceeded" {
		t.Fatalf("rule %d: err = %v", maxIngressRules+1, err)
	}
}

func TestInstanceIP(t *testing.T) {
	s := declared(t)
	for _, tc := range []struct {
		id   string
		want string
	}{
		{"i-run", "192.0.2.10"},
		{"i-stop", ""}, // not running: not a target
		{"i-gone", ""},
	} {
		ip, ok := s.InstanceIP(tc.id)
		if ok != (tc.want != "") || (ok && ip != netip.MustParseAddr(tc.want)) {
			t.Errorf("InstanceIP(%s) = %v, %t, want %q", tc.id, ip, ok, tc.want)
		}
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"abc", "abc", true},
		{"abc", "abcd", false},
		{"a*", "abc", true},
		{"*c", "abc", true},
		{"a*c", "ac", true},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"*", "", true},
		{"?", "", false},
		{"a*b*c", "aXbYbZc", true},
		{"192.0.2.*", "192.0.2.11", true},
		{"192.0.2.*", "192.0.20.1", false},
		// Many stars and no match: a client's filter value must not cost exponential time.
		{strings.Repeat("a*", 40) + "b", strings.Repeat("a", 80), false},
		{strings.Repeat("*a", 40), strings.Repeat("a", 80), true},
	} {
		if got := glob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("glob(%q, %q) = %t, want %t", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func TestPage(t *testing.T) {
	ids := []string{"sg-a", "sg-b", "sg-c", "sg-d", "sg-e", "sg-f", "sg-g"}
	var got []string
	q := Query{MaxResults: ptr[int32](5)}
	for pages := 0; ; pages++ {
		if pages > 2 {
			t.Fatal("paging does not end")
		}
		out, next, err := page(kindGroup, ids, q)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, out...)
		if next == "" {
			break
		}
		q.NextToken = next
	}
	if !reflect.DeepEqual(got, ids) {
		t.Fatalf("pages = %v, want %v", got, ids)
	}
	for _, tc := range []struct {
		name string
		q    Query
		code string
	}{
		{"MaxResults 4", Query{MaxResults: ptr[int32](4)}, CodeInvalidParameterValue},
		{"MaxResults 1001", Query{MaxResults: ptr[int32](1001)}, CodeInvalidParameterValue},
		{"token not base64", Query{NextToken: "%%%"}, CodeInvalidPaginationToken},
		{"token of another kind", Query{NextToken: "aS0x"}, CodeInvalidPaginationToken}, // "i-1"
	} {
		_, _, err := page(kindGroup, ids, tc.q)
		if err == nil || err.Code != tc.code {
			t.Errorf("%s: err = %v, want %s", tc.name, err, tc.code)
		}
	}
}

func TestDescribeFilters(t *testing.T) {
	s := declared(t)
	doc := base()
	doc.SecurityGroups[0].Tags = map[string]string{"kubernetes.io/cluster/blue": "owned"}
	doc.SecurityGroups[1].Tags = map[string]string{"kubernetes.io/cluster/green": "shared"}
	if err := s.Declare(doc); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		filters []Filter
		want    []string
	}{
		{[]Filter{{"tag:kubernetes.io/cluster/blue", []string{"owned", "shared"}}}, []string{"sg-a"}},
		{[]Filter{{"tag-key", []string{"kubernetes.io/cluster/*"}}}, []string{"sg-a", "sg-b"}},
		{[]Filter{{"tag-key", []string{"kubernetes.io/cluster/*"}}, {"group-name", []string{"b"}}}, []string{"sg-b"}},
		{[]Filter{{"vpc-id", []string{"vpc-2"}}}, nil},
	} {
		out, _, err := s.DescribeSecurityGroups(Query{Filters: tc.filters}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, g := range out {
			got = append(got, g.ID)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("filters %v: %v, want %v", tc.filters, got, tc.want)
		}
	}
}

// TestStateFile declares and authorizes, reopens the store on the same bbolt file and
// finds the same state.
func TestStateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, db)
	if err := s.Declare(base()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AuthorizeIngress("sg-a", []Permission{{Protocol: "-1", IPRanges: []Source{{Value: "10.0.0.0/8", Description: "d"}}}}); err != nil {
		t.Fatal(err)
	}
	want := s.Snapshot()
	_ = s.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := open(t, db).Snapshot(); !reflect.DeepEqual(got, want) {
		t.Fatalf("reopened:\n got %+v\nwant %+v", got, want)
	}
	if len(want.SecurityGroups[0].Ingress) != 1 || len(want.NetworkInterfaces) != 1 {
		t.Fatalf("state = %+v", want)
	}
}

// TestSubscribe: a subscriber hears of every declaration that changed something, before
// Declare returns and with the change readable, and of nothing else (a repeated or
// refused declaration); after cancel, of nothing.
func TestSubscribe(t *testing.T) {
	s := declared(t)
	var heard []string
	cancel := s.Subscribe(func() {
		st, _ := s.InstanceState("i-run")
		heard = append(heard, st)
	})
	stopped := base()
	stopped.Instances[0].State = "stopped"
	bad := base()
	bad.Instances[0].SubnetID = "subnet-none"
	for _, doc := range []Document{base(), stopped, stopped, bad} {
		_ = s.Declare(doc)
	}
	if fmt.Sprint(heard) != "[stopped]" {
		t.Errorf("heard %q, want one call, after i-run stopped", heard)
	}
	if st, ok := s.InstanceState("i-gone"); ok || st != "" {
		t.Errorf("InstanceState(i-gone) = %q, %t: want no instance", st, ok)
	}
	cancel()
	if err := s.Declare(base()); err != nil {
		t.Fatal(err)
	}
	if len(heard) != 1 {
		t.Errorf("heard %q after cancel", heard)
	}
}
