package cutover

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/plan"
)

// completed runs the blue → green test plan to its end in e, and returns its config.
func completed(t *testing.T, e *env) Config {
	t.Helper()
	cfg := e.config(testPlan(t))
	if rep, err := Run(context.Background(), cfg, false); err != nil || rep.Outcome != outcomeCompleted {
		t.Fatalf("run: %v", err)
	}
	return cfg
}

// TestReleaseRefusesWhatWouldMoveTraffic: after blue → green, blue's publisher syncs its
// unchanged source (still weight 100). The authority record keeps the zone at 0 and the
// publisher records that its source asks for 100. Releasing now would send all traffic
// back to blue at blue's next sync, so release refuses, naming the member, both weights
// and the annotation to change, and leaves the zone as it is. Once blue's source asks for
// 0 and is synced, release goes through.
func TestReleaseRefusesWhatWouldMoveTraffic(t *testing.T) {
	e := newEnv(t, 100, 0)
	cfg := completed(t, e)
	if rep, err := publishAs(e.dns, "blue", "127.0.0.10", 100, 1); err != nil || rep.Err() != nil {
		t.Fatalf("blue's sync: %v", errors.Join(err, rep.Err()))
	}
	_, err := Release(context.Background(), cfg, false)
	var refused *ReleaseRefusedError
	if !errors.As(err, &refused) || len(refused.Sets) != 1 {
		t.Fatalf("release: %v, want *ReleaseRefusedError for blue", err)
	}
	for _, want := range []string{
		"release would change traffic",
		"app.example.com A [blue]: its source asks for weight 100, the zone holds 0: service/default/app: set external-dns.alpha.kubernetes.io/aws-weight to 0 and sync it",
		"release --force",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("release error %q lacks %q", err, want)
		}
	}
	if _, ok := e.authorityOf(t); !ok {
		t.Error("a refused release deleted the authority record")
	}

	if rep, err := publishAs(e.dns, "blue", "127.0.0.10", 0, 1); err != nil || rep.Err() != nil || len(rep.Conflicts()) != 0 {
		t.Fatalf("blue's sync with weight 0: %v %v", errors.Join(err, rep.Err()), rep.Conflicts())
	}
	rel, err := Release(context.Background(), cfg, false)
	if err != nil || rel.Records != 1 || len(rel.Changes) != 0 {
		t.Fatalf("release once blue asks for 0: %+v, %v", rel, err)
	}
	if _, ok := e.authorityOf(t); ok {
		t.Error("the authority record is still there after release")
	}
	if a, _ := e.weights(t); a["blue"] != 0 || a["green"] != 100 {
		t.Errorf("weights after release %v", a)
	}
}

// TestReleaseForceSaysWhatItLets: release --force goes through all the same and says that
// blue goes back to 100 at its publisher's next sync; which it then does.
func TestReleaseForceSaysWhatItLets(t *testing.T) {
	e := newEnv(t, 100, 0)
	cfg := completed(t, e)
	if rep, err := publishAs(e.dns, "blue", "127.0.0.10", 100, 1); err != nil || rep.Err() != nil {
		t.Fatalf("blue's sync: %v", errors.Join(err, rep.Err()))
	}
	rel, err := Release(context.Background(), cfg, true)
	if err != nil || rel.Records != 1 || len(rel.Changes) != 1 {
		t.Fatalf("release --force: %+v, %v", rel, err)
	}
	if got, want := rel.Changes[0].Effect(), "app.example.com A [blue] goes from weight 0 to 100 at its publisher's next sync"; got != want {
		t.Errorf("effect %q, want %q", got, want)
	}
	if rep, err := publishAs(e.dns, "blue", "127.0.0.10", 100, 1); err != nil || rep.Err() != nil {
		t.Fatalf("blue's sync after release: %v", errors.Join(err, rep.Err()))
	}
	if a, _ := e.weights(t); a["blue"] != 100 {
		t.Errorf("blue after release --force and a sync: %v, want 100 as release said", a)
	}
}

// TestReleaseReadsAgainWhenAPublisherRecords: blue's publisher records that its source
// asks for 100 between release's read and its write. The release batch rewrites every
// member's ownership record as read, so it is refused, read again, and release refuses
// what it now sees rather than deleting the authority record on a stale read.
func TestReleaseReadsAgainWhenAPublisherRecords(t *testing.T) {
	e := newEnv(t, 100, 0)
	cfg := completed(t, e)
	synced := false
	cfg.DNS = &hookDNS{DNS: e.dns, before: func(plan.Batch) plan.Batch {
		if !synced {
			synced = true
			if rep, err := publishAs(e.dns, "blue", "127.0.0.10", 100, 1); err != nil || rep.Err() != nil {
				t.Errorf("blue's sync: %v", errors.Join(err, rep.Err()))
			}
		}
		return nil
	}}
	_, err := Release(context.Background(), cfg, false)
	var refused *ReleaseRefusedError
	if !synced || !errors.As(err, &refused) || !strings.Contains(err.Error(), "its source asks for weight 100, the zone holds 0") {
		t.Fatalf("release racing a publisher (synced %v): %v", synced, err)
	}
	if _, ok := e.authorityOf(t); !ok {
		t.Error("the authority record is gone: release acted on the read before the publisher's")
	}
	txt := e.records(t)[endpoint.Key{Name: "a-app.example.com", Type: "TXT", SetIdentifier: "blue"}]
	if txt == nil || !strings.Contains(txt.Targets[0], endpoint.WantsWeightLabel+"=100") {
		t.Errorf("blue's ownership record %v, want it to say its source asks for 100", txt)
	}
}
