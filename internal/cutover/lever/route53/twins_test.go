package route53

import (
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// TestUnlistedTwinsRefused: a plan that lists the A members of a name whose AAAA twins
// (an alias to a load balancer, as external-dns and crossfade publish it) are weighted
// members of the same clusters is refused, naming what to add; listing both, or a name
// with no twin, or twins of other clusters only, passes.
func TestUnlistedTwinsRefused(t *testing.T) {
	member := func(typ, id string) *endpoint.Endpoint {
		return &endpoint.Endpoint{Name: "app.example.com", Type: typ, SetIdentifier: id, Policy: endpoint.WeightedPolicy(50)}
	}
	a := spec.Record{Name: "app.example.com", Type: endpoint.TypeA}
	aaaa := spec.Record{Name: "app.example.com", Type: endpoint.TypeAAAA}
	withTwins := map[spec.Record][]*endpoint.Endpoint{
		a:    {member("A", "blue"), member("A", "green")},
		aaaa: {member("AAAA", "blue"), member("AAAA", "green")},
	}
	for _, tc := range []struct {
		name    string
		records []spec.Record
		groups  map[spec.Record][]*endpoint.Endpoint
		want    string // "" for no problem
	}{
		{"A listed, AAAA twins not", []spec.Record{a}, withTwins, "app.example.com AAAA: weighted members of blue and green stand at this name too"},
		{"AAAA listed, A twins not", []spec.Record{aaaa}, withTwins, "app.example.com A: weighted members of blue and green"},
		{"both listed", []spec.Record{a, aaaa}, withTwins, ""},
		{"no twin", []spec.Record{a}, map[spec.Record][]*endpoint.Endpoint{a: withTwins[a]}, ""},
		{"twins of other clusters only", []spec.Record{a}, map[spec.Record][]*endpoint.Endpoint{a: withTwins[a], aaaa: {member("AAAA", "red")}}, ""},
	} {
		got := unlistedTwins(&spec.Plan{From: "blue", To: "green", Records: tc.records}, tc.groups)
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: refused: %q", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s: problems %q, want one containing %q", tc.name, got, tc.want)
		}
	}
}
