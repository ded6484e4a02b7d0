package cutover

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	leveralb "github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/alb/albtest"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// TestMemberGoneOnResume: a runner holding step 2 (90/10) is killed; blue's member is
// deleted (through the Route 53 API); `run --resume` acts on it as the running one would
// have: by default it pauses, naming the member, until an abort rolls back what it can;
// with spec.onDrift: rollback it rolls back at once. Before, the resumed run read the
// member as not yet published and stopped with "the zone is not ready", leaving green at
// 10. A first run that finds a member missing still refuses to start, journaling nothing.
func TestMemberGoneOnResume(t *testing.T) {
	for _, onDrift := range []string{spec.DriftPause, spec.DriftRollback} {
		t.Run(onDrift, func(t *testing.T) {
			e, cfg, paths := onDriftEnv(t, onDrift)

			// The first runner, killed (SIGTERM: its context ends) in step 2's hold.
			ctx, cancel := context.WithCancel(context.Background())
			events := make(chan Event, 100)
			first := cfg
			first.Progress = progressHook(func(ev Event) {
				select {
				case events <- ev:
				default:
				}
			})
			killed := make(chan error, 1)
			go func() {
				_, err := Run(ctx, first, false)
				killed <- err
			}()
			waitHolding(t, events, 1)
			cancel()
			if err := <-killed; !errors.Is(err, context.Canceled) {
				t.Fatalf("killed run: %v, want context.Canceled", err)
			}
			if a, _ := e.Weights(t); a["green"] != 10 {
				t.Fatalf("weights after the kill %v, want green 10", a)
			}
			deleteMember(context.Background(), t, e, "blue")

			_, done := startRun(cfg, true)
			d, done := awaitDrift(t, paths.Journal, done)
			if got := wantDrift(t, d, "member app.example.com A [blue] is gone from zone example.com", "re-publish it"); got.Action != onDrift {
				t.Errorf("drift action %q, want %q", got.Action, onDrift)
			}
			awaitDriftEnd(t, "resumed run", paths, onDrift, done, "is gone from zone")
			if a, _ := e.Weights(t); a["green"] != 0 {
				t.Errorf("green weight %d after the rollback, want 0 (weights %v)", a["green"], a)
			}
			rolledBackReport(t, "app", paths)
		})
	}

	// Killed while it waits out the old TTL (the TTL write sent, not yet journaled as
	// lowered), resumed with blue gone: the TTL write reads it gone, and the run rolls back
	// (spec.onDrift: rollback) instead of stopping on the read's error.
	t.Run("before the TTL is lowered", func(t *testing.T) {
		e := newEnv(t, 100, 0)
		e.SetTTL(t, 30)
		p := testPlan(t)
		p.LowerTTL, p.OnDrift = 1, spec.DriftRollback
		cfg := e.config(p)
		ctx, cancel := context.WithCancel(context.Background())
		first := cfg
		first.Progress = progressHook(func(ev Event) {
			if ev.Phase == PhaseLoweringTTL && ev.Left > 0 {
				cancel()
			}
		})
		if _, err := Run(ctx, first, false); !errors.Is(err, context.Canceled) {
			t.Fatalf("killed run: %v, want context.Canceled", err)
		}
		deleteMember(context.Background(), t, e, "blue")
		_, err := Run(context.Background(), cfg, true)
		var rb *RollbackError
		if !errors.As(err, &rb) || !strings.Contains(rb.Reason, "member app.example.com A [blue] is gone from zone example.com") {
			t.Fatalf("resumed run: %v, want a rollback naming the member gone", err)
		}
		if a, _ := e.Weights(t); a["green"] != 0 {
			t.Errorf("green weight %d after the rollback, want 0 (weights %v)", a["green"], a)
		}
	})

	t.Run("first start", func(t *testing.T) {
		e := newEnv(t, 100, 0)
		deleteMember(context.Background(), t, e, "green")
		_, err := Run(context.Background(), e.config(testPlan(t)), false)
		var nr *NotReadyError
		if !errors.As(err, &nr) || !strings.Contains(err.Error(), "app.example.com A [green]: no such record set") {
			t.Fatalf("run: %v, want a refusal naming the member to publish", err)
		}
		entries, _ := journal.Read(PathsFor(e.dir, "app").Journal)
		for _, en := range entries {
			if en.Kind == kindStart || en.Kind == kindIntent {
				t.Errorf("a refused start journaled %s: %+v", en.Kind, en)
			}
		}
	})
}

// TestReadMemberGoneOnceStarted: a lever's read finds a member missing: before the
// cutover's start entry it refuses (*NotReadyError: publish it first); once the cutover
// has started, whichever process reads, it is a member gone (*MemberGoneError, acted on
// as drift); a partial read (a rollback's) leaves it out and says so. Before,
// only a process that had written the weights itself read it as gone.
func TestReadMemberGoneOnceStarted(t *testing.T) {
	ctx := context.Background()
	f := albtest.NewFakeELB()
	delete(f.Rules, albtest.RuleHTTPS)
	lv := leveralb.New(albtest.Plan(), f)
	for _, tc := range []struct {
		name string
		o    ReadOptions
		want string // "not ready", "gone" or "skipped"
	}{
		{"not started", ReadOptions{Runner: levertest.Runner}, "not ready"},
		{"started, resumed", ReadOptions{Runner: levertest.Runner, Started: true}, "gone"},
		{"held", ReadOptions{Runner: levertest.Runner, Held: true}, "gone"},
		{"started, rolling back", ReadOptions{Runner: levertest.Runner, Started: true, Partial: true}, "skipped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := lv.Read(ctx, tc.o)
			var nr *NotReadyError
			var g *MemberGoneError
			switch tc.want {
			case "not ready":
				if !errors.As(err, &nr) || !strings.Contains(err.Error(), albtest.RuleHTTPS+": not found") {
					t.Errorf("read: %v, want a NotReadyError naming the rule", err)
				}
			case "gone":
				if !errors.As(err, &g) || !strings.Contains(g.Member, albtest.RuleHTTPS) {
					t.Errorf("read: %v, want a MemberGoneError naming the rule", err)
				}
			case "skipped":
				if err != nil || len(s.Skipped()) != 1 || !strings.Contains(s.Skipped()[0], albtest.RuleHTTPS) {
					t.Errorf("partial read: %v, want the rule skipped", err)
				}
			}
		})
	}
}

// TestCloudMapClusterGone: every instance of green is deregistered from the Cloud Map
// service while step 1 holds 25/75. Instances being fewer is a deployment scaling and
// no drift, but a cluster with none left is the member gone: the runner acts on it as
// spec.onDrift says, as the Route 53 and ALB levers' runs do: it pauses, naming the
// cluster and the service, until an abort rolls back (blue all HEALTHY again), or rolls
// back at once, and the report names the cluster it could not restore. Before, the hold
// saw no drift and the next step's write stopped the run with "the Cloud Map service is
// not ready", blue's instances left half UNHEALTHY.
func TestCloudMapClusterGone(t *testing.T) {
	for _, onDrift := range []string{spec.DriftPause, spec.DriftRollback} {
		t.Run(onDrift, func(t *testing.T) {
			m := levertest.NewCloudMap(t)
			p := m.Plan("orders")
			p.OnDrift = onDrift
			// 25/75 leaves blue-1 HEALTHY, blue-2 UNHEALTHY, green's two HEALTHY.
			p.Steps[0].Weights, p.Steps[0].Pause = spec.Weights{From: 25, To: 75}, 2*time.Second
			dir := t.TempDir()
			cfg := quietConfig(p, dir)
			cfg.Levers = cloudMapLevers(m.API)
			cfg.DriftInterval = 10 * time.Millisecond
			paths := PathsFor(dir, "orders")
			events, done := startRun(cfg, false)
			waitHolding(t, events, 0)
			if got := m.Healthy(t); got != "blue=1 green=2" {
				t.Fatalf("health at 25/75: %s, want blue=1 green=2", got)
			}
			for _, id := range []string{"green-1", "green-2"} {
				if _, err := m.API.DeregisterInstance(context.Background(), &sd.DeregisterInstanceInput{ServiceId: aws.String(m.SvcID), InstanceId: aws.String(id)}); err != nil {
					t.Fatal(err)
				}
			}
			drift, done := awaitDrift(t, paths.Journal, done)
			if got := wantDrift(t, drift, "cluster green's instances (cluster=green) is gone from Cloud Map service apps/orders", "register its instances again"); got.Action != onDrift {
				t.Errorf("drift action %q, want %q", got.Action, onDrift)
			}
			awaitDriftEnd(t, "run", paths, onDrift, done, "is gone from Cloud Map service")
			if got := m.Healthy(t); got != "blue=2 green=0" {
				t.Errorf("health after the rollback: %s, want blue=2 green=0", got)
			}
			if text := rolledBackReport(t, "orders", paths); !strings.Contains(text, "could not restore") || !strings.Contains(text, "cluster green's instances") {
				t.Errorf("the report does not name the cluster the rollback could not restore:\n%s", text)
			}
		})
	}
}

// awaitDrift waits for the first drift entry in the journal at path of the run that
// ends on done, failing at once if that run ends without one. It returns the entry, and
// a channel for the run's end in done's place.
func awaitDrift(t *testing.T, path string, done <-chan error) (journal.Entry, <-chan error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		entries, _ := journal.Read(path)
		for _, en := range entries {
			if en.Kind == kindDrift {
				return en, done
			}
		}
		select {
		case err := <-done:
			// The run may have journaled the drift just before it ended.
			entries, _ := journal.Read(path)
			for _, en := range entries {
				if en.Kind == kindDrift {
					ch := make(chan error, 1)
					ch <- err
					return en, ch
				}
			}
			t.Fatalf("the run ended without a drift entry: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no drift entry after 30 s: %+v", entries)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
