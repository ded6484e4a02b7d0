package albproxy

import (
	"net"
	"net/http"
	"strings"
)

// wildcardMatch reports whether s matches pattern, where `*` matches any run of
// characters (including none) and `?` exactly one, as ALB's host-header and path-pattern
// conditions do. It backtracks only to the last `*`, so it runs in O(len(s)·len(pattern))
// at worst and never recurses.
func wildcardMatch(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// compiledCondition is a Condition ready for matching: host patterns are lower-cased once.
type compiledCondition struct {
	host   bool
	values []string
}

func compileCondition(c Condition) compiledCondition {
	cc := compiledCondition{host: c.Field == FieldHostHeader}
	for _, v := range c.Values {
		if cc.host {
			v = strings.ToLower(v)
		}
		cc.values = append(cc.values, v)
	}
	return cc
}

// requestHost is the Host header lower-cased and without a port, the form host-header
// conditions compare against.
func requestHost(r *http.Request) string {
	h := r.Host
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.ToLower(h)
}

func (c compiledCondition) match(host, path string) bool {
	s := path
	if c.host {
		s = host
	}
	for _, v := range c.values {
		if wildcardMatch(v, s) {
			return true
		}
	}
	return false
}
