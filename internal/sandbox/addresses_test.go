package sandbox

// An internal test: the sandbox's Config has a hook, unexported, that sees every socket
// the ALB proxy opens, which is how these tests prove that an unmapped target is never
// dialled.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/sandbox/albproxy"
	"github.com/crossfade-io/crossfade/internal/sandbox/elb"
	"github.com/crossfade-io/crossfade/internal/sandbox/targetaddr"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// dialLog records the sockets the ALB proxy opens to targets, by the address each
// connects to, and stops any that is not to loopback before it connects: a broken proxy
// fails the test without a packet leaving this machine.
type dialLog struct {
	mu    sync.Mutex
	addrs []string
}

func (d *dialLog) control(_, address string, _ syscall.RawConn) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addrs = append(d.addrs, address)
	if ap, err := netip.ParseAddrPort(address); err != nil || !ap.Addr().Unmap().IsLoopback() {
		return fmt.Errorf("test: refused a socket to %s: not loopback", address)
	}
	return nil
}

// outside returns the sockets' addresses that are not among allowed, and how many
// sockets there were.
func (d *dialLog) outside(allowed ...string) (out []string, n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, a := range d.addrs {
		if !slices.Contains(allowed, a) {
			out = append(out, a)
		}
	}
	return out, len(d.addrs)
}

// namedBackend is a loopback HTTP server answering its name, 200 on /healthz.
func namedBackend(t *testing.T, name string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			_, _ = io.WriteString(w, name)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// startMapped starts a sandbox with the addresses and the dial log.
func startMapped(t *testing.T, addrs map[netip.AddrPort]netip.AddrPort) (*Sandbox, *dialLog) {
	t.Helper()
	dl := &dialLog{}
	sb, err := Start(context.Background(), Config{APIAddr: "127.0.0.1:0", DNSAddr: "127.0.0.1:0",
		TargetAddresses: addrs, targetDialControl: dl.control})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Errorf("close sandbox: %v", err)
		}
	})
	return sb, dl
}

// albOf creates, through the AWS SDK, a load balancer with an HTTP listener forwarding to
// one ip target group with the targets registered, and returns the group's ARN and where
// the listener is served.
func albOf(t *testing.T, sb *Sandbox, targets ...string) (client *elbv2.Client, tg, listener string) {
	t.Helper()
	ctx := context.Background()
	client = elbv2.New(elbv2.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(sb.APIURL()),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer:      retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = 5 * time.Millisecond }),
	})
	lb, err := client.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("shop"), Subnets: []string{"subnet-1", "subnet-2"}})
	if err != nil {
		t.Fatal(err)
	}
	// 5 s is ELBv2's shortest interval; a new or newly mapped target is checked at once.
	g, err := client.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String("pods"), Protocol: types.ProtocolEnumHttp,
		Port: aws.Int32(8080), VpcId: aws.String("vpc-1"), TargetType: types.TargetTypeEnumIp,
		HealthCheckPath: aws.String("/healthz"), HealthCheckIntervalSeconds: aws.Int32(5), HealthCheckTimeoutSeconds: aws.Int32(2)})
	if err != nil {
		t.Fatal(err)
	}
	tg = *g.TargetGroups[0].TargetGroupArn
	l, err := client.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: lb.LoadBalancers[0].LoadBalancerArn,
		Protocol: types.ProtocolEnumHttp, Port: aws.Int32(80),
		DefaultActions: []types.Action{{Type: types.ActionTypeEnumForward, TargetGroupArn: aws.String(tg)}}})
	if err != nil {
		t.Fatal(err)
	}
	var ts []types.TargetDescription
	for _, a := range targets {
		ap := netip.MustParseAddrPort(a)
		ts = append(ts, types.TargetDescription{Id: aws.String(ap.Addr().String()), Port: aws.Int32(int32(ap.Port()))})
	}
	if _, err := client.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: aws.String(tg), Targets: ts}); err != nil {
		t.Fatal(err)
	}
	return client, tg, sb.ListenerAddrs()[*l.Listeners[0].ListenerArn]
}

// targetHealth is DescribeTargetHealth as "IP:port → health".
func targetHealth(t *testing.T, c *elbv2.Client, tg string) map[string]types.TargetHealth {
	t.Helper()
	out, err := c.DescribeTargetHealth(context.Background(), &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(tg)})
	if err != nil {
		t.Fatal(err)
	}
	h := map[string]types.TargetHealth{}
	for _, d := range out.TargetHealthDescriptions {
		h[net.JoinHostPort(*d.Target.Id, fmt.Sprint(*d.Target.Port))] = *d.TargetHealth
	}
	return h
}

// waitState waits until DescribeTargetHealth reports every listed target in state.
func waitState(t *testing.T, c *elbv2.Client, tg string, state types.TargetHealthStateEnum, targets ...string) map[string]types.TargetHealth {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h := targetHealth(t, c, tg)
		if !slices.ContainsFunc(targets, func(a string) bool { return h[a].State != state }) {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("targets %v not %s within 10s: %+v", targets, state, h)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wantUnrouted fails unless h says the target has no route in the sandbox.
func wantUnrouted(t *testing.T, addr string, h types.TargetHealth) {
	t.Helper()
	if h.State != types.TargetHealthStateEnumUnhealthy || h.Reason != types.TargetHealthReasonEnumFailedHealthChecks ||
		h.Description == nil || !strings.Contains(*h.Description, "no route in the sandbox to "+addr) {
		t.Errorf("%s: %s %s %v, want unhealthy, Target.FailedHealthChecks, \"no route in the sandbox to %s\"",
			addr, h.State, h.Reason, aws.ToString(h.Description), addr)
	}
}

// getNames sends n requests through the listener and counts the answers by body.
func getNames(t *testing.T, listener string, n int) map[string]int {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	got := map[string]int{}
	for range n {
		resp, err := c.Get("http://" + listener + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET through the listener: %d %q", resp.StatusCode, body)
		}
		got[string(body)]++
	}
	return got
}

// admin sends one request to the sandbox's admin endpoints.
func admin(t *testing.T, sb *Sandbox, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, sb.APIURL()+AdminPrefix+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTargetAddresses drives the sandbox through the AWS SDK and PUT /_sandbox/addresses
// with real HTTP through the listener: targets registered with TEST-NET-1 addresses, as
// pods carry them, are served by the loopback backends mapped to them; an unmapped one is
// unhealthy ("no route in the sandbox"), gets no request, and no socket is opened for it;
// a mapping added at runtime makes it healthy, a mapping removed makes its target
// unhealthy at once; a bad mapping is refused whole, naming the entry.
func TestTargetAddresses(t *testing.T) {
	a, b := namedBackend(t, "a"), namedBackend(t, "b")
	const mapped, unmapped = "192.0.2.11:8080", "192.0.2.12:8080"
	sb, dials := startMapped(t, map[netip.AddrPort]netip.AddrPort{netip.MustParseAddrPort(mapped): netip.MustParseAddrPort(a)})
	client, tg, listener := albOf(t, sb, mapped, unmapped)

	h := waitState(t, client, tg, types.TargetHealthStateEnumHealthy, mapped)
	wantUnrouted(t, unmapped, h[unmapped])
	if got := getNames(t, listener, 20); got["a"] != 20 {
		t.Errorf("answers %v, want all 20 from a: the only target with a route", got)
	}
	if out, n := dials.outside(a); len(out) > 0 || n == 0 {
		t.Fatalf("sockets to %v besides a's %s (%d in all): the proxy dialled a target with no route", out, a, n)
	}
	if code, body := admin(t, sb, http.MethodGet, "addresses", ""); code != http.StatusOK || body != fmt.Sprintf("{%q:%q}\n", mapped, a) {
		t.Errorf("GET addresses: %d %s", code, body)
	}

	// A mapping added at runtime: the target is checked at once and turns healthy.
	both := fmt.Sprintf(`{%q: %q, %q: %q}`, mapped, a, unmapped, b)
	if code, body := admin(t, sb, http.MethodPut, "addresses", both); code != http.StatusOK || !strings.Contains(body, unmapped) {
		t.Fatalf("PUT addresses: %d %s", code, body)
	}
	waitState(t, client, tg, types.TargetHealthStateEnumHealthy, mapped, unmapped)
	if got := getNames(t, listener, 20); got["a"] != 10 || got["b"] != 10 {
		t.Errorf("answers %v, want 10 each from a and b (round-robin)", got)
	}

	// Bad mappings are refused whole: 400 naming the entry, the mapping unchanged.
	for _, tc := range []struct{ body, want string }{
		{fmt.Sprintf(`{%q: %q, "192.0.2.13:8080": "10.0.0.1:80"}`, mapped, a), `"192.0.2.13:8080": value "10.0.0.1:80" is not a loopback address`},
		{`{"192.0.2.13": "127.0.0.1:80"}`, `key "192.0.2.13"`},
		{`{"192.0.2.13:80": "127.0.0.1:0"}`, `"192.0.2.13:80": value "127.0.0.1:0"`},
		{`["192.0.2.13:80"]`, "want a JSON object"},
	} {
		code, body := admin(t, sb, http.MethodPut, "addresses", tc.body)
		var e struct{ Error string }
		if code != http.StatusBadRequest || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, tc.want) {
			t.Errorf("PUT %s: %d %s, want 400 with an error containing %q", tc.body, code, body, tc.want)
		}
	}
	if got := sb.TargetAddresses(); len(got) != 2 || got[netip.MustParseAddrPort(unmapped)] != netip.MustParseAddrPort(b) {
		t.Errorf("after refused PUTs the mapping is %v, want the two entries of before", got)
	}

	// A mapping removed: its target is unhealthy as the call answers, and gets no request.
	if err := sb.SetTargetAddresses(map[netip.AddrPort]netip.AddrPort{netip.MustParseAddrPort(unmapped): netip.MustParseAddrPort(b)}); err != nil {
		t.Fatal(err)
	}
	wantUnrouted(t, mapped, targetHealth(t, client, tg)[mapped])
	if got := getNames(t, listener, 10); got["b"] != 10 {
		t.Errorf("answers %v, want all 10 from b", got)
	}
	if out, _ := dials.outside(a, b); len(out) > 0 {
		t.Errorf("sockets to %v: the proxy dialled something other than the mapped backends", out)
	}
	if err := sb.SetTargetAddresses(map[netip.AddrPort]netip.AddrPort{netip.MustParseAddrPort(mapped): netip.MustParseAddrPort("192.0.2.99:80")}); err == nil ||
		!strings.Contains(err.Error(), "not a loopback address") {
		t.Errorf("SetTargetAddresses to a non-loopback backend: %v, want refused", err)
	}
}

// TestTargetAddressesInConfig: a bad Config.TargetAddresses stops Start, naming the entry.
func TestTargetAddressesInConfig(t *testing.T) {
	_, err := Start(context.Background(), Config{APIAddr: "127.0.0.1:0", DNSAddr: "127.0.0.1:0",
		TargetAddresses: map[netip.AddrPort]netip.AddrPort{netip.MustParseAddrPort("192.0.2.11:80"): netip.MustParseAddrPort("192.0.2.12:80")}})
	if err == nil || !strings.Contains(err.Error(), `"192.0.2.11:80": value "192.0.2.12:80" is not a loopback address`) {
		t.Fatalf("Start: %v, want the entry refused", err)
	}
}

// TestInstanceTargets: an instance target is addressed as its private IP and port and
// goes through the address map like any target; DescribeTargetHealth still names it by
// its instance id. An instance without a private IP, or whose IP:port is not mapped, has
// no route.
func TestInstanceTargets(t *testing.T) {
	a := namedBackend(t, "a")
	m := targetaddr.New()
	if err := m.Set(map[netip.AddrPort]netip.AddrPort{netip.MustParseAddrPort("10.0.1.5:8080"): netip.MustParseAddrPort(a)}); err != nil {
		t.Fatal(err)
	}
	dl := &dialLog{}
	zs, err := zones.Open(zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer zs.Close()
	p := albproxy.New(albproxy.Options{Dialer: &targetaddr.Dialer{Map: m, Dialer: net.Dialer{Control: dl.control}}})
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ips := map[string]netip.Addr{"i-0aaa": netip.MustParseAddr("10.0.1.5"), "i-0bbb": netip.MustParseAddr("10.0.1.6")}
	b := &albBridge{log: slog.New(slog.DiscardHandler), proxy: p, zones: zs, dnsNames: map[string]bool{},
		instanceIP: func(id string) (netip.Addr, bool) { ip, ok := ips[id]; return ip, ok }}
	const tgARN, lbARN = "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/pods/1", "arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/shop/1"
	snap := elb.Snapshot{
		LoadBalancers: []elb.LoadBalancer{{ARN: lbARN, Name: "shop"}},
		Listeners: []elb.Listener{{ARN: lbARN + "/l", LoadBalancerARN: lbARN, Port: 80, Protocol: "HTTP",
			DefaultActions: []elb.Action{{Type: elb.ActionForward, Forward: &elb.ForwardConfig{TargetGroups: []elb.WeightedTargetGroup{{TargetGroupARN: tgARN, Weight: 1}}}}}}},
		TargetGroups: []elb.TargetGroup{{ARN: tgARN, Protocol: "HTTP", TargetType: "instance",
			HealthCheck: elb.HealthCheck{Enabled: true, Path: "/healthz", IntervalSeconds: 5, TimeoutSeconds: 2, HealthyThreshold: 5, UnhealthyThreshold: 2},
			// i-0aaa is mapped; i-0bbb's IP is not; i-0ccc has no IP at all (not running).
			Targets: []elb.Target{{ID: "i-0aaa", Port: 8080}, {ID: "i-0bbb", Port: 8080}, {ID: "i-0ccc", Port: 8080}}}},
	}
	b.apply(snap)
	// An instance without an IP is not handed to the proxy at all: ELBv2 reports it
	// unused (Target.InvalidState), never checked nor dialled.
	if got := p.TargetHealth(tgARN); len(got) != 2 || got["10.0.1.5:8080"].State == "" || got["10.0.1.6:8080"].State == "" {
		t.Fatalf("the proxy's targets: %v, want 10.0.1.5:8080 and 10.0.1.6:8080 only", got)
	}
	src := proxyHealth{p: p, registered: &b.registered}
	deadline := time.Now().Add(10 * time.Second)
	var h map[string]elb.TargetHealth
	for h = src.TargetHealth(tgARN); h["i-0aaa:8080"].State != elb.StateHealthy; h = src.TargetHealth(tgARN) {
		if time.Now().After(deadline) {
			t.Fatalf("i-0aaa not healthy within 10s: %+v", h)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, id := range []string{"i-0bbb:8080"} {
		for h[id].State == elb.StateInitial && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			h = src.TargetHealth(tgARN)
		}
		if th := h[id]; th.State != elb.StateUnhealthy || th.Reason != albproxy.ReasonFailedHealthChecks || !strings.Contains(th.Description, "no route in the sandbox") {
			t.Errorf("%s: %+v, want unhealthy with no route in the sandbox", id, th)
		}
	}
	if got := getNames(t, p.Addr(lbARN+"/l"), 5); got["a"] != 5 {
		t.Errorf("answers %v, want all 5 from a, i-0aaa's backend", got)
	}
	if out, n := dl.outside(a); len(out) > 0 || n == 0 {
		t.Errorf("sockets to %v besides a's (%d in all): an instance without a route was dialled", out, n)
	}
}

// TestNLBInstanceWithoutIP: an NLB instance target whose instance has no IP (stopped, or
// unknown to EC2) is not handed to the TCP proxy at all, so no address mapping can route
// it (it was "0.0.0.0:port", which a "0.0.0.0" mapping would have served); a running one
// is served at its private IP, unmapped from v4-in-v6.
func TestNLBInstanceWithoutIP(t *testing.T) {
	const tgARN = "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/nodes/1"
	ips := map[string]netip.Addr{"i-0run": netip.MustParseAddr("::ffff:192.0.2.10")}
	b := &nlbBridge{instanceIP: func(id string) (netip.Addr, bool) { ip, ok := ips[id]; return ip, ok }}
	cfg, registered := b.proxyConfig(elb.Snapshot{TargetGroups: []elb.TargetGroup{{ARN: tgARN, Protocol: elb.ProtocolTCP, TargetType: "instance",
		Targets: []elb.Target{{ID: "i-0run", Port: 8080}, {ID: "i-0stopped", Port: 8080}, {ID: "192.0.2.99", Port: 8080}}}}})
	if len(cfg.TargetGroups) != 1 || fmt.Sprint(cfg.TargetGroups[0].Targets) != "[192.0.2.10:8080 192.0.2.99:8080]" {
		t.Fatalf("the proxy's groups: %+v, want the running instance and the IP target only", cfg.TargetGroups)
	}
	if got := registered[tgARN]; len(got) != 1 || got["192.0.2.10:8080"] != "i-0run:8080" {
		t.Errorf("registered %v, want 192.0.2.10:8080 → i-0run:8080", got)
	}
}
