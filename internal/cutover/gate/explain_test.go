package gate

import "testing"

func TestExplain(t *testing.T) {
	for _, tc := range []struct{ detail, err, want string }{
		{"5xx rate 0.1%", "", "5xx rate 0.1%"},
		{"no answer", "query http://p:9090: refused", "no answer (query http://p:9090: refused)"},
		// A gate that cannot measure often says its error in the detail already.
		{"query http://p:9090: refused", "query http://p:9090: refused", "query http://p:9090: refused"},
		{"", "timeout", " (timeout)"},
	} {
		if got := Explain(tc.detail, tc.err); got != tc.want {
			t.Errorf("Explain(%q, %q) = %q, want %q", tc.detail, tc.err, got, tc.want)
		}
	}
}
