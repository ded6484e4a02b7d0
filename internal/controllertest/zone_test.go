package controllertest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// listed is a provider whose zone holds recs; Records is all Records reads of it.
type listed struct {
	provider.Provider
	recs []*endpoint.Endpoint
}

func (l listed) Records(context.Context, provider.Zone) ([]*endpoint.Endpoint, error) {
	return l.recs, nil
}

// TestRecords: every set rendered, the set identifier only where there is one, sorted.
func TestRecords(t *testing.T) {
	for _, tc := range []struct {
		name string
		recs []*endpoint.Endpoint
		want []string
	}{
		{"none", nil, []string{}},
		{"simple and weighted, sorted", []*endpoint.Endpoint{
			{Name: "web.example.com", Type: "A", Targets: []string{"192.0.2.11"}},
			{Name: "app.example.com", Type: "A", SetIdentifier: "green", Targets: []string{"192.0.2.20"}},
			{Name: "app.example.com", Type: "A", SetIdentifier: "blue", Targets: []string{"192.0.2.10", "192.0.2.12"}},
		}, []string{"app.example.com A [blue] 192.0.2.10,192.0.2.12", "app.example.com A [green] 192.0.2.20", "web.example.com A 192.0.2.11"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Records(t, listed{recs: tc.recs}, provider.Zone{ID: "Z1", Name: "example.com"})
			if !slices.Equal(got, tc.want) {
				t.Errorf("Records = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEventually returns once the condition holds, having asked it until then.
func TestEventually(t *testing.T) {
	calls := 0
	Eventually(t, time.Minute, "third call", func() (bool, string) {
		calls++
		return calls == 3, "not yet"
	})
	if calls != 3 {
		t.Errorf("condition asked %d times, want 3 (until it held)", calls)
	}
}
