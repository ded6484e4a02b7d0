package elbv2api

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
	"github.com/crossfade-io/crossfade/internal/sandbox/elb"
)

// params reads a query-protocol request: scalars by name, lists as Name.member.N (N from
// 1), structures as Name.Member, nested to any depth. An empty list is sent as the bare
// name with an empty value ("Conditions="), which is not the same as leaving it out.
type params struct{ v url.Values }

// has reports whether key or anything under it was sent.
func (p params) has(key string) bool {
	if _, ok := p.v[key]; ok {
		return true
	}
	for k := range p.v {
		if strings.HasPrefix(k, key+".") {
			return true
		}
	}
	return false
}

func (p params) str(key string) string { return p.v.Get(key) }

func (p params) strPtr(key string) *string {
	if _, ok := p.v[key]; !ok {
		return nil
	}
	s := p.v.Get(key)
	return &s
}

// wirePath turns a query key into the member path AWS's validation messages use:
// "Actions.member.1.Type" becomes "actions.1.member.type".
func wirePath(key string) string {
	f := strings.Split(key, ".")
	var out []string
	for i := 0; i < len(f); i++ {
		if f[i] == "member" && i+1 < len(f) {
			out = append(out, f[i+1], "member")
			i++
			continue
		}
		r := []rune(f[i])
		if len(r) > 0 {
			r[0] = unicode.ToLower(r[0])
		}
		out = append(out, string(r))
	}
	return strings.Join(out, ".")
}

// schema words the front end's checks of a parameter with ELBv2's code.
var schema = awsapi.Schema{Code: elb.CodeValidation}

func invalidValue(key, v, want string) *elb.Error {
	return schema.Constraint(v, wirePath(key), "Member must be "+want)
}

func missing(key string) *elb.Error { return schema.NotNull(wirePath(key)) }

// required returns the value of a required scalar.
func (p params) required(key string) (string, error) {
	if p.str(key) == "" {
		return "", missing(key)
	}
	return p.str(key), nil
}

// int reads an optional integer.
func (p params) int(key string) (*int, error) {
	s := p.strPtr(key)
	if s == nil {
		return nil, nil
	}
	n, err := strconv.Atoi(*s)
	if err != nil {
		return nil, invalidValue(key, *s, "an integer")
	}
	return &n, nil
}

// bool reads an optional boolean.
func (p params) bool(key string) (*bool, error) {
	s := p.strPtr(key)
	if s == nil {
		return nil, nil
	}
	b, err := strconv.ParseBool(*s)
	if err != nil {
		return nil, invalidValue(key, *s, "true or false")
	}
	return &b, nil
}

// members returns the prefixes of a list's members ("Key.member.1", …) in index order; nil
// when the list was not sent, empty when it was sent empty.
func (p params) members(key string) []string {
	prefix := key + ".member."
	var idx []int
	for k := range p.v {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.SplitN(rest, ".", 2)[0])
		if err == nil && n > 0 && !slices.Contains(idx, n) {
			idx = append(idx, n)
		}
	}
	if len(idx) == 0 {
		if _, ok := p.v[key]; ok {
			return []string{}
		}
		return nil
	}
	slices.Sort(idx)
	out := make([]string, len(idx))
	for i, n := range idx {
		out[i] = prefix + strconv.Itoa(n)
	}
	return out
}

// list reads a list of strings; nil when not sent.
func (p params) list(key string) []string {
	m := p.members(key)
	if m == nil {
		return nil
	}
	out := make([]string, len(m))
	for i, k := range m {
		out[i] = p.str(k)
	}
	return out
}

// pageSize reads PageSize; 0 when not given.
func (p params) pageSize() (int, error) {
	n, err := p.int("PageSize")
	if err != nil || n == nil {
		return 0, err
	}
	if *n < 1 || *n > 400 {
		return 0, schema.Constraint(*n, "pageSize", "Member must have value between 1 and 400")
	}
	return *n, nil
}

func (p params) tags(key string) []elb.Tag {
	var out []elb.Tag
	for _, m := range p.members(key) {
		out = append(out, elb.Tag{Key: p.str(m + ".Key"), Value: p.str(m + ".Value")})
	}
	return out
}

func (p params) targets(key string) ([]elb.TargetInput, error) {
	m := p.members(key)
	if m == nil {
		return nil, nil
	}
	out := make([]elb.TargetInput, 0, len(m))
	for _, k := range m {
		port, err := p.int(k + ".Port")
		if err != nil {
			return nil, err
		}
		out = append(out, elb.TargetInput{ID: p.str(k + ".Id"), Port: port, AvailabilityZone: p.str(k + ".AvailabilityZone")})
	}
	return out, nil
}

func (p params) healthCheck() (elb.HealthCheckInput, error) {
	hc := elb.HealthCheckInput{
		Protocol: p.strPtr("HealthCheckProtocol"), Port: p.strPtr("HealthCheckPort"),
		Path: p.strPtr("HealthCheckPath"), Matcher: p.strPtr("Matcher.HttpCode"),
	}
	var err error
	if hc.Enabled, err = p.bool("HealthCheckEnabled"); err != nil {
		return hc, err
	}
	for key, into := range map[string]**int{
		"HealthCheckIntervalSeconds": &hc.IntervalSeconds, "HealthCheckTimeoutSeconds": &hc.TimeoutSeconds,
		"HealthyThresholdCount": &hc.HealthyThreshold, "UnhealthyThresholdCount": &hc.UnhealthyThreshold,
	} {
		if *into, err = p.int(key); err != nil {
			return hc, err
		}
	}
	if p.has("Matcher.GrpcCode") {
		return hc, &elb.Error{Code: elb.CodeValidation, Message: "not supported by the crossfade sandbox: Matcher.GrpcCode: the sandbox checks HTTP codes only"}
	}
	return hc, nil
}

// actions reads a list of actions; nil when not sent.
func (p params) actions(key string) ([]elb.ActionInput, error) {
	ms := p.members(key)
	if ms == nil {
		return nil, nil
	}
	out := make([]elb.ActionInput, 0, len(ms))
	for _, m := range ms {
		a := elb.ActionInput{Type: p.str(m + ".Type"), TargetGroupARN: p.str(m + ".TargetGroupArn")}
		var err error
		if a.Order, err = p.int(m + ".Order"); err != nil {
			return nil, err
		}
		if fc := m + ".ForwardConfig"; p.has(fc) {
			a.Forward = &elb.ForwardInput{}
			for _, g := range p.members(fc + ".TargetGroups") {
				w, err := p.int(g + ".Weight")
				if err != nil {
					return nil, err
				}
				a.Forward.TargetGroups = append(a.Forward.TargetGroups, elb.WeightInput{TargetGroupARN: p.str(g + ".TargetGroupArn"), Weight: w})
			}
			if sc := fc + ".TargetGroupStickinessConfig"; p.has(sc) {
				st := &elb.StickinessInput{}
				if st.Enabled, err = p.bool(sc + ".Enabled"); err != nil {
					return nil, err
				}
				if st.DurationSeconds, err = p.int(sc + ".DurationSeconds"); err != nil {
					return nil, err
				}
				a.Forward.Stickiness = st
			}
		}
		if fr := m + ".FixedResponseConfig"; p.has(fr) {
			a.FixedResponse = &elb.FixedResponse{StatusCode: p.str(fr + ".StatusCode"), ContentType: p.str(fr + ".ContentType"), MessageBody: p.str(fr + ".MessageBody")}
		}
		if rc := m + ".RedirectConfig"; p.has(rc) {
			a.Redirect = &elb.RedirectConfig{Protocol: p.str(rc + ".Protocol"), Port: p.str(rc + ".Port"), Host: p.str(rc + ".Host"),
				Path: p.str(rc + ".Path"), Query: p.str(rc + ".Query"), StatusCode: p.str(rc + ".StatusCode")}
		}
		for _, u := range []string{"AuthenticateOidcConfig", "AuthenticateCognitoConfig", "JwtValidationConfig"} {
			if p.has(m + "." + u) {
				a.Unsupported = u
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// conditions reads a list of rule conditions; nil when not sent.
func (p params) conditions(key string) []elb.ConditionInput {
	ms := p.members(key)
	if ms == nil {
		return nil
	}
	out := make([]elb.ConditionInput, 0, len(ms))
	for _, m := range ms {
		c := elb.ConditionInput{Field: p.str(m + ".Field"), Values: p.list(m + ".Values")}
		if k := m + ".HostHeaderConfig"; p.has(k) {
			c.HostHeaderConfig = p.list(k + ".Values")
			if c.HostHeaderConfig == nil {
				c.HostHeaderConfig = []string{}
			}
		}
		if k := m + ".PathPatternConfig"; p.has(k) {
			c.PathPatternConfig = p.list(k + ".Values")
			if c.PathPatternConfig == nil {
				c.PathPatternConfig = []string{}
			}
		}
		for _, u := range []string{"RegexValues", "HostHeaderConfig.RegexValues", "PathPatternConfig.RegexValues",
			"HttpHeaderConfig", "QueryStringConfig", "HttpRequestMethodConfig", "SourceIpConfig"} {
			if p.has(m + "." + u) {
				c.Unsupported = u
			}
		}
		out = append(out, c)
	}
	return out
}
