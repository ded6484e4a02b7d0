package cutover

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	leveralb "github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/alb/albtest"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
)

// TestUnfinishedALBStatusPrintsNoTerraform: `status` of an ALB cutover stopped midway
// prints no Terraform forward block (weights applied from it mid-run would fight the
// cutover) and says so; the report of the ended cutover prints them.
func TestUnfinishedALBStatusPrintsNoTerraform(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f := albtest.NewFakeELB()
	lv := leveralb.New(albtest.Plan(), f)
	s, _ := lv.Read(context.Background(), ReadOptions{Runner: levertest.Runner})
	w50 := map[string]int64{"blue": 50, "green": 50}
	w, err := lv.Write(context.Background(), s, Change{Weights: w50}, levertest.Env())
	if err != nil {
		t.Fatal(err)
	}
	unfinished := []journal.Entry{
		{Kind: kindStart, Step: stepNone, Time: t0, By: "alice@laptop", Weights: map[string]int64{"blue": 100, "green": 0}, Data: s.StartData()},
		{Kind: kindIntent, Step: 0, Time: t0, Weights: w50, Detail: "step 1 of 2"},
		{Kind: kindWritten, Step: 0, Time: t0, Weights: w50, Detail: w.Detail, Data: w.Data},
		{Kind: kindInSync, Step: 0, Time: t0, Detail: "12ms"},
		{Kind: kindStepPassed, Step: 0, Time: t0},
	}
	tests := []struct {
		name          string
		entries       []journal.Entry
		want          string
		wantTerraform bool
	}{
		{"unfinished", unfinished, "  Terraform forward blocks: none yet: the cutover is unfinished; its report prints them once it ends\n", false},
		{"ended", append(unfinished, journal.Entry{Kind: kindDone, Step: stepNone, Time: t0, Detail: outcomeCompleted}),
			"  the listener rules' weights now, as Terraform's forward block (for the module that owns the rules):\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := Text.Status(&b, &Status{Report: BuildReport("shop", tt.entries), PlanFile: "shop.yaml"}); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			if !strings.Contains(got, tt.want) {
				t.Errorf("status:\n%s\nwant a line:\n%s", got, tt.want)
			}
			if has := strings.Contains(got, "forward {"); has != tt.wantTerraform {
				t.Errorf("status prints a forward block: %v, want %v:\n%s", has, tt.wantTerraform, got)
			}
		})
	}
}
