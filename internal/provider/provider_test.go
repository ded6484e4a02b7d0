package provider

import (
	"testing"
)

func TestRejectedError(t *testing.T) {
	err := &RejectedError{Zone: Zone{ID: "Z1", Name: "example.com"}, Code: "InvalidChangeBatch", Messages: []string{"[a]", "[b]"}}
	if got := err.Error(); got != "change batch rejected: InvalidChangeBatch: [a]; [b]" {
		t.Fatalf("Error() = %q", got)
	}
	if got := err.Zone.String(); got != "example.com (Z1)" {
		t.Fatalf("Zone.String() = %q", got)
	}
}
