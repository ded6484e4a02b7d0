package e2e

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/kubetest"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// The tests in this file run `crossfade sync` as a separate process against an
// in-process sandbox, set up and inspect the zone with the real AWS CLI, and count API
// calls from the sandbox's /metrics.

// payload is the ownership TXT value external-dns v0.21.0 writes for owner and resource.
func payload(owner, resource string) string {
	return fmt.Sprintf(`"heritage=external-dns,external-dns/owner=%s,external-dns/resource=%s"`, owner, resource)
}

// edgeService is the Service edge: an alias A record edge.example.com to its load
// balancer, known by its DNS name lb.example.com.
const edgeService = `apiVersion: v1
kind: Service
metadata:
  name: edge
  namespace: default
  annotations:
    external-dns.alpha.kubernetes.io/hostname: edge.example.com
    external-dns.alpha.kubernetes.io/alias: "true"
spec:
  type: LoadBalancer
status:
  loadBalancer:
    ingress:
    - hostname: lb.example.com
`

// service renders a LoadBalancer Service whose load balancer has address ip, with the
// given external-dns annotations (keys without prefix; the alpha prefix is used).
func service(name, ip string, annotations ...string) string {
	return kubetest.ServiceManifest(name, "ip: "+ip, annotations...)
}

// manifests writes each document into its own file of a fresh directory.
func manifests(t *testing.T, docs ...string) string {
	t.Helper()
	return kubetest.WriteManifests(t, docs...)
}

// crossfadeSync runs `crossfade sync` against sb; a non-zero exit is returned, not fatal.
func crossfadeSync(t *testing.T, sb *sandbox.Sandbox, dir, owner string, args ...string) runResult {
	t.Helper()
	return runCrossfade(t, append([]string{"sync", "--manifests", dir, "--txt-owner-id", owner, "--aws-endpoint", sb.APIURL(),
		"--domain-filter", "example.com", "--log-level", "warn"}, args...)...)
}

// mustSync runs `crossfade sync` and requires exit status 0.
func mustSync(t *testing.T, sb *sandbox.Sandbox, dir, owner string, args ...string) string {
	t.Helper()
	r := crossfadeSync(t, sb, dir, owner, args...)
	if r.exit != 0 {
		t.Fatalf("crossfade sync as %s exited %d:\n%s", owner, r.exit, r.out)
	}
	return r.out
}

// exampleZone starts a sandbox holding the zone example.com and, created there by the
// AWS CLI in one batch, the given record sets.
func exampleZone(t *testing.T, sets ...string) (*sandbox.Sandbox, *cli, string) {
	t.Helper()
	sb := startSandbox(t, sandbox.Config{})
	aws := newCLI(t, sb)
	zone := aws.createZone("example.com")
	if len(sets) > 0 {
		changes := make([]string, len(sets))
		for i, set := range sets {
			changes[i] = change("CREATE", set)
		}
		aws.must(nil, "route53", "change-resource-record-sets", "--hosted-zone-id", zone, "--change-batch", aws.batchFile(batch(changes...)))
	}
	return sb, aws, zone
}

// zoneSets lists the zone's A and TXT record sets with the AWS CLI, one line each:
// "name type [set-id] w=weight values".
func (c *cli) zoneSets(zone string) []string {
	c.t.Helper()
	var out struct {
		ResourceRecordSets []struct {
			Name, Type, SetIdentifier string
			Weight                    *int
			AliasTarget               *struct{ DNSName string }
			ResourceRecords           []struct{ Value string }
		}
	}
	c.must(&out, "route53", "list-resource-record-sets", "--hosted-zone-id", zone)
	var sets []string
	for _, s := range out.ResourceRecordSets {
		if s.Type != "A" && s.Type != "TXT" {
			continue
		}
		line := s.Name + " " + s.Type
		if s.SetIdentifier != "" {
			line += fmt.Sprintf(" [%s] w=%d", s.SetIdentifier, *s.Weight)
		}
		if s.AliasTarget != nil {
			line += " alias " + s.AliasTarget.DNSName
		}
		for _, v := range s.ResourceRecords {
			line += " " + v.Value
		}
		sets = append(sets, line)
	}
	slices.Sort(sets)
	return sets
}

// resolverLoop queries name A against the sandbox's DNS server, back to back, until
// stopped, and counts the queries that got no address.
type resolverLoop struct {
	queryLoop
	misses []string
	seen   map[string]int
	// retried counts queries whose UDP datagram timed out and were asked again, as a
	// stub resolver does (resolv.conf's attempts): a datagram dropped by a loaded
	// machine's socket buffer is not an empty answer. A second timeout is a miss.
	retried int
}

func startResolverLoop(t *testing.T, sb *sandbox.Sandbox, name string) *resolverLoop {
	t.Helper()
	l := &resolverLoop{seen: map[string]int{}}
	c := &dns.Client{Timeout: 2 * time.Second}
	// A query every 200 µs or so: thousands a second.
	l.start(t, 200*time.Microsecond, func(int) {
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(name), dns.TypeA)
		r, _, err := c.Exchange(m, sb.DNSAddr())
		retried := false
		if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
			retried = true
			r, _, err = c.Exchange(m, sb.DNSAddr())
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if retried {
			l.retried++
		}
		switch {
		case err != nil:
			l.misses = append(l.misses, err.Error())
		case r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0:
			l.misses = append(l.misses, fmt.Sprintf("rcode %s, %d answers", dns.RcodeToString[r.Rcode], len(r.Answer)))
		default:
			for _, rr := range r.Answer {
				if a, ok := rr.(*dns.A); ok {
					l.seen[a.A.String()]++
				}
			}
		}
	})
	return l
}

// TestSyncIssue1411 is external-dns issue 1411 end to end: a simple A record and its
// ownership TXT, as a single-cluster external-dns v0.21.0 writes them for owner blue,
// become blue's weighted member in exactly one ChangeResourceRecordSets call, while a
// resolver querying the name throughout never goes without an answer.
func TestSyncIssue1411(t *testing.T) {
	for _, policy := range []string{"sync", "upsert-only"} {
		t.Run(policy, func(t *testing.T) {
			sb, aws, zone := exampleZone(t,
				rrsetJSON("app.example.com", "A", "", "127.0.0.10"),
				rrsetJSON("a-app.example.com", "TXT", "", payload("blue", "service/default/app")),
			)

			dir := manifests(t, service("app", "127.0.0.10", "hostname", "app.example.com", "set-identifier", "blue", "aws-weight", "1", "ttl", "60"))
			loop := startResolverLoop(t, sb, "app.example.com")
			loop.waitQueries(t, 50)
			before := apiCalls(t, sb, "ChangeResourceRecordSets")
			out := mustSync(t, sb, dir, "blue", "--policy", policy)
			if calls := apiCalls(t, sb, "ChangeResourceRecordSets") - before; calls != 1 {
				t.Errorf("sync made %v ChangeResourceRecordSets calls, want exactly 1\n%s", calls, out)
			}
			loop.waitQueries(t, 50)
			loop.halt()
			if len(loop.misses) > 0 {
				t.Errorf("%d of %d queries got no address, first: %s", len(loop.misses), loop.queries, loop.misses[0])
			}
			t.Logf("resolver loop: %d queries, every one answered", loop.queries)

			want := []string{
				`a-app.example.com. TXT [blue] w=1 ` + payload("blue", "service/default/app"),
				"app.example.com. A [blue] w=1 127.0.0.10",
			}
			if got := aws.zoneSets(zone); !slices.Equal(got, want) {
				t.Errorf("zone after sync:\n got %q\nwant %q", got, want)
			}
			if !strings.Contains(out, "1 replace") {
				t.Errorf("summary does not report the replacement:\n%s", out)
			}
			// A second sync finds nothing to do.
			before = apiCalls(t, sb, "ChangeResourceRecordSets")
			mustSync(t, sb, dir, "blue", "--policy", policy)
			if calls := apiCalls(t, sb, "ChangeResourceRecordSets") - before; calls != 0 {
				t.Errorf("re-sync made %v ChangeResourceRecordSets calls, want 0", calls)
			}
		})
	}
}

// TestSyncIssue1411Unowned: the same simple record without an ownership TXT (written by
// hand) is never deleted; sync reports the conflict with the record and what to do.
func TestSyncIssue1411Unowned(t *testing.T) {
	sb, aws, zone := exampleZone(t,
		rrsetJSON("app.example.com", "A", "", "127.0.0.10"),
	)
	before := aws.zoneSets(zone)
	dir := manifests(t, service("app", "127.0.0.10", "hostname", "app.example.com", "set-identifier", "blue", "aws-weight", "1"))

	calls := apiCalls(t, sb, "ChangeResourceRecordSets")
	r := crossfadeSync(t, sb, dir, "blue", "--policy", "upsert-only")
	if r.exit != 0 {
		t.Fatalf("sync without --strict exited %d:\n%s", r.exit, r.out)
	}
	mustContain(t, "output", r.out,
		"conflicts (not written; nothing was deleted): 1",
		"app.example.com A [blue]: cannot be created beside the existing simple A record app.example.com -> 127.0.0.10 with no owner",
		"a-app.example.com", // the advice names the TXT record that would adopt it
	)
	if got := aws.zoneSets(zone); !slices.Equal(got, before) {
		t.Errorf("zone changed:\n got %q\nwant %q", got, before)
	}
	if n := apiCalls(t, sb, "ChangeResourceRecordSets") - calls; n != 0 {
		t.Errorf("%v ChangeResourceRecordSets calls, want 0", n)
	}
	if r := crossfadeSync(t, sb, dir, "blue", "--strict"); r.exit == 0 || !strings.Contains(r.out, "--strict: 1 finding (listed above)") {
		t.Errorf("with --strict: exit %d, want non-zero naming the finding:\n%s", r.exit, r.out)
	}
}

// TestSyncTwoOwners: blue and green each publish their weighted member of one name, in
// either order. Both members live, neither sync deletes or changes the other's records,
// DNS answers with both, and a claim on the other's set identifier is a reported conflict.
func TestSyncTwoOwners(t *testing.T) {
	blue := service("app", "127.0.0.10", "hostname", "app.example.com", "set-identifier", "blue", "aws-weight", "1")
	green := service("app", "127.0.0.20", "hostname", "app.example.com", "set-identifier", "green", "aws-weight", "1")
	members := map[string][]string{
		"blue":  {"a-app.example.com. TXT [blue] w=1 " + payload("blue", "service/default/app"), "app.example.com. A [blue] w=1 127.0.0.10"},
		"green": {"a-app.example.com. TXT [green] w=1 " + payload("green", "service/default/app"), "app.example.com. A [green] w=1 127.0.0.20"},
	}
	for _, order := range [][]string{{"blue", "green"}, {"green", "blue"}} {
		t.Run(strings.Join(order, "-then-"), func(t *testing.T) {
			sb, aws, zone := exampleZone(t)
			dirs := map[string]string{"blue": manifests(t, blue), "green": manifests(t, green)}

			first, second := order[0], order[1]
			mustSync(t, sb, dirs[first], first)
			mustSync(t, sb, dirs[second], second)
			want := slices.Concat(members["blue"], members["green"])
			slices.Sort(want)
			if got := aws.zoneSets(zone); !slices.Equal(got, want) {
				t.Fatalf("zone:\n got %q\nwant %q", got, want)
			}
			// Each owner's re-sync changes nothing; in particular it deletes nothing of the other's.
			for _, owner := range order {
				calls := apiCalls(t, sb, "ChangeResourceRecordSets")
				out := mustSync(t, sb, dirs[owner], owner)
				if n := apiCalls(t, sb, "ChangeResourceRecordSets") - calls; n != 0 || !strings.Contains(out, "0 delete") {
					t.Errorf("re-sync as %s: %v calls, want 0:\n%s", owner, n, out)
				}
			}
			if got := aws.zoneSets(zone); !slices.Equal(got, want) {
				t.Fatalf("zone after re-syncs:\n got %q\nwant %q", got, want)
			}
			// Authoritative answers come from both members (1:1; 64 queries all landing on
			// one member has probability 2^-63).
			loop := startResolverLoop(t, sb, "app.example.com")
			loop.waitQueries(t, 64)
			loop.halt()
			if loop.seen["127.0.0.10"] == 0 || loop.seen["127.0.0.20"] == 0 || len(loop.misses) > 0 {
				t.Errorf("answers %v, misses %d: want both members", loop.seen, len(loop.misses))
			}

			// green copies blue's set identifier: a conflict, blue's member untouched.
			stolen := manifests(t, service("app", "127.0.0.30", "hostname", "app.example.com", "set-identifier", "blue", "aws-weight", "5"))
			calls := apiCalls(t, sb, "ChangeResourceRecordSets")
			// Its one member going is all of green's records: the deletion guard would hold it.
			r := crossfadeSync(t, sb, stolen, "green", "--strict", "--allow-mass-delete")
			if r.exit == 0 || !strings.Contains(r.out, "app.example.com A [blue]") || !strings.Contains(r.out, "owner blue") {
				t.Errorf("claim on blue's member: exit %d, want a conflict naming owner blue:\n%s", r.exit, r.out)
			}
			// green's own member is no longer wanted by these manifests: green deletes its own
			// records only, and blue's stay as they were.
			if got := aws.zoneSets(zone); !slices.Equal(got, members["blue"]) {
				t.Errorf("zone after green's claim:\n got %q\nwant blue's member only %q", got, members["blue"])
			}
			if n := apiCalls(t, sb, "ChangeResourceRecordSets") - calls; n != 1 {
				t.Errorf("%v ChangeResourceRecordSets calls, want 1 (green removing its own member)", n)
			}
		})
	}
}

// TestSyncPolicies: upsert-only keeps records whose source is gone; sync deletes them, but
// only its own: another owner's records and unowned records stay.
func TestSyncPolicies(t *testing.T) {
	sb, aws, zone := exampleZone(t,
		rrsetJSON("manual.example.com", "A", "", "127.0.0.99"),
		rrsetJSON("other.example.com", "A", "", "127.0.0.98"),
		rrsetJSON("a-other.example.com", "TXT", "", payload("green", "service/default/other")),
	)
	app := service("app", "127.0.0.10", "hostname", "app.example.com")
	api := service("api", "127.0.0.11", "hostname", "api.example.com")
	mustSync(t, sb, manifests(t, app, api), "blue")
	full := aws.zoneSets(zone)
	for _, want := range []string{"api.example.com. A 127.0.0.11", "a-api.example.com. TXT " + payload("blue", "service/default/api")} {
		if !slices.Contains(full, want) {
			t.Fatalf("zone lacks %q: %q", want, full)
		}
	}

	onlyApp := manifests(t, app)
	for _, policy := range []string{"upsert-only", "create-only"} {
		out := mustSync(t, sb, onlyApp, "blue", "--policy", policy)
		if got := aws.zoneSets(zone); !slices.Equal(got, full) {
			t.Errorf("%s deleted records:\n got %q\nwant %q\n%s", policy, got, full, out)
		}
	}
	mustSync(t, sb, onlyApp, "blue", "--policy", "sync")
	want := slices.DeleteFunc(slices.Clone(full), func(s string) bool { return strings.Contains(s, "api.example.com") })
	if got := aws.zoneSets(zone); !slices.Equal(got, want) {
		t.Errorf("after sync:\n got %q\nwant %q", got, want)
	}
	// Nothing wanted at all, and meant (the deletion guard holds all of an owner's records
	// going without --allow-mass-delete): blue's records go, green's and the manual one stay.
	mustSync(t, sb, manifests(t, ""), "blue", "--policy", "sync", "--allow-mass-delete")
	want = []string{"a-other.example.com. TXT " + payload("green", "service/default/other"), "manual.example.com. A 127.0.0.99", "other.example.com. A 127.0.0.98"}
	if got := aws.zoneSets(zone); !slices.Equal(got, want) {
		t.Errorf("after sync with no sources:\n got %q\nwant %q", got, want)
	}
}

// TestSyncInvalidAnnotations: every invalid annotation yields an error naming the object,
// the annotation and the value; those objects are skipped and every other record lands.
// --strict makes the exit status non-zero but still syncs the valid records.
func TestSyncInvalidAnnotations(t *testing.T) {
	const ann = "annotation external-dns.alpha.kubernetes.io/"
	cases := []struct {
		doc  string
		want string
	}{
		{service("weight-abc", "127.0.0.1", "hostname", "w1.example.com", "set-identifier", "blue", "aws-weight", "abc"),
			`service default/weight-abc: ` + ann + `aws-weight "abc": want an integer 0..255`},
		{service("weight-256", "127.0.0.1", "hostname", "w2.example.com", "set-identifier", "blue", "aws-weight", "256"),
			`service default/weight-256: ` + ann + `aws-weight "256": want an integer 0..255`},
		{service("weight-no-setid", "127.0.0.1", "hostname", "w3.example.com", "aws-weight", "1"),
			`service default/weight-no-setid: ` + ann + `aws-weight "1": set without set-identifier`},
		{service("setid-no-policy", "127.0.0.1", "hostname", "w4.example.com", "set-identifier", "blue"),
			`service default/setid-no-policy: ` + ann + `set-identifier "blue": set without a routing policy`},
		{service("failover-bad", "127.0.0.1", "hostname", "f1.example.com", "set-identifier", "blue", "aws-failover", "SIDEWAYS"),
			`service default/failover-bad: ` + ann + `aws-failover "SIDEWAYS": want PRIMARY or SECONDARY`},
		{service("weight-and-failover", "127.0.0.1", "hostname", "f2.example.com", "set-identifier", "blue", "aws-weight", "1", "aws-failover", "PRIMARY"),
			`service default/weight-and-failover: ` + ann + `aws-weight "1": a record takes one routing policy`},
		{service("ttl-bad", "127.0.0.1", "hostname", "t1.example.com", "ttl", "soon"),
			`service default/ttl-bad: ` + ann + `ttl "soon": want an integer number of seconds`},
		{service("eth-bad", "127.0.0.1", "hostname", "e1.example.com", "aws-evaluate-target-health", "maybe"),
			`service default/eth-bad: ` + ann + `aws-evaluate-target-health "maybe": want "true" or "false"`},
		{service("alias-bad", "127.0.0.1", "hostname", "al1.example.com", "alias", "perhaps"),
			`service default/alias-bad: ` + ann + `alias "perhaps": want "true" or "false"`},
		{service("hc-bad", "127.0.0.1", "hostname", "h1.example.com", "set-identifier", "blue", "aws-weight", "1", "aws-health-check-id", "not an id"),
			`service default/hc-bad: ` + ann + `aws-health-check-id "not an id": want a Route 53 health check id`},
		{service("geo", "127.0.0.1", "hostname", "g1.example.com", "set-identifier", "blue", "aws-geolocation-country-code", "DE"),
			`service default/geo: ` + ann + `aws-geolocation-country-code "DE": not supported by crossfade`},
		{service("bad-hostname", "127.0.0.1", "hostname", "bad_name!.example.com"),
			`service default/bad-hostname: ` + ann + `hostname "bad_name!.example.com"`},
	}
	docs := []string{service("good", "127.0.0.42", "hostname", "good.example.com", "set-identifier", "blue", "aws-weight", "7")}
	for _, c := range cases {
		docs = append(docs, c.doc)
	}
	sb, aws, zone := exampleZone(t)
	r := crossfadeSync(t, sb, manifests(t, docs...), "blue", "--strict")
	if r.exit == 0 {
		t.Errorf("--strict with invalid objects exited 0")
	}
	if want := fmt.Sprintf("invalid (skipped, and what they published is kept; everything else is synced): %d", len(cases)); !strings.Contains(r.out, want) {
		t.Errorf("output lacks %q", want)
	}
	for _, c := range cases {
		if !strings.Contains(r.out, c.want) {
			t.Errorf("output lacks %q", c.want)
		}
	}
	want := []string{
		"a-good.example.com. TXT [blue] w=7 " + payload("blue", "service/default/good"),
		"good.example.com. A [blue] w=7 127.0.0.42",
	}
	if got := aws.zoneSets(zone); !slices.Equal(got, want) {
		t.Errorf("zone:\n got %q\nwant only the valid record %q", got, want)
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("output:\n%s", r.out)
	}
}

// TestSyncDryRunAWSCLI: --dry-run sends nothing, and the batch files it writes are
// accepted as they are by `aws route53 change-resource-record-sets`; after the CLI has
// applied them, a real sync finds nothing left to do. The batch includes an issue-1411
// replacement (DELETE and CREATE in one batch) and a weighted member with its TXT.
func TestSyncDryRunAWSCLI(t *testing.T) {
	sb, aws, zone := exampleZone(t,
		rrsetJSON("app.example.com", "A", "", "127.0.0.10"),
		rrsetJSON("a-app.example.com", "TXT", "", payload("blue", "service/default/app")),
		rrsetJSON("lb.example.com", "A", "", "127.0.0.50"),
	)
	before := aws.zoneSets(zone)
	dir := manifests(t,
		service("app", "127.0.0.10", "hostname", "app.example.com", "set-identifier", "blue", "aws-weight", "1"),
		service("web", "127.0.0.11", "hostname", "web.example.com,www.example.com", "ttl", "30"),
		edgeService)
	out := filepath.Join(t.TempDir(), "batches")
	calls := apiCalls(t, sb, "ChangeResourceRecordSets")
	dry := mustSync(t, sb, dir, "blue", "--dry-run", "--dry-run-dir", out)
	if n := apiCalls(t, sb, "ChangeResourceRecordSets") - calls; n != 0 {
		t.Fatalf("dry run made %v ChangeResourceRecordSets calls", n)
	}
	if got := aws.zoneSets(zone); !slices.Equal(got, before) {
		t.Fatalf("dry run changed the zone:\n got %q\nwant %q", got, before)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.json"))
	if len(files) != 1 || !strings.Contains(dry, "dry run: nothing was sent") || !strings.Contains(dry, "file://"+files[0]) {
		t.Fatalf("batch files %q; output:\n%s", files, dry)
	}
	aws.must(nil, "route53", "change-resource-record-sets", "--hosted-zone-id", zone, "--change-batch", "file://"+files[0])
	got := aws.zoneSets(zone)
	for _, want := range []string{
		"app.example.com. A [blue] w=1 127.0.0.10",
		"edge.example.com. A alias lb.example.com.",
		"cname-edge.example.com. TXT " + payload("blue", "service/default/edge"),
		"web.example.com. A 127.0.0.11",
		"www.example.com. A 127.0.0.11",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("zone after the CLI applied the dry-run batch lacks %q:\n%q", want, got)
		}
	}
	calls = apiCalls(t, sb, "ChangeResourceRecordSets")
	real := mustSync(t, sb, dir, "blue")
	if n := apiCalls(t, sb, "ChangeResourceRecordSets") - calls; n != 0 {
		t.Errorf("sync after the CLI applied the dry run made %v calls, want 0:\n%s", n, real)
	}
}
