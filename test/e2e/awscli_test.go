package e2e

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/sandbox"
)

func rrsetJSON(name, typ, extra string, values ...string) string {
	var recs []string
	for _, v := range values {
		recs = append(recs, fmt.Sprintf(`{"Value": %q}`, v))
	}
	return fmt.Sprintf(`{"Name": %q, "Type": %q, "TTL": 60, %s"ResourceRecords": [%s]}`, name, typ, extra, strings.Join(recs, ","))
}

func batch(changes ...string) string {
	return `{"Changes": [` + strings.Join(changes, ",") + `]}`
}

func change(action, set string) string {
	return fmt.Sprintf(`{"Action": %q, "ResourceRecordSet": %s}`, action, set)
}

// TestAWSCLI drives the sandbox with the real AWS CLI: zone, JSON change batch, paged
// listing, and each Route 53 error a client must be able to tell apart.
func TestAWSCLI(t *testing.T) {
	sb := startSandbox(t, sandbox.Config{})
	aws := newCLI(t, sb)
	zone := aws.createZone("cli.example.com")

	blue := rrsetJSON("www.cli.example.com", "A", `"SetIdentifier": "blue", "Weight": 1, `, "127.0.0.10")
	green := rrsetJSON("www.cli.example.com", "A", `"SetIdentifier": "green", "Weight": 3, `, "127.0.0.20")
	var applied struct{ ChangeInfo struct{ Id, Status string } }
	aws.must(&applied, "route53", "change-resource-record-sets", "--hosted-zone-id", zone,
		"--change-batch", aws.batchFile(batch(change("CREATE", blue), change("CREATE", green))))
	if applied.ChangeInfo.Status != "INSYNC" || !strings.HasPrefix(applied.ChangeInfo.Id, "/change/C") {
		t.Fatalf("change info %+v", applied.ChangeInfo)
	}
	var got struct{ ChangeInfo struct{ Status string } }
	aws.must(&got, "route53", "get-change", "--id", applied.ChangeInfo.Id)
	if got.ChangeInfo.Status != "INSYNC" {
		t.Fatalf("get-change status %s", got.ChangeInfo.Status)
	}

	// Enough records for several pages; the CLI follows NextRecord* itself.
	var many []string
	for i := range 25 {
		many = append(many, change("CREATE", rrsetJSON(fmt.Sprintf("h%02d.cli.example.com", i), "TXT", "", `"v=1"`)))
	}
	aws.must(nil, "route53", "change-resource-record-sets", "--hosted-zone-id", zone, "--change-batch", aws.batchFile(batch(many...)))
	var listed struct {
		ResourceRecordSets []struct{ Name, Type, SetIdentifier string }
	}
	before := apiCalls(t, sb, "ListResourceRecordSets")
	aws.must(&listed, "route53", "list-resource-record-sets", "--hosted-zone-id", zone, "--page-size", "4")
	if n := len(listed.ResourceRecordSets); n != 29 {
		t.Fatalf("listed %d sets, want 29 (NS, SOA, 25 TXT, 2 weighted A)", n)
	}
	if calls := apiCalls(t, sb, "ListResourceRecordSets") - before; calls != 8 {
		t.Fatalf("the CLI made %v ListResourceRecordSets calls for 29 sets in pages of 4, want 8", calls)
	}
	if first := listed.ResourceRecordSets[0]; first.Name != "cli.example.com." || first.Type != "NS" {
		t.Fatalf("first set %+v, want the apex NS", first)
	}

	// Each error, as the CLI prints it.
	simple := rrsetJSON("s.cli.example.com", "A", "", "127.0.0.1")
	aws.must(nil, "route53", "change-resource-record-sets", "--hosted-zone-id", zone, "--change-batch", aws.batchFile(batch(change("CREATE", simple))))
	cname := rrsetJSON("c.cli.example.com", "CNAME", "", "target.example.net.")
	aws.must(nil, "route53", "change-resource-record-sets", "--hosted-zone-id", zone, "--change-batch", aws.batchFile(batch(change("CREATE", cname))))
	var tooMany []string
	for i := range 1001 {
		tooMany = append(tooMany, change("CREATE", rrsetJSON(fmt.Sprintf("m%d.cli.example.com", i), "A", "", "127.0.0.1")))
	}
	for _, tc := range []struct {
		name, zone, batch, want string
	}{
		{"already exists", zone, batch(change("CREATE", simple)),
			"(InvalidChangeBatch) when calling the ChangeResourceRecordSets operation: [Tried to create resource record set [name='s.cli.example.com.', type='A'] but it already exists]"},
		{"not found", zone, batch(change("DELETE", rrsetJSON("nope.cli.example.com", "A", "", "127.0.0.1"))),
			"[Tried to delete resource record set [name='nope.cli.example.com.', type='A'] but it was not found]"},
		{"values differ", zone, batch(change("DELETE", rrsetJSON("s.cli.example.com", "A", "", "127.0.0.2"))),
			"[Tried to delete resource record set [name='s.cli.example.com.', type='A'] but the values provided do not match the current values]"},
		{"weighted beside simple", zone, batch(change("CREATE", rrsetJSON("s.cli.example.com", "A", `"SetIdentifier": "blue", "Weight": 1, `, "127.0.0.1"))),
			"[RRSet with DNS name s.cli.example.com., type A, SetIdentifier blue cannot be created as a non-weighted set exists with the same name and type.]"},
		{"simple beside weighted", zone, batch(change("UPSERT", rrsetJSON("www.cli.example.com", "A", "", "127.0.0.1"))),
			"[RRSet with DNS name www.cli.example.com., type A cannot be created as other RRSets exist with the same name and type.]"},
		{"CNAME beside data", zone, batch(change("CREATE", rrsetJSON("s.cli.example.com", "CNAME", "", "x.example.net."))),
			"RRSet of type CNAME with DNS name s.cli.example.com. is not permitted as it conflicts with other records with the same DNS name in zone cli.example.com."},
		{"data beside CNAME", zone, batch(change("CREATE", rrsetJSON("c.cli.example.com", "TXT", "", `"x"`))),
			"RRSet of type TXT with DNS name c.cli.example.com. is not permitted because a conflicting RRSet of type CNAME with the same DNS name already exists in zone cli.example.com."},
		{"set identifier without weight", zone, batch(change("CREATE", rrsetJSON("n.cli.example.com", "A", `"SetIdentifier": "blue", `, "127.0.0.1"))),
			"(InvalidInput) when calling the ChangeResourceRecordSets operation: Invalid request: Expected exactly one of [Weight, Region, Failover, GeoLocation, MultiValueAnswer, GeoProximityLocation, or CidrRoutingConfig], but found none in Change with [Action=CREATE, Name=n.cli.example.com., Type=A, SetIdentifier=blue]"},
		{"weight without set identifier", zone, batch(change("CREATE", rrsetJSON("n.cli.example.com", "A", `"Weight": 1, `, "127.0.0.1"))),
			"Invalid request: Missing field 'SetIdentifier' in Change with [Action=CREATE, Name=n.cli.example.com., Type=A, SetIdentifier=null]"},
		{"weight above 255", zone, batch(change("CREATE", rrsetJSON("n.cli.example.com", "A", `"SetIdentifier": "b", "Weight": 256, `, "127.0.0.1"))),
			"Member must have value less than or equal to 255"},
		{"more than 1,000 records", zone, batch(tooMany...), "Number of records limit of 1000 exceeded"},
		{"unknown zone", "ZNOSUCHZONE", batch(change("CREATE", simple)),
			"(NoSuchHostedZone) when calling the ChangeResourceRecordSets operation: No hosted zone found with ID: ZNOSUCHZONE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := aws.run("route53", "change-resource-record-sets", "--hosted-zone-id", tc.zone, "--change-batch", aws.batchFile(tc.batch))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("aws error:\n%v\nwant it to contain\n%s", err, tc.want)
			}
		})
	}
	// None of the refused batches changed anything.
	aws.must(&listed, "route53", "list-resource-record-sets", "--hosted-zone-id", zone)
	if n := len(listed.ResourceRecordSets); n != 31 {
		t.Fatalf("after refused batches the zone holds %d sets, want 31", n)
	}

	// Tags and zone deletion.
	aws.must(nil, "route53", "change-tags-for-resource", "--resource-type", "hostedzone", "--resource-id", zone, "--add-tags", "Key=team,Value=sre")
	var tags struct {
		ResourceTagSet struct{ Tags []struct{ Key, Value string } }
	}
	aws.must(&tags, "route53", "list-tags-for-resource", "--resource-type", "hostedzone", "--resource-id", zone)
	if len(tags.ResourceTagSet.Tags) != 1 || tags.ResourceTagSet.Tags[0].Value != "sre" {
		t.Fatalf("tags %+v", tags)
	}
	if _, err := aws.run("route53", "delete-hosted-zone", "--id", zone); err == nil || !strings.Contains(err.Error(), "HostedZoneNotEmpty") {
		t.Fatalf("delete non-empty zone: %v", err)
	}
	empty := aws.createZone("empty.example.com")
	aws.must(nil, "route53", "delete-hosted-zone", "--id", empty)
	var zones struct{ HostedZones []struct{ Name string } }
	aws.must(&zones, "route53", "list-hosted-zones-by-name")
	if len(zones.HostedZones) != 1 || zones.HostedZones[0].Name != "cli.example.com." {
		t.Fatalf("zones after delete: %+v", zones)
	}
}

// apiCalls reads the sandbox's call counter for one operation, summed over results.
func apiCalls(t *testing.T, sb *sandbox.Sandbox, op string) float64 {
	t.Helper()
	resp, err := http.Get(sb.APIURL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	re := regexp.MustCompile(`(?m)^crossfade_sandbox_api_calls_total\{operation="` + op + `",result="[^"]+"\} (\d+)`)
	total := 0.0
	for _, m := range re.FindAllStringSubmatch(string(body), -1) {
		var v float64
		fmt.Sscan(m[1], &v)
		total += v
	}
	return total
}

// TestDigAnswers checks the DNS side with dig: weighted, NXDOMAIN vs NODATA with the SOA,
// TCP fallback for a large answer, and a change visible as soon as the API returns.
func TestDigAnswers(t *testing.T) {
	sb := startSandbox(t, sandbox.Config{})
	aws := newCLI(t, sb)
	zone := aws.createZone("dig.example.com")
	var txt []string
	for i := range 40 {
		txt = append(txt, fmt.Sprintf(`"%s-%02d"`, strings.Repeat("x", 40), i))
	}
	aws.must(nil, "route53", "change-resource-record-sets", "--hosted-zone-id", zone, "--change-batch", aws.batchFile(batch(
		change("CREATE", rrsetJSON("w.dig.example.com", "A", `"SetIdentifier": "blue", "Weight": 0, `, "127.0.0.10")),
		change("CREATE", rrsetJSON("w.dig.example.com", "A", `"SetIdentifier": "green", "Weight": 5, `, "127.0.0.20")),
		change("CREATE", rrsetJSON("a.b.dig.example.com", "A", "", "127.0.0.1")),
		change("CREATE", rrsetJSON("big.dig.example.com", "TXT", "", txt...)),
	)))
	for range 20 {
		if got := strings.TrimSpace(dig(t, sb, "w.dig.example.com", "A", "+short")); got != "127.0.0.20" {
			t.Fatalf("weight 0:5 answered %q, want only the green member", got)
		}
	}
	if out := dig(t, sb, "nope.dig.example.com", "A"); !strings.Contains(out, "status: NXDOMAIN") || !regexp.MustCompile(`(?m)^dig\.example\.com\.\s+\d+\s+IN\s+SOA`).MatchString(out) {
		t.Fatalf("NXDOMAIN with SOA expected:\n%s", out)
	}
	if out := dig(t, sb, "b.dig.example.com", "A"); !strings.Contains(out, "status: NOERROR") || !strings.Contains(out, "ANSWER: 0") || !strings.Contains(out, "SOA") {
		t.Fatalf("empty non-terminal must be NODATA with SOA:\n%s", out)
	}
	if out := dig(t, sb, "a.b.dig.example.com", "AAAA"); !strings.Contains(out, "status: NOERROR") || !strings.Contains(out, "ANSWER: 0") {
		t.Fatalf("NODATA expected:\n%s", out)
	}
	if out := dig(t, sb, "a.b.dig.example.com", "A"); !strings.Contains(out, "flags: qr aa") || !regexp.MustCompile(`a\.b\.dig\.example\.com\.\s+60\s+IN\s+A\s+127\.0\.0\.1`).MatchString(out) {
		t.Fatalf("authoritative answer with TTL 60 expected:\n%s", out)
	}
	// Over UDP without EDNS the 40 TXT strings do not fit: TC set; dig retries over TCP.
	if out := dig(t, sb, "big.dig.example.com", "TXT", "+noedns", "+ignore"); !strings.Contains(out, " tc") {
		t.Fatalf("TC bit expected on a 512-byte UDP answer:\n%s", out)
	}
	if out := dig(t, sb, "big.dig.example.com", "TXT", "+noedns"); !strings.Contains(out, "ANSWER: 40") {
		t.Fatalf("full answer over TCP fallback expected:\n%s", out)
	}
	// A change is answered as soon as the API call returns.
	aws.must(nil, "route53", "change-resource-record-sets", "--hosted-zone-id", zone, "--change-batch", aws.batchFile(batch(
		change("UPSERT", rrsetJSON("w.dig.example.com", "A", `"SetIdentifier": "blue", "Weight": 5, `, "127.0.0.10")),
		change("UPSERT", rrsetJSON("w.dig.example.com", "A", `"SetIdentifier": "green", "Weight": 0, `, "127.0.0.20")),
	)))
	if got := strings.TrimSpace(dig(t, sb, "w.dig.example.com", "A", "+short")); got != "127.0.0.10" {
		t.Fatalf("right after the weight flip dig answered %q, want the blue member", got)
	}
}
