package elbv2api

import (
	"time"

	"github.com/crossfade-io/crossfade/internal/sandbox/elb"
)

// The XML shapes of ELBv2's responses, element for element as botocore's elbv2 model names
// them. Lists are always written, empty ones too, as ELBv2 writes them: the AWS CLI then
// prints [] rather than leaving the key out.

// members is a list: <Name><member>…</member>…</Name>.
type members[T any] struct {
	Member []T `xml:"member"`
}

func list[T, W any](in []T, conv func(T) W) members[W] {
	out := members[W]{Member: make([]W, 0, len(in))}
	for _, v := range in {
		out.Member = append(out.Member, conv(v))
	}
	return out
}

func strs(in []string) members[string] { return list(in, func(s string) string { return s }) }

func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

type xLoadBalancer struct {
	LoadBalancerArn       string
	DNSName               string
	CanonicalHostedZoneId string
	CreatedTime           string
	LoadBalancerName      string
	Scheme                string
	VpcId                 string
	State                 struct{ Code string }
	Type                  string
	AvailabilityZones     members[xAvailabilityZone]
	SecurityGroups        members[string]
	IpAddressType         string
}

type xAvailabilityZone struct {
	ZoneName string
	SubnetId string
}

func toLoadBalancer(lb elb.LoadBalancer) xLoadBalancer {
	x := xLoadBalancer{
		LoadBalancerArn: lb.ARN, DNSName: lb.DNSName, CanonicalHostedZoneId: lb.CanonicalHostedZoneID,
		CreatedTime: timestamp(lb.CreatedTime), LoadBalancerName: lb.Name, Scheme: lb.Scheme, VpcId: lb.VPCID,
		Type: lb.Type, IpAddressType: lb.IPAddressType, SecurityGroups: strs(lb.SecurityGroups),
		AvailabilityZones: list(lb.AvailabilityZones, func(az elb.AvailabilityZone) xAvailabilityZone {
			return xAvailabilityZone{ZoneName: az.ZoneName, SubnetId: az.SubnetID}
		}),
	}
	x.State.Code = lb.State
	return x
}

type xTargetGroup struct {
	TargetGroupArn             string
	TargetGroupName            string
	Protocol                   string
	Port                       int
	VpcId                      string
	HealthCheckProtocol        string
	HealthCheckPort            string
	HealthCheckEnabled         bool
	HealthCheckIntervalSeconds int
	HealthCheckTimeoutSeconds  int
	HealthyThresholdCount      int
	UnhealthyThresholdCount    int
	// HealthCheckPath and Matcher are HTTP health checks' only: a TCP group has neither.
	HealthCheckPath  string    `xml:",omitempty"`
	Matcher          *xMatcher `xml:",omitempty"`
	LoadBalancerArns members[string]
	TargetType       string
	ProtocolVersion  string `xml:",omitempty"`
	IpAddressType    string
}

type xMatcher struct{ HttpCode string }

func toTargetGroup(tg elb.TargetGroupDescription) xTargetGroup {
	hc := tg.HealthCheck
	x := xTargetGroup{
		TargetGroupArn: tg.ARN, TargetGroupName: tg.Name, Protocol: tg.Protocol, Port: tg.Port, VpcId: tg.VPCID,
		HealthCheckProtocol: hc.Protocol, HealthCheckPort: hc.Port, HealthCheckEnabled: hc.Enabled,
		HealthCheckIntervalSeconds: hc.IntervalSeconds, HealthCheckTimeoutSeconds: hc.TimeoutSeconds,
		HealthyThresholdCount: hc.HealthyThreshold, UnhealthyThresholdCount: hc.UnhealthyThreshold,
		HealthCheckPath: hc.Path, LoadBalancerArns: strs(tg.LoadBalancerARNs), TargetType: tg.TargetType,
		ProtocolVersion: tg.ProtocolVersion, IpAddressType: tg.IPAddressType,
	}
	if hc.Matcher != "" {
		x.Matcher = &xMatcher{HttpCode: hc.Matcher}
	}
	return x
}

type xAttribute struct {
	Key   string
	Value string
}

func toAttributes(attrs []elb.Attribute) members[xAttribute] {
	return list(attrs, func(a elb.Attribute) xAttribute { return xAttribute(a) })
}

type xAction struct {
	Type                string
	TargetGroupArn      string     `xml:",omitempty"`
	Order               int        `xml:",omitempty"`
	RedirectConfig      *xRedirect `xml:",omitempty"`
	FixedResponseConfig *xFixed    `xml:",omitempty"`
	ForwardConfig       *xForward  `xml:",omitempty"`
}

type xForward struct {
	TargetGroups                members[xTuple]
	TargetGroupStickinessConfig struct {
		Enabled         bool
		DurationSeconds int `xml:",omitempty"`
	}
}

type xTuple struct {
	TargetGroupArn string
	Weight         int
}

type xFixed struct {
	MessageBody string `xml:",omitempty"`
	StatusCode  string
	ContentType string `xml:",omitempty"`
}

type xRedirect struct {
	Protocol   string
	Port       string
	Host       string
	Path       string
	Query      string
	StatusCode string
}

func toAction(a elb.Action) xAction {
	x := xAction{Type: a.Type, TargetGroupArn: a.TargetGroupARN, Order: a.Order}
	if f := a.Forward; f != nil {
		x.ForwardConfig = &xForward{TargetGroups: list(f.TargetGroups, func(g elb.WeightedTargetGroup) xTuple {
			return xTuple{TargetGroupArn: g.TargetGroupARN, Weight: g.Weight}
		})}
		x.ForwardConfig.TargetGroupStickinessConfig.Enabled = f.Stickiness.Enabled
		x.ForwardConfig.TargetGroupStickinessConfig.DurationSeconds = f.Stickiness.DurationSeconds
	}
	if f := a.FixedResponse; f != nil {
		x.FixedResponseConfig = &xFixed{MessageBody: f.MessageBody, StatusCode: f.StatusCode, ContentType: f.ContentType}
	}
	if r := a.Redirect; r != nil {
		x.RedirectConfig = &xRedirect{Protocol: r.Protocol, Port: r.Port, Host: r.Host, Path: r.Path, Query: r.Query, StatusCode: r.StatusCode}
	}
	return x
}

type xCertificate struct{ CertificateArn string }

type xListener struct {
	ListenerArn     string
	LoadBalancerArn string
	Port            int
	Protocol        string
	Certificates    *members[xCertificate] `xml:",omitempty"`
	SslPolicy       string                 `xml:",omitempty"`
	DefaultActions  members[xAction]
}

func toListener(l elb.Listener) xListener {
	x := xListener{ListenerArn: l.ARN, LoadBalancerArn: l.LoadBalancerARN, Port: l.Port, Protocol: l.Protocol,
		SslPolicy: l.SSLPolicy, DefaultActions: list(l.DefaultActions, toAction)}
	if len(l.Certificates) > 0 {
		c := list(l.Certificates, func(arn string) xCertificate { return xCertificate{arn} })
		x.Certificates = &c
	}
	return x
}

type xCondition struct {
	Field             string
	Values            *members[string] `xml:",omitempty"`
	HostHeaderConfig  *xValues         `xml:",omitempty"`
	PathPatternConfig *xValues         `xml:",omitempty"`
}

type xValues struct{ Values members[string] }

func toCondition(c elb.Condition) xCondition {
	x := xCondition{Field: c.Field}
	if c.Values != nil {
		v := strs(c.Values)
		x.Values = &v
	}
	cfg := &xValues{Values: strs(c.Patterns)}
	if c.Field == elb.FieldHostHeader {
		x.HostHeaderConfig = cfg
	} else {
		x.PathPatternConfig = cfg
	}
	return x
}

type xRule struct {
	RuleArn    string
	Priority   string
	Conditions members[xCondition]
	Actions    members[xAction]
	IsDefault  bool
}

func toRule(r elb.Rule) xRule {
	return xRule{RuleArn: r.ARN, Priority: r.PriorityString(), Conditions: list(r.Conditions, toCondition),
		Actions: list(r.Actions, toAction), IsDefault: r.IsDefault}
}

type xTarget struct {
	Id               string
	Port             int
	AvailabilityZone string `xml:",omitempty"`
}

type xTargetHealthDescription struct {
	Target          xTarget
	HealthCheckPort string
	TargetHealth    struct {
		State       string
		Reason      string `xml:",omitempty"`
		Description string `xml:",omitempty"`
	}
}

func toTargetHealth(d elb.TargetHealthDescription) xTargetHealthDescription {
	x := xTargetHealthDescription{Target: xTarget{Id: d.Target.ID, Port: d.Target.Port, AvailabilityZone: d.Target.AvailabilityZone},
		HealthCheckPort: d.HealthCheckPort}
	x.TargetHealth.State, x.TargetHealth.Reason, x.TargetHealth.Description = d.Health.State, d.Health.Reason, d.Health.Description
	return x
}

type xTag struct {
	Key   string
	Value string
}

type xTagDescription struct {
	ResourceArn string
	Tags        members[xTag]
}

func toTagDescription(d elb.TagDescription) xTagDescription {
	return xTagDescription{ResourceArn: d.ResourceARN, Tags: list(d.Tags, func(t elb.Tag) xTag { return xTag(t) })}
}
