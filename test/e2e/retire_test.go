package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// The test in this file runs docs/eks-blue-green.md's "Retiring blue" step with the
// crossfade binary against the sandbox: after a cutover from eks-blue to eks-green has
// completed and been released, blue's members of shop.example.com and their ownership
// records are deleted by a `crossfade sync` as owner eks-blue whose manifests hold no
// object, scoped by --domain-filter to the name, past the deletion guard with
// --allow-mass-delete. The command reads no cluster, so it is also the clean-up for a blue
// cluster deleted without this step.

// retireIPs are each cluster's load balancer addresses: what an answer for
// shop.example.com names tells which cluster it sends a client to.
var retireIPs = map[string][2]string{
	"eks-blue":  {"127.0.0.10", "fd00::10"},
	"eks-green": {"127.0.0.20", "fd00::20"},
}

// retireService is the Service `shop/shop` of owner's cluster: a weighted member of
// shop.example.com (A and AAAA, TTL 1 s) at weight w, set identifier = owner.
func retireService(owner string, w int) string {
	ips := retireIPs[owner]
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: shop
  namespace: shop
  annotations:
    external-dns.alpha.kubernetes.io/hostname: shop.example.com
    external-dns.alpha.kubernetes.io/set-identifier: %s
    external-dns.alpha.kubernetes.io/aws-weight: "%d"
    external-dns.alpha.kubernetes.io/ttl: "1"
spec:
  type: LoadBalancer
  ports:
  - port: 80
status:
  loadBalancer:
    ingress:
    - ip: %s
    - ip: %q
`, owner, w, ips[0], ips[1])
}

// retireSync runs `crossfade sync` as owner against sb, managing example.com.
func retireSync(t *testing.T, sb *sandbox.Sandbox, owner string, docs ...string) {
	t.Helper()
	mustSync(t, sb, manifests(t, docs...), owner)
}

// zoneSnapshot lists the zone through the SDK: each record set, keyed by name, type and
// set identifier, as the JSON of everything Route 53 holds of it.
func zoneSnapshot(t *testing.T, sb *sandbox.Sandbox, zoneID string) map[string]string {
	t.Helper()
	out, err := sdkClient(sb.APIURL()).ListResourceRecordSets(context.Background(),
		&route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(zoneID), MaxItems: aws.Int32(300)})
	if err != nil {
		t.Fatalf("list zone %s: %v", zoneID, err)
	}
	if out.IsTruncated {
		t.Fatalf("zone %s holds more than 300 record sets: this test reads one page", zoneID)
	}
	sets := map[string]string{}
	for _, s := range out.ResourceRecordSets {
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		sets[setKey(aws.ToString(s.Name), string(s.Type), aws.ToString(s.SetIdentifier))] = string(data)
	}
	return sets
}

// setKey names a record set as "name type [set identifier]".
func setKey(name, typ, setID string) string {
	return fmt.Sprintf("%s %s [%s]", name, typ, setID)
}

// diffSnapshots lists, sorted, the sets of want that got lost or changed in got and the
// sets of got that want lacks.
func diffSnapshots(want, got map[string]string) []string {
	var diff []string
	for k, v := range want {
		switch g, ok := got[k]; {
		case !ok:
			diff = append(diff, "gone: "+k)
		case g != v:
			diff = append(diff, fmt.Sprintf("changed: %s: %s, was %s", k, g, v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			diff = append(diff, fmt.Sprintf("new: %s: %s", k, v))
		}
	}
	slices.Sort(diff)
	return diff
}

// answerProbe asks the sandbox's DNS server for name's A and AAAA in turn, back to back,
// until halted, and keeps every answer that is not exactly green's address.
type answerProbe struct {
	queryLoop
	wrong []string
}

// startAnswerProbe starts the probe; the test's cleanup halts it.
func startAnswerProbe(t *testing.T, sb *sandbox.Sandbox, name string) *answerProbe {
	t.Helper()
	p := &answerProbe{}
	green := retireIPs["eks-green"]
	c := &dns.Client{Timeout: 2 * time.Second}
	p.start(t, 500*time.Microsecond, func(i int) {
		qtype, want := dns.TypeA, green[0]
		if i%2 == 1 {
			qtype, want = dns.TypeAAAA, green[1]
		}
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(name), qtype)
		r, _, err := c.Exchange(m, sb.DNSAddr())
		got := ""
		switch {
		case err != nil:
			got = err.Error()
		case r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1:
			got = fmt.Sprintf("rcode %s, %d answers %v", dns.RcodeToString[r.Rcode], len(r.Answer), r.Answer)
		default:
			switch rr := r.Answer[0].(type) {
			case *dns.A:
				got = rr.A.String()
			case *dns.AAAA:
				got = rr.AAAA.String()
			default:
				got = rr.String()
			}
		}
		if got != want {
			p.mu.Lock()
			p.wrong = append(p.wrong, fmt.Sprintf("%s %s: %s, want %s", name, dns.TypeToString[qtype], got, want))
			p.mu.Unlock()
		}
	})
	return p
}

// TestRetireBlue (issue 28): the runbook's "Retiring blue". Blue and green publish their
// weighted members of shop.example.com (A and AAAA) under their own owner ids, beside
// records nobody publishes, a record of another owner, a user's TXT at the same name and
// one more name blue publishes. A cutover moves shop.example.com to green and is
// released. Then, with a DNS probe asking throughout:
//
//   - the dry run of the retire sync is refused by the deletion guard, naming blue's two
//     members, and changes nothing;
//   - the dry run with --allow-mass-delete prints the DELETE of exactly blue's members and
//     their ownership records, and changes nothing;
//   - the run with --allow-mass-delete deletes exactly those four sets: every other set
//     of the zone is as it was, byte for byte; a second run changes nothing.
//
// Every answer, throughout, is green's.
func TestRetireBlue(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
	sb := startSandbox(t, sandbox.Config{})
	client := sdkClient(sb.APIURL())
	ctx := context.Background()
	zone, err := client.CreateHostedZone(ctx, &route53.CreateHostedZoneInput{Name: aws.String("example.com"), CallerReference: aws.String("retire")})
	if err != nil {
		t.Fatal(err)
	}
	zoneID := strings.TrimPrefix(aws.ToString(zone.HostedZone.Id), "/hostedzone/")
	simple := func(name string, typ types.RRType, values ...string) types.Change {
		rrs := make([]types.ResourceRecord, len(values))
		for i, v := range values {
			rrs[i] = types.ResourceRecord{Value: aws.String(v)}
		}
		return types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: &types.ResourceRecordSet{
			Name: aws.String(name), Type: typ, TTL: aws.Int64(300), ResourceRecords: rrs}}
	}
	// What nobody publishes: a user's records, one of them a TXT at the very name blue retires from.
	if _, err := client.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{HostedZoneId: aws.String(zoneID),
		ChangeBatch: &types.ChangeBatch{Changes: []types.Change{
			simple("www.example.com", types.RRTypeA, "192.0.2.1"),
			simple("example.com", types.RRTypeMx, "10 mail.example.com."),
			simple("example.com", types.RRTypeTxt, `"v=spf1 -all"`),
			simple("shop.example.com", types.RRTypeTxt, `"site-verification=retire-test"`),
		}}}); err != nil {
		t.Fatal(err)
	}
	retireSync(t, sb, "eks-blue", retireService("eks-blue", 100),
		service("status", "127.0.0.11", "hostname", "status.example.com"))
	retireSync(t, sb, "eks-green", retireService("eks-green", 0))
	retireSync(t, sb, "eks-other", service("api", "127.0.0.12", "hostname", "api.example.com"))

	// The cutover, run to its end and released as the runbook says: both sources set to
	// the weights the zone holds (blue 0, green 100) and synced, then `release`.
	state := t.TempDir()
	planFile := writePlan(t, "shop", `apiVersion: crossfade.io/v1alpha1
kind: Cutover
metadata:
  name: shop
spec:
  zone: example.com
  records:
    - name: shop.example.com
    - name: shop.example.com
      type: AAAA
  from: eks-blue
  to: eks-green
  steps: [0, 50, 100]
  pause: 1s
`)
	if out, code := runCutover(t, sb, state, "run", planFile); code != 0 {
		t.Fatalf("cutover run exited %d:\n%s", code, out)
	}
	retireSync(t, sb, "eks-blue", retireService("eks-blue", 0),
		service("status", "127.0.0.11", "hostname", "status.example.com"))
	retireSync(t, sb, "eks-green", retireService("eks-green", 100))
	if out, code := runCutover(t, sb, state, "release", planFile); code != 0 {
		t.Fatalf("cutover release exited %d:\n%s", code, out)
	}

	before := zoneSnapshot(t, sb, zoneID)
	blueSets := []string{
		setKey("shop.example.com.", "A", "eks-blue"),
		setKey("shop.example.com.", "AAAA", "eks-blue"),
		setKey("a-shop.example.com.", "TXT", "eks-blue"),
		setKey("aaaa-shop.example.com.", "TXT", "eks-blue"),
	}
	for _, k := range blueSets {
		if _, ok := before[k]; !ok {
			t.Fatalf("before the retire the zone lacks %s:\n%s", k, strings.Join(slices.Sorted(maps.Keys(before)), "\n"))
		}
	}
	for _, k := range []string{setKey("_crossfade-weights.shop.example.com.", "TXT", ""), setKey("_crossfade-deletion-guard.example.com.", "TXT", "")} {
		if _, ok := before[k]; ok {
			t.Fatalf("before the retire the zone holds %s", k)
		}
	}

	probe := startAnswerProbe(t, sb, "shop.example.com")
	probe.waitQueries(t, 50)

	// The runbook's retire step: a manifests file that holds no object, as blue's owner,
	// scoped to the name.
	retire := filepath.Join(t.TempDir(), "retire-blue.yaml")
	writeFile(t, retire, "# eks-blue is retired: none of its objects is published any more\n")
	retireArgs := func(extra ...string) []string {
		return append([]string{"sync", "--manifests", retire, "--txt-owner-id", "eks-blue", "--domain-filter", "shop.example.com",
			"--aws-endpoint", sb.APIURL(), "--log-level", "warn"}, extra...)
	}

	r := runCrossfade(t, retireArgs("--dry-run")...)
	if r.exit != 1 {
		t.Fatalf("the retire's dry run without --allow-mass-delete exited %d, want 1 (the deletion guard):\n%s", r.exit, r.out)
	}
	mustContain(t, "the retire's dry run", r.out,
		"held by the deletion guard (not deleted): 2",
		"the deletion guard would hold 2 deletions of the 2 records owner eks-blue owned there",
		"    shop.example.com A [eks-blue]",
		"    shop.example.com AAAA [eks-blue]",
		"dry run: nothing was sent",
		"crossfade: the deletion guard would hold 2 deletions (zone example.com ("+zoneID+"): 2 of the 2 records of owner eks-blue): a sync would delete nothing there",
		"if the sources are right, run again with --allow-mass-delete")
	if diff := diffSnapshots(before, zoneSnapshot(t, sb, zoneID)); len(diff) > 0 {
		t.Fatalf("the refused dry run changed the zone:\n%s", strings.Join(diff, "\n"))
	}
	probe.waitQueries(t, 50)

	r = runCrossfade(t, retireArgs("--dry-run", "--allow-mass-delete")...)
	if r.exit != 0 {
		t.Fatalf("the retire's dry run with --allow-mass-delete exited %d:\n%s", r.exit, r.out)
	}
	mustContain(t, "the retire's dry run with --allow-mass-delete", r.out,
		"0 create, 0 update, 2 delete, 0 replace", "dry run: nothing was sent")
	if got := strings.Count(r.out, `"Action": "DELETE"`); got != 4 {
		t.Errorf("the retire's dry run prints %d DELETEs, want 4 (blue's A and AAAA and their ownership records):\n%s", got, r.out)
	}
	if strings.Contains(r.out, `"Action": "CREATE"`) || strings.Contains(r.out, "eks-green") || strings.Contains(r.out, "status.example.com") {
		t.Errorf("the retire's dry run touches something beside blue's members of shop.example.com:\n%s", r.out)
	}
	if diff := diffSnapshots(before, zoneSnapshot(t, sb, zoneID)); len(diff) > 0 {
		t.Fatalf("the dry run changed the zone:\n%s", strings.Join(diff, "\n"))
	}
	probe.waitQueries(t, 50)

	r = runCrossfade(t, retireArgs("--allow-mass-delete")...)
	if r.exit != 0 {
		t.Fatalf("the retire exited %d:\n%s", r.exit, r.out)
	}
	mustContain(t, "the retire", r.out, "0 create, 0 update, 2 delete, 0 replace, 0 held by policy, 0 conflicts")
	probe.waitQueries(t, 50)

	r = runCrossfade(t, retireArgs("--allow-mass-delete")...)
	if r.exit != 0 {
		t.Fatalf("the retire, run again, exited %d:\n%s", r.exit, r.out)
	}
	mustContain(t, "the retire, run again", r.out, "0 create, 0 update, 0 delete, 0 replace")
	probe.waitQueries(t, 50)
	probe.halt()

	want := map[string]string{}
	for k, v := range before {
		if !slices.Contains(blueSets, k) {
			want[k] = v
		}
	}
	if diff := diffSnapshots(want, zoneSnapshot(t, sb, zoneID)); len(diff) > 0 {
		t.Errorf("after the retire the zone differs from before it otherwise than by blue's four sets of shop.example.com:\n%s", strings.Join(diff, "\n"))
	}
	if len(probe.wrong) > 0 {
		t.Errorf("%d of %d answers for shop.example.com during the retire were not green's; the first: %s",
			len(probe.wrong), probe.queries, strings.Join(probe.wrong[:min(5, len(probe.wrong))], "; "))
	}
}
