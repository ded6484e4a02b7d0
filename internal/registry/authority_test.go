package registry

import (
	"maps"
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

func TestAuthorities(t *testing.T) {
	rec := AuthorityRecord("app.example.com", []string{"AAAA", "A", "A"}, "app-1-21")
	if rec.Name != "_crossfade-weights.app.example.com" || rec.Targets[0] != `"heritage=crossfade,crossfade/cutover=app-1-21,crossfade/types=A;AAAA"` {
		t.Fatalf("record %s %q", rec.Name, rec.Targets)
	}
	tests := []struct {
		name string
		in   []*endpoint.Endpoint
		want map[endpoint.Key]string
	}{
		{"round trip", []*endpoint.Endpoint{rec}, map[endpoint.Key]string{
			{Name: "app.example.com", Type: "A"}: "app-1-21", {Name: "app.example.com", Type: "AAAA"}: "app-1-21"}},
		{"ownership TXT is not authority", []*endpoint.Endpoint{{Name: "_crossfade-weights.x.example.com", Type: "TXT",
			Targets: endpoint.Targets{`"heritage=external-dns,external-dns/owner=a"`}}}, nil},
		{"unquoted value", []*endpoint.Endpoint{{Name: "_crossfade-weights.x.example.com", Type: "TXT",
			Targets: endpoint.Targets{`heritage=crossfade,crossfade/cutover=c,crossfade/types=A`}}}, nil},
		{"other name", []*endpoint.Endpoint{{Name: "x.example.com", Type: "TXT", Targets: rec.Targets}}, nil},
		{"no cutover", []*endpoint.Endpoint{{Name: "_crossfade-weights.x.example.com", Type: "TXT",
			Targets: endpoint.Targets{`"heritage=crossfade,crossfade/types=A"`}}}, nil},
	}
	for _, tt := range tests {
		if got := Authorities(tt.in); !maps.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
