package demo

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	leveralb "github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/cutover/levers"
	"github.com/crossfade-io/crossfade/internal/dashboard"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// The ALB demo (demo --lever alb): the same two clusters behind one sandbox ALB. The ALB,
// its listener, its listener rule and one target group per cluster are created first, as
// Terraform would own them outside the clusters; each cluster then registers its own pods
// into its own group, as its AWS Load Balancer Controller does through a
// TargetGroupBinding; the clients send every request to the ALB's listener, and the
// cutover moves the rule's and the listener's forward weights, proven by target health and
// by CloudWatch's request counts per group. No DNS record is written.

// Levers the demo can pull, as Config.Lever names them.
const (
	// LeverDNS moves Route 53 weighted records (the default demo).
	LeverDNS = "dns"
	// LeverALB moves an ALB listener rule's target-group weights.
	LeverALB = "alb"
)

const (
	// albName names the demo's load balancer; albPlanName its cutover.
	albName     = "demo"
	albPlanName = "demo-alb"
	// albPods is how many pods (targets) each cluster runs behind the ALB; the plan's
	// targetHealth gate wants both healthy.
	albPods = 2
	// albHealthCheck* are the target groups' health checks: the fastest ELBv2 allows
	// (5 s interval, 2 passes to healthy), so that the demo's targets are healthy about
	// 5 s after registration.
	albHealthCheckInterval  = 5
	albHealthCheckThreshold = 2
	albHealthCheckPath      = "/healthz"
	// albHealthyTimeout bounds the wait for the targets' first health checks: a failure
	// bound, they pass in about 5 s.
	albHealthyTimeout = 30 * time.Second
	// albRegisterInterval is how often each cluster's registrar reconciles its group.
	albRegisterInterval = 2 * time.Second
)

//go:embed cutover-alb.yaml
var albPlanTemplate string

// albGroupName is the target group that cluster id's pods are registered in.
func albGroupName(id string) string { return "app-" + id }

// elbAPI is the ELBv2 API the demo sets the ALB up with and reads its weights back from,
// as Terraform and `aws elbv2` would; *elasticloadbalancingv2.Client implements it.
type elbAPI interface {
	CreateLoadBalancer(ctx context.Context, in *elbv2.CreateLoadBalancerInput, optFns ...func(*elbv2.Options)) (*elbv2.CreateLoadBalancerOutput, error)
	CreateTargetGroup(ctx context.Context, in *elbv2.CreateTargetGroupInput, optFns ...func(*elbv2.Options)) (*elbv2.CreateTargetGroupOutput, error)
	CreateListener(ctx context.Context, in *elbv2.CreateListenerInput, optFns ...func(*elbv2.Options)) (*elbv2.CreateListenerOutput, error)
	CreateRule(ctx context.Context, in *elbv2.CreateRuleInput, optFns ...func(*elbv2.Options)) (*elbv2.CreateRuleOutput, error)
	DescribeRules(ctx context.Context, in *elbv2.DescribeRulesInput, optFns ...func(*elbv2.Options)) (*elbv2.DescribeRulesOutput, error)
	DescribeListeners(ctx context.Context, in *elbv2.DescribeListenersInput, optFns ...func(*elbv2.Options)) (*elbv2.DescribeListenersOutput, error)
	DescribeTargetHealth(ctx context.Context, in *elbv2.DescribeTargetHealthInput, optFns ...func(*elbv2.Options)) (*elbv2.DescribeTargetHealthOutput, error)
}

// albSetup is the demo's ALB as created: what the plan, the clients and the hint name.
type albSetup struct {
	lb, listener, rule string
	// groups maps a cluster id to its target group's ARN.
	groups map[string]string
	// addr is where the sandbox serves the listener (127.0.0.1:PORT).
	addr string
}

// createALB creates, through the ELBv2 API, the demo's ALB: a target group per cluster
// (HTTP, IP targets, health checks on /healthz), an HTTP listener whose default action
// forwards blue=100 green=0, and a rule for the app's host forwarding the same, group
// stickiness off.
func createALB(ctx context.Context, api elbAPI, sb *sandbox.Sandbox, ids []string) (*albSetup, error) {
	lb, err := api.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String(albName), Subnets: []string{albSubnets[0].ID, albSubnets[1].ID}})
	if err != nil {
		return nil, fmt.Errorf("create load balancer %s: %w", albName, err)
	}
	a := &albSetup{lb: aws.ToString(lb.LoadBalancers[0].LoadBalancerArn), groups: map[string]string{}}
	fc := &types.ForwardActionConfig{TargetGroupStickinessConfig: &types.TargetGroupStickinessConfig{Enabled: aws.Bool(false)}}
	for i, id := range ids {
		name := albGroupName(id)
		tg, err := api.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String(name), Protocol: types.ProtocolEnumHttp,
			Port: aws.Int32(80), VpcId: aws.String(albVPC), TargetType: types.TargetTypeEnumIp,
			HealthCheckPath: aws.String(albHealthCheckPath), HealthCheckIntervalSeconds: aws.Int32(albHealthCheckInterval),
			HealthCheckTimeoutSeconds: aws.Int32(2), HealthyThresholdCount: aws.Int32(albHealthCheckThreshold),
			UnhealthyThresholdCount: aws.Int32(2)})
		if err != nil {
			return nil, fmt.Errorf("create target group %s: %w", name, err)
		}
		a.groups[id] = aws.ToString(tg.TargetGroups[0].TargetGroupArn)
		weight := int32(0)
		if i == 0 {
			weight = 100 // the first cluster has all the traffic
		}
		fc.TargetGroups = append(fc.TargetGroups, types.TargetGroupTuple{TargetGroupArn: aws.String(a.groups[id]), Weight: aws.Int32(weight)})
	}
	fwd := []types.Action{{Type: types.ActionTypeEnumForward, ForwardConfig: fc}}
	l, err := api.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: aws.String(a.lb), Protocol: types.ProtocolEnumHttp,
		Port: aws.Int32(80), DefaultActions: fwd})
	if err != nil {
		return nil, fmt.Errorf("create listener: %w", err)
	}
	a.listener = aws.ToString(l.Listeners[0].ListenerArn)
	r, err := api.CreateRule(ctx, &elbv2.CreateRuleInput{ListenerArn: aws.String(a.listener), Priority: aws.Int32(10), Actions: fwd,
		Conditions: []types.RuleCondition{{Field: aws.String("host-header"), HostHeaderConfig: &types.HostHeaderConditionConfig{Values: []string{appName}}}}})
	if err != nil {
		return nil, fmt.Errorf("create listener rule: %w", err)
	}
	a.rule = aws.ToString(r.Rules[0].RuleArn)
	// The listener is served when CreateListener answers.
	if a.addr = sb.ListenerAddrs()[a.listener]; a.addr == "" {
		return nil, fmt.Errorf("the sandbox serves no address for listener %s", a.listener)
	}
	return a, nil
}

// weights reads the forward weights of the rule and of the listener's default action,
// by cluster id.
func (a *albSetup) weights(ctx context.Context, api elbAPI) (rule, listener map[string]int64, err error) {
	rs, err := api.DescribeRules(ctx, &elbv2.DescribeRulesInput{RuleArns: []string{a.rule}})
	if err != nil {
		return nil, nil, fmt.Errorf("describe rule %s: %w", a.rule, err)
	}
	if len(rs.Rules) == 0 {
		return nil, nil, fmt.Errorf("describe rule %s: no such rule", a.rule)
	}
	ls, err := api.DescribeListeners(ctx, &elbv2.DescribeListenersInput{ListenerArns: []string{a.listener}})
	if err != nil {
		return nil, nil, fmt.Errorf("describe listener %s: %w", a.listener, err)
	}
	if len(ls.Listeners) == 0 {
		return nil, nil, fmt.Errorf("describe listener %s: no such listener", a.listener)
	}
	return forwardWeights(rs.Rules[0].Actions, a.groups), forwardWeights(ls.Listeners[0].DefaultActions, a.groups), nil
}

// forwardWeights maps each cluster whose target group a forward action names to its
// weight there.
func forwardWeights(acts []types.Action, groups map[string]string) map[string]int64 {
	out := map[string]int64{}
	for _, act := range acts {
		if act.ForwardConfig == nil {
			continue
		}
		for _, g := range act.ForwardConfig.TargetGroups {
			for id, arn := range groups {
				if arn == aws.ToString(g.TargetGroupArn) {
					out[id] = int64(aws.ToInt32(g.Weight))
				}
			}
		}
	}
	return out
}

// targetRegistry is what a cluster's registrar calls; *elasticloadbalancingv2.Client
// implements it.
type targetRegistry interface {
	RegisterTargets(ctx context.Context, in *elbv2.RegisterTargetsInput, optFns ...func(*elbv2.Options)) (*elbv2.RegisterTargetsOutput, error)
	DescribeTargetHealth(ctx context.Context, in *elbv2.DescribeTargetHealthInput, optFns ...func(*elbv2.Options)) (*elbv2.DescribeTargetHealthOutput, error)
}

// albCluster is one simulated cluster behind the demo's ALB: its app's pods, each an HTTP
// backend on its own port of the cluster's loopback address, and a registrar that keeps
// them registered in the cluster's own target group, as the cluster's AWS Load Balancer
// Controller does through a TargetGroupBinding (crossfade does not do that job).
type albCluster struct {
	id, version, ip string
	// group is its target group's ARN.
	group  string
	api    targetRegistry
	srv    *http.Server
	lns    []net.Listener
	served atomic.Int64
	out    io.Writer
	log    *slog.Logger
	// registered is set once the registrar has registered every pod.
	registered bool
	// pods are, on real clusters (demo --kube), the pods' addresses there, one per
	// listener (TEST-NET-1, mapped by the sandbox to the listener): its targets. Nil: the
	// listeners' own loopback addresses are the targets.
	pods []netip.AddrPort
}

// startALBCluster listens for pods pods on ip (a free port each) and builds their app;
// serve serves it.
func startALBCluster(api targetRegistry, id, version, ip, group string, pods int, out io.Writer, log *slog.Logger) (*albCluster, error) {
	c := &albCluster{id: id, version: version, ip: ip, group: group, api: api, out: out, log: log.With("cluster", id)}
	for range pods {
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			c.close()
			return nil, fmt.Errorf("cluster %s: listen on %s: %w", id, ip, err)
		}
		c.lns = append(c.lns, ln)
	}
	c.srv = &http.Server{Handler: appHandler(id, version, &c.served), ReadHeaderTimeout: 5 * time.Second}
	return c, nil
}

// serve runs every pod until close.
func (c *albCluster) serve() error {
	errs := make([]error, len(c.lns))
	var wg sync.WaitGroup
	for i, ln := range c.lns {
		wg.Go(func() {
			if err := c.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				errs[i] = fmt.Errorf("cluster %s: pod %s: %w", c.id, ln.Addr(), err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// close stops the pods; a listener not served yet is closed too.
func (c *albCluster) close() {
	if c.srv != nil {
		c.srv.Close()
	}
	for _, ln := range c.lns {
		ln.Close()
	}
}

// targets are the cluster's pods as ELBv2 targets: IP and port.
func (c *albCluster) targets() []types.TargetDescription {
	var out []types.TargetDescription
	if c.pods != nil {
		for _, p := range c.pods {
			out = append(out, types.TargetDescription{Id: aws.String(p.Addr().String()), Port: aws.Int32(int32(p.Port()))})
		}
		return out
	}
	for _, ln := range c.lns {
		a := ln.Addr().(*net.TCPAddr)
		out = append(out, types.TargetDescription{Id: aws.String(a.IP.String()), Port: aws.Int32(int32(a.Port))})
	}
	return out
}

// register reconciles the cluster's target group with its pods once, as a
// TargetGroupBinding does: it registers the pods the group lacks (or has draining) and
// touches nothing else.
func (c *albCluster) register(ctx context.Context) error {
	out, err := c.api.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(c.group)})
	if err != nil {
		return fmt.Errorf("cluster %s: describe target health: %w", c.id, err)
	}
	have := map[string]bool{}
	for _, d := range out.TargetHealthDescriptions {
		if d.Target != nil && (d.TargetHealth == nil || d.TargetHealth.State != types.TargetHealthStateEnumDraining) {
			have[targetAddr(*d.Target)] = true
		}
	}
	var missing []types.TargetDescription
	for _, t := range c.targets() {
		if !have[targetAddr(t)] {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := c.api.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: aws.String(c.group), Targets: missing}); err != nil {
		return fmt.Errorf("cluster %s: register targets: %w", c.id, err)
	}
	addrs := make([]string, len(missing))
	for i, t := range missing {
		addrs[i] = targetAddr(t)
	}
	if c.registered {
		// Someone deregistered a pod (aws elbv2 deregister-targets under --keep): say so.
		fmt.Fprintf(c.out, "%s cluster %s registered %s into target group %s again\n", time.Now().UTC().Format("15:04:05"), c.id,
			strings.Join(addrs, ", "), albGroupName(c.id))
	}
	c.registered = true
	return nil
}

// registerLoop reconciles every interval until ctx is done.
func (c *albCluster) registerLoop(ctx context.Context, interval time.Duration) {
	every(ctx, interval, interval, func() {
		if err := c.register(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("register targets", "err", err)
		}
	})
}

// podList names the pods: "127.0.0.2:40001, 127.0.0.2:40003".
func (c *albCluster) podList() string {
	var out []string
	for _, t := range c.targets() {
		out = append(out, targetAddr(t))
	}
	return strings.Join(out, ", ")
}

func targetAddr(t types.TargetDescription) string {
	return net.JoinHostPort(aws.ToString(t.Id), strconv.Itoa(int(aws.ToInt32(t.Port))))
}

// waitHealthy waits until every target of each cluster's group is healthy, and says so
// per group, with how long its first health checks took.
func waitHealthy(ctx context.Context, api elbAPI, ids []string, groups map[string]string, out io.Writer) error {
	began := time.Now()
	wctx, cancel := context.WithTimeout(ctx, albHealthyTimeout)
	defer cancel()
	pending := slices.Clone(ids)
	last := map[string]string{} // how each group's targets stood at the last look
	for {
		for _, id := range slices.Clone(pending) {
			desc, err := api.DescribeTargetHealth(wctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(groups[id])})
			if wctx.Err() != nil {
				break
			}
			if err != nil {
				return fmt.Errorf("target group %s: describe target health: %w", albGroupName(id), err)
			}
			healthy, line, example := gate.HealthSummary(desc.TargetHealthDescriptions)
			if healthy > 0 && healthy == len(desc.TargetHealthDescriptions) {
				fmt.Fprintf(out, "target group %-9s (cluster %s): %s after %.1fs\n", albGroupName(id), id, line,
					time.Since(began).Seconds())
				pending = slices.DeleteFunc(pending, func(p string) bool { return p == id })
				continue
			}
			if last[id] = line; example != "" {
				last[id] += " (e.g. " + example + ")"
			}
		}
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-wctx.Done():
			if err := ctx.Err(); err != nil {
				return err
			}
			var why []string
			for _, id := range pending {
				why = append(why, fmt.Sprintf("target group %s: %s", albGroupName(id), last[id]))
			}
			return fmt.Errorf("the demo's targets are not healthy %s after registration: %s", albHealthyTimeout, strings.Join(why, "; "))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// runALB is Run for LeverALB, in dir, its goroutines owned by wg and stopped by cancel.
func runALB(ctx context.Context, cancel context.CancelFunc, wg *sync.WaitGroup, dir string, cfg Config) (*Result, error) {
	out, log := cfg.Out, cfg.Logger
	ids := []string{"blue", "green"}
	var err error
	// On real clusters (--kube) the API servers come first: without their binaries the
	// demo stops here, saying how to build them, before anything else starts.
	var k *kube
	if cfg.Kube != nil {
		if k, err = startKube(ctx, *cfg.Kube, dir, ids, out, log); err != nil {
			return nil, err
		}
		defer k.close()
	}
	quiet := slog.New(slog.DiscardHandler) // the sandbox logs every call
	sb, err := sandbox.Start(ctx, sandbox.Config{APIAddr: "127.0.0.1:0", DNSAddr: "127.0.0.1:0", Logger: quiet})
	if err != nil {
		return nil, fmt.Errorf("start sandbox: %w", err)
	}
	defer sb.Close()
	awsCfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(accessKey, secretKey, "")}
	// What Terraform would do: the ALB and its target groups, outside the clusters.
	api := leveralb.NewELBv2(awsCfg, sb.APIURL())
	alb, err := createALB(ctx, api, sb, ids)
	if err != nil {
		return nil, fmt.Errorf("demo ALB: %w", err)
	}
	fmt.Fprintf(out, "sandbox: ELBv2 and CloudWatch API %s (no DNS zone: the ALB lever changes no DNS answer)\n", sb.APIURL())
	fmt.Fprintf(out, "ALB %q: HTTP listener :80 served at %s; its rule (host %s) and its default action forward %s=100 %s=0\n",
		albName, alb.addr, appName, albGroupName("blue"), albGroupName("green"))

	// Each cluster registers its own pods into its own group, with its own client.
	versions := map[string]string{"blue": "v1", "green": "v2"}
	ips := map[string]string{"blue": "127.0.0.2", "green": "127.0.0.3"}
	var clusters []*albCluster
	registeredBy := map[string]string{}
	for _, id := range ids {
		c, err := startALBCluster(leveralb.NewELBv2(awsCfg, sb.APIURL()), id, versions[id], ips[id], alb.groups[id], albPods, out, log)
		if err != nil {
			return nil, err
		}
		defer c.close()
		wg.Go(func() {
			if err := c.serve(); err != nil {
				log.Error("backend", "cluster", id, "err", err)
			}
		})
		clusters = append(clusters, c)
		if k != nil {
			continue // its pods are registered from its cluster (setupALBKube)
		}
		registeredBy[id] = registrarName(id)
		if err := c.register(ctx); err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "cluster %-5s app %s: pods %s, registered by the cluster itself into target group %s (as its AWS Load Balancer Controller's TargetGroupBinding does)\n",
			id, c.version, c.podList(), albGroupName(id))
		wg.Go(func() { c.registerLoop(ctx, albRegisterInterval) })
	}
	var ak *albKube
	if k != nil {
		ak, err = setupALBKube(ctx, wg, k, sb, api, alb, clusters, cfg.Kube.LBCDir, out)
		defer ak.stop() // before the backends, the sandbox and the API servers go
		if err != nil {
			return nil, err
		}
		registeredBy = ak.registeredBy
	}
	if err := waitHealthy(ctx, api, ids, alb.groups, out); err != nil {
		return nil, err
	}

	lg := newALBLoadgen(appName, alb.addr, cfg.Clients, cfg.Interval)
	wg.Go(func() { lg.run(ctx) })
	fmt.Fprintf(out, "traffic: %d clients, each sending %s requests/s to the ALB's listener %s (Host: %s; no DNS lookup)\n",
		cfg.Clients, fmt.Sprint(int(time.Second/cfg.Interval)), alb.addr, appName)

	rec := dashboard.NewRecorder(albPlanName, "blue", "green")
	rec.SetLever(cutover.LeverALB)
	url, stopUI, err := serveDashboard(ctx, cancel, wg, cfg.UI, lg, rec, out)
	if err != nil {
		return nil, err
	}
	defer stopUI()

	planFile := filepath.Join(dir, "demo-alb-cutover.yaml")
	r := strings.NewReplacer("{{PAUSE}}", cfg.Pause.String(), "{{RULE}}", alb.rule, "{{LISTENER}}", alb.listener)
	p, err := loadPlan(planFile, r.Replace(albPlanTemplate))
	if err != nil {
		return nil, err
	}
	ccfg := cutover.Config{Plan: p, Levers: levers.New(levers.Env{AWS: func() (aws.Config, error) { return awsCfg, nil }, ELBv2: sb.APIURL(), CloudWatch: sb.APIURL()})}
	res, runErr := runCutover(ctx, cfg, dir, ccfg, lg, rec)
	rule, listener, err := alb.weights(ctx, api)
	if err != nil {
		return res, err
	}
	res.FinalWeights = rule
	res.RegisteredBy, res.Targets = registeredBy, map[string][]string{}
	for _, id := range ids {
		if res.Targets[id], err = groupTargets(ctx, api, alb.groups[id]); err != nil {
			return res, fmt.Errorf("target group %s: %w", albGroupName(id), err)
		}
	}
	if err := res.report(out); err != nil {
		return res, err
	}
	err = errors.Join(runErr, res.check())
	if got, want := cutover.FormatWeights(listener), cutover.FormatWeights(rule); got != want {
		err = errors.Join(err, fmt.Errorf("demo: the listener's default action weighs %s, its rule %s: both should have moved", got, want))
	}
	if err == nil {
		by := ""
		if ak != nil {
			var names []string
			for _, id := range ids {
				names = append(names, registeredBy[id])
			}
			by = "; targets registered by " + strings.Join(names, " and ")
		}
		fmt.Fprintf(out, "\ndemo: OK — every step passed, the final split is %s on the rule and the listener, %d requests served, 0 failed, no DNS change%s\n",
			cutover.FormatWeights(res.FinalWeights), total(res.Requests), by)
	}
	if cfg.Keep && ctx.Err() == nil {
		fmt.Fprint(out, albKeepHint(url, sb.APIURL(), alb, planFile, stateDir(dir)))
		if ak != nil {
			fmt.Fprint(out, ak.hint())
		}
		<-ctx.Done()
	}
	return res, err
}

// albKeepHint is what --keep prints in the ALB demo: where everything is, and commands
// that explore the ALB as printed, from any shell.
func albKeepHint(dashboardURL, apiURL string, a *albSetup, planFile, stateDir string) string {
	cli := fmt.Sprintf("AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s AWS_DEFAULT_REGION=%s %s --endpoint-url %s elbv2",
		accessKey, secretKey, region, awsCLI(), apiURL)
	return fmt.Sprintf("\n--keep: everything stays up until Ctrl-C:\n"+
		"  dashboard   %s\n"+
		"  ALB         curl -s -H 'Host: %s' http://%s/\n"+
		"  weights     %s describe-rules --rule-arns %s\n"+
		"  health      %s describe-target-health --target-group-arn %s\n"+
		"%s",
		dashboardURL, appName, a.addr, cli, a.rule, cli, a.groups["green"], runHint(planFile, stateDir))
}
