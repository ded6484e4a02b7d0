package cloudmapstore

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Page sizes of the list operations: MaxResults is 1 to 100, 100 when omitted; a
// DiscoverInstances answer holds 1 to 1,000 instances, 100 when omitted.
const (
	defaultPageSize     = 100
	maxPageSize         = 100
	maxDiscoverResults  = 1000
	maxNextTokenLen     = 4096
	filterEQ            = "EQ"
	filterIN            = "IN"
	filterBetween       = "BETWEEN"
	filterBeginsWith    = "BEGINS_WITH"
	nextTokenMemberName = "nextToken"
)

// Filter is a ListNamespaces, ListServices or ListOperations filter.
type Filter struct {
	Name      string
	Values    []string
	Condition string
}

// pageSize checks MaxResults.
func pageSize(v *int32, hi int) (int, *Error) {
	if v == nil {
		return defaultPageSize, nil
	}
	if err := rangeCheck(int64(*v), "maxResults", 1, int64(hi)); err != nil {
		return 0, err
	}
	return int(*v), nil
}

// sortKey orders the items of a list: creation time, then id.
func sortKey(t time.Time, id string) string { return fmt.Sprintf("%020d/%s", t.UnixNano(), id) }

// page returns up to size items of sorted (ascending by key) that come after the item the
// token names, and the token of the next page ("" on the last one). Cloud Map's tokens are
// opaque; the sandbox's carry the key of the last item given, so a page stays right while
// items are added or removed between calls.
func page[T any](sorted []T, key func(T) string, token string, size int) ([]T, string, *Error) {
	start := 0
	if token != "" {
		if len(token) > maxNextTokenLen {
			return nil, "", maxLen(token, nextTokenMemberName, maxNextTokenLen)
		}
		raw, err := base64.RawURLEncoding.DecodeString(token)
		if err != nil || !strings.HasPrefix(string(raw), "after:") {
			return nil, "", invalidf("The NextToken %q is not valid", token)
		}
		after := strings.TrimPrefix(string(raw), "after:")
		start, _ = slices.BinarySearchFunc(sorted, after, func(it T, k string) int { return strings.Compare(key(it), k) })
		if start < len(sorted) && key(sorted[start]) == after {
			start++
		}
	}
	end := min(start+size, len(sorted))
	out := sorted[start:end]
	next := ""
	if end < len(sorted) && len(out) > 0 {
		next = base64.RawURLEncoding.EncodeToString([]byte("after:" + key(out[len(out)-1])))
	}
	return out, next, nil
}

// checkFilter checks a filter's name, condition and values; conditions maps each filter
// name to the conditions it takes, the first being the default.
func checkFilter(i int, f *Filter, member string, conditions map[string][]string) *Error {
	at := fmt.Sprintf("%s.%d.member", member, i+1)
	if f.Name == "" {
		return notNull(at + ".name")
	}
	names := make([]string, 0, len(conditions))
	for n := range conditions {
		names = append(names, n)
	}
	slices.Sort(names)
	allowed, ok := conditions[f.Name]
	if !ok {
		return enumCheck(f.Name, at+".name", names...)
	}
	if f.Values == nil {
		return notNull(at + ".values")
	}
	if f.Condition == "" {
		f.Condition = allowed[0]
	}
	if err := enumCheck(f.Condition, at+".condition", filterEQ, filterIN, filterBetween, filterBeginsWith); err != nil {
		return err
	}
	if !slices.Contains(allowed, f.Condition) {
		return invalidf("The condition %s is not supported for the filter %s; use %s", f.Condition, f.Name, strings.Join(allowed, " or "))
	}
	switch f.Condition {
	case filterEQ, filterBeginsWith:
		if len(f.Values) != 1 {
			return invalidf("The filter %s with condition %s takes exactly one value; %d were given", f.Name, f.Condition, len(f.Values))
		}
	case filterBetween:
		if len(f.Values) != 2 {
			return invalidf("The filter %s with condition BETWEEN takes two values, a start and an end date; %d were given", f.Name, len(f.Values))
		}
	case filterIN:
		if len(f.Values) == 0 {
			return invalidf("The filter %s with condition IN takes at least one value", f.Name)
		}
	}
	for j, v := range f.Values {
		if v == "" || len(v) > 255 {
			return constraint(v, fmt.Sprintf("%s.values.%d.member", at, j+1), "Member must have length between 1 and 255")
		}
	}
	return nil
}

// matches applies a string filter to v.
func (f *Filter) matches(v string) bool {
	switch f.Condition {
	case filterBeginsWith:
		return strings.HasPrefix(v, f.Values[0])
	default: // EQ, IN
		return slices.Contains(f.Values, v)
	}
}
