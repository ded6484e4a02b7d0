package awsapi

import (
	"fmt"
	"testing"
)

func TestMergeTags(t *testing.T) {
	type tag struct{ K, V string }
	key := func(t tag) string { return t.K }
	for _, tc := range []struct {
		name      string
		have, add []tag
		want      string
	}{
		{"into nothing", nil, []tag{{"a", "1"}}, "[{a 1}]"},
		{"nothing to add", []tag{{"a", "1"}}, nil, "[{a 1}]"},
		{"new keys go at the end", []tag{{"b", "1"}}, []tag{{"a", "2"}}, "[{b 1} {a 2}]"},
		{"a key held takes the new value in place", []tag{{"a", "1"}, {"b", "2"}}, []tag{{"a", "3"}}, "[{a 3} {b 2}]"},
		{"an empty value replaces too", []tag{{"a", "1"}}, []tag{{"a", ""}}, "[{a }]"},
		{"keys are case sensitive", []tag{{"a", "1"}}, []tag{{"A", "2"}}, "[{a 1} {A 2}]"},
		{"the later of a key given twice wins", nil, []tag{{"a", "1"}, {"a", "2"}}, "[{a 2}]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have := append([]tag(nil), tc.have...)
			got := MergeTags(have, tc.add, key)
			if fmt.Sprint(got) != tc.want {
				t.Fatalf("MergeTags(%v, %v) = %v, want %s", tc.have, tc.add, got, tc.want)
			}
			if fmt.Sprint(have) != fmt.Sprint(tc.have) {
				t.Fatalf("MergeTags changed its input to %v", have)
			}
		})
	}
}
