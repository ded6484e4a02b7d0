package spec

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestARNList: each ARN listed is checked on its own, a bad one is named at its index with
// what the check wants and is not counted as seen, and one listed again is refused naming
// the index it repeats.
func TestARNList(t *testing.T) {
	const (
		lb1 = "arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/shop/50dc6c495c0c9188"
		lb2 = "arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/cart/0467ef3c8400ae65"
	)
	lp := field.NewPath("spec", "alb", "select", "loadBalancers")
	for _, tc := range []struct {
		name string
		arns []string
		want []string // each error: field, type, detail
	}{
		{"none", nil, nil},
		{"distinct", []string{lb1, lb2}, nil},
		{"one repeated", []string{lb1, lb2, lb1}, []string{
			"spec.alb.select.loadBalancers[2] " + string(field.ErrorTypeDuplicate) + " duplicate of spec.alb.select.loadBalancers[0]: want each load balancer once"}},
		{"a bad one, then a repeat of the good", []string{"arn:nope", lb1, "arn:nope", lb1}, []string{
			"spec.alb.select.loadBalancers[0] " + string(field.ErrorTypeInvalid) + " " + wantLoadBalancerARN,
			"spec.alb.select.loadBalancers[2] " + string(field.ErrorTypeInvalid) + " " + wantLoadBalancerARN,
			"spec.alb.select.loadBalancers[3] " + string(field.ErrorTypeDuplicate) + " duplicate of spec.alb.select.loadBalancers[1]: want each load balancer once"}},
		{"an empty path segment", []string{lb1 + "/"}, []string{
			"spec.alb.select.loadBalancers[0] " + string(field.ErrorTypeInvalid) + " " + wantLoadBalancerARN}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := validator{ps: newProblems()}
			var got []string
			for _, e := range v.arnList(lp, tc.arns, checkLoadBalancerARN, "load balancer") {
				got = append(got, e.Field+" "+string(e.Type)+" "+e.Detail)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("arnList(%q):\n got %q\nwant %q", tc.arns, got, tc.want)
			}
		})
	}
}
