package elb

import (
	"slices"
	"strconv"
)

// CreateRuleInput is CreateRule's request.
type CreateRuleInput struct {
	Region      string
	ListenerARN string
	Priority    *int
	Conditions  []ConditionInput
	Actions     []ActionInput
	Tags        []Tag
}

// CreateRule adds a rule to a listener.
func (s *Store) CreateRule(in CreateRuleInput) (Rule, error) {
	if in.Priority == nil {
		return Rule{}, notNull("priority")
	}
	if err := rangeCheck(*in.Priority, "priority", 1, 50000); err != nil {
		return Rule{}, err
	}
	conds, err := resolveConditions(in.Conditions, "conditions")
	if err != nil {
		return Rule{}, err
	}
	if err := checkTags(in.Tags, "tags"); err != nil {
		return Rule{}, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	l, err := t.getListener(in.Region, in.ListenerARN)
	if err != nil {
		return Rule{}, err
	}
	if t.lb(l.LoadBalancerARN).IsNetwork() {
		return Rule{}, unsupported("listener rules on a Network Load Balancer listener (%s): the sandbox serves its default action only, whose weighted target groups ModifyListener moves", l.ARN)
	}
	if slices.ContainsFunc(t.listenerRules(l.ARN), func(r *Rule) bool { return !r.IsDefault && r.Priority == *in.Priority }) {
		return Rule{}, errorf(CodePriorityInUse, "Priority '%d' is currently in use", *in.Priority)
	}
	actions, err := t.resolveActions(in.Actions, "actions", l.LoadBalancerARN)
	if err != nil {
		return Rule{}, err
	}
	count := 0
	for _, other := range t.lbListeners(l.LoadBalancerARN) {
		for _, r := range t.listenerRules(other.ARN) {
			if !r.IsDefault {
				count++
			}
		}
	}
	if count >= maxRulesPerLoadBalancer {
		return Rule{}, errorf(CodeTooManyRules, "You've reached the limit on the number of rules per load balancer (%d)", maxRulesPerLoadBalancer)
	}
	r := Rule{ARN: s.arnPrefix(t.lb(l.LoadBalancerARN).Region) + "listener-rule/" + lastSegments(l.ARN) + "/" + newHexID(),
		ListenerARN: l.ARN, Priority: *in.Priority, Conditions: conds, Actions: actions, Tags: slices.Clone(in.Tags)}
	t.rules[r.ARN] = &r
	if err := s.commit(t); err != nil {
		return Rule{}, err
	}
	return r, nil
}

// getRule returns a rule of the region by ARN, or RuleNotFound.
func (t *txn) getRule(region, arn string) (*Rule, *Error) {
	if err := checkARN(arn, kindRule); err != nil {
		return nil, err
	}
	r := t.rule(arn)
	if r == nil {
		return nil, ruleNotFound()
	}
	if _, err := t.getListener(region, r.ListenerARN); err != nil {
		return nil, ruleNotFound()
	}
	return r, nil
}

// DescribeRulesInput is DescribeRules' request.
type DescribeRulesInput struct {
	Region      string
	ListenerARN string
	ARNs        []string
	Marker      string
	PageSize    int
}

// DescribeRules lists a listener's rules in evaluation order, or the given ones.
func (s *Store) DescribeRules(in DescribeRulesInput) ([]Rule, string, error) {
	if (in.ListenerARN == "") == (len(in.ARNs) == 0) {
		return nil, "", validationf("You must specify either listener rule ARNs or a listener ARN")
	}
	s.writeMu.Lock()
	t := s.begin()
	var rules []*Rule
	var err *Error
	if in.ListenerARN != "" {
		if _, err = t.getListener(in.Region, in.ListenerARN); err == nil {
			rules = t.listenerRules(in.ListenerARN)
			sortRules(rules)
		}
	}
	for _, arn := range dedupe(in.ARNs) {
		var r *Rule
		if r, err = t.getRule(in.Region, arn); err != nil {
			break
		}
		rules = append(rules, r)
	}
	s.writeMu.Unlock()
	if err != nil {
		return nil, "", err
	}
	out := make([]Rule, len(rules))
	for i, r := range rules {
		out[i] = *r
	}
	page, next, err := paginate(out, in.Marker, in.PageSize)
	if err != nil {
		return nil, "", err
	}
	return page, next, nil
}

// ModifyRuleInput is ModifyRule's request; nil members are unchanged.
type ModifyRuleInput struct {
	Region     string
	ARN        string
	Conditions []ConditionInput
	Actions    []ActionInput
}

// ModifyRule replaces a rule's conditions, actions or both. A default rule cannot be
// modified, as on ELBv2: its actions are the listener's, changed by ModifyListener.
func (s *Store) ModifyRule(in ModifyRuleInput) (Rule, error) {
	if in.Conditions == nil && in.Actions == nil {
		return Rule{}, validationf("You must specify conditions or actions to modify a rule")
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	r, err := t.getRule(in.Region, in.ARN)
	if err != nil {
		return Rule{}, err
	}
	if r.IsDefault {
		return Rule{}, errorf(CodeOperationNotPermitted, "Default rule '%s' cannot be modified", r.ARN)
	}
	n := *r
	if in.Conditions != nil {
		if n.Conditions, err = resolveConditions(in.Conditions, "conditions"); err != nil {
			return Rule{}, err
		}
	}
	if in.Actions != nil {
		if n.Actions, err = t.resolveActions(in.Actions, "actions", t.listener(r.ListenerARN).LoadBalancerARN); err != nil {
			return Rule{}, err
		}
	}
	t.rules[n.ARN] = &n
	if err := s.commit(t); err != nil {
		return Rule{}, err
	}
	return n, nil
}

// DeleteRule deletes a rule other than the default one.
func (s *Store) DeleteRule(region, arn string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	r, err := t.getRule(region, arn)
	if err != nil {
		return err
	}
	if r.IsDefault {
		return errorf(CodeOperationNotPermitted, "Default rule '%s' cannot be deleted", r.ARN)
	}
	t.rules[arn] = nil
	return s.commit(t)
}

// RulePriority is one pair of SetRulePriorities.
type RulePriority struct {
	RuleARN  string
	Priority *int
}

// SetRulePriorities sets several rules' priorities at once: all of them or none.
func (s *Store) SetRulePriorities(region string, pairs []RulePriority) ([]Rule, error) {
	if len(pairs) == 0 {
		return nil, notNull("rulePriorities")
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	for i, p := range pairs {
		if p.Priority == nil {
			return nil, notNull("rulePriorities." + strconv.Itoa(i+1) + ".member.priority")
		}
		if err := rangeCheck(*p.Priority, "rulePriorities."+strconv.Itoa(i+1)+".member.priority", 1, 50000); err != nil {
			return nil, err
		}
		r, err := t.getRule(region, p.RuleARN)
		if err != nil {
			return nil, err
		}
		if r.IsDefault {
			return nil, errorf(CodeOperationNotPermitted, "Default rule '%s' cannot be modified", r.ARN)
		}
		if _, dup := t.rules[r.ARN]; dup {
			return nil, validationf("Rule '%s' is specified more than once", r.ARN)
		}
		n := *r
		n.Priority = *p.Priority
		t.rules[n.ARN] = &n
	}
	// Every listener touched must end with distinct priorities.
	var out []Rule
	for _, p := range pairs {
		r := t.rules[p.RuleARN]
		for _, other := range t.listenerRules(r.ListenerARN) {
			if other.ARN != r.ARN && !other.IsDefault && other.Priority == r.Priority {
				return nil, errorf(CodePriorityInUse, "Priority '%d' is currently in use", r.Priority)
			}
		}
		out = append(out, *r)
	}
	if err := s.commit(t); err != nil {
		return nil, err
	}
	return out, nil
}
