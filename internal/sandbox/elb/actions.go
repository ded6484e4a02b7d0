package elb

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// ActionInput is an action as a request gives it; nil pointers are members not given.
type ActionInput struct {
	Type           string
	Order          *int
	TargetGroupARN string
	Forward        *ForwardInput
	FixedResponse  *FixedResponse
	Redirect       *RedirectConfig
	// Unsupported names a member the sandbox does not serve (AuthenticateOidcConfig, …),
	// so that the refusal can name it.
	Unsupported string
}

// ForwardInput is a request's ForwardConfig.
type ForwardInput struct {
	TargetGroups []WeightInput
	Stickiness   *StickinessInput
}

// WeightInput is one TargetGroupTuple.
type WeightInput struct {
	TargetGroupARN string
	Weight         *int
}

// StickinessInput is a request's TargetGroupStickinessConfig.
type StickinessInput struct {
	Enabled         *bool
	DurationSeconds *int
}

// ConditionInput is a rule condition as a request gives it.
type ConditionInput struct {
	Field             string
	Values            []string // nil: not given
	HostHeaderConfig  []string // nil: not given
	PathPatternConfig []string // nil: not given
	// Unsupported names a member the sandbox does not serve (HttpHeaderConfig,
	// RegexValues, …).
	Unsupported string
}

const maxStickiness = 604800 // one week

var (
	statusCodePattern = regexp.MustCompile(`^(2|4|5)\d\d$`)
	fixedContentTypes = []string{"text/plain", "text/css", "text/html", "application/javascript", "application/json"}
)

// resolveActions validates a request's actions for a listener of load balancer lbARN and
// returns them as the store keeps them. path is the member they came in ("actions" or
// "defaultActions"), for the messages.
func (t *txn) resolveActions(in []ActionInput, path, lbARN string) ([]Action, *Error) {
	if len(in) == 0 {
		return nil, validationf("At least one action must be specified in '%s'", path)
	}
	var out []Action
	terminal := 0
	for i, a := range in {
		p := fmt.Sprintf("%s.%d.member", path, i+1)
		if a.Type == "" {
			return nil, notNull(p + ".type")
		}
		if err := enumCheck(a.Type, p+".type", "forward", "authenticate-oidc", "authenticate-cognito", "redirect", "fixed-response"); err != nil {
			return nil, err
		}
		if strings.HasPrefix(a.Type, "authenticate-") || a.Unsupported != "" {
			what := a.Type
			if a.Unsupported != "" {
				what = a.Unsupported
			}
			return nil, unsupported("action %s: the sandbox serves forward, fixed-response and redirect actions only", what)
		}
		if lb := t.lb(lbARN); lb != nil && lb.IsNetwork() && a.Type != ActionForward {
			// An NLB listener forwards; fixed responses and redirects are HTTP.
			return nil, errorf(CodeInvalidLoadBalancerAction, "Action type '%s' is not supported for load balancers of type 'network' (%s): a Network Load Balancer listener only forwards", a.Type, p+".type")
		}
		act := Action{Type: a.Type}
		if a.Order != nil {
			if err := rangeCheck(*a.Order, p+".order", 1, 50000); err != nil {
				return nil, err
			}
			act.Order = *a.Order
		}
		var err *Error
		switch a.Type {
		case ActionForward:
			act.Forward, err = t.resolveForward(a, p, lbARN)
			if err == nil && len(act.Forward.TargetGroups) == 1 {
				act.TargetGroupARN = act.Forward.TargetGroups[0].TargetGroupARN
			}
		case ActionFixedResponse:
			act.FixedResponse, err = resolveFixedResponse(a.FixedResponse, p+".fixedResponseConfig")
		case ActionRedirect:
			act.Redirect, err = resolveRedirect(a.Redirect, p+".redirectConfig")
		}
		if err != nil {
			return nil, err
		}
		terminal++
		out = append(out, act)
	}
	if terminal > 1 {
		return nil, errorf(CodeInvalidLoadBalancerAction, "Only one forward, redirect or fixed-response action can be specified, and it must be the last action")
	}
	slices.SortStableFunc(out, func(a, b Action) int { return a.Order - b.Order })
	return out, nil
}

func (t *txn) resolveForward(a ActionInput, p, lbARN string) (*ForwardConfig, *Error) {
	var groups []WeightInput
	switch {
	case a.Forward != nil && a.TargetGroupARN != "":
		if len(a.Forward.TargetGroups) != 1 || a.Forward.TargetGroups[0].TargetGroupARN != a.TargetGroupARN {
			return nil, validationf("You cannot specify a target group ARN and a forward configuration with different target groups; specify one target group in both, or use ForwardConfig only")
		}
		groups = a.Forward.TargetGroups
	case a.Forward != nil:
		groups = a.Forward.TargetGroups
	case a.TargetGroupARN != "":
		one := 1
		groups = []WeightInput{{TargetGroupARN: a.TargetGroupARN, Weight: &one}}
	}
	if len(groups) == 0 {
		return nil, validationf("A target group ARN must be specified for a forward action (%s)", p)
	}
	if len(groups) > maxTargetGroupsPerAction {
		return nil, errorf(CodeTooManyTargetGroups, "You've reached the limit on the number of target groups per forward action: an action can forward to at most %d target groups, and %d were specified", maxTargetGroupsPerAction, len(groups))
	}
	fc := &ForwardConfig{}
	var missing []string
	seen := map[string]bool{}
	users := t.targetGroupUsers()
	for j, g := range groups {
		gp := fmt.Sprintf("%s.forwardConfig.targetGroups.%d.member", p, j+1)
		if g.TargetGroupARN == "" {
			return nil, notNull(gp + ".targetGroupArn")
		}
		if err := checkARN(g.TargetGroupARN, kindTargetGroup); err != nil {
			return nil, err
		}
		if seen[g.TargetGroupARN] {
			return nil, validationf("Target group '%s' is specified more than once in the same forward action", g.TargetGroupARN)
		}
		seen[g.TargetGroupARN] = true
		w := 1
		switch {
		case g.Weight != nil:
			w = *g.Weight
		case len(groups) > 1:
			w = -1 // several groups need a weight each
		}
		if w < 0 || w > 999 {
			return nil, validationf("The weight for each target group must be between 0 and 999, inclusive")
		}
		tg := t.tg(g.TargetGroupARN)
		if tg == nil {
			missing = append(missing, g.TargetGroupARN)
			continue
		}
		if lb := t.lb(lbARN); lb != nil {
			if err := checkGroupForListener(lb, tg); err != nil {
				return nil, err
			}
		}
		for _, other := range users[g.TargetGroupARN] {
			if other != lbARN {
				return nil, errorf(CodeTargetGroupAssociationLimit, "The following target groups cannot be associated with more than one load balancer: %s", g.TargetGroupARN)
			}
		}
		fc.TargetGroups = append(fc.TargetGroups, WeightedTargetGroup{TargetGroupARN: g.TargetGroupARN, Weight: w})
	}
	if len(missing) > 0 {
		return nil, errorf(CodeTargetGroupNotFound, "Target groups '%s' not found", strings.Join(missing, ", "))
	}
	if st := a.Forward; st != nil && st.Stickiness != nil {
		sc := st.Stickiness
		enabled := sc.Enabled != nil && *sc.Enabled
		if sc.DurationSeconds != nil && (*sc.DurationSeconds < 1 || *sc.DurationSeconds > maxStickiness) || enabled && sc.DurationSeconds == nil {
			return nil, validationf("Target group stickiness duration must be between 1 and %d seconds", maxStickiness)
		}
		if enabled && t.lb(lbARN) != nil && t.lb(lbARN).IsNetwork() {
			return nil, validationf("Target group stickiness (%s.forwardConfig.targetGroupStickinessConfig) is not supported for load balancers of type 'network': a Network Load Balancer's stickiness is the target group's source_ip attribute", p)
		}
		fc.Stickiness.Enabled = enabled
		if sc.DurationSeconds != nil {
			fc.Stickiness.DurationSeconds = *sc.DurationSeconds
		}
	}
	return fc, nil
}

func resolveFixedResponse(in *FixedResponse, p string) (*FixedResponse, *Error) {
	if in == nil {
		return nil, notNull(p)
	}
	switch {
	case in.StatusCode == "":
		return nil, notNull(p + ".statusCode")
	case !statusCodePattern.MatchString(in.StatusCode):
		return nil, constraint(in.StatusCode, p+".statusCode", `Member must satisfy regular expression pattern: ^(2|4|5)\d\d$`)
	case in.ContentType != "" && !slices.Contains(fixedContentTypes, in.ContentType):
		return nil, validationf("Content type '%s' is not valid: it must be one of %s", in.ContentType, strings.Join(fixedContentTypes, ", "))
	case len(in.MessageBody) > 1024:
		return nil, constraint("…", p+".messageBody", "Member must have length less than or equal to 1024")
	}
	out := *in
	return &out, nil
}

func resolveRedirect(in *RedirectConfig, p string) (*RedirectConfig, *Error) {
	if in == nil {
		return nil, notNull(p)
	}
	if in.StatusCode == "" {
		return nil, notNull(p + ".statusCode")
	}
	if err := enumCheck(in.StatusCode, p+".statusCode", "HTTP_301", "HTTP_302"); err != nil {
		return nil, err
	}
	out := *in
	for _, f := range []struct {
		v   *string
		def string
	}{{&out.Protocol, "#{protocol}"}, {&out.Port, "#{port}"}, {&out.Host, "#{host}"}, {&out.Path, "/#{path}"}, {&out.Query, "#{query}"}} {
		if *f.v == "" {
			*f.v = f.def
		}
	}
	if out.Protocol == "#{protocol}" && out.Port == "#{port}" && out.Host == "#{host}" && out.Path == "/#{path}" && out.Query == "#{query}" {
		return nil, errorf(CodeInvalidLoadBalancerAction, "The redirect configuration is not valid because it creates a loop.")
	}
	return &out, nil
}

// resolveConditions validates a rule's conditions.
func resolveConditions(in []ConditionInput, path string) ([]Condition, *Error) {
	if len(in) == 0 {
		return nil, validationf("A rule must have at least one condition")
	}
	var out []Condition
	values := 0
	for i, c := range in {
		p := fmt.Sprintf("%s.%d.member", path, i+1)
		if c.Field == "" {
			return nil, notNull(p + ".field")
		}
		if err := enumCheck(c.Field, p+".field", "http-header", "http-request-method", "host-header", "path-pattern", "query-string", "source-ip"); err != nil {
			return nil, err
		}
		if c.Field != FieldHostHeader && c.Field != FieldPathPattern {
			return nil, unsupported("condition field '%s': the sandbox serves host-header and path-pattern conditions only", c.Field)
		}
		if c.Unsupported != "" {
			return nil, unsupported("condition member %s: the sandbox serves Values, HostHeaderConfig and PathPatternConfig only", c.Unsupported)
		}
		config, configName := c.HostHeaderConfig, "HostHeaderConfig"
		other, otherName := c.PathPatternConfig, "PathPatternConfig"
		if c.Field == FieldPathPattern {
			config, configName, other, otherName = other, otherName, config, configName
		}
		if other != nil {
			return nil, validationf("You cannot specify '%s' for a condition whose field is '%s'", otherName, c.Field)
		}
		if c.Values != nil && config != nil {
			return nil, validationf("You cannot specify both 'Values' and '%s' in the same condition", configName)
		}
		patterns := c.Values
		if config != nil {
			patterns = config
		}
		if len(patterns) == 0 {
			return nil, validationf("A condition must specify at least one value (field '%s')", c.Field)
		}
		for _, v := range patterns {
			if v == "" || len(v) > 128 {
				return nil, validationf("Condition value '%s' must be between 1 and 128 characters long", v)
			}
		}
		if slices.ContainsFunc(out, func(o Condition) bool { return o.Field == c.Field }) {
			return nil, validationf("A rule can only have one '%s' condition", c.Field)
		}
		values += len(patterns)
		out = append(out, Condition{Field: c.Field, Values: slices.Clone(c.Values), Patterns: slices.Clone(patterns)})
	}
	if values > 5 {
		return nil, validationf("A rule can only have '5' condition values")
	}
	return out, nil
}

// actionGroups lists the target groups actions forward to.
func actionGroups(actions []Action) []string {
	var out []string
	for _, a := range actions {
		if a.Forward != nil {
			for _, g := range a.Forward.TargetGroups {
				out = append(out, g.TargetGroupARN)
			}
		}
	}
	return out
}

// targetGroupUsers maps each target group to the load balancers whose listeners or rules
// forward to it.
func (t *txn) targetGroupUsers() map[string][]string {
	users := map[string][]string{}
	add := func(tg, lb string) {
		if !slices.Contains(users[tg], lb) {
			users[tg] = append(users[tg], lb)
		}
	}
	lbOf := map[string]string{}
	for _, l := range t.allListeners() {
		lbOf[l.ARN] = l.LoadBalancerARN
	}
	for _, r := range t.allRules() {
		for _, tg := range actionGroups(r.Actions) {
			add(tg, lbOf[r.ListenerARN])
		}
	}
	for _, v := range users {
		slices.Sort(v)
	}
	return users
}
