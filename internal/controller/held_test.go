package controller

import (
	"testing"

	"github.com/crossfade-io/crossfade/internal/provider"
)

// TestReportHeldError words a run's held deletions per zone, as done or as a dry run
// would do them, and is nil when the guard held nothing.
func TestReportHeldError(t *testing.T) {
	a := provider.Zone{ID: "ZA", Name: "a.example"}
	b := provider.Zone{ID: "ZB", Name: "b.example"}
	held := func(deletes, owned int) *HeldDeletions {
		return &HeldDeletions{Owner: "blue", Deletes: deletes, Owned: owned}
	}
	cases := []struct {
		name   string
		zones  []ZoneReport
		dryRun bool
		want   string
	}{
		{name: "nothing held", zones: []ZoneReport{{Zone: a}}},
		{name: "one deletion", zones: []ZoneReport{{Zone: a, HeldDeletions: held(1, 1)}, {Zone: b}},
			want: "the deletion guard held 1 deletion (zone " + a.String() + ": 1 of the 1 records of owner blue): nothing was deleted there, creates and updates went on; if the sources are right, run again with --allow-mass-delete"},
		{name: "two zones, dry run", zones: []ZoneReport{{Zone: a, HeldDeletions: held(3, 4)}, {Zone: b, HeldDeletions: held(2, 2)}}, dryRun: true,
			want: "the deletion guard would hold 5 deletions (zone " + a.String() + ": 3 of the 4 records of owner blue; zone " + b.String() + ": 2 of the 2 records of owner blue): a sync would delete nothing there, and write the creates and updates; if the sources are right, run again with --allow-mass-delete"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := (&Report{Zones: tc.zones}).HeldError(tc.dryRun)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("HeldError = %v, want nil", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("HeldError = %v\nwant %s", err, tc.want)
			}
		})
	}
}
