package source

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestHeld: an object with bad input is named in Held, so that what it published while it
// was valid is kept rather than deleted; a bad name in a hostname list costs that name
// only, and the object's other names are still published.
func TestHeld(t *testing.T) {
	src := mustNew(t, Config{})
	tests := []struct {
		name string
		ann  map[string]string
		want string
		held []string
	}{
		{"valid object: nothing held", map[string]string{alpha + "hostname": "a.example.com"},
			"a.example.com A 192.0.2.1 ttl=0 simple service/default/web\n", nil},
		{"weight turned invalid: held, nothing published", map[string]string{alpha + "hostname": "a.example.com", alpha + "set-identifier": "blue", alpha + "aws-weight": "abc"},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/aws-weight "abc": want an integer 0..255` + "\n", []string{"service/default/web"}},
		{"one bad name in a list: the others published, the bad one reported, the object held",
			map[string]string{alpha + "hostname": "a.example.com,b..example.com,c.example.com"},
			"a.example.com A 192.0.2.1 ttl=0 simple service/default/web\nc.example.com A 192.0.2.1 ttl=0 simple service/default/web\n" +
				`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/hostname "b..example.com": empty label` + "\n",
			[]string{"service/default/web"}},
		{"a bad name beside a bad weight: nothing published",
			map[string]string{alpha + "hostname": "a.example.com,b..example.com", alpha + "set-identifier": "blue", alpha + "aws-weight": "abc"},
			`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/aws-weight "abc": want an integer 0..255` + "\n" +
				`invalid: service default/web: annotation external-dns.alpha.kubernetes.io/hostname "b..example.com": empty label` + "\n",
			[]string{"service/default/web"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := src.Endpoints(&Snapshot{Services: []*corev1.Service{lbService("web", tt.ann, ip("192.0.2.1"))}})
			check(t, got, tt.want)
			if !slices.Equal(got.Held, tt.held) {
				t.Errorf("held %q, want %q", got.Held, tt.held)
			}
		})
	}
}
