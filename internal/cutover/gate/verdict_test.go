package gate

import "testing"

// TestJudge: a problem fails the gate whatever else is pending, and leads the detail; a
// pending measurement passes it as Pending, never as a plain pass (the step must hold on
// until it is judged); nothing found passes it with the measured line alone.
func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name              string
		problems, pending []string
		wantPass          bool
		wantPending       bool
		wantDetail        string
	}{
		{"nothing found", nil, nil, true, false, "blue=10 green=90"},
		{"a problem", []string{"green: 5xx 3%"}, nil, false, false, "green: 5xx 3% — blue=10 green=90"},
		{"problems and pending", []string{"a", "b"}, []string{"c"}, false, false, "a; b — blue=10 green=90"},
		{"pending", nil, []string{"green: 3 responses", "blue: 1 response"}, true, true,
			"not judged yet: green: 3 responses; blue: 1 response — blue=10 green=90"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Result{Gate: "g", Kind: KindHTTP}
			r.judge(tc.problems, tc.pending, "blue=10 green=90")
			if r.Pass != tc.wantPass || r.Pending != tc.wantPending || r.Detail != tc.wantDetail {
				t.Errorf("judge: pass %v pending %v detail %q, want pass %v pending %v detail %q",
					r.Pass, r.Pending, r.Detail, tc.wantPass, tc.wantPending, tc.wantDetail)
			}
		})
	}
}
