package endpoint

import (
	"net/netip"
	"strconv"
	"strings"
)

// Limits Route 53 enforces on what crossfade writes.
const (
	maxNameLength  = 253
	maxLabelLength = 63
	maxSetIDLength = 128
	maxTTL         = 2147483647
)

// Validate checks that the endpoint can be written as a record set. It returns every
// problem found, each naming the model field; nil means valid.
func (e *Endpoint) Validate() []*FieldError {
	var errs []*FieldError
	add := func(field, value, reason string) {
		errs = append(errs, &FieldError{Field: field, Value: value, Reason: reason})
	}
	if reason := CheckName(e.Name); reason != "" {
		add(FieldName, e.Name, reason)
	}
	switch e.Type {
	case TypeA, TypeAAAA, TypeCNAME, TypeTXT, TypeMX, TypeNS, TypeSRV, TypePTR, TypeNAPTR:
	default:
		add(FieldType, e.Type, "want one of A, AAAA, CNAME, TXT, MX, NS, SRV, PTR, NAPTR")
	}
	if len(e.Targets) == 0 {
		add(FieldTargets, "", "no targets: the record would have no value")
	}
	for _, t := range e.Targets {
		if reason := checkTarget(e.Type, t, e.IsAlias()); reason != "" {
			add(FieldTargets, t, reason)
		}
	}
	if e.Type == TypeCNAME && len(e.Targets) > 1 {
		add(FieldTargets, strings.Join(e.Targets, ","), "a CNAME takes exactly one target")
	}
	if e.IsAlias() && len(e.Targets) != 1 {
		add(FieldTargets, strings.Join(e.Targets, ","), "an alias takes exactly one target")
	}
	if e.TTL < 0 || e.TTL > maxTTL {
		add(FieldTTL, strconv.FormatInt(int64(e.TTL), 10), "want 0..2147483647 seconds")
	}
	if len(e.SetIdentifier) > maxSetIDLength {
		add(FieldSetIdentifier, e.SetIdentifier, "longer than 128 characters")
	}
	switch e.Policy.Kind {
	case Simple:
		if e.SetIdentifier != "" {
			add(FieldSetIdentifier, e.SetIdentifier, "set without a routing policy: add a weight or a failover role")
		}
	case Weighted:
		if e.Policy.Weight < 0 || e.Policy.Weight > MaxWeight {
			add(FieldWeight, strconv.FormatInt(e.Policy.Weight, 10), "want an integer 0..255")
		}
		if e.SetIdentifier == "" {
			add(FieldWeight, strconv.FormatInt(e.Policy.Weight, 10), "set without set-identifier: a weighted record needs one")
		}
	case Failover:
		if e.Policy.Role != Primary && e.Policy.Role != Secondary {
			add(FieldFailover, e.Policy.Role, "want PRIMARY or SECONDARY")
		}
		if e.SetIdentifier == "" {
			add(FieldFailover, e.Policy.Role, "set without set-identifier: a failover record needs one")
		}
	}
	return errs
}

// CheckName returns why name is not a valid DNS name for a record, or "".
func CheckName(name string) string {
	if name == "" {
		return "empty name"
	}
	if len(name) > maxNameLength {
		return "longer than 253 characters"
	}
	for i, label := range strings.Split(name, ".") {
		if label == "" {
			return "empty label"
		}
		if len(label) > maxLabelLength {
			return "label " + strconv.Quote(label) + " longer than 63 characters"
		}
		if label == "*" && i == 0 {
			continue
		}
		for _, c := range []byte(label) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "label " + strconv.Quote(label) + " has character " + strconv.QuoteRune(rune(c)) + ": want a-z, 0-9, '-', '_'"
			}
		}
	}
	return ""
}

func checkTarget(typ, target string, alias bool) string {
	switch {
	case alias:
		if CheckName(target) != "" {
			return "alias target must be a hostname"
		}
	case typ == TypeA:
		a, err := netip.ParseAddr(target)
		if err != nil || !a.Is4() {
			return "want an IPv4 address"
		}
	case typ == TypeAAAA:
		a, err := netip.ParseAddr(target)
		if err != nil || !a.Is6() || a.Is4In6() {
			return "want an IPv6 address"
		}
	case typ == TypeCNAME || typ == TypeNS || typ == TypePTR:
		if reason := CheckName(target); reason != "" {
			return "want a hostname: " + reason
		}
	}
	return ""
}
