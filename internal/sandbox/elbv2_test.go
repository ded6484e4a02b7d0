package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/smithy-go"

	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

func elbClient(sb *sandbox.Sandbox) *elbv2.Client {
	return elbv2.New(elbv2.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(sb.APIURL()),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer:      retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = 5 * time.Millisecond }),
	})
}

// TestELBv2BesideRoute53 checks the wiring: one address serves both APIs, ELBv2 calls are
// counted in the same crossfade_sandbox_api_calls_total series as Route 53's, the admin
// faults reach ELBv2, and the ELBv2 state shares the zones' state file across a restart.
func TestELBv2BesideRoute53(t *testing.T) {
	ctx := context.Background()
	state := filepath.Join(t.TempDir(), "state.db")
	sb, stop := sandboxtest.StartStateful(t, state)
	lbc := elbClient(sb)
	r53 := sandboxtest.Route53Client(sb)

	lb, err := lbc.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("alb"), Subnets: []string{"subnet-1", "subnet-2"}})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := lbc.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String("blue"), Protocol: types.ProtocolEnumHttp,
		Port: aws.Int32(8080), VpcId: aws.String("vpc-1"), TargetType: types.TargetTypeEnumIp})
	if err != nil {
		t.Fatal(err)
	}
	tgARN := tg.TargetGroups[0].TargetGroupArn
	l, err := lbc.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: lb.LoadBalancers[0].LoadBalancerArn, Port: aws.Int32(80),
		DefaultActions: []types.Action{{Type: types.ActionTypeEnumForward, TargetGroupArn: tgARN}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lbc.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: tgARN, Targets: []types.TargetDescription{{Id: aws.String("127.0.0.1")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r53.CreateHostedZone(ctx, &route53.CreateHostedZoneInput{Name: aws.String("example.com"), CallerReference: aws.String("r1")}); err != nil {
		t.Fatalf("Route 53 beside ELBv2: %v", err)
	}

	sandboxtest.SetFaults(t, sb, `{"throttleRate": 1, "operations": ["DescribeListeners"]}`)
	_, err = lbc.DescribeListeners(ctx, &elbv2.DescribeListenersInput{ListenerArns: []string{*l.Listeners[0].ListenerArn}})
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "Throttling" {
		t.Fatalf("throttled DescribeListeners: %v", err)
	}
	sandboxtest.SetFaults(t, sb, `{}`)

	calls := sandboxtest.APICalls(t, sb)
	for key, want := range map[string]int{
		"CreateLoadBalancer ok": 1, "CreateTargetGroup ok": 1, "CreateListener ok": 1, "RegisterTargets ok": 1,
		"CreateHostedZone ok": 1, "DescribeListeners Throttling": 3,
	} {
		if calls[key] != want {
			t.Errorf("crossfade_sandbox_api_calls_total %s = %d, want %d", key, calls[key], want)
		}
	}

	resp, err := http.Get(sb.APIURL() + sandbox.AdminPrefix + "elb/listeners")
	if err != nil {
		t.Fatal(err)
	}
	var addrs map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&addrs); err != nil || resp.StatusCode != 200 || addrs == nil {
		t.Errorf("GET /_sandbox/elb/listeners: %d %v %v", resp.StatusCode, addrs, err)
	}
	resp.Body.Close()

	// A form POST of a query API the sandbox does not serve goes to the Route 53 handler,
	// which refuses it.
	resp, err = http.Post(sb.APIURL()+"/", "application/x-www-form-urlencoded", strings.NewReader("Action=SendMessage&Version=2012-11-05"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "not supported by the crossfade sandbox") {
		t.Errorf("unserved query API: %d %s", resp.StatusCode, body)
	}

	before := sb.ELB().Snapshot()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	sb = sandboxtest.StartWith(t, sandbox.Config{StatePath: state})
	after := sb.ELB().Snapshot()
	if len(after.LoadBalancers) != 1 || len(after.Listeners) != 1 || len(after.Rules) != 1 || len(after.TargetGroups) != 1 ||
		after.LoadBalancers[0].ARN != before.LoadBalancers[0].ARN || len(after.TargetGroups[0].Targets) != 1 {
		t.Fatalf("ELBv2 state after restart: %+v", after)
	}
	zones, err := sandboxtest.Route53Client(sb).ListHostedZones(ctx, &route53.ListHostedZonesInput{})
	if err != nil || len(zones.HostedZones) != 1 {
		t.Fatalf("zones after restart: %v %d", err, len(zones.HostedZones))
	}
	out, err := elbClient(sb).DescribeRules(ctx, &elbv2.DescribeRulesInput{ListenerArn: l.Listeners[0].ListenerArn})
	if err != nil || len(out.Rules) != 1 || *out.Rules[0].Actions[0].TargetGroupArn != *tgARN {
		t.Fatalf("rules after restart: %v %+v", err, out)
	}
}
