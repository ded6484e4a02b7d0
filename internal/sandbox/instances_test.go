package sandbox_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// TestStoppedInstanceTarget: an instance target, on an ALB (HTTP) and on an NLB (TCP), is
// served while its instance runs; once EC2 says it stopped (PUT /_sandbox/ec2, no ELBv2
// write in between) DescribeTargetHealth reports it as ELBv2 does, unused /
// Target.InvalidState / "Target is in the stopped state", and the listener sends it
// nothing; started again at another IP it is checked and served there.
func TestStoppedInstanceTarget(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lbType   types.LoadBalancerTypeEnum
		protocol types.ProtocolEnum
	}{
		{"ALB", types.LoadBalancerTypeEnumApplication, types.ProtocolEnumHttp},
		{"NLB", types.LoadBalancerTypeEnumNetwork, types.ProtocolEnumTcp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			sb := sandboxtest.Start(t)
			node := startBackend(t, "node-1", make(chan struct{}), make(chan string, 1))
			backend := netip.MustParseAddrPort(node.srv.Listener.Addr().String())
			declare := func(ip, state string) {
				t.Helper()
				body := fmt.Sprintf(`{"vpcs": [{"id": "vpc-1", "cidrBlock": "192.0.2.0/24"}], "subnets": [{"id": "subnet-1", "vpcId": "vpc-1", "cidrBlock": "192.0.2.0/24"}],
					"instances": [{"id": "i-0node", "subnetId": "subnet-1", "privateIp": %q, "state": %q}]}`, ip, state)
				if code, out := putEC2(t, sb, body); code != http.StatusOK {
					t.Fatalf("PUT /_sandbox/ec2: %d %s", code, out)
				}
			}
			declare("192.0.2.10", "running")
			if err := sb.SetTargetAddresses(map[netip.AddrPort]netip.AddrPort{
				netip.MustParseAddrPort("192.0.2.10:30080"): backend,
				netip.MustParseAddrPort("192.0.2.20:30080"): backend,
			}); err != nil {
				t.Fatal(err)
			}
			f := &albFixture{t: t, sb: sb, lbc: elbClient(sb)}
			lb, err := f.lbc.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("shop"), Type: tc.lbType, Subnets: []string{"subnet-1", "subnet-2"}})
			if err != nil {
				t.Fatal(err)
			}
			in := &elbv2.CreateTargetGroupInput{Name: aws.String("nodes"), Protocol: tc.protocol, Port: aws.Int32(30080), VpcId: aws.String("vpc-1"),
				TargetType: types.TargetTypeEnumInstance, HealthCheckIntervalSeconds: aws.Int32(5), HealthCheckTimeoutSeconds: aws.Int32(2), HealthyThresholdCount: aws.Int32(2)}
			if tc.protocol == types.ProtocolEnumHttp {
				in.HealthCheckPath = aws.String("/healthz")
			}
			tg, err := f.lbc.CreateTargetGroup(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			arn := *tg.TargetGroups[0].TargetGroupArn
			if _, err := f.lbc.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: aws.String(arn), Targets: []types.TargetDescription{{Id: aws.String("i-0node")}}}); err != nil {
				t.Fatal(err)
			}
			l, err := f.lbc.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: lb.LoadBalancers[0].LoadBalancerArn, Protocol: tc.protocol,
				Port: aws.Int32(80), DefaultActions: []types.Action{{Type: types.ActionTypeEnumForward, TargetGroupArn: aws.String(arn)}}})
			if err != nil {
				t.Fatal(err)
			}
			listener := sb.ListenerAddrs()[*l.Listeners[0].ListenerArn]
			f.waitHealth(arn, map[string]string{"30080": "healthy"})
			if code, body := getOnce(listener); code != http.StatusOK || body != "node-1" {
				t.Fatalf("GET through the listener while running: %d %q, want 200 from node-1", code, body)
			}

			declare("192.0.2.10", "stopped")
			out, err := f.lbc.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(arn)})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.TargetHealthDescriptions) != 1 {
				t.Fatalf("DescribeTargetHealth: %d targets, want i-0node", len(out.TargetHealthDescriptions))
			}
			h := out.TargetHealthDescriptions[0].TargetHealth
			if h.State != types.TargetHealthStateEnumUnused || h.Reason != types.TargetHealthReasonEnumInvalidState || aws.ToString(h.Description) != "Target is in the stopped state" {
				t.Errorf("a stopped instance: %s %s %q, want unused, Target.InvalidState, \"Target is in the stopped state\"", h.State, h.Reason, aws.ToString(h.Description))
			}
			if code, body := getOnce(listener); code == http.StatusOK || body == "node-1" {
				t.Errorf("GET through the listener after the instance stopped: %d %q, want no answer from node-1", code, body)
			}

			// Started again at another address: checked and served there.
			declare("192.0.2.20", "running")
			f.waitHealth(arn, map[string]string{"30080": "healthy"})
			if code, body := getOnce(listener); code != http.StatusOK || body != "node-1" {
				t.Errorf("GET through the listener once running again: %d %q, want 200 from node-1", code, body)
			}
		})
	}
}

// getOnce sends one GET through a listener, with no connection reuse: its status and body,
// or 0 and the error.
func getOnce(listener string) (int, string) {
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + listener + "/")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
