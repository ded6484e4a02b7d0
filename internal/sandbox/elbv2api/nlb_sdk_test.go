package elbv2api

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/smithy-go"
)

// TestNetworkLoadBalancerSDK drives an NLB with weighted target groups through the real
// SDK: create, describe (the shapes the SDK parses), ModifyListener's weights, and NLB's
// refusals as typed API errors.
func TestNetworkLoadBalancerSDK(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := f.client
	lbOut, err := c.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("db"), Type: types.LoadBalancerTypeEnumNetwork, Subnets: []string{"subnet-a"}})
	if err != nil {
		t.Fatal(err)
	}
	lb := lbOut.LoadBalancers[0]
	if lb.Type != types.LoadBalancerTypeEnumNetwork || !strings.Contains(aws.ToString(lb.LoadBalancerArn), ":loadbalancer/net/db/") ||
		!strings.HasSuffix(aws.ToString(lb.DNSName), ".elb.us-east-1.amazonaws.com") || aws.ToString(lb.CanonicalHostedZoneId) != "Z26RNL4JYFTOTI" {
		t.Fatalf("NLB %s type %s DNS %s zone %s", aws.ToString(lb.LoadBalancerArn), lb.Type, aws.ToString(lb.DNSName), aws.ToString(lb.CanonicalHostedZoneId))
	}
	var groups []string
	for _, name := range []string{"blue", "green"} {
		out, err := c.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String(name), Protocol: types.ProtocolEnumTcp, Port: aws.Int32(5432),
			VpcId: aws.String("vpc-1"), TargetType: types.TargetTypeEnumIp, HealthCheckProtocol: types.ProtocolEnumTcp, HealthCheckIntervalSeconds: aws.Int32(15)})
		if err != nil {
			t.Fatal(err)
		}
		tg := out.TargetGroups[0]
		if tg.HealthCheckProtocol != types.ProtocolEnumTcp || tg.HealthCheckPath != nil || tg.Matcher != nil || tg.ProtocolVersion != nil || aws.ToInt32(tg.HealthCheckIntervalSeconds) != 15 {
			t.Fatalf("TCP group %s: health check %s path %v matcher %v protocol version %v interval %d", name, tg.HealthCheckProtocol, tg.HealthCheckPath, tg.Matcher, tg.ProtocolVersion, aws.ToInt32(tg.HealthCheckIntervalSeconds))
		}
		groups = append(groups, aws.ToString(tg.TargetGroupArn))
	}
	lOut, err := c.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: lb.LoadBalancerArn, Protocol: types.ProtocolEnumTcp, Port: aws.Int32(5432),
		DefaultActions: forward(groups[0], 100, groups[1], 0)})
	if err != nil {
		t.Fatal(err)
	}
	listener := lOut.Listeners[0].ListenerArn
	if !strings.Contains(aws.ToString(listener), ":listener/net/db/") {
		t.Fatalf("listener ARN %s", aws.ToString(listener))
	}
	if _, err := c.ModifyListener(ctx, &elbv2.ModifyListenerInput{ListenerArn: listener, DefaultActions: forward(groups[0], 25, groups[1], 75)}); err != nil {
		t.Fatal(err)
	}
	ls, err := c.DescribeListeners(ctx, &elbv2.DescribeListenersInput{ListenerArns: []string{aws.ToString(listener)}})
	if err != nil {
		t.Fatal(err)
	}
	if w := weightsOf(ls.Listeners[0].DefaultActions[0]); w[groups[0]] != 25 || w[groups[1]] != 75 || ls.Listeners[0].Protocol != types.ProtocolEnumTcp {
		t.Fatalf("listener after ModifyListener: %s %v", ls.Listeners[0].Protocol, w)
	}
	for _, tc := range []struct {
		name       string
		call       func() error
		code, want string
	}{
		{"HTTP listener on an NLB", func() error {
			_, err := c.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: lb.LoadBalancerArn, Protocol: types.ProtocolEnumHttp, Port: aws.Int32(80), DefaultActions: forward(groups[0], 1)})
			return err
		}, "ValidationError", "Listener protocol 'HTTP' must be one of 'TCP_QUIC, QUIC, TCP, UDP, TLS, TCP_UDP'"},
		{"rule on an NLB listener", func() error {
			_, err := c.CreateRule(ctx, &elbv2.CreateRuleInput{ListenerArn: listener, Priority: aws.Int32(1), Actions: forward(groups[0], 1),
				Conditions: []types.RuleCondition{{Field: aws.String("path-pattern"), Values: []string{"/x"}}}})
			return err
		}, "ValidationError", "listener rules on a Network Load Balancer listener"},
		{"fixed response on an NLB", func() error {
			_, err := c.ModifyListener(ctx, &elbv2.ModifyListenerInput{ListenerArn: listener, DefaultActions: []types.Action{{Type: types.ActionTypeEnumFixedResponse,
				FixedResponseConfig: &types.FixedResponseActionConfig{StatusCode: aws.String("200")}}}})
			return err
		}, "InvalidLoadBalancerAction", "not supported for load balancers of type 'network'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ae smithy.APIError
			if err := tc.call(); !errors.As(err, &ae) || ae.ErrorCode() != tc.code || !strings.Contains(ae.ErrorMessage(), tc.want) {
				t.Fatalf("error %v, want %s: …%s…", err, tc.code, tc.want)
			}
		})
	}
}
