package cutover

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	leveralb "github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/prometheustest"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// The ALB lever over a Network Load Balancer, end to end with the real engine: an NLB on
// the in-process sandbox's ELBv2 API, a TCP listener whose default action forwards to two
// weighted TCP target groups (targets registered with TEST-NET-1 addresses that the sandbox
// maps to loopback echo servers), long-lived connections opened before the cutover and
// new connections opened all through it, and Run moving the weights 100/0 → 0/100 with
// ModifyListener, gated on target health and on the backends' own connection counts read
// through a real Prometheus. AWS/NetworkELB publishes flow counts per load balancer only,
// so CloudWatch cannot tell an NLB's target groups apart: the plan refuses albTraffic and
// retire.cloudWatch on an NLB, and gates on what the clusters count themselves.

// backendConns counts, per group, the connections the backends accepted: the clusters' own
// metrics, as a database's or a proxy's exporter would publish them.
var backendConnsHelp = prometheus.CounterOpts{Name: "backend_connections_total", Help: "Connections the backend accepted."}

// tcpBackend is a loopback server that says its group's name when a connection opens,
// then echoes; it counts each connection in conns.
func tcpBackend(t *testing.T, group string, conns *prometheus.CounterVec) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	counted := conns.WithLabelValues(group)
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for c := range open {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open[c] = true
			mu.Unlock()
			counted.Inc()
			wg.Go(func() {
				defer func() {
					_ = c.Close()
					mu.Lock()
					delete(open, c)
					mu.Unlock()
				}()
				if _, err := io.WriteString(c, group+"\n"); err == nil {
					_, _ = io.Copy(c, c)
				}
			})
		}
	})
	return netip.MustParseAddrPort(ln.Addr().String())
}

// tcpSession is a client connection through the NLB: the group that answered it.
type tcpSession struct {
	c     net.Conn
	r     *bufio.Reader
	group string
}

func openSession(addr string) (*tcpSession, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	name, err := r.ReadString('\n')
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("reading the backend's name: %w", err)
	}
	return &tcpSession{c: c, r: r, group: strings.TrimSpace(name)}, nil
}

func (s *tcpSession) echo(line string) error {
	_ = s.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(s.c, line+"\n"); err != nil {
		return err
	}
	got, err := s.r.ReadString('\n')
	if err != nil {
		return err
	}
	if got != line+"\n" {
		return fmt.Errorf("echo %q, want %q", got, line)
	}
	return nil
}

// nlbEnv is the NLB of the test.
type nlbEnv struct {
	sb               *sandbox.Sandbox
	elb              *elbv2.Client
	cfg              aws.Config
	listener         string
	listenerAddr     string
	blueTG, greenTG  string
	targetsPerGroup  int
	registeredByName map[string][]types.TargetDescription
	// metrics is where the backends' connection counts are served (host:port).
	metrics string
}

func newNLBEnv(t *testing.T) *nlbEnv {
	t.Helper()
	ctx := context.Background()
	sb := sandboxtest.Start(t)
	e := &nlbEnv{sb: sb, targetsPerGroup: 2, registeredByName: map[string][]types.TargetDescription{},
		cfg: aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}}
	e.elb = leveralb.NewELBv2(e.cfg, sb.APIURL())
	lb, err := e.elb.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("db"), Type: types.LoadBalancerTypeEnumNetwork, Subnets: []string{"subnet-a", "subnet-b"}})
	if err != nil {
		t.Fatal(err)
	}
	// Each group's targets are TEST-NET-1 addresses, mapped to loopback backends.
	mapping := map[netip.AddrPort]netip.AddrPort{}
	reg := prometheus.NewRegistry()
	conns := prometheus.NewCounterVec(backendConnsHelp, []string{"group"})
	reg.MustRegister(conns)
	e.metrics = serveMetrics(t, reg)
	for gi, name := range []string{"blue", "green"} {
		out, err := e.elb.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String("db-" + name), Protocol: types.ProtocolEnumTcp, Port: aws.Int32(5432),
			VpcId: aws.String("vpc-1"), TargetType: types.TargetTypeEnumIp, HealthCheckIntervalSeconds: aws.Int32(5), HealthCheckTimeoutSeconds: aws.Int32(2)})
		if err != nil {
			t.Fatal(err)
		}
		arn := aws.ToString(out.TargetGroups[0].TargetGroupArn)
		var targets []types.TargetDescription
		for i := range e.targetsPerGroup {
			ip := netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(10*(gi+1) + i)}), 5432)
			mapping[ip] = tcpBackend(t, name, conns)
			targets = append(targets, types.TargetDescription{Id: aws.String(ip.Addr().String()), Port: aws.Int32(5432)})
		}
		e.registeredByName[name] = targets
		if name == "blue" {
			e.blueTG = arn
		} else {
			e.greenTG = arn
		}
	}
	if err := sb.SetTargetAddresses(mapping); err != nil {
		t.Fatal(err)
	}
	for name, arn := range map[string]string{"blue": e.blueTG, "green": e.greenTG} {
		if _, err := e.elb.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: aws.String(arn), Targets: e.registeredByName[name]}); err != nil {
			t.Fatal(err)
		}
	}
	fc := &types.ForwardActionConfig{TargetGroups: []types.TargetGroupTuple{
		{TargetGroupArn: aws.String(e.blueTG), Weight: aws.Int32(100)}, {TargetGroupArn: aws.String(e.greenTG), Weight: aws.Int32(0)}}}
	l, err := e.elb.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: lb.LoadBalancers[0].LoadBalancerArn, Protocol: types.ProtocolEnumTcp,
		Port: aws.Int32(5432), DefaultActions: []types.Action{{Type: types.ActionTypeEnumForward, ForwardConfig: fc}}})
	if err != nil {
		t.Fatal(err)
	}
	e.listener = aws.ToString(l.Listeners[0].ListenerArn)
	e.listenerAddr = sb.ListenerAddrs()[e.listener]
	if e.listenerAddr == "" {
		t.Fatalf("the sandbox serves no address for NLB listener %s: %v", e.listener, sb.ListenerAddrs())
	}
	e.waitHealthy(t)
	return e
}

// waitHealthy waits until DescribeTargetHealth says every target of both groups is healthy:
// the proxy's TCP checks, through the address mapping.
func (e *nlbEnv) waitHealthy(t *testing.T) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		healthy := 0
		last = ""
		for _, arn := range []string{e.blueTG, e.greenTG} {
			out, err := e.elb.DescribeTargetHealth(context.Background(), &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(arn)})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range out.TargetHealthDescriptions {
				last += fmt.Sprintf(" %s:%s", aws.ToString(d.Target.Id), d.TargetHealth.State)
				if d.TargetHealth.State == types.TargetHealthStateEnumHealthy {
					healthy++
				}
			}
		}
		if healthy == 2*e.targetsPerGroup {
			return
		}
	}
	t.Fatalf("targets not healthy within a minute:%s", last)
}

// tcpLoad opens new connections from several goroutines until halted, each saying which
// group answered, and counts any connection that could not be made or echo as failed.
type tcpLoad struct {
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	byGroup  map[string]int
	failures []string
}

func startTCPLoad(addr string, workers int) *tcpLoad {
	l := &tcpLoad{stop: make(chan struct{}), byGroup: map[string]int{}}
	for range workers {
		l.wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				s, err := openSession(addr)
				if err == nil {
					err = s.echo(fmt.Sprintf("line %d", i))
					_ = s.c.Close()
				}
				l.mu.Lock()
				if err != nil {
					l.failures = append(l.failures, time.Now().Format("15:04:05.000")+" "+err.Error())
				} else {
					l.byGroup[s.group]++
				}
				l.mu.Unlock()
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	return l
}

func (l *tcpLoad) halt() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

func TestNLBCutoverUnderLiveConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cutover against the sandbox with live TCP traffic: skipped with -short")
	}
	e := newNLBEnv(t)
	// Long-lived connections, opened under 100/0: they must stay with blue and keep
	// carrying bytes while the weights move to green.
	var long []*tcpSession
	for range 3 {
		s, err := openSession(e.listenerAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.c.Close() })
		if s.group != "blue" {
			t.Fatalf("a connection under weights 100/0 went to %s", s.group)
		}
		long = append(long, s)
	}
	var longWG sync.WaitGroup
	longStop := make(chan struct{})
	longErrs := make([]error, len(long))
	longEchoes := make([]int, len(long))
	for i, s := range long {
		longWG.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-longStop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				if err := s.echo(fmt.Sprintf("long %d %d", i, n)); err != nil {
					longErrs[i] = err
					return
				}
				longEchoes[i]++
			}
		})
	}
	load := startTCPLoad(e.listenerAddr, 4)
	t.Cleanup(load.halt)
	promSrv := prometheustest.Start(t, e.metrics)
	// The gates' increase over 3s needs three scrapes of the backends.
	promSrv.WaitScraped(t, 3)
	prom := promSrv.URL
	// Each step's gate bounds green's share of the connections the backends accepted over
	// the last 3s (scraped every second), between the previous step's share (the window
	// still holds connections from before the write) and the step's own, with slack. The
	// hold (5s) outlasts the window and a scrape, so the last check reads the step's
	// weights alone: asserted below.
	share := `sum(increase(backend_connections_total{group="green"}[3s])) / sum(increase(backend_connections_total[3s]))`
	stepGate := func(lo, hi float64) string {
		return fmt.Sprintf(`[{name: shares, prometheus: {url: %q, query: %q, min: %v, max: %v}}]`, prom, share, lo, hi)
	}

	p, err := spec.Parse([]byte(`apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata: {name: db}
spec:
  alb:
    listenerRules: [`+e.listener+`]
    from: db-blue
    to: db-green
  steps:
    - {percent: 10, gates: `+stepGate(0, 0.25)+`}
    - {percent: 50, gates: `+stepGate(0.03, 0.65)+`}
    - {percent: 100, gates: `+stepGate(0.35, 1)+`}
  pause: 5s
  timeouts: {step: 30s}
  gates:
    - name: healthy
      targetHealth: {minHealthy: 2}
`), "plan.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Config{Plan: p, Levers: albLevers(e.elb, nil), StateDir: t.TempDir(), By: "test@host",
		CheckInterval: 100 * time.Millisecond, PollInterval: 10 * time.Millisecond}, false)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	load.halt()
	close(longStop)
	longWG.Wait()

	// The weights are 0/100 on the listener.
	ls, err := e.elb.DescribeListeners(context.Background(), &elbv2.DescribeListenersInput{ListenerArns: []string{e.listener}})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range ls.Listeners[0].DefaultActions[0].ForwardConfig.TargetGroups {
		if want := map[string]int32{e.blueTG: 0, e.greenTG: 100}[aws.ToString(g.TargetGroupArn)]; aws.ToInt32(g.Weight) != want {
			t.Errorf("after the run, %s weighs %d, want %d", aws.ToString(g.TargetGroupArn), aws.ToInt32(g.Weight), want)
		}
	}
	// 0 failed connections; both groups got new connections along the way.
	if len(load.failures) > 0 {
		t.Errorf("%d of %d new connections failed, e.g. %v", len(load.failures), len(load.failures)+load.byGroup["blue"]+load.byGroup["green"], load.failures[:min(5, len(load.failures))])
	}
	if load.byGroup["blue"] == 0 || load.byGroup["green"] == 0 {
		t.Errorf("new connections by group %v: want both", load.byGroup)
	}
	// The long-lived connections were never cut: each echoed all along, to blue, and still
	// does after the weights moved away from it.
	for i, s := range long {
		if longErrs[i] != nil || longEchoes[i] == 0 {
			t.Errorf("long-lived connection %d: %d echoes, then %v", i, longEchoes[i], longErrs[i])
			continue
		}
		if err := s.echo("after the cutover"); err != nil || s.group != "blue" {
			t.Errorf("long-lived connection %d (%s) after the cutover: %v", i, s.group, err)
		}
	}
	// New connections follow the weights written: all green now.
	for range 5 {
		s, err := openSession(e.listenerAddr)
		if err != nil {
			t.Fatal(err)
		}
		_ = s.c.Close()
		if s.group != "green" {
			t.Errorf("a new connection after the cutover went to %s", s.group)
		}
	}
	// Each step's last check of the shares gate read, from the backends' own counts, the
	// share of new connections the weights written promised; target health passed too.
	if rep.Outcome != "completed" || len(rep.Steps) != 3 {
		t.Fatalf("report: outcome %q, %d steps", rep.Outcome, len(rep.Steps))
	}
	for i, st := range rep.Steps {
		judged := map[string]*gate.Result{}
		for i := range st.Gates {
			if g := &st.Gates[i]; g.Pass && !g.Pending {
				judged[g.Gate] = g
			}
		}
		if judged["healthy"] == nil || judged["shares"] == nil {
			t.Errorf("%s: want judged passes of the healthy and shares gates: %+v", st.Name, st.Gates)
			continue
		}
		want := []float64{0.1, 0.5, 1}[i]
		if w := st.Weights; float64(w["db-green"])/float64(w["db-blue"]+w["db-green"]) != want {
			t.Errorf("%s: weights %v, want green at %v", st.Name, w, want)
		}
		if got, ok := judged["shares"].Values["value"]; !ok || got < want-0.1 || got > want+0.1 {
			t.Errorf("%s: green's share of new connections %v, want %v ± 0.1: %s", st.Name, got, want, judged["shares"].Detail)
		}
	}
}

// TestNLBPlanRefusesCloudWatch: on the NLB's listener, a plan reading the groups' traffic
// from CloudWatch (an albTraffic gate, retire.cloudWatch) is refused before anything is
// written: AWS answers those queries with no datapoints, which would read as 0.
func TestNLBPlanRefusesCloudWatch(t *testing.T) {
	const listener = "arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/net/db/50dc6c495c0c9188/0467ef3c8400ae65"
	for _, tc := range []struct{ name, extra, want string }{
		{"albTraffic", "  gates: [{albTraffic: {period: 1}}]\n", "spec.gates[0].albTraffic: not on a Network Load Balancer"},
		{"retire.cloudWatch", "  retire: {cloudWatch: {period: 1}, window: 1m}\n", "spec.retire.cloudWatch: not on a Network Load Balancer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := spec.Parse([]byte("apiVersion: crossfade.io/v1alpha1\nkind: Cutover\nmetadata: {name: db}\nspec:\n  alb: {listenerRules: ["+listener+"], from: db-blue, to: db-green}\n  steps: [50, 100]\n"+tc.extra), "plan.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "not per target group") {
				t.Fatalf("parse: %v; want %q and why", err, tc.want)
			}
		})
	}
}

// serveMetrics serves reg's metrics on a loopback port until the test ends; it returns
// the host:port.
func serveMetrics(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	return ln.Addr().String()
}
