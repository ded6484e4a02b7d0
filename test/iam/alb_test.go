package iam_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// phaseALBCutover is the runner of an ALB cutover: its own principal, with its own policy.
const phaseALBCutover = "crossfade cutover (alb)"

// TestALBPolicyMatchesObservedCalls runs an ALB cutover as the real binary against the
// sandbox's ELBv2 and CloudWatch APIs, with every call path the lever has: the rules
// selected by load balancer (spec.alb.select: DescribeListeners by load balancer,
// DescribeRules by listener), the target groups named (DescribeTargetGroups), a listener
// default action and a listener rule moved (ModifyListener, ModifyRule), the authority
// tags taken on them at the first write, read at every check and removed at the end
// (AddTags, DescribeTags, RemoveTags), the targetHealth gate (DescribeTargetHealth), the
// albTraffic gate and the CloudWatch retire check (GetMetricData), then `cutover status`. The operations it called are exactly the
// actions of deploy/iam-policy-cutover-alb.json, and no Route 53 operation is among
// them. The ALB is set up through the sandbox's API before the phase starts, so every
// call counted in the phase is crossfade's.
func TestALBPolicyMatchesObservedCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the crossfade binary and a sandbox")
	}
	began := time.Now()
	sb := sandboxtest.Start(t)
	alb := newALB(t, sb.APIURL())
	addr := sb.ListenerAddrs()[alb.listener]
	if addr == "" {
		t.Fatalf("the sandbox serves no address for listener %s: %v", alb.listener, sb.ListenerAddrs())
	}
	// The traffic gate and the retire check read per-group request counts: send requests
	// through the listener (the rule's host and the default action) the whole run.
	stop := startRequests(t, addr)

	planFile := filepath.Join(t.TempDir(), "iam-alb.yaml")
	plan := fmt.Sprintf(`apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: iam-alb
spec:
  alb:
    select: {loadBalancers: [%s]}
    from: blue
    to: green
    cloudWatch: {delay: 0s}   # the sandbox counts at once
  steps: [1, 50, 100]
  pause: 1s
  gates:
    - name: healthy
      targetHealth: {minHealthy: 1}
    - name: traffic
      albTraffic: {period: 1, tolerance: 0.2, minRequests: 20, maxErrorRate: 0.01, maxResponseTime: 500ms}
  retire:
    cloudWatch: {period: 1}
    maxRate: 0
    window: 2s
    timeout: 30s
`, alb.lb)
	if err := os.WriteFile(planFile, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	obs := &observer{sb: sb, seen: map[string]map[string]int{}, changes: map[string]map[string]int{}}
	e := &env{t: t, sb: sb}
	state := t.TempDir()
	var runOut string
	obs.during(t, phaseALBCutover, func() {
		e.mustRun("cutover", "plan", planFile, "--state-dir", state)
		runOut = e.mustRun("cutover", "run", planFile, "--state-dir", state)
		e.mustRun("cutover", "status", planFile, "--state-dir", state)
	})
	stop()
	for _, want := range []string{"cutover iam-alb: completed", "retire: blue retirable"} {
		if !strings.Contains(runOut, want) {
			t.Errorf("cutover run's output lacks %q:\n%s", want, runOut)
		}
	}
	if rule, listener := alb.weights(t); rule != "blue=0 green=100" || listener != "blue=0 green=100" {
		t.Errorf("final weights: rule %s, listener %s; want blue=0 green=100 on both", rule, listener)
	}

	t.Logf("%s called: %v (test took %s)", phaseALBCutover, obs.seen[phaseALBCutover], time.Since(began).Round(time.Millisecond))
	called := obs.ops(phaseALBCutover)
	for _, op := range called {
		if _, ok := resourceTypes["route53:"+op]; ok || op == "Unknown" {
			t.Errorf("the ALB cutover called %s: it must call no Route 53 operation (and none the sandbox does not serve)", op)
		}
	}
	if changes := obs.changeActions(phaseALBCutover); len(changes) > 0 {
		t.Errorf("the ALB cutover changed record sets: %v", changes)
	}
	granted := loadPolicy(t, albPolicyFile).actions()
	for _, op := range called {
		if !slices.Contains(granted, op) {
			t.Errorf("the ALB cutover calls %s, which %s does not grant: add it (and its resource type to this test's table)", op, albPolicyFile)
		}
	}
	for _, op := range granted {
		if !slices.Contains(called, op) {
			t.Errorf("%s grants %s, which the ALB cutover never called: remove it (or exercise the path that calls it here)", albPolicyFile, op)
		}
	}
}

// TestALBPolicyCoversLeverAPI: every method of the ALB lever's and gates' client
// interfaces (cutover.ELBv2, gate.TargetHealthAPI, gate.MetricsAPI: every ELBv2 and
// CloudWatch call crossfade makes goes through them) is granted by the ALB policy, and it
// grants nothing outside them. It catches a new call in a path the run above misses.
func TestALBPolicyCoversLeverAPI(t *testing.T) {
	var methods []string
	for _, api := range []reflect.Type{reflect.TypeFor[cutover.ELBv2](), reflect.TypeFor[gate.TargetHealthAPI](), reflect.TypeFor[gate.MetricsAPI]()} {
		for i := range api.NumMethod() {
			methods = append(methods, api.Method(i).Name)
		}
	}
	slices.Sort(methods)
	methods = slices.Compact(methods)
	if granted := loadPolicy(t, albPolicyFile).actions(); !slices.Equal(granted, methods) {
		t.Errorf("%s grants %v; the ALB lever's and gates' client interfaces have %v", albPolicyFile, granted, methods)
	}
}

// albFixture is an ALB on the sandbox: an HTTP listener whose default action forwards
// blue=99 green=1, a host-header rule forwarding the same, and target groups blue and
// green of one healthy loopback backend each.
type albFixture struct {
	api                *elbv2.Client
	lb, listener, rule string
	groups             map[string]string // name -> ARN
}

// albHost is the Host header the listener rule matches.
const albHost = "shop.example.com"

func newALB(t *testing.T, endpoint string) *albFixture {
	t.Helper()
	ctx := context.Background()
	a := &albFixture{groups: map[string]string{}, api: elbv2.New(elbv2.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})}
	lb, err := a.api.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("shop"), Subnets: []string{"subnet-1", "subnet-2"}})
	if err != nil {
		t.Fatalf("CreateLoadBalancer: %v", err)
	}
	a.lb = aws.ToString(lb.LoadBalancers[0].LoadBalancerArn)
	for _, name := range []string{"blue", "green"} {
		out, err := a.api.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String(name), Protocol: types.ProtocolEnumHttp,
			Port: aws.Int32(8080), VpcId: aws.String("vpc-1"), TargetType: types.TargetTypeEnumIp,
			HealthCheckPath: aws.String("/healthz"), HealthCheckIntervalSeconds: aws.Int32(5), HealthCheckTimeoutSeconds: aws.Int32(2),
			HealthyThresholdCount: aws.Int32(2)})
		if err != nil {
			t.Fatalf("CreateTargetGroup %s: %v", name, err)
		}
		arn := aws.ToString(out.TargetGroups[0].TargetGroupArn)
		a.groups[name] = arn
		if _, err := a.api.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: aws.String(arn),
			Targets: []types.TargetDescription{backend(t, name)}}); err != nil {
			t.Fatalf("RegisterTargets %s: %v", name, err)
		}
	}
	fwd := []types.Action{{Type: types.ActionTypeEnumForward, ForwardConfig: &types.ForwardActionConfig{
		TargetGroups: []types.TargetGroupTuple{
			{TargetGroupArn: aws.String(a.groups["blue"]), Weight: aws.Int32(99)},
			{TargetGroupArn: aws.String(a.groups["green"]), Weight: aws.Int32(1)}},
		TargetGroupStickinessConfig: &types.TargetGroupStickinessConfig{Enabled: aws.Bool(false)}}}}
	l, err := a.api.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: aws.String(a.lb),
		Protocol: types.ProtocolEnumHttp, Port: aws.Int32(80), DefaultActions: fwd})
	if err != nil {
		t.Fatalf("CreateListener: %v", err)
	}
	a.listener = aws.ToString(l.Listeners[0].ListenerArn)
	r, err := a.api.CreateRule(ctx, &elbv2.CreateRuleInput{ListenerArn: aws.String(a.listener), Priority: aws.Int32(10), Actions: fwd,
		Conditions: []types.RuleCondition{{Field: aws.String("host-header"), HostHeaderConfig: &types.HostHeaderConditionConfig{Values: []string{albHost}}}}})
	if err != nil {
		t.Fatalf("CreateRule: %v", err)
	}
	a.rule = aws.ToString(r.Rules[0].RuleArn)
	for name, arn := range a.groups {
		a.waitHealthy(t, name, arn)
	}
	return a
}

// backend starts one target of group name on 127.0.0.1, answering 200 to everything.
func backend(t *testing.T, name string) types.TargetDescription {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, name) }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	return types.TargetDescription{Id: aws.String("127.0.0.1"), Port: aws.Int32(int32(p))}
}

// waitHealthy waits until every target of the group is healthy: the health gate would
// otherwise fail the first step for a reason other than the policy.
func (a *albFixture) waitHealthy(t *testing.T, name, arn string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := a.api.DescribeTargetHealth(context.Background(), &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
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
			t.Fatalf("target group %s: %d of %d targets healthy after 30 s", name, healthy, len(out.TargetHealthDescriptions))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// weights reads the forward weights of the rule and of the listener's default action,
// rendered by group name as "blue=0 green=100".
func (a *albFixture) weights(t *testing.T) (rule, listener string) {
	t.Helper()
	ctx := context.Background()
	rs, err := a.api.DescribeRules(ctx, &elbv2.DescribeRulesInput{RuleArns: []string{a.rule}})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := a.api.DescribeListeners(ctx, &elbv2.DescribeListenersInput{ListenerArns: []string{a.listener}})
	if err != nil {
		t.Fatal(err)
	}
	render := func(acts []types.Action) string {
		w := map[string]int64{}
		for _, act := range acts {
			if act.ForwardConfig == nil {
				continue
			}
			for _, g := range act.ForwardConfig.TargetGroups {
				for name, arn := range a.groups {
					if arn == aws.ToString(g.TargetGroupArn) {
						w[name] = int64(aws.ToInt32(g.Weight))
					}
				}
			}
		}
		return cutover.FormatWeights(w)
	}
	return render(rs.Rules[0].Actions), render(ls.Listeners[0].DefaultActions)
}

// startRequests sends requests through the listener from two goroutines, one with the
// rule's Host and one without, until the returned stop is called (or the test ends).
// Their answers do not matter here: the gates judge them.
func startRequests(t *testing.T, addr string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, host := range []string{albHost, ""} {
		wg.Go(func() {
			client := &http.Client{Timeout: 5 * time.Second}
			defer client.CloseIdleConnections()
			for {
				select {
				case <-done:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
				if host != "" {
					req.Host = host
				}
				if resp, err := client.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	var once sync.Once
	stop = func() { once.Do(func() { close(done); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}
