package registry

import (
	"slices"
	"strings"
)

const typeTemplate = "%{record_type}"

// typedTypes are the record types external-dns encodes in a TXT name ("a-", "cname-", …),
// in the order it tries them when reading a name back.
var typedTypes = []string{"A", "AAAA", "CNAME", "NS", "MX", "PTR", "SRV", "NAPTR", "TXT", "DNAME", "TLSA"}

// typedPrefixes are typedTypes as they start a TXT name's first label ("a-", "cname-"),
// in the same order: reading a zone's 100,000 TXT names lower-cases nothing.
var typedPrefixes = func() []string {
	out := make([]string, len(typedTypes))
	for i, t := range typedTypes {
		out[i] = strings.ToLower(t) + "-"
	}
	return out
}()

// nameMapper turns a record name into its TXT record's name and back, with an optional
// prefix or suffix on the first label that may carry %{record_type}.
type nameMapper struct {
	prefix, suffix string
	wildcard       string
	// typed is set when the prefix or suffix carries %{record_type}; plainPrefix and
	// plainSuffix are them without it: worked out once, not for every TXT name read.
	typed                    bool
	plainPrefix, plainSuffix string
}

func newNameMapper(prefix, suffix, wildcard string) nameMapper {
	m := nameMapper{prefix: strings.ToLower(prefix), suffix: strings.ToLower(suffix), wildcard: strings.ToLower(wildcard)}
	m.typed = strings.Contains(m.prefix, typeTemplate) || strings.Contains(m.suffix, typeTemplate)
	m.plainPrefix = strings.ReplaceAll(m.prefix, typeTemplate, "")
	m.plainSuffix = strings.ReplaceAll(m.suffix, typeTemplate, "")
	return m
}

func (m nameMapper) templated() bool { return m.typed }

// txtName is the type-prefixed name external-dns ≥ 0.18 writes: the type goes before the
// first label ("a-app.example.com") unless the prefix or suffix places it.
func (m nameMapper) txtName(name, recordType string) string {
	if m.prefix == "" && m.suffix == "" && (m.wildcard == "" || !(name == "*" || strings.HasPrefix(name, "*."))) {
		// No affix and no wildcard to replace (--txt-prefix unset, the default): the type
		// and the name, in one allocation.
		if i := slices.Index(typedTypes, recordType); i >= 0 {
			return typedPrefixes[i] + name
		}
		return strings.ToLower(recordType) + "-" + name
	}
	return m.affixedName(name, recordType)
}

// affixedName is txtName in general.
func (m nameMapper) affixedName(name, recordType string) string {
	t := strings.ToLower(recordType)
	first, rest, hasRest := strings.Cut(name, ".")
	if m.wildcard != "" && first == "*" {
		first = m.wildcard
	}
	if !m.templated() {
		first = t + "-" + first
	}
	first = strings.ReplaceAll(m.prefix, typeTemplate, t) + first + strings.ReplaceAll(m.suffix, typeTemplate, t)
	if !hasRest {
		return first
	}
	return first + "." + rest
}

// legacyName is the TXT name older external-dns releases wrote: the affix without a type.
func (m nameMapper) legacyName(name string) string {
	first, rest, hasRest := strings.Cut(name, ".")
	if m.wildcard != "" && first == "*" {
		first = m.wildcard
	}
	first = strings.ReplaceAll(m.prefix, typeTemplate, "") + first + strings.ReplaceAll(m.suffix, typeTemplate, "")
	if !hasRest {
		return first
	}
	return first + "." + rest
}

// recordName reads a TXT name back into the record name and type it owns; the type is ""
// for a legacy name. ok is false when the name does not carry this mapper's affix.
func (m nameMapper) recordName(txt string) (name, recordType string, ok bool) {
	if !lowerASCII(txt) {
		txt = strings.ToLower(txt)
	}
	if m.suffix == "" {
		return m.stripAffix(txt)
	}
	// The suffix sits on the first label; it may itself contain dots.
	dots := strings.Count(m.suffix, ".")
	parts := strings.SplitN(txt, ".", dots+2)
	if len(parts) <= dots+1 {
		return m.stripAffix(txt)
	}
	head, typ, ok := m.stripAffix(strings.Join(parts[:dots+1], "."))
	if !ok {
		return "", "", false
	}
	return head + "." + parts[dots+1], typ, true
}

func (m nameMapper) stripAffix(s string) (string, string, bool) {
	if m.templated() {
		for _, t := range typedTypes {
			lt := strings.ToLower(t)
			p := strings.ReplaceAll(m.prefix, typeTemplate, lt)
			sfx := strings.ReplaceAll(m.suffix, typeTemplate, lt)
			if m.suffix == "" && strings.HasPrefix(s, p) {
				return strings.TrimPrefix(s, p), t, true
			}
			if m.suffix != "" && strings.HasSuffix(s, sfx) {
				return strings.TrimSuffix(s, sfx), t, true
			}
		}
	}
	p, sfx := m.plainPrefix, m.plainSuffix
	switch {
	case m.suffix == "" && strings.HasPrefix(s, p):
		return typeFromFirstLabel(strings.TrimPrefix(s, p))
	case m.suffix != "" && strings.HasSuffix(s, sfx):
		return typeFromFirstLabel(strings.TrimSuffix(s, sfx))
	}
	return "", "", false
}

// typeFromFirstLabel splits "a-app" into ("app", "A"); a name without a known type prefix
// is a legacy name.
func typeFromFirstLabel(s string) (string, string, bool) {
	for i, p := range typedPrefixes {
		if strings.HasPrefix(s, p) {
			return s[len(p):], typedTypes[i], true
		}
	}
	return s, "", true
}

// lowerASCII reports whether s is ASCII without upper-case letters, which strings.ToLower
// returns as it is: eight bytes at a time, as a zone's 100,000 TXT names are read (a
// zone's names are lower case, as Route 53 lists them).
func lowerASCII(s string) bool {
	const (
		high = 0x8080808080808080
		// Added to an ASCII byte, these set its high bit when it is at least 'A', and at
		// least 'Z'+1: never carrying into the next byte.
		fromA = 0x8080808080808080 - 0x4141414141414141
		pastZ = 0x8080808080808080 - 0x5b5b5b5b5b5b5b5b
	)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&high != 0 || (w+fromA)&^(w+pastZ)&high != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || ('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
