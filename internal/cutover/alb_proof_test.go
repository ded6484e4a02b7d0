package cutover

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	leveralb "github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/alb/albtest"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// What the ALB gates learn of the ALB lever, and how the runner uses them, on the
// in-memory leveralb.ELBv2 of lever_alb_test.go. The gates' own logic is tested in package gate;
// the whole against the sandbox, under traffic, in test/e2e/alb_cutover_test.go.

const lbShopDim = "app/shop/50dc6c495c0c9188"

func TestALBTargetGroups(t *testing.T) {
	f := albtest.NewFakeELB()
	f.SetWeights(albtest.ListenerWeb, albtest.TGBlue, 1, albtest.TGGrey, 5)
	lv := leveralb.New(albtest.Plan(), f)
	s, err := lv.Read(context.Background(), ReadOptions{Runner: levertest.Runner})
	if err != nil {
		t.Fatal(err)
	}
	got := s.GateInput(map[string]int64{"blue": 90, "green": 10}).TargetGroups
	want := []gate.TargetGroup{
		{Cluster: "blue", ARN: albtest.TGBlue, Name: "shop-blue", LoadBalancers: []string{lbShopDim}, Weight: 90},
		{Cluster: "green", ARN: albtest.TGGreen, Name: "shop-green", LoadBalancers: []string{lbShopDim}, Weight: 10},
		{ARN: albtest.TGGrey, Name: "shop-grey", LoadBalancers: []string{lbShopDim}, Weight: 5},
	}
	if len(got) != len(want) {
		t.Fatalf("target groups %+v, want %+v", got, want)
	}
	for i := range want {
		if g, w := got[i], want[i]; g.Cluster != w.Cluster || g.ARN != w.ARN || g.Name != w.Name || g.Weight != w.Weight || !slices.Equal(g.LoadBalancers, w.LoadBalancers) {
			t.Errorf("group %d: %+v, want %+v", i, g, w)
		}
	}
	// As read: blue 100 in the rule, 1 on the listener; green listed nowhere with weight.
	if as := s.GateInput(nil).TargetGroups; as[0].Weight != 100 || as[1].Weight != 0 {
		t.Errorf("as read: %+v", as)
	}
}

// albRunConfig runs albTestPlan on f with the gates given at every step.
func albRunConfig(t *testing.T, f *albtest.FakeELB, gates ...spec.Gate) Config {
	p := albtest.Plan()
	for i := range p.Steps {
		p.Steps[i].Gates = gates
	}
	return Config{Plan: p, Levers: albLevers(f, nil), StateDir: t.TempDir(), By: "test@host", CheckInterval: 5 * time.Millisecond, PollInterval: 5 * time.Millisecond}
}

// TestALBRunRefusesUnhealthyGroup: a step that would send traffic to a target group with
// no healthy target fails before its write, and the cutover rolls back: the group never
// gets a weight.
func TestALBRunRefusesUnhealthyGroup(t *testing.T) {
	f := albtest.NewFakeELB()
	f.Health[albtest.TGGreen] = []types.TargetHealthStateEnum{types.TargetHealthStateEnumUnhealthy, types.TargetHealthStateEnumDraining}
	cfg := albRunConfig(t, f, spec.Gate{Name: "healthy", TargetHealth: &spec.TargetHealthGate{MinHealthy: 1}})
	rep, err := Run(context.Background(), cfg, false)
	var rb *RollbackError
	if !errors.As(err, &rb) || rb.Step != 1 || !strings.Contains(rb.Reason, "gate healthy, checked before the write (nothing written): green (shop-green) has 0 healthy targets, want at least 1, at weight 10") {
		t.Fatalf("run: %v, want step 2 to fail before its write", err)
	}
	if r, l := f.GroupsOf(albtest.RuleHTTPS), f.GroupsOf(albtest.ListenerWeb); r != "shop-blue=100 shop-green=0" || l != "shop-blue=100 shop-green=0" {
		t.Errorf("rule %s, listener %s: want green at 0 throughout", r, l)
	}
	var failed *StepReport
	for i := range rep.Steps {
		if rep.Steps[i].Name == "step 2 (not written)" {
			failed = &rep.Steps[i]
		}
	}
	if failed == nil || failed.Outcome != "failed" || failed.Weights["green"] != 10 || len(failed.Gates) != 1 || failed.Gates[0].Pass {
		t.Errorf("report steps %+v: want step 2 listed as failed before its write, with the gate", rep.Steps)
	}
	var b strings.Builder
	if err := Text.Report(&b, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "  step 2 (not written) blue=90 green=10       failed   not seen in effect; gate healthy, checked before the write") {
		t.Errorf("text report:\n%s", b.String())
	}
}

// pendingGate passes as Pending (nothing judged yet) until judged is set, then passes.
type pendingGate struct {
	checks atomic.Int32
	after  int32 // judged from this check on; 0: never
}

func (g *pendingGate) Name() string { return "traffic" }

func (g *pendingGate) Check(_ context.Context, s gate.Step) gate.Result {
	n := g.checks.Add(1)
	if s.Since.IsZero() || len(s.TargetGroups) < 2 {
		return gate.Result{Gate: "traffic", Err: "no window or no target groups"}
	}
	if g.after > 0 && n >= g.after {
		return gate.Result{Gate: "traffic", Pass: true, Detail: "judged"}
	}
	return gate.Result{Gate: "traffic", Pass: true, Pending: true, Detail: "not judged yet: 3 requests"}
}

// TestPendingGateHoldsStep: a gate that has judged nothing yet holds the step past its
// pause until it judges, and fails the step at the step's time limit if it never does.
func TestPendingGateHoldsStep(t *testing.T) {
	g := &pendingGate{after: 4}
	cfg := albRunConfig(t, albtest.NewFakeELB())
	cfg.Plan.Steps = cfg.Plan.Steps[:1]
	cfg.NewGate = func(spec.Gate) (Gate, error) { return g, nil }
	cfg.Plan.Steps[0].Gates = []spec.Gate{{Name: "traffic"}}
	rep, err := Run(context.Background(), cfg, false)
	if err != nil || rep.Outcome != outcomeCompleted {
		t.Fatalf("run: %v", err)
	}
	if n := g.checks.Load(); n != 4 {
		t.Errorf("%d checks, want the step held until the 4th judged", n)
	}

	never := &pendingGate{}
	cfg = albRunConfig(t, albtest.NewFakeELB())
	cfg.Plan.Steps = cfg.Plan.Steps[:1]
	cfg.Plan.StepTimeout = 50 * time.Millisecond
	cfg.NewGate = func(spec.Gate) (Gate, error) { return never, nil }
	cfg.Plan.Steps[0].Gates = []spec.Gate{{Name: "traffic"}}
	_, err = Run(context.Background(), cfg, false)
	var rb *RollbackError
	if !errors.As(err, &rb) || !strings.Contains(rb.Reason, "step over its time limit 50ms: gate traffic has not judged: not judged yet: 3 requests") {
		t.Errorf("run: %v, want the step failed at its time limit naming the gate", err)
	}
}

// flakyGate cannot measure (Result.Err, as a throttled GetMetricData) at the checks listed
// in failing (1-based), and passes at the others.
type flakyGate struct {
	checks  atomic.Int32
	failing func(n int32) bool
}

func (g *flakyGate) Name() string { return "traffic" }

func (g *flakyGate) Check(context.Context, gate.Step) gate.Result {
	if n := g.checks.Add(1); g.failing(n) {
		return gate.Result{Gate: "traffic", Err: "GetMetricData: ThrottlingException: Rate exceeded"}
	}
	return gate.Result{Gate: "traffic", Pass: true, Detail: "judged"}
}

// TestGateThatCannotMeasureHoldsTheStep: a gate that fails to measure for a few checks in
// a row (one throttled call during a long hold) holds the step rather than rolling it
// back; one that cannot measure for unmeasuredChecks checks in a row fails it, naming
// the error.
func TestGateThatCannotMeasureHoldsTheStep(t *testing.T) {
	run := func(g *flakyGate) error {
		cfg := albRunConfig(t, albtest.NewFakeELB())
		cfg.Plan.Steps = cfg.Plan.Steps[:1]
		cfg.NewGate = func(spec.Gate) (Gate, error) { return g, nil }
		cfg.Plan.Steps[0].Gates = []spec.Gate{{Name: "traffic"}}
		cfg.Plan.Steps[0].Pause = 100 * time.Millisecond // ≈ 20 checks
		_, err := Run(context.Background(), cfg, false)
		return err
	}
	brief := &flakyGate{failing: func(n int32) bool { return n >= 2 && n < 2+unmeasuredChecks-1 }}
	if err := run(brief); err != nil {
		t.Errorf("%d checks in a row that could not measure: %v, want the step to pass once the gate measures again", unmeasuredChecks-1, err)
	}
	if n := brief.checks.Load(); n < unmeasuredChecks+1 {
		t.Errorf("%d checks: the step passed while its gate could not measure", n)
	}
	always := &flakyGate{failing: func(n int32) bool { return n >= 2 }}
	err := run(always)
	var rb *RollbackError
	if !errors.As(err, &rb) || !strings.Contains(rb.Reason, "ThrottlingException") {
		t.Fatalf("run: %v, want the step failed naming the error", err)
	}
	if n := always.checks.Load(); n != unmeasuredChecks+1 {
		t.Errorf("failed after %d checks, want %d (one that measured, then %d that could not)", n, unmeasuredChecks+1, unmeasuredChecks)
	}
}
