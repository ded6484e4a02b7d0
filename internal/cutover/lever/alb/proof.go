package alb

// What the ALB gates (gate.TargetHealth, gate.ALBTraffic) and the retire check's
// CloudWatch reader learn of the ALB lever: the target groups of the plan's rules, the
// weight a step gives each, and the load balancers whose CloudWatch metrics count them.

import (
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// NewCloudWatch returns a CloudWatch client for cfg, sending to endpoint instead of AWS's
// when it is set (the sandbox's URL), as NewELBv2 does: the albTraffic gates and
// retire.cloudWatch read the ALB's metrics with it.
func NewCloudWatch(cfg aws.Config, endpoint string) *cloudwatch.Client {
	return cloudwatch.NewFromConfig(cfg, func(o *cloudwatch.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}

var _ gate.MetricsAPI = (*cloudwatch.Client)(nil)

// targetGroups lists from's group, to's group, then every other group of the rules, each
// with the largest weight a rule gives it once from and to are at w, and the load
// balancers of the rules that forward to it.
func (l *albLive) targetGroups(w map[string]int64) []gate.TargetGroup {
	out := []gate.TargetGroup{
		{Cluster: l.fromName, ARN: l.from.arn, Name: l.from.name},
		{Cluster: l.toName, ARN: l.to.arn, Name: l.to.name},
	}
	for _, r := range l.with(w).rules {
		lb := loadBalancerDimension(r.arn)
		for _, g := range r.groups {
			i := slices.IndexFunc(out, func(t gate.TargetGroup) bool { return t.ARN == g.arn })
			if i < 0 {
				out = append(out, gate.TargetGroup{ARN: g.arn, Name: spec.TargetGroupName(g.arn)})
				i = len(out) - 1
			}
			t := &out[i]
			t.Weight = max(t.Weight, g.weight)
			if lb != "" && !slices.Contains(t.LoadBalancers, lb) {
				t.LoadBalancers = append(t.LoadBalancers, lb)
			}
		}
	}
	return out
}

// loadBalancerDimension is CloudWatch's LoadBalancer dimension value ("app/NAME/ID") of
// the load balancer a listener or listener rule ARN belongs to; "" for another ARN.
func loadBalancerDimension(arn string) string {
	f := strings.SplitN(arn, ":", 6)
	if len(f) != 6 {
		return ""
	}
	// listener/app/NAME/LB-ID/LISTENER-ID, listener-rule/app/NAME/LB-ID/LISTENER-ID/RULE-ID
	parts := strings.Split(f[5], "/")
	if len(parts) < 5 || (parts[0] != "listener" && parts[0] != "listener-rule") {
		return ""
	}
	return strings.Join(parts[1:4], "/")
}
