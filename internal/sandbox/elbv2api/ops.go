package elbv2api

import (
	"github.com/crossfade-io/crossfade/internal/sandbox/elb"
)

// operations maps each served Action to its handler.
func (a *API) operations() map[string]handler {
	s := a.cfg.Store
	return map[string]handler{
		"CreateLoadBalancer":            func(r *request) (any, error) { return createLoadBalancer(s, r) },
		"DescribeLoadBalancers":         func(r *request) (any, error) { return describeLoadBalancers(s, r) },
		"DeleteLoadBalancer":            func(r *request) (any, error) { return deleteLoadBalancer(s, r) },
		"CreateTargetGroup":             func(r *request) (any, error) { return createTargetGroup(s, r) },
		"DescribeTargetGroups":          func(r *request) (any, error) { return describeTargetGroups(s, r) },
		"ModifyTargetGroup":             func(r *request) (any, error) { return modifyTargetGroup(s, r) },
		"DeleteTargetGroup":             func(r *request) (any, error) { return deleteTargetGroup(s, r) },
		"DescribeTargetGroupAttributes": func(r *request) (any, error) { return describeTargetGroupAttributes(s, r) },
		"ModifyTargetGroupAttributes":   func(r *request) (any, error) { return modifyTargetGroupAttributes(s, r) },
		"RegisterTargets":               func(r *request) (any, error) { return registerTargets(s, r, true) },
		"DeregisterTargets":             func(r *request) (any, error) { return registerTargets(s, r, false) },
		"DescribeTargetHealth":          func(r *request) (any, error) { return describeTargetHealth(s, r) },
		"CreateListener":                func(r *request) (any, error) { return createListener(s, r) },
		"DescribeListeners":             func(r *request) (any, error) { return describeListeners(s, r) },
		"ModifyListener":                func(r *request) (any, error) { return modifyListener(s, r) },
		"DeleteListener":                func(r *request) (any, error) { return deleteListener(s, r) },
		"CreateRule":                    func(r *request) (any, error) { return createRule(s, r) },
		"DescribeRules":                 func(r *request) (any, error) { return describeRules(s, r) },
		"ModifyRule":                    func(r *request) (any, error) { return modifyRule(s, r) },
		"DeleteRule":                    func(r *request) (any, error) { return deleteRule(s, r) },
		"SetRulePriorities":             func(r *request) (any, error) { return setRulePriorities(s, r) },
		"AddTags":                       func(r *request) (any, error) { return addTags(s, r) },
		"RemoveTags":                    func(r *request) (any, error) { return removeTags(s, r) },
		"DescribeTags":                  func(r *request) (any, error) { return describeTags(s, r) },
	}
}

// empty is the result of an operation that returns nothing: <OpResult/>.
type empty struct{}

type loadBalancersResult struct {
	LoadBalancers members[xLoadBalancer]
	NextMarker    string `xml:",omitempty"`
}

func createLoadBalancer(s *elb.Store, r *request) (any, error) {
	name, err := r.p.required("Name")
	if err != nil {
		return nil, err
	}
	in := elb.CreateLoadBalancerInput{
		Region: r.region, Name: name, Subnets: r.p.list("Subnets"), SecurityGroups: r.p.list("SecurityGroups"),
		Scheme: r.p.str("Scheme"), Type: r.p.str("Type"), IPAddressType: r.p.str("IpAddressType"), Tags: r.p.tags("Tags"),
	}
	for _, m := range r.p.members("SubnetMappings") {
		in.SubnetMappings = append(in.SubnetMappings, r.p.str(m+".SubnetId"))
	}
	lb, err := s.CreateLoadBalancer(in)
	if err != nil {
		return nil, err
	}
	return loadBalancersResult{LoadBalancers: list([]elb.LoadBalancer{lb}, toLoadBalancer)}, nil
}

func describeLoadBalancers(s *elb.Store, r *request) (any, error) {
	size, err := r.p.pageSize()
	if err != nil {
		return nil, err
	}
	lbs, next, err := s.DescribeLoadBalancers(elb.DescribeLoadBalancersInput{Region: r.region,
		ARNs: r.p.list("LoadBalancerArns"), Names: r.p.list("Names"), Marker: r.p.str("Marker"), PageSize: size})
	if err != nil {
		return nil, err
	}
	return loadBalancersResult{LoadBalancers: list(lbs, toLoadBalancer), NextMarker: next}, nil
}

func deleteLoadBalancer(s *elb.Store, r *request) (any, error) {
	arn, err := r.p.required("LoadBalancerArn")
	if err != nil {
		return nil, err
	}
	return empty{}, s.DeleteLoadBalancer(r.region, arn)
}

type targetGroupsResult struct {
	TargetGroups members[xTargetGroup]
	NextMarker   string `xml:",omitempty"`
}

func createTargetGroup(s *elb.Store, r *request) (any, error) {
	name, err := r.p.required("Name")
	if err != nil {
		return nil, err
	}
	port, err := r.p.int("Port")
	if err != nil {
		return nil, err
	}
	hc, err := r.p.healthCheck()
	if err != nil {
		return nil, err
	}
	tg, err := s.CreateTargetGroup(elb.CreateTargetGroupInput{
		Region: r.region, Name: name, Protocol: r.p.str("Protocol"), ProtocolVersion: r.p.str("ProtocolVersion"),
		Port: port, VPCID: r.p.str("VpcId"), TargetType: r.p.str("TargetType"), IPAddressType: r.p.str("IpAddressType"),
		HealthCheck: hc, Tags: r.p.tags("Tags"),
	})
	if err != nil {
		return nil, err
	}
	return targetGroupsResult{TargetGroups: list([]elb.TargetGroupDescription{tg}, toTargetGroup)}, nil
}

func describeTargetGroups(s *elb.Store, r *request) (any, error) {
	size, err := r.p.pageSize()
	if err != nil {
		return nil, err
	}
	tgs, next, err := s.DescribeTargetGroups(elb.DescribeTargetGroupsInput{Region: r.region,
		LoadBalancerARN: r.p.str("LoadBalancerArn"), ARNs: r.p.list("TargetGroupArns"), Names: r.p.list("Names"),
		Marker: r.p.str("Marker"), PageSize: size})
	if err != nil {
		return nil, err
	}
	return targetGroupsResult{TargetGroups: list(tgs, toTargetGroup), NextMarker: next}, nil
}

func modifyTargetGroup(s *elb.Store, r *request) (any, error) {
	arn, err := r.p.required("TargetGroupArn")
	if err != nil {
		return nil, err
	}
	hc, err := r.p.healthCheck()
	if err != nil {
		return nil, err
	}
	tg, err := s.ModifyTargetGroup(r.region, arn, hc)
	if err != nil {
		return nil, err
	}
	return targetGroupsResult{TargetGroups: list([]elb.TargetGroupDescription{tg}, toTargetGroup)}, nil
}

func deleteTargetGroup(s *elb.Store, r *request) (any, error) {
	arn, err := r.p.required("TargetGroupArn")
	if err != nil {
		return nil, err
	}
	return empty{}, s.DeleteTargetGroup(r.region, arn)
}

type attributesResult struct {
	Attributes members[xAttribute]
}

func describeTargetGroupAttributes(s *elb.Store, r *request) (any, error) {
	arn, err := r.p.required("TargetGroupArn")
	if err != nil {
		return nil, err
	}
	attrs, err := s.TargetGroupAttributes(r.region, arn)
	if err != nil {
		return nil, err
	}
	return attributesResult{Attributes: toAttributes(attrs)}, nil
}

func modifyTargetGroupAttributes(s *elb.Store, r *request) (any, error) {
	arn, err := r.p.required("TargetGroupArn")
	if err != nil {
		return nil, err
	}
	ms := r.p.members("Attributes")
	if ms == nil {
		return nil, missing("Attributes")
	}
	var set []elb.Attribute
	for _, m := range ms {
		set = append(set, elb.Attribute{Key: r.p.str(m + ".Key"), Value: r.p.str(m + ".Value")})
	}
	attrs, err := s.ModifyTargetGroupAttributes(r.region, arn, set)
	if err != nil {
		return nil, err
	}
	return attributesResult{Attributes: toAttributes(attrs)}, nil
}

func registerTargets(s *elb.Store, r *request, register bool) (any, error) {
	arn, err := r.p.required("TargetGroupArn")
	if err != nil {
		return nil, err
	}
	targets, err := r.p.targets("Targets")
	if err != nil {
		return nil, err
	}
	if targets == nil {
		return nil, missing("Targets")
	}
	if register {
		return empty{}, s.RegisterTargets(r.region, arn, targets)
	}
	return empty{}, s.DeregisterTargets(r.region, arn, targets)
}

type targetHealthResult struct {
	TargetHealthDescriptions members[xTargetHealthDescription]
}

func describeTargetHealth(s *elb.Store, r *request) (any, error) {
	arn, err := r.p.required("TargetGroupArn")
	if err != nil {
		return nil, err
	}
	targets, err := r.p.targets("Targets")
	if err != nil {
		return nil, err
	}
	ds, err := s.DescribeTargetHealth(r.region, arn, targets)
	if err != nil {
		return nil, err
	}
	return targetHealthResult{TargetHealthDescriptions: list(ds, toTargetHealth)}, nil
}

type listenersResult struct {
	Listeners  members[xListener]
	NextMarker string `xml:",omitempty"`
}

func certificates(p params) []string {
	var out []string
	for _, m := range p.members("Certificates") {
		out = append(out, p.str(m+".CertificateArn"))
	}
	if out == nil && p.members("Certificates") != nil {
		out = []string{}
	}
	return out
}

func createListener(s *elb.Store, r *request) (any, error) {
	lbARN, err := r.p.required("LoadBalancerArn")
	if err != nil {
		return nil, err
	}
	port, err := r.p.int("Port")
	if err != nil {
		return nil, err
	}
	actions, err := r.p.actions("DefaultActions")
	if err != nil {
		return nil, err
	}
	if actions == nil {
		return nil, missing("DefaultActions")
	}
	l, err := s.CreateListener(elb.CreateListenerInput{Region: r.region, LoadBalancerARN: lbARN, Protocol: r.p.str("Protocol"),
		Port: port, Certificates: certificates(r.p), SSLPolicy: r.p.str("SslPolicy"), DefaultActions: actions, Tags: r.p.tags("Tags")})
	if err != nil {
		return nil, err
	}
	return listenersResult{Listeners: list([]elb.Listener{l}, toListener)}, nil
}

func describeListeners(s *elb.Store, r *request) (any, error) {
	size, err := r.p.pageSize()
	if err != nil {
		return nil, err
	}
	ls, next, err := s.DescribeListeners(elb.DescribeListenersInput{Region: r.region, LoadBalancerARN: r.p.str("LoadBalancerArn"),
		ARNs: r.p.list("ListenerArns"), Marker: r.p.str("Marker"), PageSize: size})
	if err != nil {
		return nil, err
	}
	return listenersResult{Listeners: list(ls, toListener), NextMarker: next}, nil
}

func modifyListener(s *elb.Store, r *request) (any, error) {
	arn, err := r.p.required("ListenerArn")
	if err != nil {
		return nil, err
	}
	port, err := r.p.int("Port")
	if err != nil {
		return nil, err
	}
	actions, err := r.p.actions("DefaultActions")
	if err != nil {
		return nil, err
	}
	l, err := s.ModifyListener(elb.ModifyListenerInput{Region: r.region, ARN: arn, Port: port, Protocol: r.p.str("Protocol"),
		Certificates: certificates(r.p), SSLPolicy: r.p.str("SslPolicy"), DefaultActions: actions})
	if err != nil {
		return nil, err
	}
	return listenersResult{Listeners: list([]elb.Listener{l}, toListener)}, nil
}

func deleteListener(s *elb.Store, r *request) (any, error) {
	arn, err := r.p.required("ListenerArn")
	if err != nil {
		return nil, err
	}
	return empty{}, s.DeleteListener(r.region, arn)
}

type rulesResult struct {
	Rules      members[xRule]
	NextMarker string `xml:",omitempty"`
}

// refuseTransforms refuses the rule transforms the sandbox does not apply.
func refuseTransforms(p params) error {
	reset, err := p.bool("ResetTransforms")
	if err != nil {
		return err
	}
	if p.has("Transforms") || reset != nil && *reset {
		return &elb.Error{Code: elb.CodeValidation, Message: "not supported by the crossfade sandbox: rule transforms (host-header and URL rewrites)"}
	}
	return nil
}

func createRule(s *elb.Store, r *request) (any, error) {
	lARN, err := r.p.required("ListenerArn")
	if err != nil {
		return nil, err
	}
	if err := refuseTransforms(r.p); err != nil {
		return nil, err
	}
	prio, err := r.p.int("Priority")
	if err != nil {
		return nil, err
	}
	conds := r.p.conditions("Conditions")
	if conds == nil {
		return nil, missing("Conditions")
	}
	actions, err := r.p.actions("Actions")
	if err != nil {
		return nil, err
	}
	if actions == nil {
		return nil, missing("Actions")
	}
	rule, err := s.CreateRule(elb.CreateRuleInput{Region: r.region, ListenerARN: lARN, Priority: prio,
		Conditions: conds, Actions: actions, Tags: r.p.tags("Tags")})
	if err != nil {
		return nil, err
	}
	return rulesResult{Rules: list([]elb.Rule{rule}, toRule)}, nil
}

func describeRules(s *elb.Store, r *request) (any, error) {
	size, err := r.p.pageSize()
	if err != nil {
		return nil, err
	}
	rules, next, err := s.DescribeRules(elb.DescribeRulesInput{Region: r.region, ListenerARN: r.p.str("ListenerArn"),
		ARNs: r.p.list("RuleArns"), Marker: r.p.str("Marker"), PageSize: size})
	if err != nil {
		return nil, err
	}
	return rulesResult{Rules: list(rules, toRule), NextMarker: next}, nil
}

func modifyRule(s *elb.Store, r *request) (any, error) {
	arn, err := r.p.required("RuleArn")
	if err != nil {
		return nil, err
	}
	if err := refuseTransforms(r.p); err != nil {
		return nil, err
	}
	actions, err := r.p.actions("Actions")
	if err != nil {
		return nil, err
	}
	rule, err := s.ModifyRule(elb.ModifyRuleInput{Region: r.region, ARN: arn, Conditions: r.p.conditions("Conditions"), Actions: actions})
	if err != nil {
		return nil, err
	}
	return rulesResult{Rules: list([]elb.Rule{rule}, toRule)}, nil
}

func deleteRule(s *elb.Store, r *request) (any, error) {
	arn, err := r.p.required("RuleArn")
	if err != nil {
		return nil, err
	}
	return empty{}, s.DeleteRule(r.region, arn)
}

func setRulePriorities(s *elb.Store, r *request) (any, error) {
	ms := r.p.members("RulePriorities")
	if ms == nil {
		return nil, missing("RulePriorities")
	}
	var pairs []elb.RulePriority
	for _, m := range ms {
		prio, err := r.p.int(m + ".Priority")
		if err != nil {
			return nil, err
		}
		arn, err := r.p.required(m + ".RuleArn")
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, elb.RulePriority{RuleARN: arn, Priority: prio})
	}
	rules, err := s.SetRulePriorities(r.region, pairs)
	if err != nil {
		return nil, err
	}
	return rulesResult{Rules: list(rules, toRule)}, nil
}

func addTags(s *elb.Store, r *request) (any, error) {
	arns := r.p.list("ResourceArns")
	if arns == nil {
		return nil, missing("ResourceArns")
	}
	tags := r.p.tags("Tags")
	if tags == nil {
		return nil, missing("Tags")
	}
	return empty{}, s.AddTags(r.region, arns, tags)
}

func removeTags(s *elb.Store, r *request) (any, error) {
	arns := r.p.list("ResourceArns")
	if arns == nil {
		return nil, missing("ResourceArns")
	}
	keys := r.p.list("TagKeys")
	if keys == nil {
		return nil, missing("TagKeys")
	}
	return empty{}, s.RemoveTags(r.region, arns, keys)
}

type tagsResult struct {
	TagDescriptions members[xTagDescription]
}

func describeTags(s *elb.Store, r *request) (any, error) {
	arns := r.p.list("ResourceArns")
	if arns == nil {
		return nil, missing("ResourceArns")
	}
	ds, err := s.DescribeTags(r.region, arns)
	if err != nil {
		return nil, err
	}
	return tagsResult{TagDescriptions: list(ds, toTagDescription)}, nil
}
