package registry

import (
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// FuzzReadTXT feeds TXT values and names from a zone (input crossfade does not control)
// through the registry: it must never panic, and an ownership record it accepts must
// round-trip through Payload.
func FuzzReadTXT(f *testing.F) {
	f.Add("a-app.example.com", `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`, "txt.")
	f.Add("app.example.com", `heritage=external-dns,external-dns/owner=x`, "")
	f.Add("cname-owner.app", `"heritage=external-dns,,=,a=b=c"`, "%{record_type}-owner.")
	f.Add("", `"`, "")
	f.Fuzz(func(t *testing.T, name, value, prefix string) {
		labels, err := ParsePayload(value)
		if err == nil {
			again, err := ParsePayload(Payload(labels))
			if err != nil || len(again) != len(labels) {
				t.Fatalf("payload %q did not round-trip: %v %v", value, again, err)
			}
		}
		reg, err := New(Config{OwnerID: "blue", Prefix: prefix})
		if err != nil {
			return
		}
		z := reg.Read([]*endpoint.Endpoint{
			{Name: name, Type: endpoint.TypeTXT, Targets: endpoint.Targets{value}},
			{Name: name, Type: endpoint.TypeA, Targets: endpoint.Targets{"192.0.2.1"}},
		})
		_ = z.TXT(endpoint.Key{Name: name, Type: endpoint.TypeTXT})
		_ = reg.For(&endpoint.Endpoint{Name: name, Type: endpoint.TypeA, Labels: endpoint.Labels{"owner": "blue"}})
	})
}
