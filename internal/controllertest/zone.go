package controllertest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// pollInterval is how often Eventually checks its condition.
const pollInterval = 100 * time.Millisecond

// Records renders the zone's record sets as Render does, sorted: what a test compares the
// controller's publication with.
func Records(t testing.TB, p provider.Provider, z provider.Zone) []string {
	t.Helper()
	recs, err := p.Records(context.Background(), z)
	if err != nil {
		t.Fatalf("controllertest: records of zone %s: %v", z.Name, err)
	}
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		out = append(out, Render(r))
	}
	slices.Sort(out)
	return out
}

// Render is a record set as "name type [set] targets", the set identifier only when it
// has one: "app.example.com A [blue] 192.0.2.10", "web.example.com A 192.0.2.11".
func Render(r *endpoint.Endpoint) string {
	s := r.Name + " " + r.Type
	if r.SetIdentifier != "" {
		s += " [" + r.SetIdentifier + "]"
	}
	return s + " " + strings.Join(r.Targets, ",")
}

// Eventually checks cond every 100 ms until it holds, and fails the test with what and
// cond's last state if d passes first. d is a failure bound, not a measurement.
func Eventually(t testing.TB, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(pollInterval)
	}
	t.Fatalf("%s: not within %s; last state:\n%s", what, d, last)
}
