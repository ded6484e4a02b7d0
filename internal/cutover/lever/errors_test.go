package lever

import (
	"strings"
	"testing"
)

// TestDriftMessagesSayWhatWasSeen: drift and a member gone say what the runner saw and
// list the likely writers, asserting none (it sees the weight, not who wrote it); before,
// a Route 53 drift said "external-dns … is writing this record" whatever wrote it.
func TestDriftMessagesSayWhatWasSeen(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		{"drift", &DriftError{Expected: "the cutover wrote", Members: []Drift{{Member: "app.example.com A [blue]", Found: 100, Wrote: 90, Source: "published by owner blue"}}},
			[]string{"app.example.com A [blue] has weight 100, the cutover wrote 90", "written by something other than this cutover", "which writer is not known", "likely: ", "external-dns", "console", "Terraform"}},
		{"member gone", &MemberGoneError{Member: "app.example.com A [blue]", Where: "zone example.com"},
			[]string{"is gone from zone example.com", "deleted by something other than this cutover", "which writer is not known", "a publisher whose source no longer lists it", "re-publish it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := tc.err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "is writing this record") {
				t.Errorf("%q asserts a writer", msg)
			}
		})
	}
}

// TestNotReadyHeading: the heading names what is not ready — the zone, the listener
// rules, the Cloud Map service — or, when only measurements cannot be taken now, says
// so: a gate that cannot be reached is no fault of the zone.
func TestNotReadyHeading(t *testing.T) {
	for _, tc := range []struct {
		err  NotReadyError
		want string
	}{
		{NotReadyError{Problems: []string{"a", "b"}}, "the zone is not ready for this cutover:\n  a\n  b"},
		{NotReadyError{Problems: []string{"a"}, Lever: ALB}, "the listener rules are not ready for this cutover:\n  a"},
		{NotReadyError{Problems: []string{"a"}, Lever: CloudMap}, "the Cloud Map service is not ready for this cutover:\n  a"},
		{NotReadyError{Problems: []string{"gate dns-1: cannot check: refused"}, Lever: ALB, Unmeasured: true},
			"what this cutover measures cannot be read now:\n  gate dns-1: cannot check: refused"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.err, got, tc.want)
		}
	}
}
