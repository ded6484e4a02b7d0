package cutover

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	leveralb "github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/alb/albtest"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/authority"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
)

// TestALBDrift: a weight the cutover did not write, in from, to or another group, is
// drift; a rule put back is not.
func TestALBDrift(t *testing.T) {
	ctx := context.Background()
	f := albtest.NewFakeELB()
	lv := leveralb.New(albtest.Plan(), f)
	s, _ := lv.Read(ctx, ReadOptions{Runner: levertest.Runner})
	w, err := lv.Write(ctx, s, Change{Weights: map[string]int64{"blue": 90, "green": 10}}, levertest.Env())
	if err != nil {
		t.Fatal(err)
	}
	expect := memberWeights(w.After)
	for _, tc := range []struct {
		name   string
		groups []any
		want   []string
	}{
		{"unchanged", []any{albtest.TGBlue, 90, albtest.TGGreen, 10}, nil},
		{"order only", []any{albtest.TGGreen, 10, albtest.TGBlue, 90}, nil},
		{"weights moved back", []any{albtest.TGBlue, 100, albtest.TGGreen, 0}, []string{"rule shop/9683b2d02a6cabee target group shop-blue 100 90", "rule shop/9683b2d02a6cabee target group shop-green 0 10"}},
		{"to dropped", []any{albtest.TGBlue, 90}, []string{"rule shop/9683b2d02a6cabee target group shop-green 0 10"}},
		{"a group added", []any{albtest.TGBlue, 90, albtest.TGGreen, 10, albtest.TGGrey, 5}, []string{"rule shop/9683b2d02a6cabee target group shop-grey 5 0"}},
		{"a group added at 0", []any{albtest.TGBlue, 90, albtest.TGGreen, 10, albtest.TGGrey, 0}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.SetWeights(albtest.RuleHTTPS, tc.groups...)
			now, err := lv.Read(ctx, ReadOptions{Runner: levertest.Runner})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range drift(now, expect) {
				got = append(got, fmt.Sprintf("%s %d %d", d.Member, d.Found, d.Wrote))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("drift %q, want %q", got, tc.want)
			}
		})
	}
	f.SetWeights(albtest.RuleHTTPS, albtest.TGBlue, 100, albtest.TGGreen, 0)
	now, _ := lv.Read(ctx, ReadOptions{Runner: levertest.Runner})
	e := &DriftError{Expected: "the cutover wrote", Members: drift(now, expect), Cause: lv.DriftCause()}
	if !strings.Contains(e.Error(), "weights drifted: rule shop/9683b2d02a6cabee target group shop-blue has weight 100, the cutover wrote 90") ||
		!strings.Contains(e.Error(), "ignore_changes = [action]") {
		t.Errorf("drift error: %v", e)
	}
}

// TestALBPreview: `cutover plan` shows the rules with their weights, each group's health,
// the warnings (stickiness, a group with no healthy target) and the Terraform note, and
// every call as the AWS CLI takes it.
func TestALBPreview(t *testing.T) {
	f := albtest.NewFakeELB()
	f.Rules[albtest.RuleHTTPS].Actions[1].ForwardConfig.TargetGroupStickinessConfig = &types.TargetGroupStickinessConfig{Enabled: aws.Bool(true), DurationSeconds: aws.Int32(3600)}
	f.Health[albtest.TGGreen] = []types.TargetHealthStateEnum{types.TargetHealthStateEnumUnhealthy}
	p := albtest.Plan()
	pv, err := DryRun(context.Background(), Config{Plan: p, Levers: albLevers(f, nil)})
	if err != nil {
		t.Fatal(err)
	}
	var sum, full strings.Builder
	if err := Text.PreviewSummary(&sum, pv); err != nil {
		t.Fatal(err)
	}
	if err := Text.Preview(&full, pv); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"cutover shop: blue → green\nALB listener rules: 2, current weights blue=100 green=0 (each applies to the next request: no TTL)\n",
		"  " + albtest.RuleHTTPS + " (priority 10; host-header shop.example.com): shop-blue=100 shop-green=0, group stickiness 3600s\n",
		"  " + albtest.ListenerWeb + " (HTTP:80 default action): shop-blue=1 shop-green=0, group stickiness off\n",
		"  target group shop-blue: 2 healthy of 2 targets\n",
		"  target group shop-green: 0 healthy of 1 targets (1 unhealthy)\n",
		"warning: rule shop/9683b2d02a6cabee: group stickiness is on for 3600s",
		"warning: target group shop-green has no healthy target",
		"note: listener shop/0467ef3c8400ae65 does not forward to shop-green yet",
		"note: a rule Terraform manages needs `lifecycle { ignore_changes = [action] }`",
		"  step 2 of 4  blue=90 green=10  hold 0s       no gates\n",
		"note: the run tags each rule (a listener: its default rule) with its authority, crossfade.io/cutover/shop/TOKEN, before its first write, and removes the tag when the cutover ends",
		"writes: 5 writes (11 ELBv2 calls in all: 9 ModifyRule and ModifyListener, 2 AddTags) for the run and its longest rollback",
	} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum.String())
		}
	}
	stick := `"TargetGroupStickinessConfig":{"DurationSeconds":3600,"Enabled":true}`
	host := authority.Value(previewRunner())[len(PreviewToken)+1:]
	for _, want := range []string{
		"step 1 of 4: blue=100 green=0, 3 calls, as the AWS CLI takes them:\n" +
			"aws elbv2 add-tags --resource-arns " + albtest.RuleHTTPS + ` --tags '[{"Key":"crossfade.io/cutover/shop/TOKEN","Value":"TOKEN@` + host + `"}]'` + "\n" +
			"aws elbv2 add-tags --resource-arns " + albtest.DefaultRule(albtest.ListenerWeb) + ` --tags '[{"Key":"crossfade.io/cutover/shop/TOKEN","Value":"TOKEN@` + host + `"}]'` + "\n" +
			"aws elbv2 modify-listener --listener-arn " + albtest.ListenerWeb +
			` --default-actions '[{"Type":"forward","ForwardConfig":{"TargetGroups":[{"TargetGroupArn":"` + albtest.TGBlue + `","Weight":100},{"TargetGroupArn":"` + albtest.TGGreen + `","Weight":0}]}}]'` + "\n",
		"step 2 of 4: blue=90 green=10, 2 calls, as the AWS CLI takes them:\naws elbv2 modify-rule --rule-arn " + albtest.RuleHTTPS +
			` --actions '[{"Type":"authenticate-oidc","AuthenticateOidcConfig":{"AuthorizationEndpoint":"https://idp.example.com/auth","ClientId":"shop","Issuer":"https://idp.example.com",` +
			`"TokenEndpoint":"https://idp.example.com/token","UserInfoEndpoint":"https://idp.example.com/me","UseExistingClientSecret":true},"Order":1},` +
			`{"Type":"forward","ForwardConfig":{` + stick + `,"TargetGroups":[{"TargetGroupArn":"` + albtest.TGBlue + `","Weight":90},{"TargetGroupArn":"` + albtest.TGGreen + `","Weight":10}]},"Order":2}]'` + "\n",
		"rollback 1 of 1 (from the last step): blue=100 green=0, 2 calls",
	} {
		if !strings.Contains(full.String(), want) {
			t.Errorf("--batches lacks %q:\n%s", want, full.String())
		}
	}
}

// TestALBReportTerraform: the report of an ALB cutover says when each write was in effect
// and prints the rules' final weights as Terraform's forward blocks.
func TestALBReportTerraform(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f := albtest.NewFakeELB()
	lv := leveralb.New(albtest.Plan(), f)
	s, _ := lv.Read(context.Background(), ReadOptions{Runner: levertest.Runner})
	w, err := lv.Write(context.Background(), s, Change{Weights: map[string]int64{"blue": 0, "green": 100}}, levertest.Env())
	if err != nil {
		t.Fatal(err)
	}
	w100 := map[string]int64{"blue": 0, "green": 100}
	entries := []journal.Entry{
		{Kind: kindStart, Step: stepNone, Time: t0, By: "alice@laptop", Weights: map[string]int64{"blue": 100, "green": 0}, Data: s.StartData()},
		{Kind: kindIntent, Step: 0, Time: t0, Weights: w100, Detail: "step 1 of 1"},
		{Kind: kindWritten, Step: 0, Time: t0, Weights: w100, Detail: w.Detail, Data: w.Data},
		{Kind: kindInSync, Step: 0, Time: t0, Detail: "12ms"},
		{Kind: kindStepPassed, Step: 0, Time: t0},
		{Kind: kindDone, Step: stepNone, Time: t0, Detail: outcomeCompleted},
	}
	rep := BuildReport("shop", entries)
	if rep.Lever != LeverALB || len(rep.Rules) != 2 {
		t.Fatalf("report lever %q, %d rules", rep.Lever, len(rep.Rules))
	}
	var b strings.Builder
	if err := Text.Report(&b, rep); err != nil {
		t.Fatal(err)
	}
	// Both rules forward blue=0 green=100; the rule's block is action, the listener's
	// default_action.
	forward := `      type = "forward"
      forward {
        target_group {
          arn    = "` + albtest.TGBlue + `" # shop-blue
          weight = 0
        }
        target_group {
          arn    = "` + albtest.TGGreen + `" # shop-green
          weight = 100
        }
      }
    }
`
	want := `  step 1 of 1      blue=0 green=100       passed   in effect after 12ms
  the listener rules' weights now, as Terraform's forward block (for the module that owns the rules):
    # aws_lb_listener_rule for ` + albtest.RuleHTTPS + `
    action {
` + forward + `
    # aws_lb_listener for ` + albtest.ListenerWeb + `
    default_action {
` + forward
	if got := b.String(); !strings.HasSuffix(got, want) {
		t.Errorf("report:\n%s\nwant it to end with:\n%s", got, want)
	}
	stuck := leveralb.TerraformForward([]leveralb.RuleWeights{{Rule: albtest.RuleHTTPS, TargetGroups: []leveralb.TargetGroupWeight{{ARN: albtest.TGBlue, Name: "shop-blue", Weight: 1}},
		Stickiness: &leveralb.Stickiness{Enabled: true, DurationSeconds: 300}}})
	if !strings.Contains(stuck, "    stickiness {\n      enabled  = true\n      duration = 300\n    }\n  }\n}\n") {
		t.Errorf("stickiness block:\n%s", stuck)
	}
}
