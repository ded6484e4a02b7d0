package cutovertest

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/cutover"
)

// ALBHost is the Host header the listener rule matches.
const ALBHost = "shop.example.com"

// healthyWithin bounds the wait for the targets' health checks to pass (two 5 s intervals
// pass in well under it); a failure bound, not a measurement.
const healthyWithin = 30 * time.Second

// ALB is an ALB named shop whose HTTP listener (port 80) forwards blue=99 green=1 by
// default, with a rule (priority 10) for ALBHost forwarding the same.
type ALB struct {
	// API is the ELBv2 client the ALB was made with.
	API *elbv2.Client
	// LB, Listener and Rule are the load balancer's, the listener's and the rule's ARNs.
	LB, Listener, Rule string
	// Groups maps each target group's name to its ARN.
	Groups map[string]string
}

// NewALB makes the ALB on the ELBv2 API at endpoint: target groups blue and green (HTTP,
// health check /healthz every 5 s, healthy after 2), each with the targets backends
// returns for it, and returns once every target is healthy.
func NewALB(t testing.TB, endpoint string, backends func(group string) []types.TargetDescription) *ALB {
	t.Helper()
	ctx := context.Background()
	a := &ALB{Groups: map[string]string{}, API: elbv2.New(elbv2.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})}
	lb, err := a.API.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("shop"), Subnets: []string{"subnet-1", "subnet-2"}})
	if err != nil {
		t.Fatalf("CreateLoadBalancer: %v", err)
	}
	a.LB = aws.ToString(lb.LoadBalancers[0].LoadBalancerArn)
	for _, name := range []string{"blue", "green"} {
		out, err := a.API.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String(name), Protocol: types.ProtocolEnumHttp,
			Port: aws.Int32(8080), VpcId: aws.String("vpc-1"), TargetType: types.TargetTypeEnumIp,
			HealthCheckPath: aws.String("/healthz"), HealthCheckIntervalSeconds: aws.Int32(5), HealthCheckTimeoutSeconds: aws.Int32(2),
			HealthyThresholdCount: aws.Int32(2)})
		if err != nil {
			t.Fatalf("CreateTargetGroup %s: %v", name, err)
		}
		arn := aws.ToString(out.TargetGroups[0].TargetGroupArn)
		a.Groups[name] = arn
		if _, err := a.API.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: aws.String(arn),
			Targets: backends(name)}); err != nil {
			t.Fatalf("RegisterTargets %s: %v", name, err)
		}
	}
	fwd := Forward(a.Groups["blue"], 99, a.Groups["green"], 1)
	l, err := a.API.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: aws.String(a.LB),
		Protocol: types.ProtocolEnumHttp, Port: aws.Int32(80), DefaultActions: fwd})
	if err != nil {
		t.Fatalf("CreateListener: %v", err)
	}
	a.Listener = aws.ToString(l.Listeners[0].ListenerArn)
	r, err := a.API.CreateRule(ctx, &elbv2.CreateRuleInput{ListenerArn: aws.String(a.Listener), Priority: aws.Int32(10), Actions: fwd,
		Conditions: []types.RuleCondition{{Field: aws.String("host-header"), HostHeaderConfig: &types.HostHeaderConditionConfig{Values: []string{ALBHost}}}}})
	if err != nil {
		t.Fatalf("CreateRule: %v", err)
	}
	a.Rule = aws.ToString(r.Rules[0].RuleArn)
	for name, arn := range a.Groups {
		a.WaitHealthy(t, name, arn)
	}
	return a
}

// Forward is a forward action over (target group ARN, weight) pairs, stickiness off.
func Forward(pairs ...any) []types.Action {
	fc := &types.ForwardActionConfig{TargetGroupStickinessConfig: &types.TargetGroupStickinessConfig{Enabled: aws.Bool(false)}}
	for i := 0; i+1 < len(pairs); i += 2 {
		fc.TargetGroups = append(fc.TargetGroups, types.TargetGroupTuple{TargetGroupArn: aws.String(pairs[i].(string)), Weight: aws.Int32(int32(pairs[i+1].(int)))})
	}
	return []types.Action{{Type: types.ActionTypeEnumForward, ForwardConfig: fc}}
}

// WaitHealthy waits until every target of the group is healthy: a health gate would
// otherwise fail a cutover's first step for a reason other than the one under test.
func (a *ALB) WaitHealthy(t testing.TB, name, arn string) {
	t.Helper()
	deadline := time.Now().Add(healthyWithin)
	for {
		out, err := a.API.DescribeTargetHealth(context.Background(), &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(arn)})
		if err != nil {
			t.Fatalf("DescribeTargetHealth %s: %v", name, err)
		}
		healthy := 0
		for _, d := range out.TargetHealthDescriptions {
			if d.TargetHealth.State == types.TargetHealthStateEnumHealthy {
				healthy++
			}
		}
		if healthy > 0 && healthy == len(out.TargetHealthDescriptions) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("target group %s: %d of %d targets healthy after %s", name, healthy, len(out.TargetHealthDescriptions), healthyWithin)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Weights reads the forward weights of the rule and of the listener's default action,
// rendered by group name as "blue=0 green=100".
func (a *ALB) Weights(t testing.TB) (rule, listener string) {
	t.Helper()
	ctx := context.Background()
	rs, err := a.API.DescribeRules(ctx, &elbv2.DescribeRulesInput{RuleArns: []string{a.Rule}})
	if err != nil {
		t.Fatalf("DescribeRules %s: %v", a.Rule, err)
	}
	ls, err := a.API.DescribeListeners(ctx, &elbv2.DescribeListenersInput{ListenerArns: []string{a.Listener}})
	if err != nil {
		t.Fatalf("DescribeListeners %s: %v", a.Listener, err)
	}
	return a.Render(rs.Rules[0].Actions), a.Render(ls.Listeners[0].DefaultActions)
}

// Render is the forward weights of acts by target group name, as "blue=0 green=100";
// a group the ALB does not know by name is left out.
func (a *ALB) Render(acts []types.Action) string {
	w := map[string]int64{}
	for _, act := range acts {
		if act.ForwardConfig == nil {
			continue
		}
		for _, g := range act.ForwardConfig.TargetGroups {
			for name, arn := range a.Groups {
				if arn == aws.ToString(g.TargetGroupArn) {
					w[name] = int64(aws.ToInt32(g.Weight))
				}
			}
		}
	}
	return cutover.FormatWeights(w)
}
