package provider

import (
	"slices"
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

func TestHolding(t *testing.T) {
	zones := []Zone{
		{ID: "Zcom", Name: "example.com"},
		{ID: "Zpub", Name: "shop.example.com"},
		{ID: "Zpriv", Name: "shop.example.com", Private: true},
		{ID: "Zorg", Name: "example.org"},
	}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"www.example.com", []string{"Zcom"}},
		{"example.com", []string{"Zcom"}},
		{"api.shop.example.com", []string{"Zpub", "Zpriv"}},
		{"shop.example.com", []string{"Zpub", "Zpriv"}},
		{"myshop.example.com", []string{"Zcom"}}, // a label boundary, not a string suffix
		{"example.net", nil},
	} {
		var got []string
		for _, z := range Holding(zones, tc.name) {
			got = append(got, z.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Holding(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
