package endpoint

import "strings"

// DomainFilter selects names by domain suffix, as external-dns's --domain-filter and
// --exclude-domains do: a name matches when it equals or lies below an included domain
// and below no excluded one. An empty include list matches everything.
type DomainFilter struct {
	Include []string
	Exclude []string
}

// NewDomainFilter normalises the domains (lower case, no leading or trailing dots).
func NewDomainFilter(include, exclude []string) DomainFilter {
	return DomainFilter{Include: normalizeDomains(include), Exclude: normalizeDomains(exclude)}
}

func normalizeDomains(in []string) []string {
	var out []string
	for _, d := range in {
		d = strings.Trim(NormalizeName(d), ".")
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}

// Match reports whether name passes the filter.
func (f DomainFilter) Match(name string) bool {
	name = NormalizeName(name)
	for _, d := range f.Exclude {
		if InDomain(name, d) {
			return false
		}
	}
	if len(f.Include) == 0 {
		return true
	}
	for _, d := range f.Include {
		if InDomain(name, d) {
			return true
		}
	}
	return false
}

// MatchZone reports whether a zone named zone can hold names the filter accepts: the zone
// lies at or below an included domain, or an included domain lies below the zone.
func (f DomainFilter) MatchZone(zone string) bool {
	zone = NormalizeName(zone)
	if len(f.Include) == 0 {
		return !f.excluded(zone)
	}
	for _, d := range f.Include {
		if InDomain(zone, d) || InDomain(d, zone) {
			return !f.excluded(zone)
		}
	}
	return false
}

func (f DomainFilter) excluded(zone string) bool {
	for _, d := range f.Exclude {
		if InDomain(zone, d) {
			return true
		}
	}
	return false
}

// InDomain reports whether name equals domain or lies below it. Both must be normalised.
func InDomain(name, domain string) bool {
	if domain == "" {
		return true
	}
	return name == domain || strings.HasSuffix(name, "."+domain)
}
