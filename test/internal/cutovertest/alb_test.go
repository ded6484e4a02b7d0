package cutovertest

import (
	"os"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"sigs.k8s.io/yaml"
)

// TestRender reads the weights of forward actions by group name.
func TestRender(t *testing.T) {
	a := &ALB{Groups: map[string]string{"blue": "arn:blue", "green": "arn:green"}}
	for _, tc := range []struct {
		name string
		acts []types.Action
		want string
	}{
		{"both groups", Forward("arn:blue", 0, "arn:green", 100), "blue=0 green=100"},
		{"an unknown group left out", Forward("arn:blue", 50, "arn:other", 50), "blue=50"},
		{"a fixed response has no weights", []types.Action{{Type: types.ActionTypeEnumFixedResponse}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := a.Render(tc.acts); got != tc.want {
				t.Errorf("Render = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestForward: stickiness off, the pairs in order.
func TestForward(t *testing.T) {
	acts := Forward("arn:blue", 99, "arn:green", 1)
	fc := acts[0].ForwardConfig
	if len(acts) != 1 || acts[0].Type != types.ActionTypeEnumForward || fc == nil || aws.ToBool(fc.TargetGroupStickinessConfig.Enabled) {
		t.Fatalf("Forward = %+v", acts)
	}
	if len(fc.TargetGroups) != 2 || aws.ToString(fc.TargetGroups[0].TargetGroupArn) != "arn:blue" || aws.ToInt32(fc.TargetGroups[0].Weight) != 99 ||
		aws.ToString(fc.TargetGroups[1].TargetGroupArn) != "arn:green" || aws.ToInt32(fc.TargetGroups[1].Weight) != 1 {
		t.Errorf("target groups %+v", fc.TargetGroups)
	}
}

// TestDNSPlan reads the plan back: the cutover named, the owners, the steps and the DNS
// gate's server as given.
func TestDNSPlan(t *testing.T) {
	b, err := os.ReadFile(DNSPlan(t, "trial-01", "green", "blue", "127.0.0.1:5353"))
	if err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Kind     string
		Metadata struct{ Name string }
		Spec     struct {
			Zone     string
			From, To string
			Steps    []int
			Gates    []struct {
				DNS struct{ Servers []string }
			}
		}
	}
	if err := yaml.Unmarshal(b, &plan); err != nil {
		t.Fatalf("decode:\n%s\n%v", b, err)
	}
	if plan.Kind != "Cutover" || plan.Metadata.Name != "trial-01" || plan.Spec.From != "green" || plan.Spec.To != "blue" ||
		!slices.Equal(plan.Spec.Steps, []int{0, 10, 50, 100}) || len(plan.Spec.Gates) != 1 || !slices.Equal(plan.Spec.Gates[0].DNS.Servers, []string{"127.0.0.1:5353"}) {
		t.Errorf("plan %+v from:\n%s", plan, b)
	}
}
