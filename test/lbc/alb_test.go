package lbc

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/lbctest"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/test/internal/cutovertest"
)

// Response headers of the pods' loopback backends: which group and which pod answered. A
// response without them came from the proxy itself.
const (
	groupHeader = "X-Backend"
	podHeader   = "X-Pod"
)

// backends are the loopback HTTP servers standing in for the pods, one per pod address,
// and the sandbox's address map from each pod's IP:appPort to its server.
type backends struct {
	t  *testing.T
	sb *sandbox.Sandbox

	mu    sync.Mutex
	addrs map[netip.AddrPort]netip.AddrPort
	// unhealthy makes a pod's backend fail its health check (/healthz answers 503).
	unhealthy map[string]*atomic.Bool
}

func newBackends(t *testing.T, sb *sandbox.Sandbox) *backends {
	return &backends{t: t, sb: sb, addrs: map[netip.AddrPort]netip.AddrPort{}, unhealthy: map[string]*atomic.Bool{}}
}

// add starts the backend of group's pod at ip and maps ip:appPort to it in the sandbox.
func (b *backends) add(group string, ips ...string) {
	b.t.Helper()
	for _, ip := range ips {
		b.addPort(group, ip, appPort)
	}
}

// addPort starts a backend for group's target at ip:port (a pod's, or a node's at its
// node port) and maps ip:port to it in the sandbox.
func (b *backends) addPort(group, ip string, port int32) {
	b.t.Helper()
	{
		sick := new(atomic.Bool)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(groupHeader, group)
			w.Header().Set(podHeader, ip)
			if r.URL.Path == "/healthz" && sick.Load() {
				http.Error(w, ip+" unhealthy", http.StatusServiceUnavailable)
				return
			}
			_, _ = io.WriteString(w, group)
		}))
		b.t.Cleanup(srv.Close)
		b.mu.Lock()
		b.unhealthy[ip] = sick
		b.addrs[netip.AddrPortFrom(ip4(b.t, ip), uint16(port))] = netip.MustParseAddrPort(srv.Listener.Addr().String())
		entries := maps.Clone(b.addrs)
		b.mu.Unlock()
		if err := b.sb.SetTargetAddresses(entries); err != nil {
			b.t.Fatalf("sandbox: map %s:%d to %s: %v", ip, port, srv.Listener.Addr(), err)
		}
	}
}

// alb is an ALB made outside the clusters, as the field report's Terraform made it: target
// groups blue and green (ip targets, empty), a listener on port 80 and a rule for
// cutovertest.ALBHost, both forwarding blue=100 green=0.
func newALB(t *testing.T, api *elbv2.Client, sb *sandbox.Sandbox) (*cutovertest.ALB, string) {
	t.Helper()
	ctx := t.Context()
	a := &cutovertest.ALB{API: api, Groups: map[string]string{}}
	lb, err := api.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("shop"), Subnets: []string{"subnet-1", "subnet-2"}})
	if err != nil {
		t.Fatalf("CreateLoadBalancer: %v", err)
	}
	a.LB = aws.ToString(lb.LoadBalancers[0].LoadBalancerArn)
	for _, name := range []string{"blue", "green"} {
		a.Groups[name] = targetGroup(t, api, name, elbtypes.TargetTypeEnumIp)
	}
	fwd := cutovertest.Forward(a.Groups["blue"], 100, a.Groups["green"], 0)
	l, err := api.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: aws.String(a.LB),
		Protocol: elbtypes.ProtocolEnumHttp, Port: aws.Int32(80), DefaultActions: fwd})
	if err != nil {
		t.Fatalf("CreateListener: %v", err)
	}
	a.Listener = aws.ToString(l.Listeners[0].ListenerArn)
	r, err := api.CreateRule(ctx, &elbv2.CreateRuleInput{ListenerArn: aws.String(a.Listener), Priority: aws.Int32(10), Actions: fwd,
		Conditions: []elbtypes.RuleCondition{{Field: aws.String("host-header"), HostHeaderConfig: &elbtypes.HostHeaderConditionConfig{Values: []string{cutovertest.ALBHost}}}}})
	if err != nil {
		t.Fatalf("CreateRule: %v", err)
	}
	a.Rule = aws.ToString(r.Rules[0].RuleArn)
	addr := sb.ListenerAddrs()[a.Listener]
	if addr == "" {
		t.Fatalf("the sandbox serves no address for listener %s: %v", a.Listener, sb.ListenerAddrs())
	}
	return a, addr
}

// health lists the target group's targets as "ID:PORT=state", sorted.
func health(t *testing.T, api *elbv2.Client, arn string) []string {
	t.Helper()
	out, err := api.DescribeTargetHealth(t.Context(), &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(arn)})
	if err != nil {
		t.Fatalf("DescribeTargetHealth %s: %v", arn, err)
	}
	var got []string
	for _, d := range out.TargetHealthDescriptions {
		got = append(got, fmt.Sprintf("%s:%d=%s", aws.ToString(d.Target.Id), aws.ToInt32(d.Target.Port), d.TargetHealth.State))
	}
	slices.Sort(got)
	return got
}

// waitHealth waits until the group's targets and their states are exactly want
// ("ID:PORT=state").
func waitHealth(t *testing.T, api *elbv2.Client, name, arn string, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	deadline := time.Now().Add(convergeWithin)
	for {
		got := health(t, api, arn)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("target group %s: %v after %s, want %v", name, got, convergeWithin, want)
		}
		time.Sleep(pollEvery)
	}
}

// get sends one request through the listener at addr (with the rule's Host if rule) and
// returns the group and pod that answered.
func get(t *testing.T, addr string, rule bool) (group, pod string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	if rule {
		req.Host = cutovertest.ALBHost
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET through listener %s: %v", addr, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.Header.Get(groupHeader) == "" {
		t.Fatalf("GET through listener %s: %s from the proxy: %q", addr, resp.Status, body)
	}
	return resp.Header.Get(groupHeader), resp.Header.Get(podHeader)
}

// TestTwoClustersBlueGreen: two real API servers, each with the real controller (its own
// --cluster-name), one ALB made outside both with a listener and a rule forwarding to
// target groups blue and green; each cluster's TargetGroupBinding registers its Service's
// ready endpoints (192.0.2.x, mapped to loopback backends by the sandbox), the targets
// turn healthy through the mapped backends, requests through the listener reach blue's
// pods, and scaling green's endpoints (an EndpointSlice change) is registered by green's
// controller and turns healthy in DescribeTargetHealth.
func TestTwoClustersBlueGreen(t *testing.T) {
	sb := startSandbox(t)
	rec := lbctest.NewRecorder(t, sb.APIURL())
	t.Cleanup(func() { logCalls(t, rec) })
	api := elbClient(sb)
	a, addr := newALB(t, api, sb)
	be := newBackends(t, sb)
	be.add("blue", "192.0.2.11", "192.0.2.12")
	be.add("green", "192.0.2.21", "192.0.2.22", "192.0.2.23")

	blue, green := newCluster(t, "blue", rec.URL), newCluster(t, "green", rec.URL)
	for _, c := range []struct {
		cl  *cluster
		ips []string
	}{{blue, []string{"192.0.2.11", "192.0.2.12"}}, {green, []string{"192.0.2.21", "192.0.2.22"}}} {
		c.cl.service(t, "shop", false)
		c.cl.scale(t, "shop", c.ips...)
		c.cl.binding(t, "shop", "shop", a.Groups[c.cl.name], "ip", false)
	}
	waitHealth(t, api, "blue", a.Groups["blue"], "192.0.2.11:8080=healthy", "192.0.2.12:8080=healthy")
	waitHealth(t, api, "green", a.Groups["green"], "192.0.2.21:8080=healthy", "192.0.2.22:8080=healthy")
	for _, rule := range []bool{true, false} {
		for range 10 {
			if g, pod := get(t, addr, rule); g != "blue" {
				t.Fatalf("at blue=100 green=0 a request (rule %v) was answered by %s's pod %s", rule, g, pod)
			}
		}
	}

	green.scale(t, "shop", "192.0.2.21", "192.0.2.22", "192.0.2.23")
	waitHealth(t, api, "green", a.Groups["green"], "192.0.2.21:8080=healthy", "192.0.2.22:8080=healthy", "192.0.2.23:8080=healthy")
	// Blue's controller never touched green's group, nor green's blue's.
	waitHealth(t, api, "blue", a.Groups["blue"], "192.0.2.11:8080=healthy", "192.0.2.12:8080=healthy")
	for _, call := range rec.Failed() {
		t.Errorf("AWS call failed: %s %s", call, call.Message)
	}
}

// TestMultiClusterTargetGroup: both clusters' TargetGroupBindings on ONE target group with
// multiClusterTargetGroup: true. Each controller registers its own pods and, scaled down,
// deregisters only its own: the other cluster's targets stay, as the controller's
// documentation promises (it tracks its own targets in ConfigMap aws-lbc-targets-<binding>).
func TestMultiClusterTargetGroup(t *testing.T) {
	sb := startSandbox(t)
	rec := lbctest.NewRecorder(t, sb.APIURL())
	t.Cleanup(func() { logCalls(t, rec) })
	api := elbClient(sb)
	arn := targetGroup(t, api, "shop", elbtypes.TargetTypeEnumIp)

	blue, green := newCluster(t, "blue", rec.URL), newCluster(t, "green", rec.URL)
	blue.service(t, "shop", false)
	blue.scale(t, "shop", "192.0.2.11", "192.0.2.12")
	blue.binding(t, "shop", "shop", arn, "ip", true)
	waitTargets(t, api, arn, rec, "192.0.2.11:8080", "192.0.2.12:8080")
	green.service(t, "shop", false)
	green.scale(t, "shop", "192.0.2.21", "192.0.2.22")
	green.binding(t, "shop", "shop", arn, "ip", true)
	waitTargets(t, api, arn, rec, "192.0.2.11:8080", "192.0.2.12:8080", "192.0.2.21:8080", "192.0.2.22:8080")
	for _, c := range []*cluster{blue, green} {
		if _, err := c.cs.CoreV1().ConfigMaps(ns).Get(t.Context(), "aws-lbc-targets-shop", metav1.GetOptions{}); err != nil {
			t.Errorf("cluster %s: the controller's multi-cluster ConfigMap: %v", c.name, err)
		}
	}

	blue.scale(t, "shop", "192.0.2.11")
	waitTargets(t, api, arn, rec, "192.0.2.11:8080", "192.0.2.21:8080", "192.0.2.22:8080")
	green.scale(t, "shop")
	waitTargets(t, api, arn, rec, "192.0.2.11:8080")
	// Green scaled to nothing deregistered only its own; blue's last pod is still there
	// after green's controller has settled (its tracked set is empty).
	green.scale(t, "shop", "192.0.2.22")
	waitTargets(t, api, arn, rec, "192.0.2.11:8080", "192.0.2.22:8080")
	for _, call := range rec.Failed() {
		t.Errorf("AWS call failed: %s %s", call, call.Message)
	}
}
