package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsec2 "github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/smithy-go"

	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/ec2"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

func ec2Client(sb *sandbox.Sandbox) *awsec2.Client {
	return awsec2.New(awsec2.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(sb.APIURL()),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer:      retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = 5 * time.Millisecond }),
	})
}

// ec2Doc is a cluster's EC2 as a test declares it: a VPC, a subnet, a node and a pod's
// interface, their groups.
const ec2Doc = `{
  "vpcs": [{"id": "vpc-1", "cidrBlock": "192.0.2.0/24"}],
  "subnets": [{"id": "subnet-1", "vpcId": "vpc-1", "cidrBlock": "192.0.2.0/24", "availabilityZone": "us-east-1a"}],
  "securityGroups": [
    {"id": "sg-pods", "name": "pods", "vpcId": "vpc-1", "tags": {"kubernetes.io/cluster/blue": "owned"}},
    {"id": "sg-alb", "name": "alb", "vpcId": "vpc-1"}
  ],
  "instances": [{"id": "i-0node", "subnetId": "subnet-1", "privateIp": "192.0.2.10", "securityGroups": ["sg-pods"]}],
  "networkInterfaces": [{"id": "eni-0pod", "subnetId": "subnet-1", "privateIps": ["192.0.2.11", "192.0.2.12"], "securityGroups": ["sg-pods"]}]
}`

// putEC2 sends body to PUT /_sandbox/ec2 and returns the status and the answer.
func putEC2(t *testing.T, sb *sandbox.Sandbox, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, sb.APIURL()+"/_sandbox/ec2", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestEC2StateSurvivesRestart declares EC2 through the admin endpoint, has a rule
// authorized through the API, restarts the sandbox on the same state file and finds both;
// declaring the same document again then changes nothing, the rule included.
func TestEC2StateSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	state := filepath.Join(t.TempDir(), "state.db")
	sb, stop := sandboxtest.StartStateful(t, state)
	if code, body := putEC2(t, sb, ec2Doc); code != http.StatusOK {
		t.Fatalf("PUT /_sandbox/ec2 = %d %s", code, body)
	}
	if _, err := ec2Client(sb).AuthorizeSecurityGroupIngress(ctx, &awsec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String("sg-pods"),
		IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(8080), ToPort: aws.Int32(8080),
			UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String("sg-alb")}}}}}); err != nil {
		t.Fatal(err)
	}
	before := sb.EC2().Snapshot()
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	sb, _ = sandboxtest.StartStateful(t, state)
	if got := sb.EC2().Snapshot(); !reflect.DeepEqual(got, before) {
		t.Fatalf("after restart:\n got %+v\nwant %+v", got, before)
	}
	c := ec2Client(sb)
	out, err := c.DescribeNetworkInterfaces(ctx, &awsec2.DescribeNetworkInterfacesInput{Filters: []ec2types.Filter{
		{Name: aws.String("vpc-id"), Values: []string{"vpc-1"}}, {Name: aws.String("addresses.private-ip-address"), Values: []string{"192.0.2.12"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.NetworkInterfaces) != 1 || aws.ToString(out.NetworkInterfaces[0].NetworkInterfaceId) != "eni-0pod" {
		t.Fatalf("interfaces after restart = %+v", out.NetworkInterfaces)
	}
	groups, err := c.DescribeSecurityGroups(ctx, &awsec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-pods"}})
	if err != nil {
		t.Fatal(err)
	}
	if ps := groups.SecurityGroups[0].IpPermissions; len(ps) != 1 || aws.ToString(ps[0].UserIdGroupPairs[0].GroupId) != "sg-alb" {
		t.Fatalf("rules after restart = %+v", ps)
	}
	if code, body := putEC2(t, sb, ec2Doc); code != http.StatusOK {
		t.Fatalf("PUT /_sandbox/ec2 again = %d %s", code, body)
	}
	if got := sb.EC2().Snapshot(); !reflect.DeepEqual(got, before) {
		t.Fatalf("declaring the same document again changed the state:\n got %+v\nwant %+v", got, before)
	}
}

// TestEC2AdminRefusals checks the admin endpoint refuses a bad declaration with 400 and an
// error naming the field, and changes nothing.
func TestEC2AdminRefusals(t *testing.T) {
	sb := sandboxtest.Start(t)
	if code, body := putEC2(t, sb, ec2Doc); code != http.StatusOK {
		t.Fatalf("PUT /_sandbox/ec2 = %d %s", code, body)
	}
	before := sb.EC2().Snapshot()
	for _, tc := range []struct{ name, body, want string }{
		{"not JSON", `{`, "ec2 declaration: body must be"},
		{"unknown member", `{"vpc": []}`, `unknown field "vpc"`},
		{"bad VPC id", `{"vpcs": [{"id": "net-1", "cidrBlock": "10.0.0.0/16"}]}`, `vpcs[0].id: "net-1" is not an id of this kind: vpc-`},
		{"subnet outside its VPC", `{"subnets": [{"id": "subnet-2", "vpcId": "vpc-1", "cidrBlock": "10.0.0.0/24"}]}`, "subnets[0].cidrBlock"},
		{"instance in no subnet", `{"instances": [{"id": "i-1", "subnetId": "subnet-9", "privateIp": "192.0.2.20"}]}`, `instances[0].subnetId: subnet "subnet-9" is not declared`},
		{"unknown group", `{"networkInterfaces": [{"id": "eni-2", "subnetId": "subnet-1", "privateIps": ["192.0.2.30"], "securityGroups": ["sg-9"]}]}`,
			`networkInterfaces[0].securityGroups[0]: security group "sg-9" is not declared`},
		{"address of another interface", `{"networkInterfaces": [{"id": "eni-2", "subnetId": "subnet-1", "privateIps": ["192.0.2.12"]}]}`,
			"networkInterfaces[0].privateIps: 192.0.2.12 is already an address of network interface eni-0pod"},
		{"bad rule", `{"securityGroups": [{"id": "sg-alb", "vpcId": "vpc-1", "ingress": [{"protocol": "tcp", "fromPort": 80, "toPort": 80}]}]}`,
			"securityGroups[0].ingress[0]: A rule has exactly one source"},
		{"bad state", `{"instances": [{"id": "i-1", "subnetId": "subnet-1", "privateIp": "192.0.2.20", "state": "asleep"}]}`, "instances[0].state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := putEC2(t, sb, tc.body)
			var got struct{ Error string }
			_ = json.Unmarshal([]byte(body), &got)
			if code != http.StatusBadRequest || !strings.Contains(got.Error, tc.want) {
				t.Fatalf("PUT /_sandbox/ec2 = %d %s, want 400 with an error containing %q", code, body, tc.want)
			}
			if after := sb.EC2().Snapshot(); !reflect.DeepEqual(after, before) {
				t.Fatalf("a refused declaration changed the state: %+v", after)
			}
		})
	}
}

// TestEC2InstanceTargets registers instance targets to a group of target type instance: a
// running instance the sandbox's EC2 knows is accepted, an unknown or stopped one refused
// with ELBv2's InvalidTarget, an IP address with its ValidationError.
func TestEC2InstanceTargets(t *testing.T) {
	ctx := context.Background()
	sb := sandboxtest.Start(t)
	if err := sb.DeclareEC2(ec2.Document{
		VPCs:    []ec2.VPC{{ID: "vpc-1", CIDRBlock: "192.0.2.0/24"}},
		Subnets: []ec2.Subnet{{ID: "subnet-1", VPCID: "vpc-1", CIDRBlock: "192.0.2.0/24"}},
		Instances: []ec2.Instance{
			{ID: "i-0node", SubnetID: "subnet-1", PrivateIP: "192.0.2.10"},
			{ID: "i-0stopped", SubnetID: "subnet-1", PrivateIP: "192.0.2.11", State: "stopped"},
		},
	}); err != nil {
		t.Fatal(err)
	}
	lbc := elbClient(sb)
	tg, err := lbc.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String("nodes"), Protocol: types.ProtocolEnumHttp,
		Port: aws.Int32(30080), VpcId: aws.String("vpc-1"), TargetType: types.TargetTypeEnumInstance})
	if err != nil {
		t.Fatal(err)
	}
	arn := tg.TargetGroups[0].TargetGroupArn
	if _, err := lbc.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: arn, Targets: []types.TargetDescription{{Id: aws.String("i-0node")}}}); err != nil {
		t.Fatalf("register a running instance: %v", err)
	}
	for _, id := range []string{"i-0gone", "i-0stopped"} {
		_, err := lbc.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: arn, Targets: []types.TargetDescription{{Id: aws.String(id)}}})
		var ae smithy.APIError
		want := "The following targets are not in a running state and cannot be registered: '" + id + "'"
		if !errors.As(err, &ae) || ae.ErrorCode() != "InvalidTarget" || ae.ErrorMessage() != want {
			t.Fatalf("register %s: err = %v, want InvalidTarget: %s", id, err, want)
		}
	}
	// An IP address is not an instance id: ELBv2 refuses it in an instance group.
	_, err = lbc.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: arn, Targets: []types.TargetDescription{{Id: aws.String("192.0.2.10")}}})
	if ae := smithy.APIError(nil); !errors.As(err, &ae) || ae.ErrorCode() != "ValidationError" || ae.ErrorMessage() != "Instance ID '192.0.2.10' is not valid" {
		t.Fatalf("register an IP address to an instance group: err = %v, want ValidationError: Instance ID '192.0.2.10' is not valid", err)
	}
	health, err := lbc.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: arn})
	if err != nil {
		t.Fatal(err)
	}
	if len(health.TargetHealthDescriptions) != 1 || aws.ToString(health.TargetHealthDescriptions[0].Target.Id) != "i-0node" ||
		aws.ToInt32(health.TargetHealthDescriptions[0].Target.Port) != 30080 {
		t.Fatalf("targets = %+v", health.TargetHealthDescriptions)
	}
}

// TestEC2WithAWSCLI reads the declared groups with the real AWS CLI, and sees its error
// for an unsupported action.
func TestEC2WithAWSCLI(t *testing.T) {
	const awsCLI = "/usr/bin/aws"
	if testing.Short() {
		t.Skip("runs the AWS CLI: skipped with -short")
	}
	if _, err := exec.LookPath(awsCLI); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found: install Debian package awscli", awsCLI)
		}
		t.Skipf("%s not found (install Debian package awscli)", awsCLI)
	}
	sb := sandboxtest.Start(t)
	if code, body := putEC2(t, sb, ec2Doc); code != http.StatusOK {
		t.Fatalf("PUT /_sandbox/ec2 = %d %s", code, body)
	}
	run := func(args ...string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, awsCLI, append(args, "--endpoint-url", sb.APIURL(), "--output", "json")...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION=us-east-1",
			"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=", "AWS_EC2_METADATA_DISABLED=true")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	out, stderr, err := run("ec2", "describe-security-groups", "--filters", "Name=tag:kubernetes.io/cluster/blue,Values=owned,shared")
	if err != nil {
		t.Fatalf("aws ec2 describe-security-groups: %v: %s", err, stderr)
	}
	var got struct {
		SecurityGroups []struct{ GroupId, GroupName, VpcId string }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got.SecurityGroups) != 1 || got.SecurityGroups[0].GroupId != "sg-pods" || got.SecurityGroups[0].GroupName != "pods" || got.SecurityGroups[0].VpcId != "vpc-1" {
		t.Fatalf("aws ec2 describe-security-groups = %s", out)
	}
	_, stderr, err = run("ec2", "describe-security-groups", "--group-ids", "sg-gone")
	if err == nil || !strings.Contains(stderr, "(InvalidGroup.NotFound)") || !strings.Contains(stderr, "The security group 'sg-gone' does not exist") {
		t.Fatalf("aws ec2 describe-security-groups --group-ids sg-gone: err %v, stderr %s", err, stderr)
	}
	_, stderr, err = run("ec2", "describe-key-pairs")
	if err == nil || !strings.Contains(stderr, "(UnsupportedOperation)") || !strings.Contains(stderr, "DescribeKeyPairs is not supported by the crossfade sandbox") {
		t.Fatalf("aws ec2 describe-key-pairs: err %v, stderr %s", err, stderr)
	}
}

// TestEC2InstanceTargetServed: an instance declared in EC2, registered by id into an
// instance group behind a listener, is health-checked and served at its private IP and
// the group's port, through the address map to its loopback backend.
func TestEC2InstanceTargetServed(t *testing.T) {
	ctx := context.Background()
	sb := sandboxtest.Start(t)
	node := startBackend(t, "node-1", make(chan struct{}), make(chan string, 1))
	if err := sb.DeclareEC2(ec2.Document{
		VPCs:      []ec2.VPC{{ID: "vpc-1", CIDRBlock: "192.0.2.0/24"}},
		Subnets:   []ec2.Subnet{{ID: "subnet-1", VPCID: "vpc-1", CIDRBlock: "192.0.2.0/24"}},
		Instances: []ec2.Instance{{ID: "i-0node", SubnetID: "subnet-1", PrivateIP: "192.0.2.10"}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := sb.SetTargetAddresses(map[netip.AddrPort]netip.AddrPort{
		netip.MustParseAddrPort("192.0.2.10:30080"): netip.MustParseAddrPort(node.srv.Listener.Addr().String()),
	}); err != nil {
		t.Fatal(err)
	}
	f := &albFixture{t: t, sb: sb, lbc: elbClient(sb)}
	lb, err := f.lbc.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("shop"), Subnets: []string{"subnet-1", "subnet-2"}})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := f.lbc.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String("nodes"), Protocol: types.ProtocolEnumHttp,
		Port: aws.Int32(30080), VpcId: aws.String("vpc-1"), TargetType: types.TargetTypeEnumInstance,
		HealthCheckPath: aws.String("/healthz"), HealthCheckIntervalSeconds: aws.Int32(5), HealthCheckTimeoutSeconds: aws.Int32(2),
		HealthyThresholdCount: aws.Int32(2)})
	if err != nil {
		t.Fatal(err)
	}
	arn := *tg.TargetGroups[0].TargetGroupArn
	if _, err := f.lbc.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: aws.String(arn),
		Targets: []types.TargetDescription{{Id: aws.String("i-0node")}}}); err != nil {
		t.Fatal(err)
	}
	l, err := f.lbc.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: lb.LoadBalancers[0].LoadBalancerArn, Protocol: types.ProtocolEnumHttp,
		Port: aws.Int32(80), DefaultActions: []types.Action{{Type: types.ActionTypeEnumForward, TargetGroupArn: aws.String(arn)}}})
	if err != nil {
		t.Fatal(err)
	}
	f.waitHealth(arn, map[string]string{"30080": "healthy"})
	resp, err := http.Get("http://" + listenerAddr(t, sb, *l.Listeners[0].ListenerArn) + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "node-1" {
		t.Fatalf("GET through the listener: %d %q, want 200 from node-1", resp.StatusCode, body)
	}
	if checks := node.checked(); len(checks) == 0 {
		t.Fatal("the instance's backend was never health-checked")
	}
}
