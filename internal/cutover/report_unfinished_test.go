package cutover

import (
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// TestUnfinishedReportSaysWhereItStopped: the report of a cutover that has not ended says
// so in its first line, with the weights its last acknowledged write left (traffic is
// split there), paused when it is; it never says "rolled back" for a run that has not.
func TestUnfinishedReportSaysWhereItStopped(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	w50 := map[string]int64{"blue": 50, "green": 50}
	start := journal.Entry{Kind: kindStart, Step: stepNone, Time: at(0), By: "alice@laptop", Weights: map[string]int64{"blue": 100, "green": 0}}
	step1 := []journal.Entry{
		{Kind: kindIntent, Step: 0, Time: at(5), Weights: w50, Detail: "step 1 of 2"},
		{Kind: kindWritten, Step: 0, Time: at(6), Weights: w50, ChangeID: "C1"},
		{Kind: kindInSync, Step: 0, Time: at(7), ChangeID: "C1", Detail: "40ms"},
		{Kind: kindStepPassed, Step: 0, Time: at(9)},
	}
	pause := journal.Entry{Kind: kindControl, Time: at(10), By: "carol@desk", Detail: CommandPause}
	intent2 := journal.Entry{Kind: kindIntent, Step: 1, Time: at(11), Weights: map[string]int64{"blue": 0, "green": 100}, Detail: "step 2 of 2"}
	tests := []struct {
		name    string
		entries []journal.Entry
		want    string
	}{
		{"stopped at 50/50", append([]journal.Entry{start}, step1...),
			"cutover app: unfinished at blue=50 green=50\n"},
		{"paused at 50/50", append(append([]journal.Entry{start}, step1...), pause),
			"cutover app: unfinished, paused at blue=50 green=50\n"},
		{"stopped before its first write", []journal.Entry{start},
			"cutover app: unfinished at blue=100 green=0\n"},
		{"a write begun, not acknowledged", append(append([]journal.Entry{start}, step1...), intent2),
			"cutover app: unfinished at blue=50 green=50 (step 2 of 2 was begun and may have landed)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := Text.Report(&b, BuildReport("app", tt.entries)); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			if first := got[:strings.Index(got, "\n")+1]; first != tt.want {
				t.Errorf("first line:\n got %q\nwant %q", first, tt.want)
			}
			if strings.Contains(got, "rolled back") {
				t.Errorf("an unfinished run that did not roll back says it did:\n%s", got)
			}
		})
	}
}
