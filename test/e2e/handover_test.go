package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// The tests in this file run `crossfade handover` as a separate process against an
// in-process sandbox, through a recording proxy that sees every change batch it sends,
// on a zone that `crossfade sync` wrote for three owners and the AWS CLI completed.

// handoverManifests are what each of three clusters publishes into example.com: cluster-a
// a weighted member of app, a simple web and api, and edge as an alias A to lb; cluster-b
// and cluster-c their members of app, cluster-b also shop.
func handoverManifests(t *testing.T) map[string]string {
	t.Helper()
	member := func(owner, ip string) string {
		return service("app", ip, "hostname", "app.example.com", "set-identifier", owner, "aws-weight", "1", "ttl", "60")
	}
	return map[string]string{
		"cluster-a": manifests(t, member("cluster-a", "127.0.0.10"),
			service("web", "127.0.0.11", "hostname", "web.example.com", "ttl", "60"),
			service("api", "127.0.0.12", "hostname", "api.example.com", "ttl", "60"), edgeService),
		"cluster-b": manifests(t, member("cluster-b", "127.0.0.20"), service("shop", "127.0.0.21", "hostname", "shop.example.com", "ttl", "60")),
		"cluster-c": manifests(t, member("cluster-c", "127.0.0.30")),
	}
}

// handoverZone is external-dns issue 5993's zone: three owners share example.com, each
// synced by crossfade from its manifests, and the AWS CLI adds what other writers leave
// behind: a legacy same-name ownership record beside cluster-a's web (crossfade itself
// writes cluster-a's alias A's ownership in both forms, "cname-" and "a-"), cluster-b's record owned through
// the legacy form alone, records with no ownership record (lb, the alias's target; manual),
// and a record whose TXT has another heritage but names cluster-a.
func handoverZone(t *testing.T) (*sandbox.Sandbox, *cli, string, map[string]string) {
	t.Helper()
	sb, aws, zone := exampleZone(t,
		rrsetJSON("lb.example.com", "A", "", "127.0.0.50"),
		rrsetJSON("manual.example.com", "A", "", "127.0.0.51"),
		rrsetJSON("old.example.com", "A", "", "127.0.0.52"),
		rrsetJSON("old.example.com", "TXT", "", payload("cluster-b", "service/default/old")),
		rrsetJSON("foreign.example.com", "A", "", "127.0.0.53"),
		rrsetJSON("a-foreign.example.com", "TXT", "", `"heritage=other-tool,external-dns/owner=cluster-a,external-dns/resource=service/default/foreign"`),
		rrsetJSON("example.com", "TXT", "", `"v=spf1 -all"`),
	)
	dirs := handoverManifests(t)
	for _, owner := range []string{"cluster-a", "cluster-b", "cluster-c"} {
		// cluster-b's first sync deletes old, the one record it owned, which no manifest
		// asks for: meant here, past the deletion guard.
		mustSync(t, sb, dirs[owner], owner, "--allow-mass-delete")
	}
	aws.must(nil, "route53", "change-resource-record-sets", "--hosted-zone-id", zone, "--change-batch", aws.batchFile(batch(
		change("CREATE", rrsetJSON("web.example.com", "TXT", "", payload("cluster-a", "service/default/web"))),
	)))
	return sb, aws, zone, dirs
}

// aTXT are cluster-a's ownership records in handoverZone, by "name type [set]".
var aTXT = []string{
	"a-api.example.com. TXT",
	"a-app.example.com. TXT [cluster-a]",
	"a-edge.example.com. TXT",
	"a-web.example.com. TXT",
	"cname-edge.example.com. TXT",
	"web.example.com. TXT",
}

// changeProxy stands between crossfade and the sandbox: it keeps every
// ChangeResourceRecordSets request, and runs before (once) ahead of forwarding the first,
// as another writer acting between crossfade's read and its write.
type changeProxy struct {
	url    string
	mu     sync.Mutex
	bodies [][]byte
	before func()
}

func startChangeProxy(t *testing.T, sb *sandbox.Sandbox) *changeProxy {
	t.Helper()
	target, err := url.Parse(sb.APIURL())
	if err != nil {
		t.Fatal(err)
	}
	p := &changeProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/rrset") {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			p.mu.Lock()
			p.bodies = append(p.bodies, body)
			before := p.before
			p.before = nil
			p.mu.Unlock()
			if before != nil {
				before()
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// requests returns the change requests sent so far, each as its changes "ACTION name type
// [set]" with the characters of their values, and forgets them.
func (p *changeProxy) requests(t *testing.T) []sentBatch {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []sentBatch
	for _, body := range p.bodies {
		var req struct {
			Changes []struct {
				Action string
				Set    struct {
					Name, Type, SetIdentifier string
					Values                    []string `xml:"ResourceRecords>ResourceRecord>Value"`
				} `xml:"ResourceRecordSet"`
			} `xml:"ChangeBatch>Changes>Change"`
		}
		if err := xml.Unmarshal(body, &req); err != nil {
			t.Fatalf("change request %q: %v", body, err)
		}
		var b sentBatch
		for _, c := range req.Changes {
			s := c.Action + " " + c.Set.Name + " " + c.Set.Type
			if c.Set.SetIdentifier != "" {
				s += " [" + c.Set.SetIdentifier + "]"
			}
			b.changes = append(b.changes, s)
			for _, v := range c.Set.Values {
				b.values++
				b.chars += len(v)
			}
		}
		out = append(out, b)
	}
	p.bodies = nil
	return out
}

// sentBatch is one ChangeResourceRecordSets request as the proxy saw it.
type sentBatch struct {
	changes       []string
	values, chars int
}

// changed returns every change sent so far as "ACTION name type [set]", and forgets them.
func (p *changeProxy) changed(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, b := range p.requests(t) {
		out = append(out, b.changes...)
	}
	return out
}

// crossfadeHandover runs `crossfade handover` against the Route 53 API at endpoint; a
// non-zero exit is returned, not fatal.
func crossfadeHandover(t *testing.T, endpoint string, args ...string) runResult {
	t.Helper()
	return runCrossfade(t, append([]string{"handover", "--zone", "example.com", "--aws-endpoint", endpoint, "--log-level", "warn"}, args...)...)
}

// listing returns every record set of the zone as the AWS CLI prints it, byte for byte,
// by "name type [set]".
func (c *cli) listing(zone string) map[string]string {
	c.t.Helper()
	var out struct{ ResourceRecordSets []json.RawMessage }
	c.must(&out, "route53", "list-resource-record-sets", "--hosted-zone-id", zone)
	sets := map[string]string{}
	for _, raw := range out.ResourceRecordSets {
		var s struct{ Name, Type, SetIdentifier string }
		if err := json.Unmarshal(raw, &s); err != nil {
			c.t.Fatal(err)
		}
		key := s.Name + " " + s.Type
		if s.SetIdentifier != "" {
			key += " [" + s.SetIdentifier + "]"
		}
		sets[key] = string(raw)
	}
	return sets
}

// handedOver is before with the owner of the ownership records named in moved rewritten
// from one owner to another, byte for byte: what the zone must hold after a handover.
func handedOver(before map[string]string, moved []string, from, to string) map[string]string {
	want := map[string]string{}
	for k, v := range before {
		if slices.Contains(moved, k) {
			v = strings.ReplaceAll(v, "external-dns/owner="+from+",", "external-dns/owner="+to+",")
		}
		want[k] = v
	}
	return want
}

// sameListing reports every set that differs between got and want.
func sameListing(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: %s is gone", what, k)
		} else if g != w {
			t.Errorf("%s: %s\n got %s\nwant %s", what, k, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected %s: %s", what, k, g)
		}
	}
}

// txtChanges is the DELETE and CREATE of each ownership record in keys ("name type [set]").
func txtChanges(keys ...string) []string {
	var out []string
	for _, k := range keys {
		out = append(out, "DELETE "+k, "CREATE "+k)
	}
	slices.Sort(out)
	return out
}

func changeCalls(t *testing.T, sb *sandbox.Sandbox) int {
	t.Helper()
	n := 0
	for k, v := range sandboxtest.APICalls(t, sb) {
		if strings.HasPrefix(k, "ChangeResourceRecordSets ") {
			n += v
		}
	}
	return n
}

// dryRunBatches returns the change batches a dry run printed, each as "ACTION name type
// [set]" lines.
func dryRunBatches(t *testing.T, out string) [][]string {
	t.Helper()
	var batches [][]string
	for _, part := range strings.Split(out, "--change-batch file://BATCH.json` takes it:\n")[1:] {
		end := strings.Index(part, "\n}\n")
		if end < 0 {
			t.Fatalf("dry-run batch without its end:\n%s", part)
		}
		var b struct {
			Changes []struct {
				Action            string
				ResourceRecordSet struct{ Name, Type, SetIdentifier string }
			}
		}
		if err := json.Unmarshal([]byte(part[:end+2]), &b); err != nil {
			t.Fatalf("dry-run batch %q: %v", part[:end+2], err)
		}
		var lines []string
		for _, c := range b.Changes {
			s := c.Action + " " + c.ResourceRecordSet.Name + " " + c.ResourceRecordSet.Type
			if c.ResourceRecordSet.SetIdentifier != "" {
				s += " [" + c.ResourceRecordSet.SetIdentifier + "]"
			}
			lines = append(lines, s)
		}
		batches = append(batches, lines)
	}
	return batches
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestHandoverIssue5993: on a zone three owners share, `handover --from cluster-a --to
// cluster-d` rewrites cluster-a's ownership records and nothing else: every record set
// but those is byte for byte as it was, no change of a non-TXT record is ever sent, a dry
// run sends nothing and prints the batch, --name limits the names, a second run moves
// nothing, cluster-d's sync from cluster-a's manifests then has nothing to do, and
// cluster-a's own sync can no longer change anything.
func TestHandoverIssue5993(t *testing.T) {
	sb, aws, zone, dirs := handoverZone(t)
	proxy := startChangeProxy(t, sb)
	original := aws.listing(zone)
	for _, k := range aTXT {
		if !strings.Contains(original[k], "external-dns/owner=cluster-a,") {
			t.Fatalf("setup: %s is not cluster-a's: %q", k, original[k])
		}
	}

	// Bad input is refused before anything is read or sent.
	calls := changeCalls(t, sb)
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", "cluster-a", "--to", "cluster-a"}, `--from and --to are both "cluster-a"`},
		{[]string{"--from", "cluster-a", "--to", "cluster d"}, `--to "cluster d": want an owner id without ',', '=', '"', '\', spaces or control characters (it holds " ")`},
		{[]string{"--from", "cluster-a", "--to", "cluster-d", "--name", "[web"}, `--name "[web": want a shell glob, e.g. "*.shop.example.com": syntax error in pattern`},
		{[]string{"--from", "cluster-a", "--to", "cluster-d", "--zone", "example.org"}, `--zone "example.org": no hosted zone has this name or id`},
	} {
		if r := crossfadeHandover(t, proxy.url, bad.args...); r.exit == 0 || !strings.Contains(r.out, bad.want) {
			t.Errorf("%q: exit %d, want non-zero and %q:\n%s", bad.args, r.exit, bad.want, r.out)
		}
	}

	// --dry-run: nothing sent, every batch printed.
	dry := crossfadeHandover(t, proxy.url, "--from", "cluster-a", "--to", "cluster-d", "--dry-run")
	if dry.exit != 0 {
		t.Fatalf("dry run exited %d:\n%s", dry.exit, dry.out)
	}
	if n := changeCalls(t, sb) - calls; n != 0 {
		t.Errorf("dry run made %d ChangeResourceRecordSets calls", n)
	}
	sameListing(t, "after the dry run", aws.listing(zone), original)
	batches := dryRunBatches(t, dry.out)
	if len(batches) != 1 || !slices.Equal(sorted(batches[0]), txtChanges(aTXT...)) {
		t.Errorf("dry-run batches %q, want one with %q", batches, txtChanges(aTXT...))
	}
	mustContain(t, "dry-run output", dry.out,
		"would move app.example.com A [cluster-a] (service/default/app): cluster-a -> cluster-d",
		"would move edge.example.com A (service/default/edge): cluster-a -> cluster-d",
		"4 records would move, 0 refused; 12 ownership record changes in 1 change batch",
		"dry run: nothing was sent",
	)

	// --name limits the handover to the names it matches: web's two ownership records.
	// (The zone by its id this time.)
	web := crossfadeHandover(t, proxy.url, "--zone", "/hostedzone/"+zone, "--from", "cluster-a", "--to", "cluster-d", "--name", "web.*")
	if web.exit != 0 || !strings.Contains(web.out, "moved web.example.com A (service/default/web): cluster-a -> cluster-d") ||
		!strings.Contains(web.out, "1 record moved, 0 refused") {
		t.Fatalf("--name web.*: exit %d:\n%s", web.exit, web.out)
	}
	webTXT := []string{"a-web.example.com. TXT", "web.example.com. TXT"}
	if got := sorted(proxy.changed(t)); !slices.Equal(got, txtChanges(webTXT...)) {
		t.Errorf("--name web.* sent %q, want %q", got, txtChanges(webTXT...))
	}
	sameListing(t, "after --name web.*", aws.listing(zone), handedOver(original, webTXT, "cluster-a", "cluster-d"))

	// The rest of cluster-a's records.
	run := crossfadeHandover(t, proxy.url, "--from", "cluster-a", "--to", "cluster-d")
	if run.exit != 0 {
		t.Fatalf("handover exited %d:\n%s", run.exit, run.out)
	}
	mustContain(t, "handover output", run.out,
		"moved api.example.com A (service/default/api): cluster-a -> cluster-d",
		"moved app.example.com A [cluster-a] (service/default/app): cluster-a -> cluster-d",
		"moved edge.example.com A (service/default/edge): cluster-a -> cluster-d",
		"3 records moved, 0 refused; 8 ownership record changes in 1 change batch",
	)
	rest := slices.DeleteFunc(slices.Clone(aTXT), func(k string) bool { return slices.Contains(webTXT, k) })
	sent := proxy.changed(t)
	if got := sorted(sent); !slices.Equal(got, txtChanges(rest...)) {
		t.Errorf("handover sent %q, want %q", got, txtChanges(rest...))
	}
	for _, c := range sent {
		if !strings.Contains(c, " TXT") {
			t.Errorf("handover sent a change of a record that is not an ownership record: %s", c)
		}
	}
	// cluster-b's and cluster-c's ownership records, the TXT record of another heritage,
	// the SPF record and every non-TXT record set are byte for byte as they were.
	after := aws.listing(zone)
	sameListing(t, "after the handover", after, handedOver(original, aTXT, "cluster-a", "cluster-d"))
	for k, v := range after {
		if strings.Contains(v, "external-dns/owner=cluster-a,") && !strings.Contains(v, "heritage=other-tool") {
			t.Errorf("%s still names cluster-a: %s", k, v)
		}
	}

	// Again: nothing left to move, nothing sent.
	calls = changeCalls(t, sb)
	again := crossfadeHandover(t, proxy.url, "--from", "cluster-a", "--to", "cluster-d")
	if again.exit != 0 || !strings.Contains(again.out, "0 records moved, 0 refused; 0 ownership record changes in 0 change batches") {
		t.Errorf("second handover: exit %d:\n%s", again.exit, again.out)
	}
	if n := changeCalls(t, sb) - calls; n != 0 {
		t.Errorf("second handover made %d ChangeResourceRecordSets calls", n)
	}

	// cluster-d, publishing cluster-a's manifests, finds its records as it wants them.
	calls = changeCalls(t, sb)
	d := mustSync(t, sb, dirs["cluster-a"], "cluster-d")
	if n := changeCalls(t, sb) - calls; n != 0 || !strings.Contains(d, "0 create, 0 update, 0 delete, 0 replace, 0 held by policy, 0 conflicts, 0 batches") {
		t.Errorf("sync as cluster-d after the handover: %d calls, want 0:\n%s", n, d)
	}
	// cluster-a's controller, had it kept running, can change nothing of them now.
	calls = changeCalls(t, sb)
	a := mustSync(t, sb, dirs["cluster-a"], "cluster-a")
	if n := changeCalls(t, sb) - calls; n != 0 || !strings.Contains(a, "with owner cluster-d") {
		t.Errorf("sync as cluster-a after the handover: %d calls, want 0 and conflicts naming cluster-d:\n%s", n, a)
	}
	sameListing(t, "after both syncs", aws.listing(zone), after)
}

// TestHandoverAtomic: another writer changes one name's ownership record between
// crossfade's read of the zone and its write. Route 53 refuses the DELETE of the record as
// read, so that name is refused as a whole (the exit status says so) and keeps what the
// other writer wrote; every other name still moves.
func TestHandoverAtomic(t *testing.T) {
	sb, awscli, zone, _ := handoverZone(t)
	proxy := startChangeProxy(t, sb)
	original := awscli.listing(zone)
	var wrote error
	proxy.before = func() {
		// cluster-b takes api over, straight at the sandbox (a second handover, a person):
		// its ownership record as listed, deleted, and created again naming cluster-b.
		wrote = rewriteTXT(sdkClient(sb.APIURL()), zone, "a-api.example.com.", "owner=cluster-a,", "owner=cluster-b,")
	}
	run := crossfadeHandover(t, proxy.url, "--from", "cluster-a", "--to", "cluster-d")
	if wrote != nil {
		t.Fatalf("the other writer: %v", wrote)
	}
	if run.exit == 0 {
		t.Errorf("a refused name must make the exit status non-zero:\n%s", run.out)
	}
	mustContain(t, "output", run.out,
		"refused (not handed over; nothing was deleted): 1",
		"api.example.com A: refused by the provider",
		"another writer changed its ownership records since they were read",
		"moved app.example.com A [cluster-a] (service/default/app): cluster-a -> cluster-d",
		"moved web.example.com A (service/default/web): cluster-a -> cluster-d",
		"moved edge.example.com A (service/default/edge): cluster-a -> cluster-d",
		"3 records moved, 1 refused",
	)
	want := handedOver(original, slices.DeleteFunc(slices.Clone(aTXT), func(k string) bool { return k == "a-api.example.com. TXT" }), "cluster-a", "cluster-d")
	want = handedOver(want, []string{"a-api.example.com. TXT"}, "cluster-a", "cluster-b")
	sameListing(t, "after the race", awscli.listing(zone), want)

	// The one batch was refused whole; then the names it did not name, then api alone.
	sent := proxy.changed(t)
	if len(sent) != 2*2*len(aTXT) {
		t.Errorf("sent %d changes in all, want %d (everything, then everything again split in two): %q", len(sent), 4*len(aTXT), sent)
	}
	again := crossfadeHandover(t, proxy.url, "--from", "cluster-a", "--to", "cluster-d")
	if again.exit != 0 || !strings.Contains(again.out, "0 records moved, 0 refused") {
		t.Errorf("second handover: exit %d:\n%s", again.exit, again.out)
	}
}

// rewriteTXT replaces old with new in the values of the simple TXT record set name, as
// another writer would: DELETE as listed, CREATE the rewritten set, in one batch.
func rewriteTXT(c *route53.Client, zone, name, old, new string) error {
	ctx := context.Background()
	out, err := c.ListResourceRecordSets(ctx, &route53.ListResourceRecordSetsInput{
		HostedZoneId: aws.String(zone), StartRecordName: aws.String(name), StartRecordType: types.RRTypeTxt, MaxItems: aws.Int32(1),
	})
	if err != nil {
		return err
	}
	if len(out.ResourceRecordSets) != 1 || aws.ToString(out.ResourceRecordSets[0].Name) != name {
		return fmt.Errorf("TXT %s not found: %+v", name, out.ResourceRecordSets)
	}
	cur := out.ResourceRecordSets[0]
	next := cur
	next.ResourceRecords = nil
	for _, rr := range cur.ResourceRecords {
		next.ResourceRecords = append(next.ResourceRecords, types.ResourceRecord{Value: aws.String(strings.ReplaceAll(aws.ToString(rr.Value), old, new))})
	}
	_, err = c.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{
		HostedZoneId: aws.String(zone),
		ChangeBatch: &types.ChangeBatch{Changes: []types.Change{
			{Action: types.ChangeActionDelete, ResourceRecordSet: &cur},
			{Action: types.ChangeActionCreate, ResourceRecordSet: &next},
		}},
	})
	return err
}

// TestHandoverBatches: a handover larger than one Route 53 request goes in several
// batches, each within Route 53's limits (1,000 values, 32,000 value characters), none
// splitting a name's changes, and together moving every record.
func TestHandoverBatches(t *testing.T) {
	// 100 names, a third of them with two ownership records: 268 changes of 150-character
	// values, more than one request's 32,000 characters.
	const names = 100
	var sets []string
	for i := range names {
		name := fmt.Sprintf("n%03d.example.com", i)
		value := payload("cluster-a", "ingress/storefront-production/"+name[:4]+"-checkout-and-payments-frontend-gateway")
		sets = append(sets, rrsetJSON(name, "A", "", fmt.Sprintf("127.0.1.%d", i)), rrsetJSON("a-"+name, "TXT", "", value))
		if i%3 == 0 {
			// Every third also carries the legacy same-name form: two records to move.
			sets = append(sets, rrsetJSON(name, "TXT", "", value))
		}
	}
	sb, awscli, zone := exampleZone(t, sets...)
	proxy := startChangeProxy(t, sb)
	original := awscli.listing(zone)
	var moved []string
	for k := range original {
		if strings.Contains(k, " TXT") {
			moved = append(moved, k)
		}
	}

	run := crossfadeHandover(t, proxy.url, "--from", "cluster-a", "--to", "cluster-d")
	if run.exit != 0 {
		t.Fatalf("handover exited %d:\n%s", run.exit, run.out)
	}
	sent := proxy.requests(t)
	changes := 2 * len(moved)
	if want := fmt.Sprintf("%d records moved, 0 refused; %d ownership record changes in %d change batches", names, changes, len(sent)); len(sent) < 2 || !strings.Contains(run.out, want) {
		t.Errorf("%d requests; output lacks %q:\n%s", len(sent), want, run.out)
	}
	batchOf := map[string]int{}
	total := 0
	for i, b := range sent {
		if b.values > 1000 || b.chars > 32000 {
			t.Errorf("batch %d: %d values, %d value characters: over Route 53's limits", i+1, b.values, b.chars)
		}
		for _, c := range b.changes {
			total++
			// "DELETE a-n007.example.com. TXT" and "CREATE n006.example.com. TXT" both
			// belong to the name n00x.example.com.
			_, name, _ := strings.Cut(c, " ")
			name, _, _ = strings.Cut(strings.TrimPrefix(name, "a-"), " ")
			if j, ok := batchOf[name]; ok && j != i {
				t.Errorf("%s's changes are split across batches %d and %d", name, j+1, i+1)
			}
			batchOf[name] = i
		}
	}
	if total != changes || len(batchOf) != names {
		t.Errorf("%d changes of %d names sent, want %d of %d", total, len(batchOf), changes, names)
	}
	sameListing(t, "after the handover", awscli.listing(zone), handedOver(original, moved, "cluster-a", "cluster-d"))
}
