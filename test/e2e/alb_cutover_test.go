package e2e

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
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/authority"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/test/internal/cutovertest"
)

// The ALB lever end to end: an ALB on the sandbox's ELBv2 API with a real weighted proxy
// behind its listener, two target groups of two loopback backends each, a request loop
// through the listener the whole time, and `crossfade cutover run` (the binary) moving
// the listener rule's and the listener's forward weights, its gates reading target health
// from ELBv2 and per-group traffic from the sandbox's CloudWatch API.

// cutBackendHeader names the backend that answered: a response without it came from the
// proxy itself (a 502, 503 or 504), which the loop counts as a failed request.
const cutBackendHeader = "X-Backend"

// cutALB is the ALB of these tests on an in-process sandbox (cutovertest.ALB), with a real
// weighted proxy serving its listener.
type cutALB struct {
	*cutovertest.ALB
	t    *testing.T
	sb   *sandbox.Sandbox
	addr string // where the proxy serves the listener
	// failing makes the named group's backends answer 500 to everything but /healthz.
	failing map[string]*atomic.Bool
}

// newCutALB creates, through aws-sdk-go-v2, the ALB of cutovertest.NewALB (its listener and the
// rule for cutovertest.ALBHost forward blue=99 green=1) with two healthy backends in each of
// target groups blue and green.
func newCutALB(t *testing.T) *cutALB {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
	sb := startSandbox(t, sandbox.Config{})
	a := &cutALB{t: t, sb: sb, failing: map[string]*atomic.Bool{}}
	a.ALB = cutovertest.NewALB(t, sb.APIURL(), func(name string) []types.TargetDescription {
		a.failing[name] = new(atomic.Bool)
		return []types.TargetDescription{a.backend(name), a.backend(name)}
	})
	a.addr = sb.ListenerAddrs()[a.Listener]
	if a.addr == "" {
		t.Fatalf("the sandbox serves no address for listener %s: %v", a.Listener, sb.ListenerAddrs())
	}
	return a
}

// backend starts one target of group name on 127.0.0.1: it answers its group's name, 200
// on /healthz always, and 500 to everything else while the group is failing.
func (a *cutALB) backend(name string) types.TargetDescription {
	failing := a.failing[name]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(cutBackendHeader, name)
		switch {
		case r.URL.Path == "/healthz":
		case failing.Load():
			http.Error(w, name+" broken", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, name)
	}))
	a.t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	return types.TargetDescription{Id: aws.String("127.0.0.1"), Port: aws.Int32(int32(p))}
}

// weights reads the forward weights of the rule and of the listener's default action, by
// group name: "blue=0 green=100".
func (a *cutALB) weights() (rule, listener string) {
	a.t.Helper()
	return a.Weights(a.t)
}

// plan writes an ALB plan moving the rule and the listener from → to (group names) in
// 1 → 10 → 50 → 100 % steps of pause each, gated on target health and on the traffic
// CloudWatch counts (read with no publication delay: the sandbox counts at once); extra
// is appended to spec.
func (a *cutALB) plan(name, from, to, pause, extra string) string {
	a.t.Helper()
	plan := fmt.Sprintf(`apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: %s
spec:
  alb:
    listenerRules: [%s, %s]
    from: %s
    to: %s
    cloudWatch: {delay: 0s}
  steps: [1, 10, 50, 100]
  pause: %s
  gates:
    - name: healthy
      targetHealth: {minHealthy: 2}
    - name: traffic
      albTraffic: {period: 1, tolerance: 0.1, minRequests: 50, maxErrorRate: 0.01, maxResponseTime: 500ms}
%s`, name, a.Rule, a.Listener, from, to, pause, extra)
	return writePlan(a.t, name, plan)
}

// cutSample is one request of the loop: when it was sent and answered, which way it went
// (through the rule or the listener's default action), and which group answered.
// cutStepWindows are, per step index, the time its last write was seen in effect and the
// time it passed, from the journal.
func cutStepWindows(t *testing.T, state, name string) map[int][2]time.Time {
	t.Helper()
	entries, err := journal.Read(cutover.PathsFor(state, name).Journal)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int][2]time.Time{}
	for _, e := range entries {
		w := out[e.Step]
		switch e.Kind {
		case "insync":
			w[0] = e.Time
		case "step-passed":
			w[1] = e.Time
		default:
			continue
		}
		out[e.Step] = w
	}
	return out
}

// TestALBCutover moves an ALB's listener rule and listener default action from 99/1 to
// 0/100 by `crossfade cutover run` while requests flow through the listener: not one
// request fails, every step's measured share (the loop's own counts, and CloudWatch's as
// the traffic gate read them) is within tolerance of its weights, the final weights are
// 0/100 on both, the retire check reads blue's RequestCount down to 0, and the report
// prints the final forward blocks for Terraform.
func TestALBCutover(t *testing.T) {
	began := time.Now()
	a := newCutALB(t)
	load := cutovertest.StartLoad(t, a.addr, cutBackendHeader, 4, 3*time.Millisecond)
	load.WaitRequests(t, 100)
	// CloudWatch answers whole periods only: the plan's traffic gate reads the last ten
	// 1-second periods up to now, rounded down, so the loop's first requests must lie in a
	// second that has ended (on a loaded machine, 100 requests can all fall in this one).
	time.Sleep(2 * time.Second)
	state := t.TempDir()
	planFile := a.plan("shop", "blue", "green", "2s", `  retire:
    cloudWatch: {period: 1}
    maxRate: 0
    window: 2s
    timeout: 30s
`)
	out, code := runCutover(t, a.sb, state, "plan", planFile)
	if code != 0 {
		t.Fatalf("cutover plan exited %d:\n%s", code, out)
	}
	mustContain(t, "cutover plan", out, "current weights blue=99 green=1", "target group blue: 2 healthy of 2 targets",
		"gate healthy (targetHealth) now: pass")
	// At 1 % green gets minRequests (50) of its own in the plan's 10 s window only on a fast
	// machine: below them its error rate and response time are not judged, which the gate
	// says (pending), never a pass.
	if !strings.Contains(out, "gate traffic (albTraffic) now: pass") &&
		!strings.Contains(out, "gate traffic (albTraffic) now: pending: not judged yet: green: ") {
		t.Fatalf("cutover plan: the traffic gate neither passes nor waits for green's requests:\n%s", out)
	}
	runStart := time.Now()
	out, code = runCutover(t, a.sb, state, "run", planFile)
	runTook := time.Since(runStart)
	load.Halt()
	if code != 0 {
		t.Fatalf("cutover run exited %d:\n%s", code, out)
	}
	if len(load.Failures()) > 0 {
		t.Errorf("%d of %d requests failed during the cutover; first: %s", len(load.Failures()), load.Total(), load.Failures()[0])
	}
	if rule, listener := a.weights(); rule != "blue=0 green=100" || listener != "blue=0 green=100" {
		t.Errorf("final weights: rule %s, listener %s; want blue=0 green=100 on both", rule, listener)
	}
	mustContain(t, "cutover run", out, "cutover shop: completed",
		"retire: blue retirable: its request rate stayed ≤ 0 req/s for 2s",
		"the listener rules' weights now, as Terraform's forward block",
		"# aws_lb_listener_rule for "+a.Rule, "# aws_lb_listener for "+a.Listener,
		`arn    = "`+a.Groups["blue"]+`" # blue`+"\n          weight = 0\n",
		`arn    = "`+a.Groups["green"]+`" # green`+"\n          weight = 100\n")

	// Every step, as the loop saw it and as CloudWatch counted it for the traffic gate.
	rep := readCutReport(t, state, "shop")
	windows := cutStepWindows(t, state, "shop")
	for i, want := range []float64{0.01, 0.10, 0.50, 1} {
		w := windows[i]
		if w[0].IsZero() || w[1].IsZero() {
			t.Fatalf("step %d: no in-effect or passed entry in the journal: %v", i+1, windows)
		}
		for _, rule := range []bool{true, false} {
			got, n := load.Share(w[0], w[1], rule, "green")
			tol := math.Max(0.05, 5*math.Sqrt(want*(1-want)/float64(max(n, 1))))
			if n < 100 || math.Abs(got-want) > tol {
				t.Errorf("step %d (rule %v): green answered %.3f of %d requests, want %.2f ± %.3f", i+1, rule, got, n, want, tol)
			}
			t.Logf("step %d via %s: green %.1f%% of %d requests (want %.0f%%)", i+1, map[bool]string{true: "rule", false: "default action"}[rule], got*100, n, want*100)
		}
		var traffic *float64
		for _, s := range rep.Steps {
			if s.Name != fmt.Sprintf("step %d of 4", i+1) {
				continue
			}
			for _, g := range s.Gates {
				if g.Gate == "traffic" && g.Pass && !g.Pending {
					v := g.Values["green.share"]
					traffic = &v
					t.Logf("step %d: CloudWatch: %s", i+1, g.Detail)
				}
			}
		}
		if traffic == nil || math.Abs(*traffic-want) > 0.1 {
			t.Errorf("step %d: the traffic gate measured green's share %v, want %.2f ± 0.1", i+1, traffic, want)
		}
	}
	t.Logf("%d requests, %d failed; cutover run took %s, the whole test %s", load.Total(), len(load.Failures()), runTook.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
}

// readCutReport reads the report the run saved.
func readCutReport(t *testing.T, state, name string) *cutover.Report {
	t.Helper()
	entries, err := journal.Read(cutover.PathsFor(state, name).Journal)
	if err != nil {
		t.Fatal(err)
	}
	return cutover.BuildReport(name, entries)
}

// TestALBCutoverRollsBack: green's backends start answering 500 once the 50 % step is in
// effect; the traffic gate's error rate (CloudWatch's HTTPCode_Target_5XX_Count over
// RequestCount) fails the step, the cutover rolls both the rule and the listener back to
// 99/1, the journal says why, and no request fails on the way (the 500s are the backends'
// own answers).
func TestALBCutoverRollsBack(t *testing.T) {
	a := newCutALB(t)
	load := cutovertest.StartLoad(t, a.addr, cutBackendHeader, 4, 3*time.Millisecond)
	load.WaitRequests(t, 100)
	state := t.TempDir()
	planFile := a.plan("shop-fails", "blue", "green", "2s", "")
	cmd, out := cutoverCmd(t, a.sb, state, "run", planFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Break green when the third step (50 %) is in effect.
	broke := make(chan struct{})
	go func() {
		defer close(broke)
		for range 3000 {
			entries, _ := journal.Read(cutover.PathsFor(state, "shop-fails").Journal)
			for _, e := range entries {
				if e.Kind == "insync" && e.Step == 2 {
					a.failing["green"].Store(true)
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	code := waitCmd(t, cmd, out)
	<-broke
	load.Halt()
	if code == 0 {
		t.Fatalf("cutover run exited 0, want a rollback:\n%s", out)
	}
	if !a.failing["green"].Load() {
		t.Fatalf("the run never reached the 50 %% step:\n%s", out)
	}
	if len(load.Failures()) > 0 {
		t.Errorf("%d of %d requests failed; first: %s", len(load.Failures()), load.Total(), load.Failures()[0])
	}
	if rule, listener := a.weights(); rule != "blue=99 green=1" || listener != "blue=99 green=1" {
		t.Errorf("weights after the rollback: rule %s, listener %s; want blue=99 green=1 on both", rule, listener)
	}
	entries, err := journal.Read(cutover.PathsFor(state, "shop-fails").Journal)
	if err != nil {
		t.Fatal(err)
	}
	var failed, rolled, done string
	for _, e := range entries {
		switch e.Kind {
		case "step-failed":
			failed = fmt.Sprintf("step %d: %s", e.Step+1, e.Detail)
		case "rollback":
			rolled = e.Detail
		case "done":
			done = e.Detail
		}
	}
	if !strings.HasPrefix(failed, "step 3: gate traffic: green: target 5xx rate") || !strings.Contains(failed, "above 1%") || rolled == "" || done != "rolled-back" {
		t.Errorf("journal: step-failed %q, rollback %q, done %q", failed, rolled, done)
	}
	mustContain(t, "cutover run", out.String(), "cutover shop-fails: rolled-back", "rolled back: gate traffic: green: target 5xx rate")
	t.Logf("journal: %s; %d requests, %d failed", failed, load.Total(), len(load.Failures()))
}

// TestALBCutoverSelectsTheCluster runs a plan that names the ALB (spec.alb.select) instead
// of its rules, against the sandbox's ELBv2 API: the selection (DescribeListeners by load
// balancer, DescribeRules by listener) must pick the listener's default action and the
// host-header rule, both forwarding to blue and green, and leave out a rule forwarding to
// blue and a third group only; the run then moves exactly those two to 0/100 while
// requests flow, and the left-out rule keeps its weights.
func TestALBCutoverSelectsTheCluster(t *testing.T) {
	a := newCutALB(t)
	ctx := context.Background()
	ls, err := a.API.DescribeListeners(ctx, &elbv2.DescribeListenersInput{ListenerArns: []string{a.Listener}})
	if err != nil {
		t.Fatal(err)
	}
	lb := aws.ToString(ls.Listeners[0].LoadBalancerArn)
	// A third group, and a rule forwarding to blue and it: not the cluster pair, so not selected.
	tg, err := a.API.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String("other"), Protocol: types.ProtocolEnumHttp,
		Port: aws.Int32(8080), VpcId: aws.String("vpc-1"), TargetType: types.TargetTypeEnumIp, HealthCheckPath: aws.String("/healthz")})
	if err != nil {
		t.Fatal(err)
	}
	a.Groups["other"] = aws.ToString(tg.TargetGroups[0].TargetGroupArn)
	a.failing["other"] = new(atomic.Bool)
	if _, err := a.API.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: aws.String(a.Groups["other"]),
		Targets: []types.TargetDescription{a.backend("other")}}); err != nil {
		t.Fatal(err)
	}
	r, err := a.API.CreateRule(ctx, &elbv2.CreateRuleInput{ListenerArn: aws.String(a.Listener), Priority: aws.Int32(20),
		Actions:    cutovertest.Forward(a.Groups["blue"], 50, a.Groups["other"], 50),
		Conditions: []types.RuleCondition{{Field: aws.String("host-header"), HostHeaderConfig: &types.HostHeaderConditionConfig{Values: []string{"other.example.com"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	unrelated := aws.ToString(r.Rules[0].RuleArn)

	load := cutovertest.StartLoad(t, a.addr, cutBackendHeader, 4, 3*time.Millisecond)
	load.WaitRequests(t, 100)
	state := t.TempDir()
	planFile := filepath.Join(t.TempDir(), "shop-select.yaml")
	plan := fmt.Sprintf(`apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: shop-select
spec:
  alb:
    select: {loadBalancers: [%s]}
    from: blue
    to: green
  steps: [1, 50, 100]
  pause: 1s
  gates:
    - name: healthy
      targetHealth: {minHealthy: 2}
`, lb)
	writeFile(t, planFile, plan)
	out, code := runCutover(t, a.sb, state, "plan", planFile)
	if code != 0 {
		t.Fatalf("cutover plan exited %d:\n%s", code, out)
	}
	mustContain(t, "cutover plan", out, "selected 2 listeners and rules forwarding to both target groups:\n  listener "+a.Listener+"\n  rule "+a.Rule+"\n")
	if strings.Contains(out, unrelated) {
		t.Errorf("cutover plan names the rule forwarding to blue and other, which it must not select:\n%s", out)
	}
	out, code = runCutover(t, a.sb, state, "run", planFile)
	load.Halt()
	if code != 0 {
		t.Fatalf("cutover run exited %d:\n%s", code, out)
	}
	mustContain(t, "cutover run", out, "cutover shop-select: completed")
	if len(load.Failures()) > 0 {
		t.Errorf("%d of %d requests failed during the cutover; first: %s", len(load.Failures()), load.Total(), load.Failures()[0])
	}
	if rule, listener := a.weights(); rule != "blue=0 green=100" || listener != "blue=0 green=100" {
		t.Errorf("final weights: rule %s, listener %s; want blue=0 green=100 on both", rule, listener)
	}
	// The selection is journaled with the start entry, so a resume moves exactly these.
	entries, err := journal.Read(cutover.PathsFor(state, "shop-select").Journal)
	if err != nil {
		t.Fatal(err)
	}
	var start struct{ Selected *cutover.Selection }
	for _, e := range entries {
		if e.Kind == "start" {
			if err := json.Unmarshal(e.Data, &start); err != nil {
				t.Fatalf("the start entry's data: %v", err)
			}
		}
	}
	if start.Selected == nil || !slices.Equal(start.Selected.ListenerRules, []string{a.Listener, a.Rule}) {
		t.Errorf("journaled selection %+v, want the listener %s and the rule %s", start.Selected, a.Listener, a.Rule)
	}
	rs, err := a.API.DescribeRules(ctx, &elbv2.DescribeRulesInput{RuleArns: []string{unrelated}})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Render(rs.Rules[0].Actions); got != "blue=50 other=50" {
		t.Errorf("the unselected rule's weights: %s, want blue=50 other=50 (unchanged)", got)
	}
	t.Logf("%d requests, %d failed", load.Total(), len(load.Failures()))
}

// authority lists the cutover authority tags on the rule and on the listener's default
// rule (which carries the listener's): "KEY=VALUE", sorted.
func (a *cutALB) authority() []string {
	a.t.Helper()
	ctx := context.Background()
	rules, err := a.API.DescribeRules(ctx, &elbv2.DescribeRulesInput{ListenerArn: aws.String(a.Listener)})
	if err != nil {
		a.t.Fatal(err)
	}
	arns := []string{a.Rule}
	for _, r := range rules.Rules {
		if aws.ToBool(r.IsDefault) {
			arns = append(arns, aws.ToString(r.RuleArn))
		}
	}
	out, err := a.API.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: arns})
	if err != nil {
		a.t.Fatal(err)
	}
	var got []string
	for _, d := range out.TagDescriptions {
		for _, tg := range d.Tags {
			if strings.HasPrefix(aws.ToString(tg.Key), authority.TagPrefix) {
				got = append(got, aws.ToString(tg.Key)+"="+aws.ToString(tg.Value))
			}
		}
	}
	slices.Sort(got)
	return got
}

// quickPlan writes an ALB plan moving the rule and the listener from → to (group names)
// in 50 → 100 % steps of pause each, gated on target health only.
func (a *cutALB) quickPlan(name, from, to, pause string) string {
	a.t.Helper()
	plan := fmt.Sprintf(`apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: %s
spec:
  alb:
    listenerRules: [%s, %s]
    from: %s
    to: %s
  steps: [50, 100]
  pause: %s
  gates:
    - name: healthy
      targetHealth: {minHealthy: 2}
`, name, a.Rule, a.Listener, from, to, pause)
	return writePlan(a.t, name, plan)
}

// TestALBCutoverTwoRunners runs `crossfade cutover run` of one ALB plan twice at the same
// moment from two state directories (two machines: their flock locks cannot see each
// other), several times over: each time exactly one moves the rules to its end, and the
// other exits 1 naming the winner's runner token, its journal showing no write; the
// winner's authority tags are gone when it ends. Then machine A runs a cutover and holds
// the rules: a runner from machine C is refused naming A; machine B, whose journal of the
// cutover started with another token, aborts it, takes the rules over from A (and says
// so) and rolls them back; A stops at its next read without writing over B's rollback,
// and no tag is left. Requests flow through the listener the whole time; none fails.
func TestALBCutoverTwoRunners(t *testing.T) {
	a := newCutALB(t)
	load := cutovertest.StartLoad(t, a.addr, cutBackendHeader, 2, 3*time.Millisecond)
	load.WaitRequests(t, 50)
	const races = 4
	for i := range races {
		from, to := "blue", "green"
		if i%2 == 1 {
			from, to = to, from
		}
		name := fmt.Sprintf("alb-race-%02d", i)
		planFile := a.quickPlan(name, from, to, "1s")
		token, _ := raceRunners(t, a.sb, name, planFile)
		want := fmt.Sprintf("%s=0 %s=100", from, to)
		if from == "green" {
			want = fmt.Sprintf("%s=100 %s=0", to, from)
		}
		if rule, listener := a.weights(); rule != want || listener != want {
			t.Fatalf("race %d: rule %s, listener %s; want %s", i, rule, listener, want)
		}
		if tags := a.authority(); len(tags) > 0 {
			t.Errorf("race %d: authority tags left after the winner ended: %q", i, tags)
		}
		t.Logf("race %d: %s → %s, runner %s won", i, from, to, token)
	}

	// The takeover. After an even number of races blue holds the traffic again.
	planFile := a.quickPlan("alb-takeover", "blue", "green", "1h")
	dirA, dirB, dirC := t.TempDir(), t.TempDir(), t.TempDir()
	cmdA, outA := cutoverCmd(t, a.sb, dirA, "run", planFile)
	if err := cmdA.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmdA.Process.Kill(); cmdA.Wait() })
	waitJournal(t, dirA, "alb-takeover", "insync")
	tokenA := journalToken(t, dirA, "alb-takeover")
	if tags := a.authority(); len(tags) != 2 || !strings.HasPrefix(tags[0], authority.TagPrefix+"alb-takeover/"+tokenA+"="+tokenA+"@") {
		t.Fatalf("A's authority tags: %q, want its token on the rule and the default rule", tags)
	}
	// A third machine without a journal is refused, naming A.
	out, code := runCutover(t, a.sb, dirC, "run", planFile)
	if code != 1 || !strings.Contains(out, "held by another runner, runner "+tokenA+"@") || !strings.Contains(out, "(tag "+authority.TagPrefix+"alb-takeover/"+tokenA+" on ") {
		t.Fatalf("run from C exited %d, want 1 naming A's runner and tag:\n%s", code, out)
	}
	for _, e := range journalEntries(t, dirC, "alb-takeover") {
		if e["kind"] == "written" || e["kind"] == "intent" {
			t.Errorf("C journaled %v", e)
		}
	}
	// Machine B's journal of the cutover, as a runner that started there left it.
	start := fmt.Sprintf(`{"seq":1,"time":%q,"kind":"start","step":-1,"weights":{"blue":99,"green":1},"token":"b0b0b0b0b0b0b0b0"}`+"\n",
		time.Now().UTC().Format(time.RFC3339Nano))
	writeFile(t, filepath.Join(dirB, "alb-takeover.journal"), start)
	out, code = runCutover(t, a.sb, dirB, "abort", planFile)
	if code != 0 || !strings.Contains(out, "took the weights over from runner "+tokenA+"@") || !strings.Contains(out, "rolled-back") {
		t.Fatalf("abort from B exited %d, want a rollback that says it took over from runner %s:\n%s", code, tokenA, out)
	}
	if rule, listener := a.weights(); rule != "blue=99 green=1" || listener != "blue=99 green=1" {
		t.Fatalf("after B's abort: rule %s, listener %s; want blue=99 green=1", rule, listener)
	}
	// A stops at its next read: B's tags in place of its own, or, B having ended, none.
	code = waitCmd(t, cmdA, outA)
	if code != 1 || !(strings.Contains(outA.String(), "held by another runner, runner b0b0b0b0b0b0b0b0@") ||
		strings.Contains(outA.String(), "another runner took them over and ended (cutover abort elsewhere)")) {
		t.Fatalf("A after the takeover exited %d, want 1, stopped by B's takeover:\n%s", code, outA)
	}
	if rule, listener := a.weights(); rule != "blue=99 green=1" || listener != "blue=99 green=1" {
		t.Errorf("after A stopped: rule %s, listener %s; want B's rollback kept", rule, listener)
	}
	if tags := a.authority(); len(tags) > 0 {
		t.Errorf("authority tags left: %q", tags)
	}

	// A runner killed while it holds the rules leaves its tags: `cutover release` refuses
	// the unfinished cutover, `abort` rolls it back and removes them, and release then
	// speaks of the ALB's tags, not of DNS records.
	planFile = a.quickPlan("alb-release", "blue", "green", "1h")
	dirD := t.TempDir()
	cmdD, outD := cutoverCmd(t, a.sb, dirD, "run", planFile)
	if err := cmdD.Start(); err != nil {
		t.Fatal(err)
	}
	waitJournal(t, dirD, "alb-release", "insync")
	_ = cmdD.Process.Kill()
	_ = cmdD.Wait()
	if tags := a.authority(); len(tags) != 2 {
		t.Fatalf("after kill -9 of a holding runner: tags %q, want its 2 left:\n%s", tags, outD)
	}
	// Unfinished, it is not released: it is finished or aborted first.
	if out, code = runCutover(t, a.sb, dirD, "release", planFile); code != 1 || !strings.Contains(out, "unfinished") {
		t.Fatalf("release of an unfinished cutover exited %d, want 1 saying so:\n%s", code, out)
	}
	if out, code = runCutover(t, a.sb, dirD, "abort", planFile); code != 0 || !strings.Contains(out, "rolled-back") {
		t.Fatalf("abort after kill -9 exited %d, want a rollback:\n%s", code, out)
	}
	if tags := a.authority(); len(tags) > 0 {
		t.Errorf("authority tags left after the abort: %q", tags)
	}
	if out, code = runCutover(t, a.sb, dirD, "release", planFile); code != 0 || !strings.Contains(out, "cutover alb-release: authority tags removed from 0 listener rules") {
		t.Fatalf("release after the abort exited %d, want 0 in the ALB's words:\n%s", code, out)
	}
	load.Halt()
	if len(load.Failures()) > 0 {
		t.Errorf("%d of %d requests failed; first: %s", len(load.Failures()), load.Total(), load.Failures()[0])
	}
	t.Logf("%d requests, %d failed; A: %s", load.Total(), len(load.Failures()), lastLine(outA.String()))
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
