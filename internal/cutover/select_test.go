package cutover

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	leveralb "github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/alb/albtest"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/authority"
	lr53 "github.com/crossfade-io/crossfade/internal/cutover/lever/route53"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// publishSets syncs, as owner, one weighted A member with set identifier setID per name
// (name → weight), as `crossfade sync` publishes a cluster's names.
func publishSets(t *testing.T, dns *route53.Provider, owner, setID, ip string, names map[string]int64) {
	t.Helper()
	reg, err := registry.New(registry.Config{OwnerID: owner})
	if err != nil {
		t.Fatal(err)
	}
	var eps []*endpoint.Endpoint
	for name, w := range names {
		eps = append(eps, &endpoint.Endpoint{Name: name, Type: "A", Targets: endpoint.Targets{ip}, TTL: 1, SetIdentifier: setID,
			Policy: endpoint.WeightedPolicy(w), Labels: endpoint.Labels{endpoint.ResourceLabel: "service/default/" + strings.Split(name, ".")[0]}})
	}
	rep, err := (&controller.Syncer{Provider: dns, Registry: reg, Policy: changes.Sync}).Sync(context.Background(), eps)
	if err != nil || rep.Err() != nil {
		t.Fatalf("publish %s: %v", owner, errors.Join(err, rep.Err()))
	}
}

// weightsOf reads the weighted A members of name: set identifier → weight.
func (e *env) weightsOf(t *testing.T, name string) map[string]int64 {
	t.Helper()
	zones, _ := e.DNS.Zones(context.Background())
	recs, err := e.DNS.Records(context.Background(), zones[0])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range recs {
		if r.Name == name && r.Type == "A" {
			out[r.SetIdentifier] = r.Policy.Weight
		}
	}
	return out
}

// startSelection is the selection the journal's start entry keeps.
func startSelection(t *testing.T, path string) Selection {
	t.Helper()
	entries, err := journal.Read(path)
	if err != nil || len(entries) == 0 || entries[0].Kind != kindStart {
		t.Fatalf("journal: %v, %d entries", err, len(entries))
	}
	var d startData
	if err := json.Unmarshal(entries[0].Data, &d); err != nil || d.Selected == nil {
		t.Fatalf("start entry data %s: %v", entries[0].Data, err)
	}
	return *d.Selected
}

// TestSelectAllWeighted: spec.select picks exactly the names with a blue and a green
// member (not one with blue alone, nor blue and a third cluster, nor a third cluster
// only), `cutover plan` lists them, the start entry keeps them, and a resume after a
// name was added moves only what was selected at start.
func TestSelectAllWeighted(t *testing.T) {
	e := newEnv(t, 100, 0) // app.example.com: blue 100, green 0
	publishSets(t, e.DNS, "blue", "blue", "127.0.0.10", map[string]int64{"app.example.com": 100, "api.example.com": 100, "solo.example.com": 100, "mixed.example.com": 100})
	publishSets(t, e.DNS, "green", "green", "127.0.0.20", map[string]int64{"app.example.com": 0, "api.example.com": 0})
	publishSets(t, e.DNS, "red", "red", "127.0.0.30", map[string]int64{"mixed.example.com": 0, "other.example.com": 100})
	publishSets(t, e.DNS, "yellow", "yellow", "127.0.0.40", map[string]int64{"other.example.com": 0})

	p := testPlan(t)
	p.Records, p.SelectAllWeighted = nil, true
	p.Steps = p.Steps[1:] // 10, 50, 100
	want := []spec.Record{{Name: "api.example.com", Type: "A"}, {Name: "app.example.com", Type: "A"}}

	pv, err := DryRun(context.Background(), e.config(p))
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if !slices.Equal(pv.Selected, []string{"api.example.com A", "app.example.com A"}) || len(p.Records) != 0 {
		t.Errorf("preview selected %q (plan's records %v)", pv.Selected, p.Records)
	}
	var b strings.Builder
	if err := Text.Preview(&b, pv); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "selected 2 weighted record sets with members blue and green:\n  api.example.com A\n  app.example.com A\n") ||
		!strings.Contains(b.String(), "a record or rule added after the start is not moved") {
		t.Errorf("preview text:\n%s", b.String())
	}

	// Interrupted while step 1 holds.
	cfg := e.config(p)
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Progress = progressHook(func(ev Event) {
		if ev.Phase == PhaseHolding && ev.Step == 0 {
			cancel()
		}
	})
	if _, err := Run(ctx, cfg, false); !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v, want context.Canceled", err)
	}
	paths := PathsFor(e.dir, p.Name)
	if got := startSelection(t, paths.Journal); !slices.Equal(got.Records, want) {
		t.Errorf("journaled selection %v, want %v", got.Records, want)
	}
	// A name added meanwhile, with blue and green members: selected afresh it would be.
	publishSets(t, e.DNS, "late-blue", "blue", "127.0.0.10", map[string]int64{"late.example.com": 100})
	publishSets(t, e.DNS, "late-green", "green", "127.0.0.20", map[string]int64{"late.example.com": 0})
	if s, err := lr53.New(clonePlan(p), e.DNS, nil).Select(context.Background()); err != nil || len(s.Records) != 3 {
		t.Errorf("selection made afresh after the name was added: %v, %v", err, s.Records)
	}

	rep, err := Run(context.Background(), e.config(p), true)
	if err != nil || rep == nil || rep.Outcome != outcomeCompleted {
		t.Fatalf("resume: %v, report %+v", err, rep)
	}
	for name, w := range map[string]map[string]int64{
		"app.example.com":   {"blue": 0, "green": 100},
		"api.example.com":   {"blue": 0, "green": 100},
		"late.example.com":  {"blue": 100, "green": 0},
		"solo.example.com":  {"blue": 100},
		"mixed.example.com": {"blue": 100, "red": 0},
		"other.example.com": {"red": 100, "yellow": 0},
	} {
		if got := e.weightsOf(t, name); !mapsEqual(got, w) {
			t.Errorf("%s: weights %v, want %v", name, got, w)
		}
	}
	if got := startSelection(t, paths.Journal); !slices.Equal(got.Records, want) {
		t.Errorf("selection after the resume %v, want %v", got.Records, want)
	}
}

// TestSelectNothingRefused: a selection that finds nothing refuses to start, naming the
// zone and the members, and journals nothing.
func TestSelectNothingRefused(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	p.Records, p.SelectAllWeighted, p.To = nil, true, "purple"
	_, err := Run(context.Background(), e.config(p), false)
	var nr *NotReadyError
	if !errors.As(err, &nr) || !strings.Contains(err.Error(), "spec.select: zone example.com has no weighted record set with members for both blue and purple") {
		t.Fatalf("run: %v", err)
	}
	if entries, _ := journal.Read(PathsFor(e.dir, p.Name).Journal); len(entries) != 0 {
		t.Errorf("journal has %d entries", len(entries))
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

const (
	lbShop     = albtest.ARN + "loadbalancer/app/shop/50dc6c495c0c9188"
	lisHTTPS   = albtest.ARN + "listener/app/shop/50dc6c495c0c9188/f2f7dc8efc522ab2"
	ruleGrey   = albtest.ARN + "listener-rule/app/shop/50dc6c495c0c9188/f2f7dc8efc522ab2/1111111111111111"
	ruleOnly   = albtest.ARN + "listener-rule/app/shop/50dc6c495c0c9188/f2f7dc8efc522ab2/2222222222222222"
	ruleDef    = albtest.ARN + "listener-rule/app/shop/50dc6c495c0c9188/f2f7dc8efc522ab2/3333333333333333"
	ruleLate   = albtest.ARN + "listener-rule/app/shop/50dc6c495c0c9188/f2f7dc8efc522ab2/4444444444444444"
	lisOther   = albtest.ARN + "listener/app/other/6b6b6b6b6b6b6b6b/5555555555555555"
	lbOther    = albtest.ARN + "loadbalancer/app/other/6b6b6b6b6b6b6b6b"
	lbNotFound = albtest.ARN + "loadbalancer/app/gone/7c7c7c7c7c7c7c7c"
)

// selectFakeELB is newFakeELB with shop's HTTPS listener (default action blue 100, green
// 0), holding albtest.RuleHTTPS (blue and green), a rule to blue and grey, a rule to grey alone
// and its default rule (blue and green: selected as the listener), beside the HTTP
// listener (blue alone); and another load balancer forwarding to blue and green.
func selectFakeELB() *albtest.FakeELB {
	f := albtest.NewFakeELB()
	f.Listeners[lisHTTPS] = types.Listener{ListenerArn: aws.String(lisHTTPS), Port: aws.Int32(443), Protocol: types.ProtocolEnumHttps,
		DefaultActions: []types.Action{albtest.Forward(nil, albtest.TGBlue, 100, albtest.TGGreen, 0)}}
	f.Listeners[lisOther] = types.Listener{ListenerArn: aws.String(lisOther), Port: aws.Int32(80), Protocol: types.ProtocolEnumHttp,
		DefaultActions: []types.Action{albtest.Forward(nil, albtest.TGBlue, 100, albtest.TGGreen, 0)}}
	f.Rules[ruleGrey] = types.Rule{RuleArn: aws.String(ruleGrey), Priority: aws.String("20"), Actions: []types.Action{albtest.Forward(nil, albtest.TGBlue, 100, albtest.TGGrey, 0)}}
	f.Rules[ruleOnly] = types.Rule{RuleArn: aws.String(ruleOnly), Priority: aws.String("30"),
		Actions: []types.Action{{Type: types.ActionTypeEnumForward, TargetGroupArn: aws.String(albtest.TGGrey)}}}
	f.Rules[ruleDef] = types.Rule{RuleArn: aws.String(ruleDef), Priority: aws.String("default"), IsDefault: aws.Bool(true),
		Actions: []types.Action{albtest.Forward(nil, albtest.TGBlue, 100, albtest.TGGreen, 0)}}
	return f
}

// TestALBSelect: spec.alb.select picks exactly the listeners and rules of the named load
// balancers whose forward action lists both from's and to's group; a load balancer not
// found, or nothing found, is refused.
func TestALBSelect(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		lbs      []string
		to       string
		want     []string
		problems string
	}{
		{"shop", []string{lbShop}, "shop-green", []string{lisHTTPS, albtest.RuleHTTPS}, ""},
		{"both load balancers", []string{lbOther, lbShop}, "shop-green", []string{lisOther, lisHTTPS, albtest.RuleHTTPS}, ""},
		{"to grey", []string{lbShop}, "shop-grey", []string{ruleGrey}, ""},
		{"nothing found", []string{lbOther}, "shop-grey", nil,
			"spec.alb.select: no listener or rule of load balancers " + lbOther + " forwards to both shop-blue and shop-grey: nothing to move"},
		{"load balancer not found", []string{lbShop, lbNotFound}, "shop-green", nil, "load balancer " + lbNotFound + " (spec.alb.select.loadBalancers): not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := albtest.Plan()
			p.ALB.ListenerRules, p.ALB.Select, p.ALB.To = nil, &spec.ALBSelect{LoadBalancers: tc.lbs}, tc.to
			s, err := leveralb.New(p, selectFakeELB()).Select(ctx)
			if tc.problems != "" {
				var nr *NotReadyError
				if !errors.As(err, &nr) || !strings.Contains(err.Error(), tc.problems) {
					t.Fatalf("select: %v, want %q", err, tc.problems)
				}
				return
			}
			if err != nil || !slices.Equal(s.ListenerRules, tc.want) {
				t.Errorf("select: %v, %q; want %q", err, s.ListenerRules, tc.want)
			}
		})
	}
}

// TestALBSelectRunAndResume: an ALB cutover that selects moves what it selected at start,
// journals it, and, resumed after a rule to both groups was added, leaves that rule alone.
func TestALBSelectRunAndResume(t *testing.T) {
	f := selectFakeELB()
	p := albtest.Plan()
	p.ALB.ListenerRules, p.ALB.Select = nil, &spec.ALBSelect{LoadBalancers: []string{lbShop}}
	dir := t.TempDir()
	cfg := Config{Plan: p, Levers: albLevers(f, nil), StateDir: dir, By: "test@host", CheckInterval: 10 * time.Millisecond, PollInterval: 5 * time.Millisecond}
	pauseEach(p, 200*time.Millisecond)
	pv, err := DryRun(context.Background(), cfg)
	if err != nil || !slices.Equal(pv.Selected, []string{"listener " + lisHTTPS, "rule " + albtest.RuleHTTPS}) {
		t.Fatalf("preview: %v, selected %q", err, pv.Selected)
	}
	ctx, cancel := context.WithCancel(context.Background())
	run := cfg
	run.Progress = progressHook(func(ev Event) {
		if ev.Phase == PhaseHolding && ev.Step == 1 {
			cancel()
		}
	})
	if _, err := Run(ctx, run, false); !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v, want context.Canceled", err)
	}
	paths := PathsFor(dir, p.Name)
	want := []string{lisHTTPS, albtest.RuleHTTPS}
	if got := startSelection(t, paths.Journal); !slices.Equal(got.ListenerRules, want) {
		t.Errorf("journaled selection %q, want %q", got.ListenerRules, want)
	}
	f.Mu.Lock()
	f.Rules[ruleLate] = types.Rule{RuleArn: aws.String(ruleLate), Priority: aws.String("40"), Actions: []types.Action{albtest.Forward(nil, albtest.TGBlue, 100, albtest.TGGreen, 0)}}
	f.Mu.Unlock()
	rep, err := Run(context.Background(), cfg, true)
	if err != nil || rep == nil || rep.Outcome != outcomeCompleted {
		t.Fatalf("resume: %v, report %+v", err, rep)
	}
	for arn, w := range map[string]string{
		lisHTTPS:            "shop-blue=0 shop-green=100",
		albtest.RuleHTTPS:   "shop-blue=0 shop-green=100",
		ruleLate:            "shop-blue=100 shop-green=0",
		ruleGrey:            "shop-blue=100 shop-grey=0",
		albtest.ListenerWeb: "shop-blue",
		lisOther:            "shop-blue=100 shop-green=0",
	} {
		if got := f.GroupsOf(arn); got != w {
			t.Errorf("%s: %s, want %s", arn, got, w)
		}
	}
	if got := startSelection(t, paths.Journal); !slices.Equal(got.ListenerRules, want) {
		t.Errorf("selection after the resume %q, want %q", got.ListenerRules, want)
	}
}

// TestALBSelectAbort: an abort of an interrupted selecting cutover rolls back what the
// journal selected, and leaves a rule added since alone.
func TestALBSelectAbort(t *testing.T) {
	f := selectFakeELB()
	p := albtest.Plan()
	p.ALB.ListenerRules, p.ALB.Select = nil, &spec.ALBSelect{LoadBalancers: []string{lbShop}}
	pauseEach(p, 200*time.Millisecond)
	cfg := Config{Plan: p, Levers: albLevers(f, nil), StateDir: t.TempDir(), By: "test@host", CheckInterval: 10 * time.Millisecond, PollInterval: 5 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	run := cfg
	run.Progress = progressHook(func(ev Event) {
		if ev.Phase == PhaseHolding && ev.Step == 2 {
			cancel()
		}
	})
	if _, err := Run(ctx, run, false); !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v, want context.Canceled", err)
	}
	f.Mu.Lock()
	f.Rules[ruleLate] = types.Rule{RuleArn: aws.String(ruleLate), Priority: aws.String("40"), Actions: []types.Action{albtest.Forward(nil, albtest.TGBlue, 50, albtest.TGGreen, 50)}}
	f.Mu.Unlock()
	if _, err := Abort(context.Background(), cfg); err != nil {
		t.Fatalf("abort: %v", err)
	}
	for arn, w := range map[string]string{
		lisHTTPS:          "shop-blue=100 shop-green=0",
		albtest.RuleHTTPS: "shop-blue=100 shop-green=0",
		ruleLate:          "shop-blue=50 shop-green=50",
	} {
		if got := f.GroupsOf(arn); got != w {
			t.Errorf("%s: %s, want %s", arn, got, w)
		}
	}
}

// TestALBSelectRelease: `cutover release --force` of a selecting ALB cutover that has no
// journal here removes the authority tags from what the plan selects now, the listener
// (its default rule) and the rule, and from nothing else.
func TestALBSelectRelease(t *testing.T) {
	f := selectFakeELB()
	p := albtest.Plan()
	p.ALB.ListenerRules, p.ALB.Select = nil, &spec.ALBSelect{LoadBalancers: []string{lbShop}}
	other := registry.Runner{Token: "0d0d0d0d0d0d0d0d", Host: "ci", PID: 7}
	key := authority.Key(p.Name, other.Token)
	for _, arn := range []string{albtest.DefaultRule(lisHTTPS), albtest.RuleHTTPS, ruleGrey} {
		if _, err := f.AddTags(context.Background(), &elbv2.AddTagsInput{ResourceArns: []string{arn},
			Tags: []types.Tag{{Key: aws.String(key), Value: aws.String(authority.Value(other))}}}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{Plan: p, Levers: albLevers(f, nil), StateDir: t.TempDir(), By: "test@host"}
	rel, err := Release(context.Background(), cfg, ReleaseOptions{Force: true})
	if err != nil || rel.Records != 2 || !slices.Equal(rel.TakenOver, []registry.Runner{other}) {
		t.Fatalf("release --force: %+v, %v; want the selected listener and rule untagged, taken over from %s", rel, err, other)
	}
	for arn, want := range map[string]bool{albtest.DefaultRule(lisHTTPS): false, albtest.RuleHTTPS: false, ruleGrey: true} {
		has := slices.ContainsFunc(f.Tags[arn], func(tg types.Tag) bool { return aws.ToString(tg.Key) == key })
		if has != want {
			t.Errorf("%s carries the tag: %v, want %v", arn, has, want)
		}
	}
}
