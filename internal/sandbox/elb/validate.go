package elb

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
)

// checkName applies ELBv2's rule for load balancer and target group names: 1–32
// characters, alphanumerics and hyphens, not beginning or ending with a hyphen.
func checkName(what, name string) *Error {
	switch {
	case name == "":
		return validationf("%s name cannot be empty", what)
	case len(name) > 32:
		return validationf("%s name '%s' cannot be longer than '32' characters", what, name)
	case strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != "":
		return validationf("%s name '%s' can only contain characters that are alphanumeric characters or hyphens(-)", what, name)
	case strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-"):
		return validationf("%s name '%s' cannot begin or end with '-'", what, name)
	}
	return nil
}

var tagPattern = regexp.MustCompile(`^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$`)

// Tag limits of the model (TagKey, TagValue): lengths in characters, not bytes.
const (
	maxTagKeyLength   = 128
	maxTagValueLength = 256
)

// checkTagKey applies the model's TagKey constraints to a key at path (a tag's
// "tags.N.member.key", or RemoveTags' "tagKeys.N.member"), and ELBv2's refusal of the
// reserved prefix, in its own words (seen in public reports: "Tag key
// 'aws:cloudformation:stack-name' cannot start with 'aws:'").
func checkTagKey(key, path string) *Error {
	switch n := utf8.RuneCountInString(key); {
	case n == 0:
		return constraint(key, path, "Member must have length greater than or equal to 1")
	case n > maxTagKeyLength:
		return constraint(key, path, fmt.Sprintf("Member must have length less than or equal to %d", maxTagKeyLength))
	case !tagPattern.MatchString(key):
		return constraint(key, path, `Member must satisfy regular expression pattern: ^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$`)
	case strings.HasPrefix(strings.ToLower(key), "aws:"):
		return validationf("Tag key '%s' cannot start with 'aws:'", key)
	}
	return nil
}

// checkTags validates the tags of one request; path is the member they came in.
func checkTags(tags []Tag, path string) *Error {
	seen := map[string]bool{}
	for i, tg := range tags {
		p := fmt.Sprintf("%s.%d.member", path, i+1)
		if err := checkTagKey(tg.Key, p+".key"); err != nil {
			return err
		}
		switch {
		case utf8.RuneCountInString(tg.Value) > maxTagValueLength:
			return constraint(tg.Value, p+".value", fmt.Sprintf("Member must have length less than or equal to %d", maxTagValueLength))
		case !tagPattern.MatchString(tg.Value):
			return constraint(tg.Value, p+".value", `Member must satisfy regular expression pattern: ^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$`)
		case seen[tg.Key]:
			return errorf(CodeDuplicateTagKeys, "Tag key '%s' was specified more than once", tg.Key)
		}
		seen[tg.Key] = true
	}
	if len(tags) > maxTagsPerResource {
		return errorf(CodeTooManyTags, "You've reached the limit on the number of tags for this resource (%d)", maxTagsPerResource)
	}
	return nil
}

// mergeTags adds or replaces tags, keeping the existing order.
func mergeTags(have, add []Tag) []Tag { return awsapi.MergeTags(have, add, tagKey) }

func tagKey(t Tag) string { return t.Key }

// HealthCheckInput is a request's health-check settings; nil fields are not given.
type HealthCheckInput struct {
	Enabled            *bool
	Protocol           *string
	Port               *string
	Path               *string
	IntervalSeconds    *int
	TimeoutSeconds     *int
	HealthyThreshold   *int
	UnhealthyThreshold *int
	Matcher            *string // Matcher.HttpCode
}

// defaultHealthCheck is what ELBv2 gives a target group of type ip or instance.
func defaultHealthCheck(protocol string) HealthCheck {
	if protocol == ProtocolTCP {
		return defaultTCPHealthCheck()
	}
	return HealthCheck{Enabled: true, Protocol: protocol, Port: "traffic-port", Path: "/",
		IntervalSeconds: 30, TimeoutSeconds: 5, HealthyThreshold: 5, UnhealthyThreshold: 2, Matcher: "200"}
}

var matcherPart = regexp.MustCompile(`^(\d{3})(?:-(\d{3}))?$`)

// applyHealthCheck returns hc, the health check of a group of protocol groupProtocol, with
// in applied, or the first thing wrong with in.
func applyHealthCheck(groupProtocol string, hc HealthCheck, in HealthCheckInput) (HealthCheck, *Error) {
	if groupProtocol == ProtocolTCP {
		return applyTCPHealthCheck(hc, in)
	}
	if in.Enabled != nil {
		if !*in.Enabled {
			return hc, validationf("Health checks cannot be disabled for target groups with the target type 'ip' or 'instance'")
		}
		hc.Enabled = true
	}
	if in.Protocol != nil {
		if err := enumCheck(*in.Protocol, "healthCheckProtocol", "HTTP", "HTTPS", "TCP", "TLS", "UDP", "TCP_UDP", "GENEVE"); err != nil {
			return hc, err
		}
		if *in.Protocol != "HTTP" && *in.Protocol != "HTTPS" {
			return hc, validationf("Health check protocol '%s' is not supported for target groups with the protocol 'HTTP' or 'HTTPS'", *in.Protocol)
		}
		hc.Protocol = *in.Protocol
	}
	if in.Port != nil {
		if p, err := strconv.Atoi(*in.Port); *in.Port != "traffic-port" && (err != nil || p < 1 || p > 65535) {
			return hc, validationf("Health check port '%s' must be 'traffic-port' or a port number between 1 and 65535", *in.Port)
		}
		hc.Port = *in.Port
	}
	if in.Path != nil {
		switch {
		case len(*in.Path) < 1 || len(*in.Path) > 1024:
			return hc, constraint(*in.Path, "healthCheckPath", "Member must have length between 1 and 1024")
		case !strings.HasPrefix(*in.Path, "/"):
			return hc, validationf("Health check path '%s' must begin with a '/' character", *in.Path)
		}
		hc.Path = *in.Path
	}
	for _, f := range []struct {
		v      *int
		into   *int
		path   string
		lo, hi int
	}{
		{in.IntervalSeconds, &hc.IntervalSeconds, "healthCheckIntervalSeconds", 5, 300},
		{in.TimeoutSeconds, &hc.TimeoutSeconds, "healthCheckTimeoutSeconds", 2, 120},
		{in.HealthyThreshold, &hc.HealthyThreshold, "healthyThresholdCount", 2, 10},
		{in.UnhealthyThreshold, &hc.UnhealthyThreshold, "unhealthyThresholdCount", 2, 10},
	} {
		if f.v == nil {
			continue
		}
		if err := rangeCheck(*f.v, f.path, f.lo, f.hi); err != nil {
			return hc, err
		}
		*f.into = *f.v
	}
	if hc.TimeoutSeconds >= hc.IntervalSeconds {
		return hc, validationf("Health check interval must be greater than the timeout.")
	}
	if in.Matcher != nil {
		if err := checkMatcher(*in.Matcher); err != nil {
			return hc, err
		}
		hc.Matcher = *in.Matcher
	}
	return hc, nil
}

// checkMatcher validates Matcher.HttpCode: codes and ranges of 200–499, comma separated.
func checkMatcher(m string) *Error {
	for _, part := range strings.Split(m, ",") {
		sub := matcherPart.FindStringSubmatch(part)
		bad := sub == nil
		if !bad {
			lo, _ := strconv.Atoi(sub[1])
			hi := lo
			if sub[2] != "" {
				hi, _ = strconv.Atoi(sub[2])
			}
			bad = lo < 200 || hi > 499 || hi < lo
		}
		if bad {
			return validationf("Health check matcher HTTP code '%s' must be within '200-499' code range.", part)
		}
	}
	return nil
}

// Target group attribute keys the proxy reads.
const (
	AttrDeregistrationDelay = "deregistration_delay.timeout_seconds"
	AttrStickinessEnabled   = "stickiness.enabled"
	AttrStickinessType      = "stickiness.type"
	AttrLBCookieDuration    = "stickiness.lb_cookie.duration_seconds"
	AttrAppCookieName       = "stickiness.app_cookie.cookie_name"
	AttrAppCookieDuration   = "stickiness.app_cookie.duration_seconds"
	AttrSlowStart           = "slow_start.duration_seconds"
	AttrAlgorithm           = "load_balancing.algorithm.type"
)

// attributeSpec is one attribute an ALB target group has: its default and what it takes.
type attributeSpec struct {
	key, def string
	check    func(v string) bool
	want     string // what check wants, for the message
}

func intIn(lo, hi int) func(string) bool {
	return func(v string) bool { n, err := strconv.Atoi(v); return err == nil && n >= lo && n <= hi }
}

func oneOf(vals ...string) func(string) bool {
	return func(v string) bool { return slices.Contains(vals, v) }
}

// attributeSpecs are an ALB target group's attributes in the order ELBv2 lists them.
var attributeSpecs = []attributeSpec{
	{AttrDeregistrationDelay, "300", intIn(0, 3600), "an integer from 0 to 3600"},
	{AttrStickinessEnabled, "false", oneOf("true", "false"), "true or false"},
	{AttrStickinessType, "lb_cookie", oneOf("lb_cookie", "app_cookie"), "lb_cookie or app_cookie"},
	{AttrLBCookieDuration, "86400", intIn(1, 604800), "an integer from 1 to 604800"},
	{AttrAppCookieName, "", func(v string) bool {
		return len(v) <= 256 && !strings.HasPrefix(v, "AWSALB") && !strings.HasPrefix(v, "AWSELB")
	}, "a cookie name not beginning with AWSALB, AWSALBAPP, AWSALBTG or AWSELB"},
	{AttrAppCookieDuration, "86400", intIn(1, 604800), "an integer from 1 to 604800"},
	{AttrSlowStart, "0", func(v string) bool { return v == "0" || intIn(30, 900)(v) }, "0 or an integer from 30 to 900"},
	{AttrAlgorithm, "round_robin", oneOf("round_robin", "least_outstanding_requests", "weighted_random"), "round_robin, least_outstanding_requests or weighted_random"},
	{"load_balancing.algorithm.anomaly_mitigation", "off", oneOf("on", "off"), "on or off"},
	{"load_balancing.cross_zone.enabled", "use_load_balancer_configuration", oneOf("true", "false", "use_load_balancer_configuration"), "true, false or use_load_balancer_configuration"},
	{"target_group_health.dns_failover.minimum_healthy_targets.count", "1", func(v string) bool { return v == "off" || intIn(1, 1000)(v) }, "off or an integer from 1 to 1000"},
	{"target_group_health.dns_failover.minimum_healthy_targets.percentage", "off", func(v string) bool { return v == "off" || intIn(1, 100)(v) }, "off or an integer from 1 to 100"},
	{"target_group_health.unhealthy_state_routing.minimum_healthy_targets.count", "1", intIn(1, 1000), "an integer from 1 to 1000"},
	{"target_group_health.unhealthy_state_routing.minimum_healthy_targets.percentage", "off", func(v string) bool { return v == "off" || intIn(1, 100)(v) }, "off or an integer from 1 to 100"},
}

// otherTargetGroupAttributes are attributes of target groups other than an ALB's HTTP/HTTPS
// ones of type ip or instance.
var otherTargetGroupAttributes = []string{
	"deregistration_delay.connection_termination.enabled", "preserve_client_ip.enabled",
	"proxy_protocol_v2.enabled", "lambda.multi_value_headers.enabled", "target_failover.on_deregistration",
	"target_failover.on_unhealthy", "target_health_state.unhealthy.connection_termination.enabled",
	"target_health_state.unhealthy.draining_interval_seconds",
}

// attributeSpecsFor are the attributes of a target group of protocol.
func attributeSpecsFor(protocol string) []attributeSpec {
	if protocol == ProtocolTCP {
		return tcpAttributeSpecs
	}
	return attributeSpecs
}

func defaultAttributes(protocol string) []Attribute {
	specs := attributeSpecsFor(protocol)
	out := make([]Attribute, len(specs))
	for i, a := range specs {
		out[i] = Attribute{Key: a.key, Value: a.def}
	}
	return out
}

// applyAttributes returns have with set applied, or the first attribute ELBv2 would refuse.
func applyAttributes(protocol string, have, set []Attribute) ([]Attribute, *Error) {
	if len(set) == 0 {
		return nil, notNull("attributes")
	}
	if protocol == ProtocolTCP {
		return applyTCPAttributes(have, set)
	}
	out := slices.Clone(have)
	for _, a := range set {
		i := slices.IndexFunc(attributeSpecs, func(s attributeSpec) bool { return s.key == a.Key })
		switch {
		case i < 0 && slices.Contains(otherTargetGroupAttributes, a.Key),
			a.Key == AttrStickinessType && a.Value == "source_ip":
			// ELBv2 knows these, for Network and Gateway Load Balancers or Lambda targets.
			return nil, errorf(CodeInvalidConfigurationRequest, "The provided target group attribute is not supported")
		case i < 0:
			return nil, validationf("Target group attribute key '%s' is not recognized", a.Key)
		}
		if spec := attributeSpecs[i]; !spec.check(a.Value) {
			return nil, validationf("Target group attribute '%s' value '%s' is not valid: it must be %s", a.Key, a.Value, spec.want)
		}
		out[slices.IndexFunc(out, func(x Attribute) bool { return x.Key == a.Key })] = a
	}
	return out, nil
}

// paginate returns one page of items from marker (opaque: an offset) and the marker of the
// next page, "" at the end.
func paginate[T any](items []T, marker string, pageSize int) ([]T, string, *Error) {
	if pageSize == 0 {
		pageSize = maxPageSize
	}
	if err := rangeCheck(pageSize, "pageSize", 1, maxPageSize); err != nil {
		return nil, "", err
	}
	start := 0
	if marker != "" {
		raw, err := base64.RawURLEncoding.DecodeString(marker)
		n, convErr := strconv.Atoi(strings.TrimPrefix(string(raw), "offset:"))
		if err != nil || convErr != nil || !strings.HasPrefix(string(raw), "offset:") || n < 0 {
			return nil, "", validationf("The marker '%s' is not valid", marker)
		}
		start = min(n, len(items))
	}
	end := min(start+pageSize, len(items))
	next := ""
	if end < len(items) {
		next = base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(end)))
	}
	return items[start:end], next, nil
}
