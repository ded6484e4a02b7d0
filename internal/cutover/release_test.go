package cutover

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/controller"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
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
	if rep, err := publishAs(e.DNS, "blue", "127.0.0.10", 100, 1); err != nil || rep.Err() != nil {
		t.Fatalf("blue's sync: %v", errors.Join(err, rep.Err()))
	}
	_, err := Release(context.Background(), cfg, ReleaseOptions{})
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

	if rep, err := publishAs(e.DNS, "blue", "127.0.0.10", 0, 1); err != nil || rep.Err() != nil || len(rep.Conflicts()) != 0 {
		t.Fatalf("blue's sync with weight 0: %v %v", errors.Join(err, rep.Err()), rep.Conflicts())
	}
	if rep, err := publishAs(e.DNS, "green", "127.0.0.20", 100, 1); err != nil || rep.Err() != nil || len(rep.Conflicts()) != 0 {
		t.Fatalf("green's sync: %v %v", errors.Join(err, rep.Err()), rep.Conflicts())
	}
	rel, err := Release(context.Background(), cfg, ReleaseOptions{})
	if err != nil || rel.Records != 1 || len(rel.Changes) != 0 {
		t.Fatalf("release once blue asks for 0: %+v, %v", rel, err)
	}
	if _, ok := e.authorityOf(t); ok {
		t.Error("the authority record is still there after release")
	}
	if a, _ := e.Weights(t); a["blue"] != 0 || a["green"] != 100 {
		t.Errorf("weights after release %v", a)
	}
}

// TestReleaseForceSaysWhatItLets: release --force goes through all the same and says that
// blue goes back to 100 at its publisher's next sync; which it then does.
func TestReleaseForceSaysWhatItLets(t *testing.T) {
	e := newEnv(t, 100, 0)
	cfg := completed(t, e)
	if rep, err := publishAs(e.DNS, "blue", "127.0.0.10", 100, 1); err != nil || rep.Err() != nil {
		t.Fatalf("blue's sync: %v", errors.Join(err, rep.Err()))
	}
	rel, err := Release(context.Background(), cfg, ReleaseOptions{Force: true})
	if err != nil || rel.Records != 1 || len(rel.Changes) != 1 {
		t.Fatalf("release --force: %+v, %v", rel, err)
	}
	if got, want := rel.Changes[0].Effect(), "app.example.com A [blue] goes from weight 0 to 100 at its publisher's next sync"; got != want {
		t.Errorf("effect %q, want %q", got, want)
	}
	if rep, err := publishAs(e.DNS, "blue", "127.0.0.10", 100, 1); err != nil || rep.Err() != nil {
		t.Fatalf("blue's sync after release: %v", errors.Join(err, rep.Err()))
	}
	if a, _ := e.Weights(t); a["blue"] != 100 {
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
	// Both publishers confirm the hold, agreeing with the zone.
	if err := e.PublishBoth(0, 100); err != nil {
		t.Fatal(err)
	}
	synced := false
	cfg.Levers = e.Levers(&hookDNS{DNS: e.DNS, before: func(changes.Batch) changes.Batch {
		if !synced {
			synced = true
			if rep, err := publishAs(e.DNS, "blue", "127.0.0.10", 100, 1); err != nil || rep.Err() != nil {
				t.Errorf("blue's sync: %v", errors.Join(err, rep.Err()))
			}
		}
		return nil
	}})
	_, err := Release(context.Background(), cfg, ReleaseOptions{})
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

// syncNothing syncs owner's publisher with a source that asks for nothing: an empty
// manifests directory.
func syncNothing(t *testing.T, p provider.Provider, owner string) *controller.Report {
	t.Helper()
	reg, err := registry.New(registry.Config{OwnerID: owner})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := (&controller.Syncer{Provider: p, Registry: reg, Policy: changes.Sync, Guard: controller.DeleteGuard{Allow: true}}).Sync(context.Background(), nil)
	if err != nil || rep.Err() != nil {
		t.Fatalf("%s's empty sync: %v", owner, errors.Join(err, rep.Err()))
	}
	return rep
}

// TestReleaseRefusesWithoutConfirmation: after blue → green, neither publisher has synced
// since the cutover took hold of the name: nothing says what they would write once
// released (a controller whose zone cache is an hour old writes its old weights back),
// so release refuses, naming each member, its owner and how to get a confirmation, and
// keeps the authority record. Once both have synced (agreeing with the zone), it goes
// through.
func TestReleaseRefusesWithoutConfirmation(t *testing.T) {
	e := newEnv(t, 100, 0)
	cfg := completed(t, e)
	_, err := Release(context.Background(), cfg, ReleaseOptions{})
	var refused *ReleaseRefusedError
	if !errors.As(err, &refused) || len(refused.Unconfirmed) != 2 || len(refused.Sets) != 0 {
		t.Fatalf("release: %v, want *ReleaseRefusedError naming blue and green as unconfirmed", err)
	}
	for _, want := range []string{
		"cutover app: release refused: no confirmation since the hold began from the publishers of these sets",
		"\n  app.example.com A [blue]: owner blue (service/default/app) has not confirmed this hold",
		"\n  app.example.com A [green]: owner green (service/default/app) has not confirmed this hold",
		"\nrun `crossfade sync` for that cluster, or wait for its controller: it confirms within 5 minutes; `crossfade cutover release --wait 10m` waits; `--force` releases without",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("release error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "would change traffic") {
		t.Errorf("release error %q speaks of a weight change no publisher asked for", err)
	}
	if _, ok := e.authorityOf(t); !ok {
		t.Fatal("a refused release deleted the authority record")
	}
	// One publisher is not enough.
	if rep, err := publishAs(e.DNS, "blue", "127.0.0.10", 0, 1); err != nil || rep.Err() != nil {
		t.Fatalf("blue's sync: %v", errors.Join(err, rep.Err()))
	}
	if _, err := Release(context.Background(), cfg, ReleaseOptions{}); !errors.As(err, &refused) || len(refused.Unconfirmed) != 1 || !strings.Contains(err.Error(), "[green]: owner green") {
		t.Fatalf("release with blue confirmed only: %v, want green unconfirmed", err)
	}
	if rep, err := publishAs(e.DNS, "green", "127.0.0.20", 100, 1); err != nil || rep.Err() != nil {
		t.Fatalf("green's sync: %v", errors.Join(err, rep.Err()))
	}
	rel, err := Release(context.Background(), cfg, ReleaseOptions{})
	if err != nil || rel.Records != 1 || len(rel.Unconfirmed) != 0 {
		t.Fatalf("release once both confirmed: %+v, %v", rel, err)
	}
	// The hold over, the publishers drop their confirmations at their next sync.
	if rep, err := publishAs(e.DNS, "green", "127.0.0.20", 100, 1); err != nil || rep.Err() != nil {
		t.Fatalf("green's sync after release: %v", errors.Join(err, rep.Err()))
	}
	txt := e.records(t)[endpoint.Key{Name: "a-app.example.com", Type: "TXT", SetIdentifier: "green"}]
	if txt == nil || strings.Contains(txt.Targets[0], endpoint.ConfirmsHoldLabel) {
		t.Errorf("green's ownership record after release %v, want no confirmation", txt)
	}
}

// TestReleaseForceWithoutConfirmation: --force releases without the confirmations and
// says whose are missing.
func TestReleaseForceWithoutConfirmation(t *testing.T) {
	e := newEnv(t, 100, 0)
	cfg := completed(t, e)
	rel, err := Release(context.Background(), cfg, ReleaseOptions{Force: true})
	if err != nil || rel.Records != 1 || len(rel.Unconfirmed) != 2 {
		t.Fatalf("release --force: %+v, %v", rel, err)
	}
	if _, ok := e.authorityOf(t); ok {
		t.Error("the authority record is still there after release --force")
	}
}

// readHookDNS calls onRead before every listing of the zone.
type readHookDNS struct {
	DNS
	onRead func(n int)
	n      int
}

func (d *readHookDNS) Records(ctx context.Context, z provider.Zone) ([]*endpoint.Endpoint, error) {
	d.n++
	d.onRead(d.n)
	return d.DNS.Records(ctx, z)
}

// TestReleaseWaitsForConfirmations: release --wait reads the zone again until every
// publisher has confirmed the hold (here both sync after release's second read), then
// releases; with a wait too short for them, it refuses and says how long it waited.
func TestReleaseWaitsForConfirmations(t *testing.T) {
	e := newEnv(t, 100, 0)
	cfg := completed(t, e)
	short := cfg
	reads := &readHookDNS{DNS: e.DNS, onRead: func(int) {}}
	short.Levers = e.Levers(reads)
	_, err := Release(context.Background(), short, ReleaseOptions{Wait: 50 * time.Millisecond, Poll: 10 * time.Millisecond})
	var refused *ReleaseRefusedError
	if !errors.As(err, &refused) || len(refused.Unconfirmed) != 2 || !strings.Contains(err.Error(), "\nwaited ") {
		t.Fatalf("release --wait with no publisher syncing: %v, want refused after waiting", err)
	}
	if n := reads.n; n < 2 {
		t.Errorf("release --wait read the zone %d times, want it read again while waiting", n)
	}

	hook := &readHookDNS{DNS: e.DNS}
	hook.onRead = func(n int) {
		if n != 2 {
			return
		}
		if err := e.PublishBoth(0, 100); err != nil {
			t.Error(err)
		}
	}
	cfg.Levers = e.Levers(hook)
	rel, err := Release(context.Background(), cfg, ReleaseOptions{Wait: time.Minute, Poll: 10 * time.Millisecond})
	if err != nil || rel.Records != 1 || len(rel.Unconfirmed) != 0 {
		t.Fatalf("release --wait: %+v, %v", rel, err)
	}
	if hook.n < 2 {
		t.Errorf("release read the zone %d times: it did not wait", hook.n)
	}
	if _, ok := e.authorityOf(t); ok {
		t.Error("the authority record is still there after release --wait")
	}
}

// TestReleaseRefusesADeparture: blue's publisher syncs an empty source during the hold.
// Its member stays (the cutover holds it) and its ownership record says no source asks
// for it; release refuses, saying the member would go at the next sync, and --force
// releases, saying so; blue's next sync then deletes it.
func TestReleaseRefusesADeparture(t *testing.T) {
	e := newEnv(t, 100, 0)
	cfg := completed(t, e)
	rep := syncNothing(t, e.DNS, "blue")
	if len(rep.Zones) != 1 || rep.Zones[0].Changes.Summary.Held != 1 || rep.Zones[0].Changes.Summary.Delete != 0 {
		t.Fatalf("blue's empty sync during the hold: %+v", rep.Zones[0].Changes.Summary)
	}
	if _, ok := e.records(t)[endpoint.Key{Name: "app.example.com", Type: "A", SetIdentifier: "blue"}]; !ok {
		t.Fatal("blue's held member was deleted by an empty sync")
	}
	if rep, err := publishAs(e.DNS, "green", "127.0.0.20", 100, 1); err != nil || rep.Err() != nil {
		t.Fatalf("green's sync: %v", errors.Join(err, rep.Err()))
	}
	_, err := Release(context.Background(), cfg, ReleaseOptions{})
	var refused *ReleaseRefusedError
	if !errors.As(err, &refused) || len(refused.Gone) != 1 || len(refused.Unconfirmed) != 0 {
		t.Fatalf("release: %v, want blue refused as going away", err)
	}
	if want := "app.example.com A [blue]: no source asks for it any more, the zone holds weight 0: service/default/app: publish it again (with weight 0) and sync it"; !strings.Contains(err.Error(), want) {
		t.Errorf("release error %q lacks %q", err, want)
	}
	rel, err := Release(context.Background(), cfg, ReleaseOptions{Force: true})
	if err != nil || len(rel.Gone) != 1 || rel.Gone[0].Effect() != "app.example.com A [blue] (weight 0) goes away at its publisher's next sync" {
		t.Fatalf("release --force: %+v, %v", rel, err)
	}
	if rep := syncNothing(t, e.DNS, "blue"); rep.Zones[0].Changes.Summary.Delete != 1 {
		t.Errorf("blue's empty sync after release: %+v, want its member deleted", rep.Zones[0].Changes.Summary)
	}
}

// TestReleaseWaitsForSourcesToAgree: blue's publisher confirmed the hold but its source
// still asks for 100 (the zone holds 0). release --wait does not refuse at once: it reads
// the zone again until blue's source, fixed and synced meanwhile (after release's second
// read), asks for 0, then releases. With a wait too short for that, it refuses at the end
// naming the weight, and says how long it waited.
func TestReleaseWaitsForSourcesToAgree(t *testing.T) {
	e := newEnv(t, 100, 0)
	cfg := completed(t, e)
	if err := e.PublishBoth(100, 100); err != nil {
		t.Fatal(err)
	}
	short := cfg
	counter := &readHookDNS{DNS: e.DNS, onRead: func(int) {}}
	short.Levers = e.Levers(counter)
	_, err := Release(context.Background(), short, ReleaseOptions{Wait: 50 * time.Millisecond, Poll: 10 * time.Millisecond})
	var refused *ReleaseRefusedError
	if !errors.As(err, &refused) || len(refused.Sets) != 1 || len(refused.Unconfirmed) != 0 || refused.Waited == 0 ||
		!strings.Contains(err.Error(), "app.example.com A [blue]: its source asks for weight 100, the zone holds 0") || !strings.Contains(err.Error(), "\nwaited ") {
		t.Fatalf("release --wait with blue's source unchanged: %v, want refused for blue's weight after waiting", err)
	}
	if counter.n < 2 {
		t.Errorf("release --wait read the zone %d times, want it read again while waiting", counter.n)
	}

	hook := &readHookDNS{DNS: e.DNS}
	hook.onRead = func(n int) {
		if n != 2 {
			return
		}
		if rep, err := publishAs(e.DNS, "blue", "127.0.0.10", 0, 1); err != nil || rep.Err() != nil {
			t.Errorf("blue's sync with weight 0: %v", errors.Join(err, rep.Err()))
		}
	}
	cfg.Levers = e.Levers(hook)
	rel, err := Release(context.Background(), cfg, ReleaseOptions{Wait: time.Minute, Poll: 10 * time.Millisecond})
	if err != nil || rel.Records != 1 || len(rel.Changes) != 0 {
		t.Fatalf("release --wait once blue's source asks for 0: %+v, %v", rel, err)
	}
	if hook.n < 2 {
		t.Errorf("release read the zone %d times: it did not wait for blue's sync", hook.n)
	}
	if a, _ := e.Weights(t); a["blue"] != 0 || a["green"] != 100 {
		t.Errorf("weights after release %v", a)
	}
}
