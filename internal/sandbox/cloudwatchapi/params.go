package cloudwatchapi

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// binder reads typed parameters from a request's generic tree. Paths are the parameters'
// query-protocol names ("MetricDataQueries.member.1.MetricStat.Period"), which CloudWatch's
// messages use whatever the protocol; code is the error code of the operation's bad value.
type binder struct{ code string }

func (b binder) bad(path, what string, v any) error {
	return &apiError{Code: b.code, Message: fmt.Sprintf("The value %s for parameter %s is not a valid %s.", show(v), path, what)}
}

func show(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case time.Time:
		return x.Format(time.RFC3339)
	case map[string]any:
		return "(structure)"
	case []any:
		return "(list)"
	}
	return fmt.Sprint(v)
}

func (b binder) str(m map[string]any, key, path string) (string, bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", false, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", true, b.bad(path, "string", v)
	}
	return s, true, nil
}

func (b binder) integer(m map[string]any, key, path string) (int64, bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	switch x := v.(type) {
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, true, b.bad(path, "integer", v)
		}
		return n, true, nil
	case uint64:
		if x > math.MaxInt64 {
			return 0, true, b.bad(path, "integer", v)
		}
		return int64(x), true, nil
	case int64:
		return x, true, nil
	}
	if f, ok := number(v); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f), true, nil
	}
	return 0, true, b.bad(path, "integer", v)
}

func (b binder) boolean(m map[string]any, key, path string) (bool, bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return false, false, nil
	}
	switch x := v.(type) {
	case bool:
		return x, true, nil
	case string:
		if p, err := strconv.ParseBool(x); err == nil {
			return p, true, nil
		}
	}
	return false, true, b.bad(path, "boolean", v)
}

// timeFormats are the ISO 8601 forms the query protocol's timestamps come in.
var timeFormats = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05.999999999Z0700", "2006-01-02"}

func (b binder) timestamp(m map[string]any, key, path string) (time.Time, bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return time.Time{}, false, nil
	}
	switch x := v.(type) {
	case time.Time:
		return x, true, nil
	case string:
		for _, f := range timeFormats {
			if t, err := time.Parse(f, x); err == nil {
				return t.UTC(), true, nil
			}
		}
		if secs, err := strconv.ParseFloat(x, 64); err == nil {
			return epoch(secs), true, nil
		}
	case json.Number, float64, uint64, int64:
		f, _ := number(v)
		return epoch(f), true, nil
	}
	return time.Time{}, true, b.bad(path, "timestamp", v)
}

// list reads a list; the query protocol sends an empty one as "Name=".
func (b binder) list(m map[string]any, key, path string) ([]any, bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, false, nil
	}
	switch x := v.(type) {
	case []any:
		return x, true, nil
	case string:
		if x == "" {
			return nil, true, nil
		}
	}
	return nil, true, b.bad(path, "list", v)
}

func (b binder) structure(m map[string]any, key, path string) (map[string]any, bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, false, nil
	}
	s, ok := v.(map[string]any)
	if !ok {
		return nil, true, b.bad(path, "structure", v)
	}
	return s, true, nil
}

// dimensions reads a Dimensions list.
func (b binder) dimensions(m map[string]any, key, path string) ([]dimension, error) {
	items, _, err := b.list(m, key, path)
	if err != nil {
		return nil, err
	}
	dims := make([]dimension, 0, len(items))
	for i, item := range items {
		p := fmt.Sprintf("%s.member.%d", path, i+1)
		dm, ok := item.(map[string]any)
		if !ok {
			return nil, b.bad(p, "Dimension", item)
		}
		name, _, err := b.str(dm, "Name", p+".Name")
		if err != nil {
			return nil, err
		}
		value, _, err := b.str(dm, "Value", p+".Value")
		if err != nil {
			return nil, err
		}
		dims = append(dims, dimension{Name: name, Value: value})
	}
	return dims, nil
}
