package statusstore

import (
	"strings"
	"testing"
)

// TestLeaseName: a Cutover's Lease is named after it, and a name too long for the prefix
// still gives a valid object name (at most 253 characters) of its own.
func TestLeaseName(t *testing.T) {
	long := strings.Repeat("a", 250)
	for _, tc := range []struct {
		name, want string
	}{
		{"shop", "crossfade-cutover-shop"},
		{strings.Repeat("b", 253-len(LeasePrefix)), LeasePrefix + strings.Repeat("b", 253-len(LeasePrefix))},
	} {
		if got := LeaseName(tc.name); got != tc.want {
			t.Errorf("LeaseName(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	a, b := LeaseName(long+"x"), LeaseName(long+"y")
	if len(a) > 253 || len(b) > 253 || a == b || !strings.HasPrefix(a, LeasePrefix) {
		t.Errorf("long names: %q (%d), %q (%d), want distinct names of at most 253 characters", a, len(a), b, len(b))
	}
}
