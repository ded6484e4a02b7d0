package iam_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	leveralb "github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
	"github.com/crossfade-io/crossfade/test/internal/cutovertest"
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
	addr := sb.ListenerAddrs()[alb.Listener]
	if addr == "" {
		t.Fatalf("the sandbox serves no address for listener %s: %v", alb.Listener, sb.ListenerAddrs())
	}
	// The traffic gate and the retire check read per-group request counts: send requests
	// through the listener (the rule's host and the default action) the whole run.
	stop := startRequests(t, addr)

	planFile := writePlan(t, "iam-alb", fmt.Sprintf(`apiVersion: crossfade.io/v1alpha1
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
`, alb.LB))
	obs := newObserver(sb)
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
	if rule, listener := alb.Weights(t); rule != "blue=0 green=100" || listener != "blue=0 green=100" {
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
// interfaces (leveralb.ELBv2, gate.TargetHealthAPI, gate.MetricsAPI: every ELBv2 and
// CloudWatch call crossfade makes goes through them) is granted by the ALB policy, and it
// grants nothing outside them. It catches a new call in a path the run above misses.
func TestALBPolicyCoversLeverAPI(t *testing.T) {
	var methods []string
	for _, api := range []reflect.Type{reflect.TypeFor[leveralb.ELBv2](), reflect.TypeFor[gate.TargetHealthAPI](), reflect.TypeFor[gate.MetricsAPI]()} {
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

// newALB makes the ALB of cutovertest.NewALB on the sandbox's ELBv2 API at endpoint, with one
// healthy loopback backend in each of target groups blue and green.
func newALB(t *testing.T, endpoint string) *cutovertest.ALB {
	t.Helper()
	return cutovertest.NewALB(t, endpoint, func(name string) []types.TargetDescription {
		return []types.TargetDescription{backend(t, name)}
	})
}

// backend starts one target of group name on 127.0.0.1, answering 200 to everything.
func backend(t *testing.T, name string) types.TargetDescription {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, name) }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	return types.TargetDescription{Id: aws.String("127.0.0.1"), Port: aws.Int32(int32(p))}
}

// startRequests sends requests through the listener from two goroutines, one with the
// rule's Host and one without, until the returned stop is called (or the test ends).
// Their answers do not matter here: the gates judge them.
func startRequests(t *testing.T, addr string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, host := range []string{cutovertest.ALBHost, ""} {
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
