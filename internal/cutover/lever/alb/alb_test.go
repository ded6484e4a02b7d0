package alb

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/alb/albtest"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// The ALB lever's pure logic, on albtest's in-memory stand-in for the ELBv2 calls it
// makes, through the lever as the engine sees it (New).

// testRunner is the runner the tests read and write as.
var testRunner = albtest.Runner

// testEnv is a write's env that sends without journaling.
func testEnv() lever.WriteEnv {
	return lever.WriteEnv{What: "step", Log: slog.New(slog.DiscardHandler), BeforeSend: func(lever.Snapshot) error { return nil }}
}

// ruleARNs are the rules (and listeners) an ALB snapshot holds members of.
func ruleARNs(s lever.Snapshot) []string {
	var out []string
	for _, m := range s.Members() {
		if arn, _, _ := strings.Cut(m.Key, " "); !slices.Contains(out, arn) {
			out = append(out, arn)
		}
	}
	return out
}

// TestALBWeights: a percent step maps to from=100-p, to=p on every rule; another target
// group keeps its weight; a rule that does not list `to` yet gets it added; the rules are
// written in the plan's order, one call each, and described back until in effect.
func TestALBWeights(t *testing.T) {
	ctx := context.Background()
	f := albtest.NewFakeELB()
	f.SetWeights(albtest.RuleHTTPS, albtest.TGBlue, 100, albtest.TGGreen, 0, albtest.TGGrey, 50)
	lv := New(albtest.Plan(), f)
	s, err := lv.Read(ctx, lever.ReadOptions{Runner: testRunner})
	if err != nil {
		t.Fatal(err)
	}
	if got := lever.FormatWeights(s.Weights()); got != "blue=100 green=0" {
		t.Errorf("weights read %s", got)
	}
	if s.TTL() != 0 || s.NoTraffic(nil) != "" {
		t.Errorf("TTL %d, no traffic at %q", s.TTL(), s.NoTraffic(nil))
	}
	// The listener forwards to blue alone, weight 1: the same split as 100/0, but the
	// rule has a third group, whose share a rollback to 100/0 on the listener would not
	// keep alike: refused until they match.
	if p := lv.StartProblems(s); len(p) != 1 || !strings.Contains(p[0], "rule shop/9683b2d02a6cabee weighs shop-blue=100 shop-green=0 but listener shop/0467ef3c8400ae65 weighs shop-blue=1 shop-green=0") {
		t.Errorf("start problems %q", p)
	}
	f.SetWeights(albtest.RuleHTTPS, albtest.TGBlue, 100, albtest.TGGreen, 0)
	if s, err = lv.Read(ctx, lever.ReadOptions{Runner: testRunner}); err != nil {
		t.Fatal(err)
	}
	if p := lv.StartProblems(s); len(p) != 0 {
		t.Errorf("start problems with the same split: %q", p)
	}

	for _, tc := range []struct {
		w              map[string]int64
		rule, listener string
		calls          []string
	}{
		// The listener's plain forward to blue is the same split, written as weights (and
		// with green listed) by the first write.
		{map[string]int64{"blue": 100, "green": 0}, "shop-blue=100 shop-green=0", "shop-blue=100 shop-green=0", []string{"ModifyListener " + albtest.ListenerWeb}},
		{map[string]int64{"blue": 90, "green": 10}, "shop-blue=90 shop-green=10", "shop-blue=90 shop-green=10",
			[]string{"ModifyRule " + albtest.RuleHTTPS, "ModifyListener " + albtest.ListenerWeb}},
		{map[string]int64{"blue": 0, "green": 999}, "shop-blue=0 shop-green=999", "shop-blue=0 shop-green=999",
			[]string{"ModifyRule " + albtest.RuleHTTPS, "ModifyListener " + albtest.ListenerWeb}},
	} {
		f.Calls = nil
		s, err := lv.Read(ctx, lever.ReadOptions{Runner: testRunner})
		if err != nil {
			t.Fatal(err)
		}
		w, err := lv.Write(ctx, s, lever.Change{Weights: tc.w}, testEnv())
		if err != nil {
			t.Fatalf("write %v: %v", tc.w, err)
		}
		if ok, err := lv.InEffect(ctx, w); !ok || err != nil {
			t.Errorf("write %v not in effect: %v", tc.w, err)
		}
		if got := f.GroupsOf(albtest.RuleHTTPS); got != tc.rule {
			t.Errorf("write %v: rule %s, want %s", tc.w, got, tc.rule)
		}
		if got := f.GroupsOf(albtest.ListenerWeb); got != tc.listener {
			t.Errorf("write %v: listener %s, want %s", tc.w, got, tc.listener)
		}
		if !slices.Equal(f.Calls, tc.calls) {
			t.Errorf("write %v: calls %q, want %q", tc.w, f.Calls, tc.calls)
		}
		if got := lever.FormatWeights(w.After.Weights()); got != lever.FormatWeights(tc.w) {
			t.Errorf("after %s, want %s", got, lever.FormatWeights(tc.w))
		}
	}
	// The authenticate action went back as read, its secret kept by ELBv2.
	oidc := f.Rules[albtest.RuleHTTPS].Actions[0].AuthenticateOidcConfig
	if f.Rules[albtest.RuleHTTPS].Actions[0].Type != types.ActionTypeEnumAuthenticateOidc || !aws.ToBool(oidc.UseExistingClientSecret) || oidc.ClientSecret != nil {
		t.Errorf("authenticate action after the writes: %+v", f.Rules[albtest.RuleHTTPS].Actions[0])
	}
	// A third group keeps its weight through a write.
	f.SetWeights(albtest.RuleHTTPS, albtest.TGBlue, 100, albtest.TGGrey, 50, albtest.TGGreen, 0)
	s, _ = lv.Read(ctx, lever.ReadOptions{Runner: testRunner})
	if _, err := lv.Write(ctx, s, lever.Change{Weights: map[string]int64{"blue": 50, "green": 50}}, testEnv()); err != nil {
		t.Fatal(err)
	}
	if got := f.GroupsOf(albtest.RuleHTTPS); got != "shop-blue=50 shop-grey=50 shop-green=50" {
		t.Errorf("with a third group: %s", got)
	}
	// Weights that leave a rule no weighted group are refused; TTLs too.
	if p := lv.Check(s, lever.Change{Weights: map[string]int64{"blue": 0, "green": 0}}); len(p) != 1 || !strings.Contains(p[0], "listener shop/0467ef3c8400ae65 with no target group") {
		t.Errorf("check 0/0: %q", p)
	}
	if p := lv.Check(s, lever.Change{TTLs: map[spec.Record]int64{{Name: "x", Type: "A"}: 5}}); len(p) != 1 {
		t.Errorf("check TTLs: %q", p)
	}
}

// TestALBReadProblems: rules that are gone, that do not forward, that forward to neither
// group, or that have no room for `to` refuse a run, and are skipped by a partial read.
func TestALBReadProblems(t *testing.T) {
	ctx := context.Background()
	full := []any{albtest.TGGrey, 1, albtest.ARN + "targetgroup/a/1", 1, albtest.ARN + "targetgroup/b/1", 1, albtest.ARN + "targetgroup/c/1", 1, albtest.TGBlue, 1}
	for _, tc := range []struct {
		name  string
		setup func(f *albtest.FakeELB)
		want  string
	}{
		{"gone", func(f *albtest.FakeELB) { delete(f.Rules, albtest.RuleHTTPS) }, "rule " + albtest.RuleHTTPS + ": not found"},
		{"redirect", func(f *albtest.FakeELB) {
			f.Rules[albtest.RuleHTTPS] = types.Rule{RuleArn: aws.String(albtest.RuleHTTPS), Actions: []types.Action{{Type: types.ActionTypeEnumRedirect}}}
		}, "its action is redirect, not forward"},
		{"neither group", func(f *albtest.FakeELB) { f.SetWeights(albtest.RuleHTTPS, albtest.TGGrey, 1) }, "forwards to shop-grey=1, neither to from (shop-blue) nor to to (shop-green)"},
		{"five groups", func(f *albtest.FakeELB) { f.SetWeights(albtest.RuleHTTPS, full...) }, "forwards to 5 target groups"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := albtest.NewFakeELB()
			tc.setup(f)
			lv := New(albtest.Plan(), f)
			_, err := lv.Read(ctx, lever.ReadOptions{Runner: testRunner})
			var nr *lever.NotReadyError
			if !errors.As(err, &nr) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "the listener rules are not ready") {
				t.Fatalf("read: %v, want a NotReadyError with %q", err, tc.want)
			}
			s, err := lv.Read(ctx, lever.ReadOptions{Partial: true})
			if err != nil || len(s.Skipped()) != 1 || !strings.Contains(s.Skipped()[0], tc.want) || len(ruleARNs(s)) != 1 {
				t.Errorf("partial read: %v, skipped %q", err, s.Skipped())
			}
		})
	}
	f := albtest.NewFakeELB()
	p := albtest.Plan()
	p.ALB.To = "shop-purple"
	if _, err := New(p, f).Read(ctx, lever.ReadOptions{Runner: testRunner}); err == nil || !strings.Contains(err.Error(), "target group shop-purple (spec.alb.to): not found") {
		t.Errorf("unknown target group: %v", err)
	}
}

// TestALBResumeIsIdempotent: a write that fails after the first rule leaves that rule at
// the new weights and says so; written again (as `run --resume` does), it sends only the
// rules not yet at them, and once everything is, nothing.
func TestALBResumeIsIdempotent(t *testing.T) {
	ctx := context.Background()
	f := albtest.NewFakeELB()
	lv := New(albtest.Plan(), f)
	step := lever.Change{Weights: map[string]int64{"blue": 50, "green": 50}}
	f.Fail[albtest.ListenerWeb] = albtest.APIErr("Throttling", "Rate exceeded")
	s, _ := lv.Read(ctx, lever.ReadOptions{Runner: testRunner})
	_, err := lv.Write(ctx, s, step, testEnv())
	var pw *PartialWriteError
	if !errors.As(err, &pw) || pw.Written != 1 || !strings.Contains(err.Error(), "listener shop/0467ef3c8400ae65 (2 of 2") ||
		!strings.Contains(err.Error(), "Rate exceeded") || !strings.Contains(err.Error(), "run --resume") {
		t.Fatalf("write with the second call failing: %v", err)
	}
	if f.GroupsOf(albtest.RuleHTTPS) != "shop-blue=50 shop-green=50" || f.GroupsOf(albtest.ListenerWeb) != "shop-blue" {
		t.Fatalf("after the partial write: rule %s, listener %s", f.GroupsOf(albtest.RuleHTTPS), f.GroupsOf(albtest.ListenerWeb))
	}
	// The resume reads the rules as they stand and writes the step again.
	for i, want := range [][]string{{"ModifyListener " + albtest.ListenerWeb}, nil} {
		f.Calls = nil
		s, err := lv.Read(ctx, lever.ReadOptions{Runner: testRunner})
		if err != nil {
			t.Fatal(err)
		}
		w, err := lv.Write(ctx, s, step, testEnv())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(f.Calls, want) {
			t.Errorf("write %d: calls %q, want %q", i+1, f.Calls, want)
		}
		if ok, err := lv.InEffect(ctx, w); !ok || err != nil {
			t.Errorf("write %d not in effect: %v", i+1, err)
		}
		if i == 0 && w.Detail != "0 ModifyRule, 1 ModifyListener (1 already at these weights)" {
			t.Errorf("detail %q", w.Detail)
		}
	}
	// A rule moved since the write is not in effect: the runner waits, then fails.
	s, _ = lv.Read(ctx, lever.ReadOptions{Runner: testRunner})
	w, _ := lv.Write(ctx, s, step, testEnv())
	f.SetWeights(albtest.ListenerWeb, albtest.TGBlue, 1)
	if ok, err := lv.InEffect(ctx, w); ok || err != nil {
		t.Errorf("in effect after the listener moved: %v %v", ok, err)
	}
}
