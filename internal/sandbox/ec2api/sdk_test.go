package ec2api

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/sandbox/ec2"
)

type fixture struct {
	store  *ec2.Store
	srv    *httptest.Server
	client *awsec2.Client
}

// world is what the tests declare: one VPC of TEST-NET-1 with a subnet, a node with its
// primary interface, a pod interface with a secondary address, and three groups.
var world = ec2.Document{
	VPCs:    []ec2.VPC{{ID: "vpc-1", CIDRBlock: "192.0.2.0/24", Tags: map[string]string{"Name": "sandbox"}}},
	Subnets: []ec2.Subnet{{ID: "subnet-1", VPCID: "vpc-1", CIDRBlock: "192.0.2.0/25", AvailabilityZone: "us-east-1a"}},
	SecurityGroups: []ec2.SecurityGroup{
		{ID: "sg-node", Name: "node", VPCID: "vpc-1", Tags: map[string]string{"kubernetes.io/cluster/blue": "owned"}},
		{ID: "sg-pods", Name: "pods", VPCID: "vpc-1", Tags: map[string]string{"kubernetes.io/cluster/blue": "shared"}},
		{ID: "sg-alb", Name: "alb", VPCID: "vpc-1"},
	},
	Instances: []ec2.Instance{{ID: "i-0node", SubnetID: "subnet-1", PrivateIP: "192.0.2.10", SecurityGroups: []string{"sg-node"}}},
	NetworkInterfaces: []ec2.NetworkInterface{
		{ID: "eni-0node", SubnetID: "subnet-1", PrivateIPs: []string{"192.0.2.10"}, SecurityGroups: []string{"sg-node"}, InstanceID: "i-0node"},
		{ID: "eni-0pods", SubnetID: "subnet-1", PrivateIPs: []string{"192.0.2.11", "192.0.2.12"}, SecurityGroups: []string{"sg-pods"}},
	},
}

// newFixture serves the API over a store holding world on loopback and points the real
// SDK client at it.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	store, err := ec2.Open(ec2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	if err := store.Declare(world); err != nil {
		t.Fatal(err)
	}
	api, err := New(Config{Store: store, Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &fixture{store: store, srv: srv, client: clientFor(srv.URL)}
}

func clientFor(endpoint string) *awsec2.Client {
	return awsec2.New(awsec2.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer:      retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = 5 * time.Millisecond; o.MaxAttempts = 1 }),
	})
}

// wantAPIError checks err is the API error code whose message contains msg.
func wantAPIError(t *testing.T, err error, code, msg string) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want API error %s", err, code)
	}
	if ae.ErrorCode() != code || !strings.Contains(ae.ErrorMessage(), msg) {
		t.Fatalf("err = %s: %s, want %s containing %q", ae.ErrorCode(), ae.ErrorMessage(), code, msg)
	}
}

func filter(name string, values ...string) types.Filter {
	return types.Filter{Name: aws.String(name), Values: values}
}

func TestDescribeSecurityGroups(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		in        awsec2.DescribeSecurityGroupsInput
		want      []string
		code, msg string
	}{
		{name: "all", want: []string{"sg-alb", "sg-node", "sg-pods"}},
		{name: "by id", in: awsec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-pods", "sg-node"}}, want: []string{"sg-node", "sg-pods"}},
		// The controller's endpoint groups: the cluster tag, owned or shared, in its VPC.
		{name: "by cluster tag and vpc", in: awsec2.DescribeSecurityGroupsInput{Filters: []types.Filter{
			filter("tag:kubernetes.io/cluster/blue", "owned", "shared"), filter("vpc-id", "vpc-1")}}, want: []string{"sg-node", "sg-pods"}},
		{name: "by tag value", in: awsec2.DescribeSecurityGroupsInput{Filters: []types.Filter{filter("tag:kubernetes.io/cluster/blue", "owned")}}, want: []string{"sg-node"}},
		{name: "by name with wildcard", in: awsec2.DescribeSecurityGroupsInput{Filters: []types.Filter{filter("group-name", "p*")}}, want: []string{"sg-pods"}},
		{name: "by GroupName", in: awsec2.DescribeSecurityGroupsInput{GroupNames: []string{"alb"}}, want: []string{"sg-alb"}},
		{name: "filter matching nothing", in: awsec2.DescribeSecurityGroupsInput{Filters: []types.Filter{filter("vpc-id", "vpc-2")}}, want: []string{}},
		{name: "unknown id", in: awsec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-node", "sg-gone"}},
			code: "InvalidGroup.NotFound", msg: "The security group 'sg-gone' does not exist"},
		{name: "malformed id", in: awsec2.DescribeSecurityGroupsInput{GroupIds: []string{"node"}},
			code: "InvalidGroupId.Malformed", msg: `Invalid id: "node"`},
		{name: "unknown name", in: awsec2.DescribeSecurityGroupsInput{GroupNames: []string{"gone"}},
			code: "InvalidGroup.NotFound", msg: "'gone'"},
		{name: "bad filter", in: awsec2.DescribeSecurityGroupsInput{Filters: []types.Filter{filter("colour", "blue")}},
			code: "InvalidParameterValue", msg: "The filter 'colour' is invalid"},
		{name: "MaxResults too small", in: awsec2.DescribeSecurityGroupsInput{MaxResults: aws.Int32(2)},
			code: "InvalidParameterValue", msg: "Value ( 2 ) for parameter maxResults is invalid"},
		{name: "bad NextToken", in: awsec2.DescribeSecurityGroupsInput{NextToken: aws.String("!!")},
			code: "InvalidPaginationToken", msg: "Invalid pagination token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.client.DescribeSecurityGroups(ctx, &tc.in)
			if tc.code != "" {
				wantAPIError(t, err, tc.code, tc.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, g := range out.SecurityGroups {
				got = append(got, aws.ToString(g.GroupId))
				if aws.ToString(g.VpcId) != "vpc-1" || aws.ToString(g.OwnerId) != ec2.DefaultAccountID {
					t.Errorf("group %s: vpc %s owner %s", aws.ToString(g.GroupId), aws.ToString(g.VpcId), aws.ToString(g.OwnerId))
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("groups = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPagination pages through every Describe call with MaxResults 5 and checks the pages
// add up to the whole, in order, each id once.
func TestPagination(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var doc ec2.Document
	var want []string
	for i := range 12 {
		id := "sg-p" + string(rune('a'+i))
		doc.SecurityGroups = append(doc.SecurityGroups, ec2.SecurityGroup{ID: id, VPCID: "vpc-1"})
		want = append(want, id)
	}
	if err := f.store.Declare(doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	pages := 0
	p := awsec2.NewDescribeSecurityGroupsPaginator(f.client, &awsec2.DescribeSecurityGroupsInput{
		MaxResults: aws.Int32(5), Filters: []types.Filter{filter("group-name", "sg-p*")}})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(out.SecurityGroups) > 5 {
			t.Fatalf("page %d has %d groups, more than MaxResults 5", pages, len(out.SecurityGroups))
		}
		for _, g := range out.SecurityGroups {
			got = append(got, aws.ToString(g.GroupId))
		}
	}
	if !slices.Equal(got, want) || pages != 3 {
		t.Fatalf("paged %d pages: %v, want 3 pages: %v", pages, got, want)
	}
}

func TestDescribeNetworkInterfaces(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		in        awsec2.DescribeNetworkInterfacesInput
		want      []string
		code, msg string
	}{
		// How the controller finds a pod's interface: the VPC and the pod's IP, secondary here.
		{name: "by secondary address in the vpc", in: awsec2.DescribeNetworkInterfacesInput{Filters: []types.Filter{
			filter("vpc-id", "vpc-1"), filter("addresses.private-ip-address", "192.0.2.12", "192.0.2.99")}}, want: []string{"eni-0pods"}},
		{name: "by private-ip-address", in: awsec2.DescribeNetworkInterfacesInput{Filters: []types.Filter{filter("private-ip-address", "192.0.2.10")}},
			want: []string{"eni-0node"}},
		{name: "by id", in: awsec2.DescribeNetworkInterfacesInput{NetworkInterfaceIds: []string{"eni-0pods"}}, want: []string{"eni-0pods"}},
		{name: "by attachment", in: awsec2.DescribeNetworkInterfacesInput{Filters: []types.Filter{filter("attachment.instance-id", "i-0node")}},
			want: []string{"eni-0node"}},
		{name: "by group", in: awsec2.DescribeNetworkInterfacesInput{Filters: []types.Filter{filter("group-id", "sg-pods")}}, want: []string{"eni-0pods"}},
		{name: "unknown id", in: awsec2.DescribeNetworkInterfacesInput{NetworkInterfaceIds: []string{"eni-0gone"}},
			code: "InvalidNetworkInterfaceID.NotFound", msg: "The networkInterface ID 'eni-0gone' does not exist"},
		{name: "malformed id", in: awsec2.DescribeNetworkInterfacesInput{NetworkInterfaceIds: []string{"i-0node"}},
			code: "InvalidNetworkInterfaceID.Malformed", msg: `Invalid id: "i-0node"`},
		{name: "bad filter", in: awsec2.DescribeNetworkInterfacesInput{Filters: []types.Filter{filter("addresses.nope", "x")}},
			code: "InvalidParameterValue", msg: "The filter 'addresses.nope' is invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.client.DescribeNetworkInterfaces(ctx, &tc.in)
			if tc.code != "" {
				wantAPIError(t, err, tc.code, tc.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, n := range out.NetworkInterfaces {
				got = append(got, aws.ToString(n.NetworkInterfaceId))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("interfaces = %v, want %v", got, tc.want)
			}
		})
	}
	out, err := f.client.DescribeNetworkInterfaces(ctx, &awsec2.DescribeNetworkInterfacesInput{NetworkInterfaceIds: []string{"eni-0pods"}})
	if err != nil {
		t.Fatal(err)
	}
	n := out.NetworkInterfaces[0]
	var ips []string
	for _, a := range n.PrivateIpAddresses {
		ips = append(ips, aws.ToString(a.PrivateIpAddress))
		if aws.ToBool(a.Primary) != (aws.ToString(a.PrivateIpAddress) == "192.0.2.11") {
			t.Errorf("address %s primary = %t", aws.ToString(a.PrivateIpAddress), aws.ToBool(a.Primary))
		}
	}
	if !slices.Equal(ips, []string{"192.0.2.11", "192.0.2.12"}) || aws.ToString(n.PrivateIpAddress) != "192.0.2.11" ||
		len(n.Groups) != 1 || aws.ToString(n.Groups[0].GroupId) != "sg-pods" || aws.ToString(n.Groups[0].GroupName) != "pods" ||
		aws.ToString(n.VpcId) != "vpc-1" || aws.ToString(n.SubnetId) != "subnet-1" || n.Status != types.NetworkInterfaceStatusAvailable {
		t.Fatalf("pod interface = %+v", n)
	}
}

func TestDescribeInstances(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	out, err := f.client.DescribeInstances(ctx, &awsec2.DescribeInstancesInput{InstanceIds: []string{"i-0node"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Reservations) != 1 || len(out.Reservations[0].Instances) != 1 {
		t.Fatalf("reservations = %+v", out.Reservations)
	}
	in := out.Reservations[0].Instances[0]
	if aws.ToString(in.InstanceId) != "i-0node" || in.State == nil || in.State.Name != types.InstanceStateNameRunning ||
		aws.ToInt32(in.State.Code) != 16 || aws.ToString(in.PrivateIpAddress) != "192.0.2.10" || aws.ToString(in.VpcId) != "vpc-1" ||
		aws.ToString(in.SubnetId) != "subnet-1" || len(in.SecurityGroups) != 1 || aws.ToString(in.SecurityGroups[0].GroupId) != "sg-node" ||
		aws.ToString(in.Placement.AvailabilityZone) != "us-east-1a" {
		t.Fatalf("instance = %+v", in)
	}
	if len(in.NetworkInterfaces) != 1 || aws.ToString(in.NetworkInterfaces[0].NetworkInterfaceId) != "eni-0node" ||
		aws.ToInt32(in.NetworkInterfaces[0].Attachment.DeviceIndex) != 0 ||
		aws.ToString(in.NetworkInterfaces[0].PrivateIpAddresses[0].PrivateIpAddress) != "192.0.2.10" ||
		aws.ToString(in.NetworkInterfaces[0].Groups[0].GroupId) != "sg-node" {
		t.Fatalf("instance interfaces = %+v", in.NetworkInterfaces)
	}
	for _, tc := range []struct {
		name      string
		in        awsec2.DescribeInstancesInput
		want      int
		code, msg string
	}{
		{name: "by state", in: awsec2.DescribeInstancesInput{Filters: []types.Filter{filter("instance-state-name", "running")}}, want: 1},
		{name: "by other state", in: awsec2.DescribeInstancesInput{Filters: []types.Filter{filter("instance-state-name", "stopped")}}, want: 0},
		{name: "unknown ids", in: awsec2.DescribeInstancesInput{InstanceIds: []string{"i-0gone", "i-0node", "i-1gone"}},
			code: "InvalidInstanceID.NotFound", msg: "The instance IDs 'i-0gone, i-1gone' do not exist"},
		{name: "malformed id", in: awsec2.DescribeInstancesInput{InstanceIds: []string{"node"}},
			code: "InvalidInstanceID.Malformed", msg: `Invalid id: "node"`},
		{name: "ids with MaxResults", in: awsec2.DescribeInstancesInput{InstanceIds: []string{"i-0node"}, MaxResults: aws.Int32(5)},
			code: "InvalidParameterCombination", msg: "instancesSet cannot be used with the parameter maxResults"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.client.DescribeInstances(ctx, &tc.in)
			if tc.code != "" {
				wantAPIError(t, err, tc.code, tc.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Reservations) != tc.want {
				t.Fatalf("reservations = %d, want %d", len(out.Reservations), tc.want)
			}
		})
	}
}

func TestDescribeVpcsAndSubnets(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	vpcs, err := f.client.DescribeVpcs(ctx, &awsec2.DescribeVpcsInput{VpcIds: []string{"vpc-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(vpcs.Vpcs) != 1 {
		t.Fatalf("vpcs = %+v", vpcs.Vpcs)
	}
	v := vpcs.Vpcs[0]
	// The controller reads the VPC's associated CIDR blocks to tell pods inside it from others.
	if aws.ToString(v.CidrBlock) != "192.0.2.0/24" || len(v.CidrBlockAssociationSet) != 1 ||
		aws.ToString(v.CidrBlockAssociationSet[0].CidrBlock) != "192.0.2.0/24" ||
		v.CidrBlockAssociationSet[0].CidrBlockState.State != types.VpcCidrBlockStateCodeAssociated ||
		v.State != types.VpcStateAvailable || len(v.Tags) != 1 || aws.ToString(v.Tags[0].Value) != "sandbox" {
		t.Fatalf("vpc = %+v", v)
	}
	_, err = f.client.DescribeVpcs(ctx, &awsec2.DescribeVpcsInput{VpcIds: []string{"vpc-2"}})
	wantAPIError(t, err, "InvalidVpcID.NotFound", "The vpc ID 'vpc-2' does not exist")

	subnets, err := f.client.DescribeSubnets(ctx, &awsec2.DescribeSubnetsInput{Filters: []types.Filter{filter("vpc-id", "vpc-1")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(subnets.Subnets) != 1 {
		t.Fatalf("subnets = %+v", subnets.Subnets)
	}
	s := subnets.Subnets[0]
	if aws.ToString(s.SubnetId) != "subnet-1" || aws.ToString(s.CidrBlock) != "192.0.2.0/25" || aws.ToString(s.AvailabilityZone) != "us-east-1a" ||
		aws.ToInt32(s.AvailableIpAddressCount) != 123 || s.State != types.SubnetStateAvailable {
		t.Fatalf("subnet = %+v", s)
	}
	_, err = f.client.DescribeSubnets(ctx, &awsec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-2"}})
	wantAPIError(t, err, "InvalidSubnetID.NotFound", "The subnet ID 'subnet-2' does not exist")
}

// TestIngressRules authorizes and revokes rules as the controller does for a
// TargetGroupBinding's networking: the load balancer's group to the pods' group on the
// target port, with the controller's description.
func TestIngressRules(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	perm := types.IpPermission{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(8080), ToPort: aws.Int32(8080),
		UserIdGroupPairs: []types.UserIdGroupPair{{GroupId: aws.String("sg-alb"), Description: aws.String("elbv2.k8s.aws/targetGroupBinding=shared")}}}
	cidr := types.IpPermission{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(8080), ToPort: aws.Int32(8080),
		IpRanges: []types.IpRange{{CidrIp: aws.String("192.0.2.0/24"), Description: aws.String("vpc")}}}
	auth, err := f.client.AuthorizeSecurityGroupIngress(ctx, &awsec2.AuthorizeSecurityGroupIngressInput{
		GroupId: aws.String("sg-pods"), IpPermissions: []types.IpPermission{perm, cidr}})
	if err != nil {
		t.Fatal(err)
	}
	if !aws.ToBool(auth.Return) || len(auth.SecurityGroupRules) != 2 || !strings.HasPrefix(aws.ToString(auth.SecurityGroupRules[0].SecurityGroupRuleId), "sgr-") ||
		aws.ToString(auth.SecurityGroupRules[0].ReferencedGroupInfo.GroupId) != "sg-alb" || aws.ToString(auth.SecurityGroupRules[1].CidrIpv4) != "192.0.2.0/24" {
		t.Fatalf("authorize = %+v", auth)
	}

	// DescribeSecurityGroups reports them as one IpPermission: one protocol and port range.
	out, err := f.client.DescribeSecurityGroups(ctx, &awsec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-pods"}})
	if err != nil {
		t.Fatal(err)
	}
	ps := out.SecurityGroups[0].IpPermissions
	if len(ps) != 1 || aws.ToString(ps[0].IpProtocol) != "tcp" || aws.ToInt32(ps[0].FromPort) != 8080 || aws.ToInt32(ps[0].ToPort) != 8080 ||
		len(ps[0].UserIdGroupPairs) != 1 || aws.ToString(ps[0].UserIdGroupPairs[0].GroupId) != "sg-alb" ||
		aws.ToString(ps[0].UserIdGroupPairs[0].Description) != "elbv2.k8s.aws/targetGroupBinding=shared" ||
		len(ps[0].IpRanges) != 1 || aws.ToString(ps[0].IpRanges[0].CidrIp) != "192.0.2.0/24" {
		t.Fatalf("permissions = %+v", ps)
	}
	egress := out.SecurityGroups[0].IpPermissionsEgress
	if len(egress) != 1 || aws.ToString(egress[0].IpProtocol) != "-1" || egress[0].FromPort != nil {
		t.Fatalf("egress = %+v", egress)
	}

	for _, tc := range []struct {
		name      string
		group     string
		perms     []types.IpPermission
		revoke    bool
		code, msg string
	}{
		{name: "duplicate", group: "sg-pods", perms: []types.IpPermission{perm},
			code: "InvalidPermission.Duplicate", msg: `the specified rule "peer: sg-alb, TCP, from port: 8080, to port: 8080, ALLOW" already exists`},
		{name: "unknown group", group: "sg-gone", perms: []types.IpPermission{perm},
			code: "InvalidGroup.NotFound", msg: "The security group 'sg-gone' does not exist"},
		{name: "unknown source group", group: "sg-node", perms: []types.IpPermission{{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(1), ToPort: aws.Int32(2),
			UserIdGroupPairs: []types.UserIdGroupPair{{GroupId: aws.String("sg-gone")}}}},
			code: "InvalidGroup.NotFound", msg: "'sg-gone'"},
		{name: "tcp without ports", group: "sg-node", perms: []types.IpPermission{{IpProtocol: aws.String("tcp"), IpRanges: []types.IpRange{{CidrIp: aws.String("10.0.0.0/8")}}}},
			code: "InvalidParameterValue", msg: "Must specify both from and to ports"},
		{name: "bad cidr", group: "sg-node", perms: []types.IpPermission{{IpProtocol: aws.String("-1"), IpRanges: []types.IpRange{{CidrIp: aws.String("10.0.0.1/8")}}}},
			code: "InvalidParameterValue", msg: "CIDR block 10.0.0.1/8 is malformed"},
		{name: "revoke a rule the group lacks", group: "sg-pods", revoke: true, perms: []types.IpPermission{{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(9090), ToPort: aws.Int32(9090),
			UserIdGroupPairs: []types.UserIdGroupPair{{GroupId: aws.String("sg-alb")}}}},
			code: "InvalidPermission.NotFound", msg: "The specified rule does not exist in this security group."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.revoke {
				_, err = f.client.RevokeSecurityGroupIngress(ctx, &awsec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(tc.group), IpPermissions: tc.perms})
			} else {
				_, err = f.client.AuthorizeSecurityGroupIngress(ctx, &awsec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(tc.group), IpPermissions: tc.perms})
			}
			wantAPIError(t, err, tc.code, tc.msg)
		})
	}

	// A refused request changed nothing; a revoke without the description removes the rule.
	rev, err := f.client.RevokeSecurityGroupIngress(ctx, &awsec2.RevokeSecurityGroupIngressInput{GroupId: aws.String("sg-pods"),
		IpPermissions: []types.IpPermission{{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(8080), ToPort: aws.Int32(8080),
			UserIdGroupPairs: []types.UserIdGroupPair{{GroupId: aws.String("sg-alb")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if !aws.ToBool(rev.Return) || len(rev.RevokedSecurityGroupRules) != 1 ||
		aws.ToString(rev.RevokedSecurityGroupRules[0].SecurityGroupRuleId) != aws.ToString(auth.SecurityGroupRules[0].SecurityGroupRuleId) ||
		aws.ToString(rev.RevokedSecurityGroupRules[0].ReferencedGroupId) != "sg-alb" {
		t.Fatalf("revoke = %+v", rev)
	}
	out, err = f.client.DescribeSecurityGroups(ctx, &awsec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-pods"}})
	if err != nil {
		t.Fatal(err)
	}
	ps = out.SecurityGroups[0].IpPermissions
	if len(ps) != 1 || len(ps[0].UserIdGroupPairs) != 0 || len(ps[0].IpRanges) != 1 {
		t.Fatalf("after revoke: permissions = %+v", ps)
	}
}

// TestUnsupportedAction checks an action the sandbox does not serve is refused in its own
// words, through the SDK as a client would see it.
func TestUnsupportedAction(t *testing.T) {
	f := newFixture(t)
	_, err := f.client.RunInstances(context.Background(), &awsec2.RunInstancesInput{ImageId: aws.String("ami-1"), MinCount: aws.Int32(1), MaxCount: aws.Int32(1)})
	wantAPIError(t, err, "UnsupportedOperation", "RunInstances is not supported by the crossfade sandbox")
	var re interface{ HTTPStatusCode() int }
	if !errors.As(err, &re) || re.HTTPStatusCode() != 400 {
		t.Fatalf("err = %v, want HTTP 400", err)
	}
	_, err = f.client.DescribeVpcs(context.Background(), &awsec2.DescribeVpcsInput{DryRun: aws.Bool(true)})
	wantAPIError(t, err, "DryRunOperation", "Request would have succeeded, but DryRun flag is set.")
}

// TestInvalidAction: a name that is no EC2 action answers EC2's InvalidAction, status
// 400, in the EC2 error shape; a real EC2 action the sandbox does not serve keeps
// UnsupportedOperation (TestUnsupportedAction).
func TestInvalidAction(t *testing.T) {
	f := newFixture(t)
	for _, action := range []string{"Nope", "describeVpcs", "DescribeVpc"} {
		resp, err := http.Post(f.srv.URL, "application/x-www-form-urlencoded", strings.NewReader("Action="+action+"&Version="+Version))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := "<Code>InvalidAction</Code><Message>The action " + action + " is not valid for this web service.</Message>"
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), want) || !strings.Contains(string(body), "<Response><Errors><Error>") {
			t.Errorf("Action=%s: %d %s, want 400 with %s", action, resp.StatusCode, body, want)
		}
	}
}

// TestActionsAreTheSDKs: actions.txt, the EC2 actions told apart from names EC2 does not
// have, is the operations of aws-sdk-go-v2's EC2 client, and includes every action served.
func TestActionsAreTheSDKs(t *testing.T) {
	typ := reflect.TypeFor[*awsec2.Client]()
	sdk := map[string]bool{}
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		// An operation: (ctx, *XInput, ...func(*Options)) (*XOutput, error).
		if m.Type.NumIn() == 4 && m.Type.In(1) == reflect.TypeFor[context.Context]() && m.Type.NumOut() == 2 {
			sdk[m.Name] = true
		}
	}
	if len(sdk) < 500 || !maps.Equal(sdk, actions) {
		var missing, extra []string
		for a := range sdk {
			if !actions[a] {
				missing = append(missing, a)
			}
		}
		for a := range actions {
			if !sdk[a] {
				extra = append(extra, a)
			}
		}
		t.Errorf("actions.txt (%d) is not the SDK's %d operations: missing %v, extra %v; regenerate it from the SDK", len(actions), len(sdk), missing, extra)
	}
	api, err := New(Config{Store: newFixture(t).store, Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range api.Actions() {
		if !actions[a] {
			t.Errorf("served action %s is not in actions.txt", a)
		}
	}
}
