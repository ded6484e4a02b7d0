package cutover

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsr53 "github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
)

// deleteMember deletes the weighted A set of app.example.com with set identifier id
// through the bare Route 53 API, as another writer (or a publisher) would.
func deleteMember(ctx context.Context, t *testing.T, e *env, id string) {
	t.Helper()
	zones, err := e.DNS.Zones(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := route53test.Client(e.SB)
	out, err := c.ListResourceRecordSets(ctx, &awsr53.ListResourceRecordSetsInput{HostedZoneId: aws.String(zones[0].ID)})
	if err != nil {
		t.Fatal(err)
	}
	for _, rr := range out.ResourceRecordSets {
		if rr.Type == types.RRTypeA && aws.ToString(rr.SetIdentifier) == id && strings.TrimSuffix(aws.ToString(rr.Name), ".") == "app.example.com" {
			rr := rr
			if _, err := c.ChangeResourceRecordSets(ctx, &awsr53.ChangeResourceRecordSetsInput{HostedZoneId: aws.String(zones[0].ID),
				ChangeBatch: &types.ChangeBatch{Changes: []types.Change{{Action: types.ChangeActionDelete, ResourceRecordSet: &rr}}}}); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no A set %s of app.example.com to delete", id)
}

// waitHolding waits for a hold of step (0-based).
func waitHolding(t *testing.T, ch <-chan Event, step int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-ch:
			if ev.Phase == PhaseHolding && ev.Step == step {
				return
			}
		case <-deadline:
			t.Fatalf("no hold of step %d", step+1)
		}
	}
}

// awaitDriftEnd waits for the end of a run (what: "run", "resumed run") that found a
// member gone and acted on it as onDrift says, failing unless it rolled back: paused
// (it must not have ended), the run is aborted by a command and must end on ErrAborted;
// rolling back, it must end on a *RollbackError whose reason holds reason.
func awaitDriftEnd(t *testing.T, what string, paths Paths, onDrift string, done <-chan error, reason string) {
	t.Helper()
	if onDrift == spec.DriftPause {
		select {
		case err := <-done:
			t.Fatalf("the %s ended instead of pausing: %v", what, err)
		default:
		}
		if err := SendCommand(paths, Command{Command: CommandAbort, By: "alice"}); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the %s did not end", what)
	}
	var rb *RollbackError
	switch {
	case onDrift == spec.DriftPause && !errors.Is(err, ErrAborted):
		t.Fatalf("%s: %v, want rolled back on the abort", what, err)
	case onDrift == spec.DriftRollback && (!errors.As(err, &rb) || !strings.Contains(rb.Reason, reason)):
		t.Fatalf("%s: %v, want a rollback whose reason holds %q", what, err, reason)
	}
}

// onDriftEnv is newEnv at 100/0 with the config of testPlan under spec.onDrift onDrift,
// and the paths of the cutover's files.
func onDriftEnv(t *testing.T, onDrift string) (*env, Config, Paths) {
	t.Helper()
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	p.OnDrift = onDrift
	return e, e.config(p), PathsFor(e.dir, "app")
}

// rolledBackReport reads the journal at paths of cutover name, fails unless its report's
// outcome is rolled-back, and returns the report as text.
func rolledBackReport(t *testing.T, name string, paths Paths) string {
	t.Helper()
	entries, err := journal.Read(paths.Journal)
	if err != nil {
		t.Fatalf("journal of %s: %v", name, err)
	}
	rep := BuildReport(name, entries)
	if rep.Outcome != outcomeRolledBack {
		t.Errorf("%s: outcome %q, want rolled-back", name, rep.Outcome)
	}
	var b strings.Builder
	if err := Text.Report(&b, rep); err != nil {
		t.Fatalf("report of %s: %v", name, err)
	}
	return b.String()
}

// TestMemberDeletedDuringAHold: blue's member is deleted (through the Route 53 API) while
// step 2 holds 90/10. The runner never ends on "no such record set" with traffic split:
// by default it pauses, naming the member and what to do; with spec.onDrift: rollback it
// rolls back what it can (green to 0) and names the member it could not restore. Before,
// the run exited with the read's error and left green at 10.
func TestMemberDeletedDuringAHold(t *testing.T) {
	for _, onDrift := range []string{spec.DriftPause, spec.DriftRollback} {
		t.Run(onDrift, func(t *testing.T) {
			e, cfg, paths := onDriftEnv(t, onDrift)
			events, done := startRun(cfg, false)
			waitHolding(t, events, 1)
			deleteMember(context.Background(), t, e, "blue")
			first := driftEntries(t, e, 1)[0]
			if d := wantDrift(t, first, "member app.example.com A [blue] is gone from zone example.com", "re-publish it", "crossfade cutover abort"); d.Action != onDrift {
				t.Errorf("drift action %q, want %q", d.Action, onDrift)
			}
			awaitDriftEnd(t, "run", paths, onDrift, done, "is gone from zone")
			if a, _ := e.Weights(t); a["green"] != 0 {
				t.Errorf("green weight %d after the rollback, want 0 (weights %v)", a["green"], a)
			}
			if text := rolledBackReport(t, "app", paths); !strings.Contains(text, "could not restore") || !strings.Contains(text, "app.example.com A [blue]") {
				t.Errorf("report does not name the member the rollback could not restore:\n%s", text)
			}
		})
	}
}
