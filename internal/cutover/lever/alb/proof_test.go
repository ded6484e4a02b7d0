package alb

import "testing"

// TestLoadBalancerDimension: a listener's or rule's ARN gives its load balancer's
// CloudWatch dimension; any other ARN none.
func TestLoadBalancerDimension(t *testing.T) {
	const (
		arn         = "arn:aws:elasticloadbalancing:us-east-1:123456789012:"
		ruleHTTPS   = arn + "listener-rule/app/shop/50dc6c495c0c9188/f2f7dc8efc522ab2/9683b2d02a6cabee"
		listenerWeb = arn + "listener/app/shop/50dc6c495c0c9188/0467ef3c8400ae65"
		tgBlue      = arn + "targetgroup/shop-blue/73e2d6bc24d8a067"
		lbShopDim   = "app/shop/50dc6c495c0c9188"
		// An NLB listener's: its flows are read in AWS/NetworkELB by this dimension.
		listenerNLB = arn + "listener/net/db/50dc6c495c0c9188/0467ef3c8400ae65"
		lbNLBDim    = "net/db/50dc6c495c0c9188"
	)
	for arn, want := range map[string]string{ruleHTTPS: lbShopDim, listenerWeb: lbShopDim, listenerNLB: lbNLBDim, tgBlue: "", "nope": ""} {
		if got := loadBalancerDimension(arn); got != want {
			t.Errorf("loadBalancerDimension(%s) = %q, want %q", arn, got, want)
		}
	}
}
