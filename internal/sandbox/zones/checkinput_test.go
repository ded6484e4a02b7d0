package zones

import (
	"strings"
	"testing"
)

// TestCheckInputMessages pins every schema refusal of checkInput to the byte: the SDKs and
// the AWS CLI print these messages as Route 53 words them.
func TestCheckInputMessages(t *testing.T) {
	const pre = "1 validation error detected: "
	a := simple("www.example.com.", "A", 60, "192.0.2.1")
	with := func(f func(*RRSet)) RRSet { s := a; f(&s); return s }
	for _, tc := range []struct {
		name string
		c    Change
		want string // "" when accepted
	}{
		{"valid", Change{Create, a}, ""},
		{"unknown action", Change{"REPLACE", a},
			"Value 'REPLACE' at 'changeBatch.changes.2.member.action' failed to satisfy constraint: Member must satisfy enum value set: [DELETE, CREATE, UPSERT]"},
		{"no name", Change{Create, with(func(s *RRSet) { s.Name = "" })},
			"Value null at 'changeBatch.changes.2.member.resourceRecordSet.name' failed to satisfy constraint: Member must not be null"},
		{"unknown type", Change{Create, with(func(s *RRSet) { s.Type = "LOC" })},
			"Value 'LOC' at 'changeBatch.changes.2.member.resourceRecordSet.type' failed to satisfy constraint: Member must satisfy enum value set: " + typeEnum},
		{"weight above 255", Change{Create, with(func(s *RRSet) { s.SetIdentifier, s.Weight = "b", i64(256) })},
			"Value '256' at 'changeBatch.changes.2.member.resourceRecordSet.weight' failed to satisfy constraint: Member must have value less than or equal to 255"},
		{"negative weight", Change{Create, with(func(s *RRSet) { s.SetIdentifier, s.Weight = "b", i64(-1) })},
			"Value '-1' at 'changeBatch.changes.2.member.resourceRecordSet.weight' failed to satisfy constraint: Member must have value greater than or equal to 0"},
		{"weight 255", Change{Create, with(func(s *RRSet) { s.SetIdentifier, s.Weight = "b", i64(255) })}, ""},
		{"weight 0", Change{Create, with(func(s *RRSet) { s.SetIdentifier, s.Weight = "b", i64(0) })}, ""},
		{"negative TTL", Change{Create, with(func(s *RRSet) { s.TTL = i64(-1) })},
			"Value '-1' at 'changeBatch.changes.2.member.resourceRecordSet.TTL' failed to satisfy constraint: Member must have value between 0 and 2147483647"},
		{"long set identifier", Change{Create, with(func(s *RRSet) { s.SetIdentifier, s.Weight = strings.Repeat("x", 129), i64(1) })},
			"Value '" + strings.Repeat("x", 129) + "' at 'changeBatch.changes.2.member.resourceRecordSet.setIdentifier' failed to satisfy constraint: Member must have length less than or equal to 128"},
		{"unknown failover role", Change{Create, with(func(s *RRSet) { s.SetIdentifier, s.Failover = "b", "TERTIARY" })},
			"Value 'TERTIARY' at 'changeBatch.changes.2.member.resourceRecordSet.failover' failed to satisfy constraint: Member must satisfy enum value set: [PRIMARY, SECONDARY]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkInput(2, tc.c)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want %q", tc.want)
			}
			if err.Code != CodeInvalidInput || err.Message != pre+tc.want {
				t.Fatalf("got %s: %q\nwant %s: %q", err.Code, err.Message, CodeInvalidInput, pre+tc.want)
			}
		})
	}
}

func TestCreateZoneWithoutCallerReference(t *testing.T) {
	s, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	_, _, err = s.CreateZone("example.com", "", "", false)
	want := "InvalidInput: 1 validation error detected: Value null at 'callerReference' failed to satisfy constraint: Member must not be null"
	if err == nil || err.Error() != want {
		t.Fatalf("CreateZone without a caller reference: %v, want %s", err, want)
	}
}
