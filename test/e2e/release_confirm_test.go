package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// TestHeldMemberSurvivesAnEmptySync (issue 25, bullet 6): during a cutover, `crossfade
// sync` of a manifests directory without objects (an empty file: an empty directory is
// refused) as blue keeps blue's member and its ownership
// record (the authority record holds the name), says it is held by the cutover, and
// records that blue's source asks for it no more.
func TestHeldMemberSurvivesAnEmptySync(t *testing.T) {
	sb, zoneID, _, _ := heldGreen(t)
	out := mustSync(t, sb, manifests(t, ""), "blue")
	mustContain(t, "blue's empty sync during the hold", out,
		"0 delete", "1 held by policy",
		"app.example.com A [blue]: held by cutover app: no source asks for this member any more (weight 0 in the zone, published by service/default/app)")
	w, authority := sdkWeights(t, sb, zoneID)
	if _, ok := w["blue"]; !ok || w["green"] != 100 || authority == "" {
		t.Fatalf("after blue's empty sync: weights %v, authority %q; want blue's member kept", w, authority)
	}
	txt := ownershipTXT(t, sb, zoneID, "blue")
	if !strings.Contains(txt, "external-dns/crossfade-wants-weight=none") || !strings.Contains(txt, "external-dns/crossfade-confirms-hold=") ||
		!strings.Contains(txt, "external-dns/owner=blue") {
		t.Errorf("blue's ownership record %q, want it kept, confirming the hold and wanting none", txt)
	}
}

// TestHeldMemberComesBackAtZero: after blue → green (the hold stays until release),
// another writer deletes blue's member; blue's sync, whose source still asks for 100,
// creates it again at weight 0, not 100 (which would send half the answers back to blue),
// says it is held by the cutover and records the weight blue's source asks for. A second
// sync changes nothing.
func TestHeldMemberComesBackAtZero(t *testing.T) {
	sb, zoneID, _, _ := heldGreen(t)
	client := sdkClient(sb.APIURL())
	ctx := context.Background()
	sets, err := client.ListResourceRecordSets(ctx, &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(zoneID)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sets.ResourceRecordSets {
		if aws.ToString(s.Name) == "app.example.com." && s.Type == types.RRTypeA && aws.ToString(s.SetIdentifier) == "blue" {
			if _, err := client.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{HostedZoneId: aws.String(zoneID),
				ChangeBatch: &types.ChangeBatch{Changes: []types.Change{{Action: types.ChangeActionDelete, ResourceRecordSet: &s}}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if w, _ := sdkWeights(t, sb, zoneID); len(w) != 1 || w["green"] != 100 {
		t.Fatalf("after deleting blue's member: weights %v, want green alone", w)
	}

	out := syncMember(t, sb, "blue", 100)
	mustContain(t, "blue's sync of its deleted member", out, "1 create",
		"app.example.com A [blue]: held by cutover app: the member is not in the zone and is created at weight 0 while the cutover holds the weights; the source asks for 100")
	w, authority := sdkWeights(t, sb, zoneID)
	if w["blue"] != 0 || w["green"] != 100 || len(w) != 2 || authority == "" {
		t.Fatalf("after blue's sync: weights %v, authority %q; want blue=0 green=100 under the hold", w, authority)
	}
	if txt := ownershipTXT(t, sb, zoneID, "blue"); !strings.Contains(txt, "external-dns/crossfade-wants-weight=100") || !strings.Contains(txt, "external-dns/crossfade-confirms-hold=") {
		t.Errorf("blue's ownership record %q, want it to confirm the hold and record weight 100", txt)
	}
	out = syncMember(t, sb, "blue", 100)
	mustContain(t, "blue's second sync", out, "0 create", "0 update")
	if w, _ := sdkWeights(t, sb, zoneID); w["blue"] != 0 || w["green"] != 100 {
		t.Errorf("after blue's second sync: weights %v, want blue=0 green=100", w)
	}
}

// TestReleaseWaitsForEveryPublisher (issue 25, bullet 7): after blue → green, no
// publisher has synced since the hold began: `release` refuses (exit 1), naming each
// member, its owner and how to get a confirmation, and keeps the authority record. Once
// green confirms and blue's empty sync says its member would go, release refuses that;
// --force releases, saying blue's member goes at blue's next sync.
func TestReleaseWaitsForEveryPublisher(t *testing.T) {
	sb, zoneID, state, planFile := heldGreen(t)
	out, code := runCutover(t, sb, state, "release", planFile)
	if code != 1 {
		t.Fatalf("release with no confirmation exited %d, want 1:\n%s", code, out)
	}
	mustContain(t, "release with no confirmation", out,
		"cutover app: release refused: no confirmation since the hold began from the publishers of these sets",
		"app.example.com A [blue]: owner blue (service/default/app) has not confirmed this hold",
		"app.example.com A [green]: owner green (service/default/app) has not confirmed this hold",
		"run `crossfade sync` for that cluster, or wait for its controller: it confirms within 5 minutes; `crossfade cutover release --wait 10m` waits; `--force` releases without")
	if _, authority := sdkWeights(t, sb, zoneID); authority == "" {
		t.Fatal("a refused release deleted the authority record")
	}

	syncMember(t, sb, "green", 100)
	mustSync(t, sb, manifests(t, ""), "blue")
	out, code = runCutover(t, sb, state, "release", planFile)
	if code != 1 {
		t.Fatalf("release with blue's member going exited %d, want 1:\n%s", code, out)
	}
	mustContain(t, "release with blue's member going", out, "release would change traffic",
		"app.example.com A [blue]: no source asks for it any more, the zone holds weight 0")
	if strings.Contains(out, "has not confirmed") {
		t.Errorf("both publishers confirmed, yet release says one did not:\n%s", out)
	}
	out, code = runCutover(t, sb, state, "release", planFile, "--force")
	if code != 0 {
		t.Fatalf("release --force exited %d:\n%s", code, out)
	}
	mustContain(t, "release --force", out, "1 authority records deleted",
		"app.example.com A [blue] (weight 0) goes away at its publisher's next sync")
	// Blue's member is all of blue's records: deleting it is meant here, past the guard.
	mustSync(t, sb, manifests(t, ""), "blue", "--allow-mass-delete")
	if w, _ := sdkWeights(t, sb, zoneID); len(w) != 1 || w["green"] != 100 {
		t.Errorf("after release --force and blue's empty sync: weights %v, want green alone", w)
	}
}

// heldGreen runs the cutover app from blue (100) to green (0 → 50 → 100) to its end,
// which keeps the weights held until a release: the sandbox, the zone's id, the state
// directory and the plan file.
func heldGreen(t *testing.T) (sb *sandbox.Sandbox, zoneID, state, planFile string) {
	t.Helper()
	sb, zoneID = safetyZone(t, 100, 0)
	state = t.TempDir()
	planFile = safetyPlan(t, "[0, 50, 100]", "1s")
	if out, code := runCutover(t, sb, state, "run", planFile); code != 0 {
		t.Fatalf("run exited %d:\n%s", code, out)
	}
	return sb, zoneID, state, planFile
}

// ownershipTXT returns the value of owner's ownership record of app.example.com A, read
// through the SDK.
func ownershipTXT(t *testing.T, sb *sandbox.Sandbox, zoneID, owner string) string {
	t.Helper()
	out, err := sdkClient(sb.APIURL()).ListResourceRecordSets(context.Background(), &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(zoneID)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range out.ResourceRecordSets {
		if aws.ToString(s.Name) == "a-app.example.com." && s.Type == "TXT" && aws.ToString(s.SetIdentifier) == owner && len(s.ResourceRecords) == 1 {
			return aws.ToString(s.ResourceRecords[0].Value)
		}
	}
	return ""
}
