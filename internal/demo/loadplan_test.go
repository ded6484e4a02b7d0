package demo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadPlan: the demo's plan is written where --keep points and loaded from there as
// `cutover run` would load it, so that a plan the engine would refuse stops the demo with
// the spec's reason before anything runs.
func TestLoadPlan(t *testing.T) {
	const (
		rule     = "arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/shop/50dc6c495c0c9188/f2f7dc8efc522ab2/9683b2d02a6cabee"
		listener = "arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/shop/50dc6c495c0c9188/0467ef3c8400ae65"
	)
	fill := strings.NewReplacer("{{PAUSE}}", "1s", "{{RULE}}", rule, "{{LISTENER}}", listener)
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		path    string
		text    string
		wantErr string // "" for a plan that loads
	}{
		{"the ALB demo's plan", filepath.Join(dir, "alb.yaml"), fill.Replace(albPlanTemplate), ""},
		{"a plan the spec refuses", filepath.Join(dir, "bad.yaml"), strings.Replace(fill.Replace(albPlanTemplate), "1s", "-1s", 1), "demo plan: "},
		{"no such directory", filepath.Join(dir, "missing", "plan.yaml"), fill.Replace(albPlanTemplate), "missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := loadPlan(tc.path, tc.text)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("loadPlan: %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("loadPlan: %v", err)
			}
			if got := p.ALB.ListenerRules; len(got) != 2 || got[0] != rule || got[1] != listener {
				t.Errorf("plan's listener rules %q, want [%s %s]", got, rule, listener)
			}
			if b, err := os.ReadFile(tc.path); err != nil || string(b) != tc.text {
				t.Errorf("plan file %s: %v, %q; want the plan text", tc.path, err, b)
			}
		})
	}
}
