package spec

import (
	"slices"
	"testing"
)

const testLB = "arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/shop/50dc6c495c0c9188"

// TestSelectParses: spec.select and spec.alb.select resolve into the plan, with no record
// or rule listed: the engine fills them in at start.
func TestSelectParses(t *testing.T) {
	p, err := Parse([]byte(planYAML(nil, kv{"records": del, "select": "{allWeighted: true}"})), "plan.yaml")
	if err != nil {
		t.Fatalf("Parse select: %v", err)
	}
	if !p.SelectAllWeighted || len(p.Records) != 0 {
		t.Errorf("select: SelectAllWeighted %v, records %v", p.SelectAllWeighted, p.Records)
	}
	p, err = Parse([]byte(planYAML(nil, kv{"zone": del, "records": del, "alb": "{select: {loadBalancers: [" + testLB + "]}, from: shop-blue, to: shop-green}"})), "plan.yaml")
	if err != nil {
		t.Fatalf("Parse alb.select: %v", err)
	}
	if p.ALB.Select == nil || !slices.Equal(p.ALB.Select.LoadBalancers, []string{testLB}) || len(p.ALB.ListenerRules) != 0 || p.SelectAllWeighted {
		t.Errorf("alb.select: %+v", p.ALB)
	}
	if !IsLoadBalancerARN(testLB) || IsLoadBalancerARN(testListener) || IsLoadBalancerARN("arn:aws:elasticloadbalancing:us-east-1:1:loadbalancer/net/n/1") {
		t.Error("IsLoadBalancerARN")
	}
}

func TestSelectProblems(t *testing.T) {
	albSel := func(sel string) string { return "{" + sel + "from: shop-blue, to: shop-green}" }
	for _, tc := range []struct {
		name string
		over kv
		want []string
	}{
		{"records and select", kv{"select": "{allWeighted: true}"},
			[]string{"spec.records: not with spec.select"}},
		{"allWeighted false", kv{"records": del, "select": "{allWeighted: false}"},
			[]string{`spec.select.allWeighted "false": want true`}},
		{"allWeighted not a bool", kv{"records": del, "select": "{allWeighted: yes please}"},
			[]string{"spec.select.allWeighted", "want true"}},
		{"select with alb", kv{"zone": del, "records": del, "select": "{allWeighted: true}", "alb": albSel("listenerRules: [" + testRule + "], ")},
			[]string{"spec.select: not with spec.alb: select the rules with spec.alb.select"}},
		{"rules and alb.select", kv{"zone": del, "records": del, "alb": albSel("listenerRules: [" + testRule + "], select: {loadBalancers: [" + testLB + "]}, ")},
			[]string{"spec.alb.listenerRules: not with spec.alb.select"}},
		{"no load balancer", kv{"zone": del, "records": del, "alb": albSel("select: {loadBalancers: []}, ")},
			[]string{"spec.alb.select.loadBalancers: required"}},
		{"not a load balancer", kv{"zone": del, "records": del, "alb": albSel("select: {loadBalancers: [" + testListener + ", " + testLB + ", " + testLB + "]}, ")},
			[]string{"spec.alb.select.loadBalancers[0] ", wantLoadBalancerARN, "spec.alb.select.loadBalancers[2]", "duplicate of spec.alb.select.loadBalancers[1]"}},
		{"unknown select key", kv{"records": del, "select": "{all: true}"},
			[]string{"spec.select.all: unknown field"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(planYAML(nil, tc.over)), "plan.yaml")
			wantErrs(t, err, tc.want)
		})
	}
}
