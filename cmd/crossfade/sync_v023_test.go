package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsr53 "github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"

	"github.com/crossfade-io/crossfade/internal/cli"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// prefixServices are two Services as a cluster moving to external-dns v0.23 holds them:
// one with the hostname under both prefixes (different values), one under the legacy
// prefix only.
const prefixServices = `apiVersion: v1
kind: Service
metadata:
  name: both
  namespace: default
  annotations:
    external-dns.kubernetes.io/hostname: new.example.com
    external-dns.alpha.kubernetes.io/hostname: old.example.com
spec:
  type: LoadBalancer
status:
  loadBalancer:
    ingress:
      - ip: 192.0.2.10
---
apiVersion: v1
kind: Service
metadata:
  name: legacy
  namespace: default
  annotations:
    external-dns.alpha.kubernetes.io/hostname: legacy.example.com
spec:
  type: LoadBalancer
status:
  loadBalancer:
    ingress:
      - ip: 192.0.2.11
`

// zoneSets lists zone's record sets as "name type" (name without the trailing dot), sorted,
// straight from the API.
func zoneSets(t *testing.T, client *awsr53.Client, zone provider.Zone) []string {
	t.Helper()
	out, err := client.ListResourceRecordSets(context.Background(), &awsr53.ListResourceRecordSetsInput{HostedZoneId: aws.String(zone.ID)})
	if err != nil {
		t.Fatal(err)
	}
	var sets []string
	for _, s := range out.ResourceRecordSets {
		sets = append(sets, strings.TrimSuffix(aws.ToString(s.Name), ".")+" "+string(s.Type))
	}
	slices.Sort(sets)
	return sets
}

// aSets is the A record sets of sets.
func aSets(sets []string) []string {
	var out []string
	for _, s := range sets {
		if strings.HasSuffix(s, " A") {
			out = append(out, s)
		}
	}
	return out
}

// TestSyncLegacyAnnotationPrefix: `crossfade sync --enable-legacy-annotation-prefix` reads
// annotations as external-dns v0.23 does with that flag: the configured prefix's value
// wins, the legacy one is set aside with a warning naming both keys, and a key under the
// legacy prefix alone is still read; with a configured prefix that starts with the legacy
// one it is refused before anything is written. Without the flag, the rows show what it
// changes.
func TestSyncLegacyAnnotationPrefix(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	const setAside = `annotation external-dns.alpha.kubernetes.io/hostname \"old.example.com\" ignored: external-dns.kubernetes.io/hostname \"new.example.com\" is set and wins (--enable-legacy-annotation-prefix)`
	for _, tc := range []struct {
		name     string
		extra    []string
		wantCode int
		wantA    []string
		// wantErr are in stderr; setAside tells whether the warning is there, once.
		wantErr  []string
		setAside bool
	}{
		{name: "legacy fallback", extra: []string{"--enable-legacy-annotation-prefix"},
			wantA: []string{"legacy.example.com A", "new.example.com A"}, setAside: true},
		{name: "legacy fallback after the configured prefix",
			extra: []string{"--enable-legacy-annotation-prefix", "--annotation-prefix=external-dns.kubernetes.io/"},
			wantA: []string{"legacy.example.com A", "new.example.com A"}, setAside: true},
		// Without the flag: both prefixes read alike, and a key set differently under each
		// is an invalid object rather than a guess.
		{name: "both prefixes", wantA: []string{"legacy.example.com A"}},
		// The new prefix alone, as v0.23 without the flag: the legacy Service is not read.
		{name: "configured prefix only", extra: []string{"--annotation-prefix=external-dns.kubernetes.io/"},
			wantA: []string{"new.example.com A"}},
		{name: "legacy prefix configured and as fallback",
			extra:    []string{"--enable-legacy-annotation-prefix", "--annotation-prefix=external-dns.alpha.kubernetes.io/"},
			wantCode: cli.ExitUsage,
			wantErr:  []string{`--enable-legacy-annotation-prefix: not with --annotation-prefix "external-dns.alpha.kubernetes.io/", which starts with the legacy prefix external-dns.alpha.kubernetes.io/`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := sandboxtest.Start(t)
			_, zone := route53test.Zone(t, sb, "example.com")
			args := slices.Concat([]string{"sync", "--manifests", manifestDir(t, map[string]string{"svc.yaml": prefixServices}),
				"--txt-owner-id", "blue", "--aws-endpoint", sb.APIURL(), "--aws-region", "us-east-1"}, tc.extra)
			code, out, errOut := runCLI(t, args...)
			if code != tc.wantCode {
				t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, out, errOut)
			}
			if got := aSets(zoneSets(t, route53test.Client(sb), zone)); !slices.Equal(got, tc.wantA) {
				t.Errorf("zone's A records %q, want %q\nstdout:\n%s\nstderr:\n%s", got, tc.wantA, out, errOut)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			n := strings.Count(errOut, "annotation set aside")
			switch {
			case tc.setAside && (n != 1 || !strings.Contains(errOut, setAside) || !strings.Contains(errOut, "name=both")):
				t.Errorf("stderr holds %d warnings of an annotation set aside, want one naming Service both and saying %s:\n%s", n, setAside, errOut)
			case !tc.setAside && n != 0:
				t.Errorf("stderr warns of an annotation set aside, want none:\n%s", errOut)
			}
		})
	}
}

// tlsaEndpoints are a DNSEndpoint asking for an A record and one asking for a TLSA record,
// which external-dns v0.23 takes in --managed-record-types.
const tlsaEndpoints = `apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata:
  name: web
  namespace: default
spec:
  endpoints:
    - dnsName: web.example.com
      recordType: A
      targets: ["192.0.2.20"]
---
apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata:
  name: web-tls
  namespace: default
spec:
  endpoints:
    - dnsName: _443._tcp.web.example.com
      recordType: TLSA
      targets: ["3 1 1 2bb183af4e1b4f5cb2fd2ee1ba4d4a5ee3ad33e0e3d1e59d8b2b1d6e1a2b3c4d"]
`

// TestSyncManagedRecordTypesV023: external-dns v0.22/v0.23's DNAME and TLSA in
// --managed-record-types are accepted, so that a copied command line runs, with one
// warning saying crossfade ignores them; no record of theirs is written (a DNSEndpoint
// asking for TLSA is reported invalid, as without the flag) or touched (a TLSA record
// already in the zone), and the other types are managed as asked. Those types alone would
// manage nothing: refused.
func TestSyncManagedRecordTypesV023(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox")
	}
	const warning = "record types accepted for external-dns compatibility and ignored: crossfade neither writes nor deletes records of these types"
	for _, tc := range []struct {
		name      string
		types     []string
		wantCode  int
		wantTypes string // in the warning; "" for none
		wantErr   string
		wantSets  []string
	}{
		{name: "v0.23 types beside A", types: []string{"--managed-record-types=A,DNAME,TLSA"}, wantTypes: "types=DNAME,TLSA",
			wantSets: []string{"_443._tcp.mail.example.com TLSA", "_443._tcp.old.example.com TLSA", "_443._tcp.old.example.com TXT", "a-web.example.com TXT", "example.com NS", "example.com SOA", "web.example.com A"}},
		// As external-dns repeats it; a type given twice is warned about once.
		{name: "repeated", types: []string{"--managed-record-types=A", "--managed-record-types=TLSA", "--managed-record-types=TLSA"}, wantTypes: "types=TLSA",
			wantSets: []string{"_443._tcp.mail.example.com TLSA", "_443._tcp.old.example.com TLSA", "_443._tcp.old.example.com TXT", "a-web.example.com TXT", "example.com NS", "example.com SOA", "web.example.com A"}},
		{name: "only types crossfade does not publish", types: []string{"--managed-record-types=DNAME,TLSA"}, wantCode: cli.ExitUsage,
			wantErr:  `--managed-record-types "DNAME,TLSA": crossfade does not publish DNAME or TLSA (accepted only beside a type it publishes), so nothing would be managed`,
			wantSets: []string{"_443._tcp.mail.example.com TLSA", "_443._tcp.old.example.com TLSA", "_443._tcp.old.example.com TXT", "example.com NS", "example.com SOA"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := sandboxtest.Start(t)
			_, zone := route53test.Zone(t, sb, "example.com")
			client := route53test.Client(sb)
			// Another writer's TLSA record, and one owned by blue (the same-name ownership
			// TXT that owns every type there) that no object asks for: neither is read,
			// so neither is deleted.
			set := func(name string, typ r53types.RRType, value string) r53types.Change {
				return r53types.Change{Action: r53types.ChangeActionCreate, ResourceRecordSet: &r53types.ResourceRecordSet{
					Name: aws.String(name), Type: typ, TTL: aws.Int64(300), ResourceRecords: []r53types.ResourceRecord{{Value: aws.String(value)}}}}
			}
			const tlsa = "3 1 1 2bb183af4e1b4f5cb2fd2ee1ba4d4a5ee3ad33e0e3d1e59d8b2b1d6e1a2b3c4d"
			if _, err := client.ChangeResourceRecordSets(context.Background(), &awsr53.ChangeResourceRecordSetsInput{
				HostedZoneId: aws.String(zone.ID),
				ChangeBatch: &r53types.ChangeBatch{Changes: []r53types.Change{
					set("_443._tcp.mail.example.com", r53types.RRTypeTlsa, tlsa),
					set("_443._tcp.old.example.com", r53types.RRTypeTlsa, tlsa),
					set("_443._tcp.old.example.com", r53types.RRTypeTxt, `"heritage=external-dns,external-dns/owner=blue,external-dns/resource=dnsendpoint/default/old"`),
				}},
			}); err != nil {
				t.Fatal(err)
			}
			args := slices.Concat([]string{"sync", "--manifests", manifestDir(t, map[string]string{"web.yaml": tlsaEndpoints}),
				"--txt-owner-id", "blue", "--aws-endpoint", sb.APIURL(), "--aws-region", "us-east-1",
				// So that a TLSA planned for deletion would be deleted, not held.
				"--allow-mass-delete"}, tc.types)
			code, out, errOut := runCLI(t, args...)
			if code != tc.wantCode {
				t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, out, errOut)
			}
			if n := strings.Count(errOut, warning); tc.wantTypes != "" && (n != 1 || !strings.Contains(errOut, tc.wantTypes)) || tc.wantTypes == "" && n != 0 {
				t.Errorf("stderr holds %d warnings %q, want %d with %q:\n%s", n, warning, min(len(tc.wantTypes), 1), tc.wantTypes, errOut)
			}
			if tc.wantCode == 0 && !strings.Contains(out, `dnsendpoint default/web-tls: spec.endpoints[0].recordType "TLSA": want one of`) {
				t.Errorf("stdout does not report the TLSA DNSEndpoint invalid:\n%s", out)
			}
			if tc.wantErr != "" && !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantErr, errOut)
			}
			if got := zoneSets(t, client, zone); !slices.Equal(got, tc.wantSets) {
				t.Errorf("zone holds %q, want %q\nstdout:\n%s\nstderr:\n%s", got, tc.wantSets, out, errOut)
			}
		})
	}
}
