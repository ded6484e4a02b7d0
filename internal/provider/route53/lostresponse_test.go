package route53_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// TestLostResponseIsNotARefusal: the sandbox commits every change batch and then fails
// its answer (HTTP 500, or a dropped connection); the SDK retries, and the retry is
// refused because the first attempt already wrote what it asks ("already exists", "not
// found"). Apply must report the batch as written, not refused: for creates, for a
// compare-and-swap replacement and for deletes. A batch that really is refused after a
// lost answer stays refused.
func TestLostResponseIsNotARefusal(t *testing.T) {
	for _, fc := range []faults.Config{
		{CommitThenFailRate: 1, Operations: []string{"ChangeResourceRecordSets"}},
		{CommitThenDropRate: 1, Operations: []string{"ChangeResourceRecordSets"}},
	} {
		t.Run(fmt.Sprintf("%+v", fc), func(t *testing.T) {
			sb := sandboxtest.StartWith(t, sandbox.Config{Faults: fc})
			z, _, err := sb.Store().CreateZone("example.com", "ref", "", false)
			if err != nil {
				t.Fatal(err)
			}
			zone := provider.Zone{ID: z.ID, Name: "example.com"}
			p := route53test.New(t, sb)
			ctx := context.Background()
			a := func(v string) *endpoint.Endpoint {
				return &endpoint.Endpoint{Name: "www.example.com", Type: "A", Targets: endpoint.NewTargets(v), TTL: 60}
			}
			txt := &endpoint.Endpoint{Name: "a-www.example.com", Type: "TXT", Targets: endpoint.Targets{`"heritage=external-dns,external-dns/owner=blue"`}, TTL: 300}
			state := func() []string {
				recs, err := p.Records(ctx, zone)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, r := range recs {
					if r.Name != "example.com" {
						out = append(out, r.String())
					}
				}
				return out
			}
			steps := []struct {
				what  string
				batch changes.Batch
				after string
			}{
				{"create", changes.Batch{{Action: changes.Create, Endpoint: a("192.0.2.1")}, {Action: changes.Create, Endpoint: txt}}, "[a-www.example.com TXT " + txt.Targets[0] + " www.example.com A 192.0.2.1]"},
				{"replace", changes.Batch{{Action: changes.Delete, Endpoint: a("192.0.2.1")}, {Action: changes.Create, Endpoint: a("192.0.2.2")}}, "[a-www.example.com TXT " + txt.Targets[0] + " www.example.com A 192.0.2.2]"},
				{"delete", changes.Batch{{Action: changes.Delete, Endpoint: a("192.0.2.2")}, {Action: changes.Delete, Endpoint: txt}}, "[]"},
			}
			calls := func() int {
				n := 0
				for k, v := range sandboxtest.APICalls(t, sb) {
					if strings.HasPrefix(k, "ChangeResourceRecordSets ") {
						n += v
					}
				}
				return n
			}
			for _, s := range steps {
				before := calls()
				if err := p.Apply(ctx, zone, s.batch); err != nil {
					t.Fatalf("%s: a batch whose first attempt committed was reported as failed: %v", s.what, err)
				}
				// One attempt committed and lost its answer, one retry was refused.
				if got := calls() - before; got != 2 {
					t.Errorf("%s: %d attempts, want 2", s.what, got)
				}
				if got := fmt.Sprint(state()); got != s.after {
					t.Errorf("%s: zone holds %s, want %s", s.what, got, s.after)
				}
			}
			// A real refusal: deleting what is not there is refused on the first attempt,
			// answered as usual, and stays refused.
			err = p.Apply(ctx, zone, changes.Batch{{Action: changes.Delete, Endpoint: a("192.0.2.9")}})
			var rej *provider.RejectedError
			if !errors.As(err, &rej) {
				t.Errorf("delete of a missing set: got %v, want a refusal", err)
			}
		})
	}
}
