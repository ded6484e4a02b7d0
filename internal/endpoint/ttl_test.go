package endpoint

import "testing"

func TestTTL(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ttl        TTL
		configured bool
		seconds    int64
	}{
		{"not configured", 0, false, 0},
		{"zero seconds", TTLZero, true, 0},
		{"one second", 1, true, 1},
		{"largest", 2147483647, true, 2147483647},
		{"read zero", NewTTL(0), true, 0},
		{"read sixty", NewTTL(60), true, 60},
	} {
		if got := tc.ttl.IsConfigured(); got != tc.configured {
			t.Errorf("%s: IsConfigured() = %v, want %v", tc.name, got, tc.configured)
		}
		if got := tc.ttl.Seconds(); got != tc.seconds {
			t.Errorf("%s: Seconds() = %d, want %d", tc.name, got, tc.seconds)
		}
	}
	// Validate keeps refusing negative TTLs from sources: the sentinel comes from zones.
	e := &Endpoint{Name: "a.example.com", Type: TypeA, Targets: Targets{"192.0.2.1"}, TTL: TTLZero}
	if errs := e.Validate(); len(errs) != 1 || errs[0].Field != FieldTTL {
		t.Errorf("Validate with TTLZero: %v, want one ttl error", errs)
	}
}

// TestSameRecordTTLZero: a record held with TTL 0 differs from one that asks for a TTL,
// and is the same as a desired record that leaves the TTL to the provider.
func TestSameRecordTTLZero(t *testing.T) {
	rec := func(ttl TTL) *Endpoint {
		return &Endpoint{Name: "a.example.com", Type: TypeA, Targets: Targets{"192.0.2.1"}, TTL: ttl}
	}
	for _, tc := range []struct {
		a, b TTL
		same bool
	}{
		{TTLZero, TTLZero, true},
		{TTLZero, 0, true},
		{TTLZero, 300, false},
		{300, TTLZero, false},
	} {
		if got := rec(tc.a).SameRecord(rec(tc.b)); got != tc.same {
			t.Errorf("TTL %d vs %d: SameRecord = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}
