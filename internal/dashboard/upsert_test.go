package dashboard

import (
	"slices"
	"testing"
)

// TestUpsert: a result replaces its gate's last one in place, and a gate not seen before
// is appended, so that the page lists gates in the order they first reported.
func TestUpsert(t *testing.T) {
	for _, tc := range []struct {
		name string
		list []GateResult
		v    GateResult
		want []GateResult
	}{
		{"first", nil, GateResult{Gate: "a", Pass: true}, []GateResult{{Gate: "a", Pass: true}}},
		{"new, appended", []GateResult{{Gate: "a"}}, GateResult{Gate: "b"}, []GateResult{{Gate: "a"}, {Gate: "b"}}},
		{"the first seen, replaced in place", []GateResult{{Gate: "a"}, {Gate: "b"}}, GateResult{Gate: "a", Pass: true},
			[]GateResult{{Gate: "a", Pass: true}, {Gate: "b"}}},
		{"seen, replaced in place", []GateResult{{Gate: "a"}, {Gate: "b"}, {Gate: "c"}}, GateResult{Gate: "b", Pass: true, Detail: "ok"},
			[]GateResult{{Gate: "a"}, {Gate: "b", Pass: true, Detail: "ok"}, {Gate: "c"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := upsert(slices.Clone(tc.list), tc.v, func(o GateResult) bool { return o.Gate == tc.v.Gate })
			if !slices.EqualFunc(got, tc.want, func(a, b GateResult) bool {
				return a.Gate == b.Gate && a.Pass == b.Pass && a.Detail == b.Detail
			}) {
				t.Errorf("upsert(%+v, %+v) = %+v, want %+v", tc.list, tc.v, got, tc.want)
			}
		})
	}
}
