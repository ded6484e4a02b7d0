package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/albproxy"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// backend is one target: an HTTP server on loopback that answers with its name, 200 on
// /healthz, and holds /slow until released.
type backend struct {
	name    string
	srv     *httptest.Server
	arrived chan string   // a /slow request has reached the target
	release chan struct{} // closed to let /slow requests answer

	mu     sync.Mutex
	checks []string // the paths health checks asked for
}

func (b *backend) checked() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.checks)
}

func startBackend(t *testing.T, name string, release chan struct{}, arrived chan string) *backend {
	t.Helper()
	b := &backend{name: name, arrived: arrived, release: release}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.UserAgent() == "ELB-HealthChecker/2.0" {
			b.mu.Lock()
			b.checks = append(b.checks, r.URL.Path)
			b.mu.Unlock()
		}
		switch r.URL.Path {
		case "/healthz":
			w.WriteHeader(http.StatusOK)
			return
		case "/slow":
			b.arrived <- name
			<-b.release
		}
		_, _ = io.WriteString(w, name)
	}))
	t.Cleanup(b.srv.Close)
	return b
}

// target is the backend as an ELBv2 target description.
func (b *backend) target() types.TargetDescription {
	_, port, _ := net.SplitHostPort(b.srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	return types.TargetDescription{Id: aws.String("127.0.0.1"), Port: aws.Int32(int32(p))}
}

func cwClient(sb *sandbox.Sandbox) *cloudwatch.Client {
	return cloudwatch.New(cloudwatch.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(sb.APIURL()),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer:      retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = 5 * time.Millisecond }),
	})
}

// forward is a forward action over (target group ARN, weight) pairs.
func forward(sticky int32, pairs ...any) []types.Action {
	fc := &types.ForwardActionConfig{TargetGroupStickinessConfig: &types.TargetGroupStickinessConfig{Enabled: aws.Bool(sticky > 0)}}
	if sticky > 0 {
		fc.TargetGroupStickinessConfig.DurationSeconds = aws.Int32(sticky)
	}
	for i := 0; i < len(pairs); i += 2 {
		fc.TargetGroups = append(fc.TargetGroups, types.TargetGroupTuple{TargetGroupArn: aws.String(pairs[i].(string)), Weight: aws.Int32(int32(pairs[i+1].(int)))})
	}
	return []types.Action{{Type: types.ActionTypeEnumForward, ForwardConfig: fc}}
}

// albFixture is an ALB with a blue and a green target group on a started sandbox.
type albFixture struct {
	t           *testing.T
	sb          *sandbox.Sandbox
	lbc         *elbv2.Client
	lb, lbDNS   string
	blue, green string // target group ARNs
}

func newALBFixture(t *testing.T, sb *sandbox.Sandbox) *albFixture {
	t.Helper()
	ctx := context.Background()
	f := &albFixture{t: t, sb: sb, lbc: elbClient(sb)}
	lb, err := f.lbc.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("shop"), Subnets: []string{"subnet-1", "subnet-2"}})
	if err != nil {
		t.Fatal(err)
	}
	f.lb, f.lbDNS = *lb.LoadBalancers[0].LoadBalancerArn, *lb.LoadBalancers[0].DNSName
	for _, g := range []struct {
		name string
		into *string
	}{{"blue", &f.blue}, {"green", &f.green}} {
		// 5 s is the shortest interval ELBv2 (and the sandbox) takes; a new target needs
		// one passed check, which the proxy runs at once on registration.
		out, err := f.lbc.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String(g.name), Protocol: types.ProtocolEnumHttp,
			Port: aws.Int32(8080), VpcId: aws.String("vpc-1"), TargetType: types.TargetTypeEnumIp,
			HealthCheckPath: aws.String("/healthz"), HealthCheckIntervalSeconds: aws.Int32(5), HealthCheckTimeoutSeconds: aws.Int32(2),
			HealthyThresholdCount: aws.Int32(2)})
		if err != nil {
			t.Fatal(err)
		}
		*g.into = *out.TargetGroups[0].TargetGroupArn
	}
	return f
}

func (f *albFixture) register(tg string, bs ...*backend) {
	f.t.Helper()
	var ts []types.TargetDescription
	for _, b := range bs {
		ts = append(ts, b.target())
	}
	if _, err := f.lbc.RegisterTargets(context.Background(), &elbv2.RegisterTargetsInput{TargetGroupArn: aws.String(tg), Targets: ts}); err != nil {
		f.t.Fatal(err)
	}
}

// health is DescribeTargetHealth as "port → state".
func (f *albFixture) health(tg string) map[string]string {
	f.t.Helper()
	out, err := f.lbc.DescribeTargetHealth(context.Background(), &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(tg)})
	if err != nil {
		f.t.Fatal(err)
	}
	h := map[string]string{}
	for _, d := range out.TargetHealthDescriptions {
		h[strconv.Itoa(int(*d.Target.Port))] = string(d.TargetHealth.State)
	}
	return h
}

// waitHealth waits until DescribeTargetHealth reports want for the group.
func (f *albFixture) waitHealth(tg string, want map[string]string) {
	f.t.Helper()
	began := time.Now()
	for {
		got := f.health(tg)
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return
		}
		if time.Since(began) > 20*time.Second {
			f.t.Fatalf("target health of %s: %v, want %v", tg, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func port(b *backend) string { return strconv.Itoa(int(*b.target().Port)) }

// listenerAddr reads where the listener is served from GET /_sandbox/elb/listeners.
func listenerAddr(t *testing.T, sb *sandbox.Sandbox, listener string) string {
	t.Helper()
	resp, err := http.Get(sb.APIURL() + sandbox.AdminPrefix + "elb/listeners")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var addrs map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&addrs); err != nil {
		t.Fatal(err)
	}
	addr := addrs[listener]
	if host, _, err := net.SplitHostPort(addr); err != nil || host != "127.0.0.1" || addr != sb.ListenerAddrs()[listener] {
		t.Fatalf("listeners %v: want %s on 127.0.0.1", addrs, listener)
	}
	return addr
}

// albClient sends requests through a listener.
type albClient struct {
	t    *testing.T
	addr string
	c    *http.Client
}

func newALBClient(t *testing.T, addr string) *albClient {
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	return &albClient{t: t, addr: addr, c: &http.Client{Transport: tr, Timeout: 10 * time.Second}}
}

// get sends one request with the given Host (empty: the listener's address) and cookies,
// and returns the body (the target's name) and the response.
func (a *albClient) get(path, host string, cookies ...*http.Cookie) (string, *http.Response) {
	a.t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+a.addr+path, nil)
	if err != nil {
		a.t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	resp, err := a.c.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		a.t.Fatalf("GET %s (Host %q): %d %q %v", path, host, resp.StatusCode, body, err)
	}
	return string(body), resp
}

// group maps a target's name to its group.
func group(name string) string {
	g, _, _ := strings.Cut(name, "-")
	return g
}

// waitCounted waits until the proxy has counted n requests over the groups: it counts a
// request when its handler returns, just after the client has the response.
func waitCounted(t *testing.T, p *albproxy.Proxy, n uint64, groups ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var got uint64
		for _, g := range groups {
			got += p.Counts(g).Requests
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("proxy counted %d requests, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestALBWeightedProxy drives the sandbox's ALB through aws-sdk-go-v2 alone (ELBv2 and
// CloudWatch) with real HTTP traffic through the listener's loopback address: health
// checks make the targets healthy, 1,000 requests split 90/10 within a binomial
// tolerance, group stickiness sets its cookie, ModifyRule and ModifyListener to 0/100 send
// every new request to green as soon as they answer (a stuck client stays), GetMetricData
// reports exactly the proxy's counts by TargetGroup and LoadBalancer, and a deregistered
// target drains: its request in flight completes, new ones go elsewhere, and it is gone
// after the deregistration delay.
func TestALBWeightedProxy(t *testing.T) {
	sb := sandboxtest.Start(t)
	ctx := context.Background()
	f := newALBFixture(t, sb)
	release, arrived := make(chan struct{}), make(chan string, 4)
	blue := startBackend(t, "blue", release, arrived)
	greenA := startBackend(t, "green-a", release, arrived)
	greenB := startBackend(t, "green-b", release, arrived)
	// Before the backends close (cleanups run last first): a /slow request still held
	// when the test fails would keep httptest.Server.Close waiting.
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	f.register(f.blue, blue)
	f.register(f.green, greenA, greenB)
	if _, err := f.lbc.ModifyTargetGroupAttributes(ctx, &elbv2.ModifyTargetGroupAttributesInput{TargetGroupArn: aws.String(f.green),
		Attributes: []types.TargetGroupAttribute{{Key: aws.String("deregistration_delay.timeout_seconds"), Value: aws.String("2")}}}); err != nil {
		t.Fatal(err)
	}
	// Not yet in use: nothing is checked.
	if h := f.health(f.blue); h[port(blue)] != "unused" {
		t.Fatalf("blue before any listener: %v, want unused", h)
	}

	created := time.Now()
	l, err := f.lbc.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: aws.String(f.lb), Protocol: types.ProtocolEnumHttp,
		Port: aws.Int32(80), DefaultActions: forward(0, f.blue, 90, f.green, 10)})
	if err != nil {
		t.Fatal(err)
	}
	listener := *l.Listeners[0].ListenerArn
	const shopHost = "shop.example.com"
	r, err := f.lbc.CreateRule(ctx, &elbv2.CreateRuleInput{ListenerArn: aws.String(listener), Priority: aws.Int32(10),
		Conditions: []types.RuleCondition{{Field: aws.String("host-header"), HostHeaderConfig: &types.HostHeaderConditionConfig{Values: []string{shopHost}}}},
		Actions:    forward(60, f.blue, 90, f.green, 10)})
	if err != nil {
		t.Fatal(err)
	}
	rule := *r.Rules[0].RuleArn
	addr := listenerAddr(t, sb, listener)
	f.waitHealth(f.blue, map[string]string{port(blue): "healthy"})
	f.waitHealth(f.green, map[string]string{port(greenA): "healthy", port(greenB): "healthy"})
	t.Logf("targets healthy %v after CreateListener was sent", time.Since(created).Round(100*time.Microsecond))
	if checks := blue.checked(); len(checks) == 0 || slices.ContainsFunc(checks, func(p string) bool { return p != "/healthz" }) {
		t.Fatalf("health checks of blue asked for %v, want /healthz", checks)
	}

	// The load balancer's DNS name answers the listener's host, for Route 53 aliases.
	resp, err := http.Get(sb.APIURL() + sandbox.AdminPrefix + "loadbalancers/" + f.lbDNS)
	if err != nil {
		t.Fatal(err)
	}
	var lbInfo struct{ Addresses []string }
	_ = json.NewDecoder(resp.Body).Decode(&lbInfo)
	resp.Body.Close()
	if fmt.Sprint(lbInfo.Addresses) != "[127.0.0.1]" {
		t.Fatalf("%s answers %v, want [127.0.0.1]", f.lbDNS, lbInfo.Addresses)
	}

	// 1,000 requests, every other one matching the 90/10 rule, the rest the 90/10
	// default action.
	c := newALBClient(t, addr)
	const n = 1000
	began := time.Now()
	got := map[string]int{}
	var blueCookie *http.Cookie
	for i := range n {
		host := ""
		if i%2 == 1 {
			host = shopHost
		}
		name, resp := c.get("/", host)
		got[group(name)]++
		var sticky *http.Cookie
		for _, ck := range resp.Cookies() {
			if ck.Name == albproxy.CookieGroup {
				sticky = ck
			}
		}
		if (sticky != nil) != (host == shopHost) {
			t.Fatalf("request %d (Host %q): AWSALBTG cookie %v: want one exactly where the rule has group stickiness", i, host, sticky)
		}
		if sticky != nil && group(name) == "blue" {
			blueCookie = sticky
		}
	}
	t.Logf("%d requests in %v: %v", n, time.Since(began).Round(time.Millisecond), got)
	// Binomial(1000, 0.1): sd 9.5; five of them is a false alarm once in a million runs.
	if tol := 5 * math.Sqrt(n*0.1*0.9); math.Abs(float64(got["green"])-n*0.1) > tol || got["blue"]+got["green"] != n {
		t.Fatalf("shares %v: want green %d ± %.0f of %d", got, n/10, tol, n)
	}

	// CloudWatch reads what the proxy counted, by TargetGroup with LoadBalancer.
	waitCounted(t, sb.ALB(), n, f.blue, f.green)
	lbDim, blueDim, greenDim := arnSuffix(f.lb, "loadbalancer/"), arnSuffix(f.blue, ""), arnSuffix(f.green, "")
	query := func(id, metric, stat string, dims ...string) cwtypes.MetricDataQuery {
		var ds []cwtypes.Dimension
		for i := 0; i < len(dims); i += 2 {
			ds = append(ds, cwtypes.Dimension{Name: aws.String(dims[i]), Value: aws.String(dims[i+1])})
		}
		return cwtypes.MetricDataQuery{Id: aws.String(id), MetricStat: &cwtypes.MetricStat{
			Metric: &cwtypes.Metric{Namespace: aws.String("AWS/ApplicationELB"), MetricName: aws.String(metric), Dimensions: ds},
			Period: aws.Int32(60), Stat: aws.String(stat)}}
	}
	md, err := cwClient(sb).GetMetricData(ctx, &cloudwatch.GetMetricDataInput{
		StartTime: aws.Time(began.Add(-time.Minute)), EndTime: aws.Time(time.Now().Add(time.Minute)),
		MetricDataQueries: []cwtypes.MetricDataQuery{
			query("blue", "RequestCount", "Sum", "TargetGroup", blueDim, "LoadBalancer", lbDim),
			query("green", "RequestCount", "Sum", "LoadBalancer", lbDim, "TargetGroup", greenDim),
			query("lb", "RequestCount", "Sum", "LoadBalancer", lbDim),
			query("errors", "HTTPCode_Target_5XX_Count", "Sum", "LoadBalancer", lbDim, "TargetGroup", greenDim),
			query("rt", "TargetResponseTime", "SampleCount", "LoadBalancer", lbDim, "TargetGroup", blueDim),
		}})
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]float64{}
	for _, res := range md.MetricDataResults {
		for _, v := range res.Values {
			sums[*res.Id] += v
		}
	}
	pb, pg := sb.ALB().Counts(f.blue), sb.ALB().Counts(f.green)
	if sums["blue"] != float64(pb.Requests) || sums["green"] != float64(pg.Requests) || sums["lb"] != n ||
		int(pb.Requests) != got["blue"] || int(pg.Requests) != got["green"] || sums["errors"] != 0 || sums["rt"] != float64(pb.TargetResponses) {
		t.Fatalf("GetMetricData %v; proxy blue %d green %d (TargetResponseTime samples %d); client %v", sums, pb.Requests, pg.Requests, pb.TargetResponses, got)
	}

	// 0/100 on the rule: every new request matching it goes to green as soon as
	// ModifyRule answers, except a client its stickiness cookie keeps on blue.
	began = time.Now()
	if _, err := f.lbc.ModifyRule(ctx, &elbv2.ModifyRuleInput{RuleArn: aws.String(rule), Actions: forward(60, f.blue, 0, f.green, 100)}); err != nil {
		t.Fatal(err)
	}
	t.Logf("ModifyRule answered in %v", time.Since(began).Round(time.Microsecond))
	for i := range 100 {
		if name, _ := c.get("/", shopHost); group(name) != "green" {
			t.Fatalf("request %d after ModifyRule 0/100 went to %s", i, name)
		}
	}
	if blueCookie == nil {
		t.Fatal("no rule request went to blue")
	}
	if name, _ := c.get("/", shopHost, blueCookie); name != "blue" {
		t.Fatalf("a client stuck to blue went to %s after the weight change; ALB keeps it on blue", name)
	}
	defaults := map[string]int{}
	for range 100 {
		name, _ := c.get("/", "")
		defaults[group(name)]++
	}
	if defaults["blue"] == 0 {
		t.Fatalf("the default action (still 90/10) sent nothing to blue: %v", defaults)
	}
	if _, err := f.lbc.ModifyListener(ctx, &elbv2.ModifyListenerInput{ListenerArn: aws.String(listener), DefaultActions: forward(0, f.blue, 0, f.green, 100)}); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if name, _ := c.get("/", ""); group(name) != "green" {
			t.Fatalf("request %d after ModifyListener 0/100 went to %s", i, name)
		}
	}
	// Blue takes no traffic but is still in use: it stays checked and healthy.
	if h := f.health(f.blue); h[port(blue)] != "healthy" {
		t.Fatalf("blue at weight 0: %v, want healthy", h)
	}

	// Drain: a request in flight on a green target that is deregistered completes; new
	// requests go to the other target; the drained one is gone after the delay (2 s).
	slow := make(chan string, 1)
	go func() {
		resp, err := c.c.Get("http://" + addr + "/slow")
		if err != nil {
			slow <- err.Error()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		slow <- fmt.Sprintf("%d %s", resp.StatusCode, body)
	}()
	var busy, other *backend
	select {
	case name := <-arrived:
		busy, other = greenA, greenB
		if name == greenB.name {
			busy, other = greenB, greenA
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the slow request reached no target")
	}
	deregistered := time.Now()
	if _, err := f.lbc.DeregisterTargets(ctx, &elbv2.DeregisterTargetsInput{TargetGroupArn: aws.String(f.green), Targets: []types.TargetDescription{busy.target()}}); err != nil {
		t.Fatal(err)
	}
	if h := f.health(f.green); h[port(busy)] != "draining" || h[port(other)] != "healthy" {
		t.Fatalf("green after deregistering %s: %v", busy.name, h)
	}
	for i := range 20 {
		if name, _ := c.get("/", ""); name != other.name {
			t.Fatalf("request %d went to %s, which is draining", i, name)
		}
	}
	close(release)
	if res := <-slow; res != "200 "+busy.name {
		t.Fatalf("the request in flight on the draining target: %q, want 200 %s", res, busy.name)
	}
	f.waitHealth(f.green, map[string]string{port(other): "healthy"})
	if since := time.Since(deregistered); since < 2*time.Second {
		t.Fatalf("the drained target left after %v, before its 2 s deregistration delay", since)
	}
	t.Logf("drained target gone %v after deregistration", time.Since(deregistered).Round(time.Millisecond))
	if th := sb.ALB().TargetHealth(f.green); len(th) != 1 {
		t.Fatalf("proxy still knows %v", th)
	}
}

// arnSuffix is an ARN's resource part after prefix: what CloudWatch's LoadBalancer
// ("app/…", prefix "loadbalancer/") and TargetGroup ("targetgroup/…") dimensions hold.
func arnSuffix(arn, prefix string) string {
	f := strings.SplitN(arn, ":", 6)
	return strings.TrimPrefix(f[len(f)-1], prefix)
}

// TestALBRestartAndClose checks the proxy's life cycle with the sandbox's: Close stops
// every listener, a sandbox started again on the same state serves the persisted
// listeners at once (on new loopback ports) and routes by the persisted weights, and
// deleting a listener or a load balancer takes its socket or DNS answer away.
func TestALBRestartAndClose(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	sb, stop := sandboxtest.StartStateful(t, state)
	f := newALBFixture(t, sb)
	green := startBackend(t, "green", nil, nil)
	f.register(f.green, green)
	l, err := f.lbc.CreateListener(context.Background(), &elbv2.CreateListenerInput{LoadBalancerArn: aws.String(f.lb), Protocol: types.ProtocolEnumHttp,
		Port: aws.Int32(80), DefaultActions: forward(0, f.blue, 0, f.green, 1)})
	if err != nil {
		t.Fatal(err)
	}
	listener := *l.Listeners[0].ListenerArn
	addr := listenerAddr(t, sb, listener)
	f.waitHealth(f.green, map[string]string{port(green): "healthy"})
	if name, _ := newALBClient(t, addr).get("/", ""); name != "green" {
		t.Fatalf("went to %s", name)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Fatalf("listener %s still accepts after Close", addr)
	}

	sb = sandboxtest.StartWith(t, sandbox.Config{StatePath: state})
	f.sb, f.lbc = sb, elbClient(sb)
	addr = listenerAddr(t, sb, listener)
	f.waitHealth(f.green, map[string]string{port(green): "healthy"})
	if name, _ := newALBClient(t, addr).get("/", ""); name != "green" {
		t.Fatalf("after restart went to %s", name)
	}

	// Deleting the listener closes its socket; deleting the load balancer takes its DNS
	// name out of the sandbox's DNS server.
	if _, err := f.lbc.DeleteListener(context.Background(), &elbv2.DeleteListenerInput{ListenerArn: aws.String(listener)}); err != nil {
		t.Fatal(err)
	}
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Fatalf("deleted listener %s still accepts", addr)
	}
	if addrs := sb.ListenerAddrs(); len(addrs) != 0 {
		t.Fatalf("listeners after DeleteListener: %v", addrs)
	}
	if _, ok := sb.Store().LoadBalancerInfo(f.lbDNS); !ok {
		t.Fatalf("%s has no DNS answer after the restart", f.lbDNS)
	}
	if _, err := f.lbc.DeleteLoadBalancer(context.Background(), &elbv2.DeleteLoadBalancerInput{LoadBalancerArn: aws.String(f.lb)}); err != nil {
		t.Fatal(err)
	}
	if info, ok := sb.Store().LoadBalancerInfo(f.lbDNS); ok {
		t.Fatalf("%s still answers %v after DeleteLoadBalancer", f.lbDNS, info.Addresses)
	}
}
