package provider

import (
	"errors"
	"testing"
)

func TestFindZone(t *testing.T) {
	zones := []Zone{
		{ID: "Z1", Name: "example.com"},
		{ID: "Z2", Name: "example.com", Private: true},
		{ID: "Z3", Name: "example.org"},
	}
	tests := []struct {
		name, zone, id string
		want           string // zone id, "" for an error
		matches        int
	}{
		{name: "by name", zone: "example.org", want: "Z3"},
		{name: "by name, trailing dot and case", zone: "Example.ORG.", want: "Z3"},
		{name: "by id", id: "Z2", want: "Z2"},
		{name: "by id with prefix", id: "/hostedzone/Z1", want: "Z1"},
		{name: "name and id agree", zone: "example.com", id: "Z2", want: "Z2"},
		{name: "name and id disagree", zone: "example.org", id: "Z2", matches: 0},
		{name: "two zones share the name", zone: "example.com", matches: 2},
		{name: "unknown name", zone: "example.net", matches: 0},
		{name: "unknown id", id: "Z9", matches: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z, err := FindZone(zones, tt.zone, tt.id)
			if tt.want != "" {
				if err != nil || z.ID != tt.want {
					t.Fatalf("FindZone = %v, %v; want %s", z, err, tt.want)
				}
				return
			}
			var le *ZoneLookupError
			if !errors.As(err, &le) {
				t.Fatalf("FindZone = %v, %v; want a *ZoneLookupError", z, err)
			}
			if len(le.Matches) != tt.matches || le.Of != len(zones) {
				t.Fatalf("error %+v: want %d matches of %d", le, tt.matches, len(zones))
			}
			if tt.name == "name and id disagree" && le.Error() != "zone example.org (Z2): not found among the 3 zones the provider manages" {
				t.Errorf("message %q: want the name and the id apart", le.Error())
			}
		})
	}
}
