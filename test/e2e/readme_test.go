package e2e

import (
	"slices"
	"strings"
	"testing"
)

// TestReadmeSyncExample runs the sync walkthrough of docs/publishing.md as written: each cluster's
// manifests in examples/, each synced under its own owner id. Both members stand side by
// side as aliases to their load balancers, each with its own owner's TXT record, and a
// second run of either changes nothing.
func TestReadmeSyncExample(t *testing.T) {
	sb, aws, zone := exampleZone(t)
	for _, c := range []string{"blue", "green"} {
		mustSync(t, sb, "../../examples/"+c, c)
	}
	want := []string{
		// An alias A's ownership in both forms: a- (external-dns ≥ 0.22) and cname- (≤ 0.21).
		"a-app.example.com. TXT [blue] w=100 " + payload("blue", "service/shop/app"),
		"a-app.example.com. TXT [green] w=0 " + payload("green", "service/shop/app"),
		// As external-dns v0.21 does, an alias to a load balancer gets an alias AAAA
		// beside it, owned under aaaa- (zoneSets lists A and TXT sets).
		"aaaa-app.example.com. TXT [blue] w=100 " + payload("blue", "service/shop/app"),
		"aaaa-app.example.com. TXT [green] w=0 " + payload("green", "service/shop/app"),
		"app.example.com. A [blue] w=100 alias k8s-shop-appblue-1234567890.us-east-1.elb.amazonaws.com.",
		"app.example.com. A [green] w=0 alias k8s-shop-appgreen-0987654321.elb.us-east-1.amazonaws.com.",
		"cname-app.example.com. TXT [blue] w=100 " + payload("blue", "service/shop/app"),
		"cname-app.example.com. TXT [green] w=0 " + payload("green", "service/shop/app"),
	}
	if got := aws.zoneSets(zone); !slices.Equal(got, want) {
		t.Errorf("zone:\n got %q\nwant %q", got, want)
	}
	for _, c := range []string{"blue", "green"} {
		if out := mustSync(t, sb, "../../examples/"+c, c); !strings.Contains(out, "0 create, 0 update, 0 delete, 0 replace") {
			t.Errorf("second sync as %s changed something:\n%s", c, out)
		}
	}
}
