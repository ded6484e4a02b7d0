package cloudmapstore

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
)

// Patterns and lengths of the service model (servicediscovery 2017-03-14).
var (
	// printableName is NamespaceNameHttp's and NamespaceNamePrivate's pattern, ^[!-~]{1,1024}$
	// and ^[!-~]{1,253}$, without the repeat count (beyond Go's regexp); the length is
	// checked apart.
	printableName       = regexp.MustCompile(`^[!-~]+$`)
	publicNamespaceName = regexp.MustCompile(`^([a-zA-Z0-9]([a-zA-Z0-9\-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z0-9]([a-zA-Z0-9\-]{0,61}[a-zA-Z0-9])?$`)
	// serviceNameLabels is ServiceName's pattern without its look-ahead (1 to 127
	// characters, checked apart), which Go's regexp does not have.
	serviceNameLabels = regexp.MustCompile(`^([a-zA-Z0-9_][a-zA-Z0-9-_]{0,61}[a-zA-Z0-9_]|[a-zA-Z0-9])(\.([a-zA-Z0-9_][a-zA-Z0-9-_]{0,61}[a-zA-Z0-9_]|[a-zA-Z0-9]))*$`)
	instanceIDPattern = regexp.MustCompile(`^[0-9a-zA-Z_/:.@-]+$`)
	attrKeyPattern    = regexp.MustCompile(`^[a-zA-Z0-9!-~]+$`)
	attrValuePattern  = regexp.MustCompile(`^([a-zA-Z0-9!-~][ \ta-zA-Z0-9!-~]*){0,1}[a-zA-Z0-9!-~]{0,1}$`)
)

const (
	serviceNamePattern  = `((?=^.{1,127}$)^([a-zA-Z0-9_][a-zA-Z0-9-_]{0,61}[a-zA-Z0-9_]|[a-zA-Z0-9])(\.([a-zA-Z0-9_][a-zA-Z0-9-_]{0,61}[a-zA-Z0-9_]|[a-zA-Z0-9]))*$)|(^\.$)`
	maxResourceIDLen    = 64
	maxResourceARNLen   = 255 // an id or, for shared namespaces, an ARN
	maxDescriptionLen   = 1024
	maxAttrKeyLen       = 255
	maxAttrValueLen     = 1024
	maxTagKeyLen        = 128
	maxTagValueLen      = 256
	maxTagsPerRequest   = 200
	maxRecordTTL        = 2147483647
	maxFailureThreshold = 10
)

// reservedAttributes are the attributes Cloud Map reads itself; the others are custom.
var reservedAttributes = []string{AttrAlias, AttrEC2, AttrInitHealth, AttrCNAME, AttrIPv4, AttrIPv6, AttrPort}

func checkPattern(v, member string, re *regexp.Regexp, pattern string) *Error {
	if re.MatchString(v) {
		return nil
	}
	return constraint(v, member, "Member must satisfy regular expression pattern: "+pattern)
}

// checkID checks a required id (or ARN) member.
func checkID(v, member string) *Error {
	if v == "" {
		return notNull(member)
	}
	return maxLen(v, member, maxResourceARNLen)
}

func checkServiceName(name, member string) *Error {
	if name == "" {
		return notNull(member)
	}
	if name == "." || len(name) <= 127 && serviceNameLabels.MatchString(name) {
		return nil
	}
	return constraint(name, member, "Member must satisfy regular expression pattern: "+serviceNamePattern)
}

func checkNamespaceName(typ, name string) *Error {
	if name == "" {
		return notNull("name")
	}
	switch typ {
	case NamespaceHTTP:
		if len(name) > 1024 {
			return maxLen(name, "name", 1024)
		}
		return checkPattern(name, "name", printableName, `^[!-~]{1,1024}$`)
	case NamespaceDNSPrivate:
		if len(name) > 253 {
			return maxLen(name, "name", 253)
		}
		return checkPattern(name, "name", printableName, `^[!-~]{1,253}$`)
	default:
		if len(name) > 253 {
			return maxLen(name, "name", 253)
		}
		return checkPattern(name, "name", publicNamespaceName, publicNamespaceName.String())
	}
}

func checkTags(tags []Tag, member string) *Error {
	if len(tags) > maxTagsPerRequest {
		return constraint(fmt.Sprintf("[%d tags]", len(tags)), member, fmt.Sprintf("Member must have length less than or equal to %d", maxTagsPerRequest))
	}
	for i, t := range tags {
		at := fmt.Sprintf("%s.%d.member.key", member, i+1)
		if t.Key == "" {
			return notNull(at)
		}
		if err := maxLen(t.Key, at, maxTagKeyLen); err != nil {
			return err
		}
		if err := maxLen(t.Value, fmt.Sprintf("%s.%d.member.value", member, i+1), maxTagValueLen); err != nil {
			return err
		}
	}
	if len(mergeTags(nil, tags)) > maxTagsPerResource {
		return tooManyTags("")
	}
	return nil
}

func tooManyTags(resource string) *Error {
	e := errorf(CodeTooManyTags, "The list of tags on the resource is over the quota. The maximum number of tags that can be applied to a resource is %d.", maxTagsPerResource)
	if resource != "" {
		e.With("ResourceName", resource)
	}
	return e
}

// mergeTags adds or replaces tags, keeping the existing order.
func mergeTags(have, add []Tag) []Tag { return awsapi.MergeTags(have, add, tagKey) }

func tagKey(t Tag) string { return t.Key }

// sortedAttributeString renders attributes as the front end quotes a map: {k=v, …}.
func sortedAttributeString(attrs map[string]string) string {
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + attrs[k]
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// checkAttributeMap applies the Attributes shape (keys and values) to a map member.
func checkAttributeMap(attrs map[string]string, member string) *Error {
	for k, v := range attrs {
		switch {
		case len(k) > maxAttrKeyLen:
			return constraint(sortedAttributeString(attrs), member, fmt.Sprintf("Map keys must satisfy constraint: [Member must have length less than or equal to %d]", maxAttrKeyLen))
		case !attrKeyPattern.MatchString(k):
			return constraint(sortedAttributeString(attrs), member, "Map keys must satisfy constraint: [Member must satisfy regular expression pattern: ^[a-zA-Z0-9!-~]+$]")
		case len(v) > maxAttrValueLen:
			return constraint(sortedAttributeString(attrs), member, fmt.Sprintf("Map value must satisfy constraint: [Member must have length less than or equal to %d]", maxAttrValueLen))
		case !attrValuePattern.MatchString(v):
			return constraint(sortedAttributeString(attrs), member, "Map value must satisfy constraint: [Member must satisfy regular expression pattern: "+attrValuePattern.String()+"]")
		}
	}
	return nil
}

// checkInstanceAttributes applies RegisterInstance's rules on attributes: the shape, at most
// 30 custom attributes and 5,000 characters in all, and what the service's records need.
func checkInstanceAttributes(attrs map[string]string, svc *Service) *Error {
	if attrs == nil {
		return notNull("attributes")
	}
	if err := checkAttributeMap(attrs, "attributes"); err != nil {
		return err
	}
	custom, total := 0, 0
	for k, v := range attrs {
		total += len(k) + len(v)
		if !slices.Contains(reservedAttributes, k) {
			custom++
		}
	}
	if custom > maxCustomAttributes {
		return invalidf("Instance has %d custom attributes; the maximum is %d", custom, maxCustomAttributes)
	}
	if total > maxAttributesTotalLen {
		return invalidf("The total size of the attributes (sum of all keys and values) is %d characters; the maximum is %d", total, maxAttributesTotalLen)
	}
	if len(attrs) == 0 {
		return invalidf("Attributes must contain at least one attribute")
	}
	if _, ok := attrs[AttrAlias]; ok {
		return unsupported("%s (alias records to a load balancer); register the instance's addresses instead", AttrAlias)
	}
	if _, ok := attrs[AttrEC2]; ok {
		return unsupported("%s (the sandbox has no EC2 to read an address from); register %s instead", AttrEC2, AttrIPv4)
	}
	if v, ok := attrs[AttrInitHealth]; ok && v != HealthHealthy && v != HealthUnhealthy {
		return invalidf("%s must be HEALTHY or UNHEALTHY, not %q", AttrInitHealth, v)
	}
	v4, v6, port, cname := attrs[AttrIPv4], attrs[AttrIPv6], attrs[AttrPort], attrs[AttrCNAME]
	if v4 != "" {
		if a, err := netip.ParseAddr(v4); err != nil || !a.Is4() {
			return invalidf("%s %q is not a valid IPv4 address", AttrIPv4, v4)
		}
	}
	if v6 != "" {
		if a, err := netip.ParseAddr(v6); err != nil || !a.Is6() || a.Is4In6() || a.Zone() != "" {
			return invalidf("%s %q is not a valid IPv6 address", AttrIPv6, v6)
		}
	}
	if _, ok := attrs[AttrPort]; ok {
		if _, valid := portOf(port); !valid {
			return invalidf("%s %q is not a valid port: it must be a number from 1 to 65535", AttrPort, port)
		}
	}
	cfg := svc.DNS
	if cfg == nil {
		return nil
	}
	a, aaaa := cfg.has("A"), cfg.has("AAAA")
	switch {
	case cfg.has("CNAME") && cname == "":
		return invalidf("The service %s has a CNAME record: the instance needs %s", svc.ID, AttrCNAME)
	case cfg.has("SRV") && port == "":
		return invalidf("The service %s has an SRV record: the instance needs %s", svc.ID, AttrPort)
	case cfg.has("SRV") && v4 == "" && v6 == "":
		return invalidf("The service %s has an SRV record: the instance needs %s, %s or both", svc.ID, AttrIPv4, AttrIPv6)
	case a && aaaa && v4 == "" && v6 == "":
		return invalidf("The service %s has A and AAAA records: the instance needs %s, %s or both", svc.ID, AttrIPv4, AttrIPv6)
	case a && !aaaa && v4 == "":
		return invalidf("The service %s has an A record: the instance needs %s", svc.ID, AttrIPv4)
	case aaaa && !a && v6 == "":
		return invalidf("The service %s has an AAAA record: the instance needs %s", svc.ID, AttrIPv6)
	}
	return nil
}

// checkDNSConfig applies CreateService's rules on DnsConfig and fills in the default
// routing policy.
func checkDNSConfig(cfg *DNSConfig) *Error {
	if cfg.RoutingPolicy == "" {
		cfg.RoutingPolicy = RoutingMultivalue
	}
	if err := enumCheck(cfg.RoutingPolicy, "dnsConfig.routingPolicy", RoutingMultivalue, RoutingWeighted); err != nil {
		return err
	}
	if cfg.Records == nil {
		return notNull("dnsConfig.dnsRecords")
	}
	if len(cfg.Records) == 0 {
		return invalidf("DnsConfig must contain at least one DnsRecord")
	}
	seen := map[string]bool{}
	for i, r := range cfg.Records {
		at := fmt.Sprintf("dnsConfig.dnsRecords.%d.member", i+1)
		if r.Type == "" {
			return notNull(at + ".type")
		}
		if err := enumCheck(r.Type, at+".type", "SRV", "A", "AAAA", "CNAME"); err != nil {
			return err
		}
		if err := rangeCheck(r.TTL, at+".TTL", 0, maxRecordTTL); err != nil {
			return err
		}
		if seen[r.Type] {
			return invalidf("DnsConfig has more than one DnsRecord of type %s", r.Type)
		}
		seen[r.Type] = true
	}
	if seen["CNAME"] && len(cfg.Records) > 1 {
		return invalidf("A CNAME DnsRecord can't be combined with records of other types")
	}
	if seen["CNAME"] && cfg.RoutingPolicy != RoutingWeighted {
		return invalidf("A service with a CNAME DnsRecord must have the WEIGHTED routing policy")
	}
	return nil
}
