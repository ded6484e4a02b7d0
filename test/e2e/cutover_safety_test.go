package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// The tests in this file drive the cutover's safety rules through the binary, as a new
// user meets them: a start that Route 53 would split evenly, a release that would undo the
// cutover at the next sync, and another writer moving the weights mid-cutover.

// safetyZone publishes blue's and green's weighted members of app.example.com (TTL 1 s)
// at the given weights with `crossfade sync`, each under its own owner, and returns the
// sandbox and the zone id. The safety and the race tests start from it; it needs no AWS
// CLI (the zone is created in the in-process sandbox).
func safetyZone(t *testing.T, blue, green int) (*sandbox.Sandbox, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
	sb := startSandbox(t, sandbox.Config{})
	z, _, err := sb.Store().CreateZone("example.com", "safety", "", false)
	if err != nil {
		t.Fatal(err)
	}
	syncMember(t, sb, "blue", blue)
	syncMember(t, sb, "green", green)
	return sb, z.ID
}

// syncMember runs `crossfade sync` as owner's cluster, whose Service asks for weight w,
// and returns its output.
func syncMember(t *testing.T, sb *sandbox.Sandbox, owner string, w int) string {
	t.Helper()
	ip := map[string]string{"blue": "127.0.0.10", "green": "127.0.0.20"}[owner]
	return mustSync(t, sb, manifests(t, service("app", ip, "hostname", "app.example.com", "set-identifier", owner,
		"aws-weight", strconv.Itoa(w), "ttl", "1")), owner)
}

// safetyPlan writes a plan moving app.example.com from blue to green in the given steps,
// each held pause, with no gates, and the extra spec lines given.
func safetyPlan(t *testing.T, steps, pause string, extra ...string) string {
	t.Helper()
	plan := fmt.Sprintf(`apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: app
spec:
  zone: example.com
  records:
    - name: app.example.com
  from: blue
  to: green
  steps: %s
  pause: %s
`, steps, pause)
	for _, l := range extra {
		plan += "  " + l + "\n"
	}
	return writePlan(t, "app", plan)
}

// mustContain fails the test unless out holds every one of wants.
func mustContain(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, out)
		}
	}
}

// TestCutoverRefusesAnEvenSplit (issue 13, bullet 2): with both members at 0 (Route 53
// answers them evenly), `plan` and `run` refuse to start, saying so and how to set a
// start, and run writes nothing; a plan step of weights 0/0 is refused too. Set as the
// refusal says, the plan goes through. A cutover journaled with a 0/0 start (before such
// a start was refused) and aborted rolls back to all traffic on blue, not onto 0/0.
func TestCutoverRefusesAnEvenSplit(t *testing.T) {
	sb, zoneID := safetyZone(t, 0, 0)
	state := t.TempDir()
	planFile := safetyPlan(t, "[0, 10, 50, 100]", "1s")
	refusal := []string{
		"app.example.com A: every weighted set has weight 0 (blue=0 green=0)",
		"Route 53 answers a group whose weights are all 0 evenly",
		"set a start first: service/default/app: set external-dns.alpha.kubernetes.io/aws-weight to 100 and sync it, so that blue has all the traffic",
	}
	for _, cmd := range []string{"plan", "run"} {
		out, code := runCutover(t, sb, state, cmd, planFile)
		if code != 1 {
			t.Errorf("%s from 0/0 exited %d, want 1:\n%s", cmd, code, out)
		}
		mustContain(t, cmd+" from 0/0", out, refusal...)
		if strings.Contains(out, "cutover app: unfinished") {
			t.Errorf("%s from 0/0 printed a report of a cutover that never started:\n%s", cmd, out)
		}
	}
	if w, authority := sdkWeights(t, sb, zoneID); w["blue"] != 0 || w["green"] != 0 || authority != "" {
		t.Fatalf("after the refused run: weights %v, authority %q; want 0/0 and none", w, authority)
	}

	syncMember(t, sb, "blue", 100)
	if out, code := runCutover(t, sb, state, "plan", planFile); code != 0 {
		t.Errorf("plan from blue=100 exited %d:\n%s", code, out)
	}
	zeroStep := safetyPlan(t, "[0, {weights: {from: 0, to: 0}}, 100]", "1s")
	out, code := runCutover(t, sb, state, "plan", zeroStep)
	if code != 1 {
		t.Errorf("plan with a 0/0 step exited %d, want 1:\n%s", code, out)
	}
	mustContain(t, "plan with a 0/0 step", out, "spec.steps[1]: weights from 0, to 0 leave every weighted set of app.example.com A at 0, which Route 53 answers evenly")

	// A journal from before the refusal: started at 0/0, interrupted at 50/50.
	syncMember(t, sb, "blue", 50)
	syncMember(t, sb, "green", 50)
	legacy := t.TempDir()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	journal := fmt.Sprintf(`{"seq":1,"time":%[1]q,"kind":"start","step":-1,"weights":{"blue":0,"green":0},"ttl":1,"token":"0123456789abcdef"}
{"seq":2,"time":%[1]q,"kind":"step-passed","step":0}
{"seq":3,"time":%[1]q,"kind":"step-passed","step":1}
{"seq":4,"time":%[1]q,"kind":"intent","step":2,"weights":{"blue":50,"green":50}}
`, now)
	writeFile(t, filepath.Join(legacy, "app.journal"), journal)
	if out, code := runCutover(t, sb, legacy, "abort", planFile); code != 0 {
		t.Fatalf("abort of the 0/0 cutover exited %d:\n%s", code, out)
	}
	if w, _ := sdkWeights(t, sb, zoneID); w["blue"] != 100 || w["green"] != 0 {
		t.Errorf("after the rollback: weights %v, want blue=100 green=0 (not the even split it started from)", w)
	}
}

// TestCutoverReleaseComparesWeights (issue 13, bullet 3): after blue → green, a sync of
// blue's unchanged manifest (still aws-weight 100) keeps the zone at 0 and records that
// blue asks for 100. `release` refuses: releasing would send the traffic back to blue at
// its next sync. Changed to 0 and synced, blue agrees and release goes through; with
// --force it goes through at once, saying what it lets happen, which the next sync does.
func TestCutoverReleaseComparesWeights(t *testing.T) {
	for _, force := range []bool{false, true} {
		t.Run(fmt.Sprintf("force=%v", force), func(t *testing.T) {
			sb, zoneID := safetyZone(t, 100, 0)
			state := t.TempDir()
			planFile := safetyPlan(t, "[0, 10, 50, 100]", "1s")
			if out, code := runCutover(t, sb, state, "run", planFile); code != 0 {
				t.Fatalf("run exited %d:\n%s", code, out)
			}
			mustContain(t, "blue's sync after the cutover", syncMember(t, sb, "blue", 100),
				"held by cutover app: the source asks for weight 100, the zone holds 0")
			out, code := runCutover(t, sb, state, "release", planFile)
			if code != 1 {
				t.Fatalf("release exited %d, want 1:\n%s", code, out)
			}
			mustContain(t, "release", out, "release would change traffic",
				"app.example.com A [blue]: its source asks for weight 100, the zone holds 0: service/default/app: set external-dns.alpha.kubernetes.io/aws-weight to 0 and sync it",
				"release --force")
			if w, authority := sdkWeights(t, sb, zoneID); w["blue"] != 0 || w["green"] != 100 || authority == "" {
				t.Fatalf("after the refused release: weights %v, authority %q", w, authority)
			}

			if !force {
				syncMember(t, sb, "blue", 0)
				// green has not synced since the hold: release has no word from it.
				out, code := runCutover(t, sb, state, "release", planFile)
				if code != 1 {
					t.Fatalf("release before green confirmed exited %d, want 1:\n%s", code, out)
				}
				mustContain(t, "release before green confirmed", out, "app.example.com A [green]: owner green", "has not confirmed this hold")
				syncMember(t, sb, "green", 100)
				out, code = runCutover(t, sb, state, "release", planFile)
				if code != 0 {
					t.Fatalf("release once blue asks for 0 exited %d:\n%s", code, out)
				}
				mustContain(t, "release", out, "1 authority records deleted")
				if w, authority := sdkWeights(t, sb, zoneID); w["blue"] != 0 || w["green"] != 100 || authority != "" {
					t.Errorf("after release: weights %v, authority %q", w, authority)
				}
				return
			}
			out, code = runCutover(t, sb, state, "release", planFile, "--force")
			if code != 0 {
				t.Fatalf("release --force exited %d:\n%s", code, out)
			}
			mustContain(t, "release --force", out, "1 authority records deleted",
				"app.example.com A [blue] goes from weight 0 to 100 at its publisher's next sync")
			syncMember(t, sb, "blue", 100)
			if w, _ := sdkWeights(t, sb, zoneID); w["blue"] != 100 {
				t.Errorf("blue after release --force and its sync: %v, want 100 as release said", w)
			}
		})
	}
}

// foreignWriter plays external-dns still running in blue's cluster with an aws-weight
// annotation: every interval it UPSERTs blue's member at weight 100, as external-dns
// writes an update, without looking at ownership or crossfade's authority record.
type foreignWriter struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func startForeignWriter(t *testing.T, sb *sandbox.Sandbox, zoneID string) *foreignWriter {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	fw := &foreignWriter{cancel: cancel}
	client := sdkClient(sb.APIURL())
	fw.wg.Add(1)
	go func() {
		defer fw.wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			_, _ = client.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{
				HostedZoneId: aws.String(zoneID),
				ChangeBatch: &types.ChangeBatch{Changes: []types.Change{{Action: types.ChangeActionUpsert, ResourceRecordSet: &types.ResourceRecordSet{
					Name: aws.String("app.example.com"), Type: types.RRTypeA, SetIdentifier: aws.String("blue"), Weight: aws.Int64(100), TTL: aws.Int64(1),
					ResourceRecords: []types.ResourceRecord{{Value: aws.String("127.0.0.10")}},
				}}}},
			})
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(fw.halt)
	return fw
}

// halt stops the writer and waits until it has.
func (fw *foreignWriter) halt() {
	fw.cancel()
	fw.wg.Wait()
}

// TestCutoverCatchesDrift (issue 13, bullet 4): another writer keeps setting blue's weight
// to 100 while a cutover moves it. The runner catches it at step 2 (it wrote 90), names
// the member, both weights and the likely cause, journals it, and by default pauses;
// once the writer is stopped, `resume` writes the step again and the cutover completes.
// With `onDrift: rollback` it rolls back instead.
func TestCutoverCatchesDrift(t *testing.T) {
	drift := []string{
		"weights drifted: app.example.com A [blue] has weight 100, the cutover wrote 90 (published by owner blue from service/default/app)",
		"written by something other than this cutover while crossfade's authority record held it (which writer is not known; likely: a publisher that ignores the authority record, e.g. external-dns",
	}
	t.Run("pause", func(t *testing.T) {
		sb, zoneID := safetyZone(t, 100, 0)
		state := t.TempDir()
		planFile := safetyPlan(t, "[0, 10, 50, 100]", "1s")
		fw := startForeignWriter(t, sb, zoneID)
		cmd, out := cutoverCmd(t, sb, state, "run", planFile)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		waitJournal(t, state, "app", "drift")
		for _, e := range journalEntries(t, state, "app") {
			if e["kind"] == "drift" {
				detail, _ := e["detail"].(string)
				mustContain(t, "the drift entry", detail, drift...)
			}
			if e["kind"] == "step-passed" && e["step"] == float64(1) {
				t.Errorf("step 2 passed despite the drift: %v", e)
			}
		}
		fw.halt()
		if out, code := runCutover(t, sb, state, "resume", planFile); code != 0 {
			t.Fatalf("resume exited %d:\n%s", code, out)
		}
		if code := waitCmd(t, cmd, out); code != 0 {
			t.Fatalf("run after resume exited %d:\n%s", code, out)
		}
		mustContain(t, "run", out.String(), append(drift, "paused (spec.onDrift: pause)", "cutover app: completed")...)
		if w, _ := sdkWeights(t, sb, zoneID); w["blue"] != 0 || w["green"] != 100 {
			t.Errorf("after the cutover: weights %v", w)
		}
	})
	t.Run("rollback", func(t *testing.T) {
		sb, zoneID := safetyZone(t, 100, 0)
		state := t.TempDir()
		planFile := safetyPlan(t, "[0, 10, 50, 100]", "1s", "onDrift: rollback")
		fw := startForeignWriter(t, sb, zoneID)
		out, code := runCutover(t, sb, state, "run", planFile)
		fw.halt()
		if code != 1 {
			t.Fatalf("run exited %d, want 1 (rolled back):\n%s", code, out)
		}
		mustContain(t, "run", out, append(drift, "cutover app: rolled-back")...)
		if w, _ := sdkWeights(t, sb, zoneID); w["blue"] != 100 || w["green"] != 0 {
			t.Errorf("after the rollback: weights %v", w)
		}
	})
}
