package cutover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// TestReportSaysWhenResumed: the report names every resume, who made it, from which
// process, and how far the write it took up had got, between the writes before it and
// after it.
func TestReportSaysWhenResumed(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	w50 := map[string]int64{"blue": 50, "green": 50}
	start := journal.Entry{Kind: kindStart, Step: stepNone, Time: at(0), By: "alice@laptop", Weights: map[string]int64{"blue": 100, "green": 0}}
	intent := journal.Entry{Kind: kindIntent, Step: 2, Time: at(5), Weights: w50, Detail: "step 3 of 4"}
	written := journal.Entry{Kind: kindWritten, Step: 2, Time: at(6), Weights: w50, ChangeID: "C7"}
	insync := journal.Entry{Kind: kindInSync, Step: 2, Time: at(7), ChangeID: "C7", Detail: "40ms"}
	passed := journal.Entry{Kind: kindStepPassed, Step: 2, Time: at(9)}
	resumed := journal.Entry{Kind: kindResumed, Step: stepNone, Time: at(64), By: "bob@ci-7", Detail: "runner 0123abcd@ci-7:4242"}
	prefix := "resumed at 2026-03-01T12:01:04Z by bob@ci-7 (pid 4242 on ci-7): "
	tests := []struct {
		name    string
		entries []journal.Entry
		stage   string
		want    string
	}{
		{"before any write", []journal.Entry{start, resumed}, "",
			prefix + "the run before it had started but sent nothing yet; starting from the first write"},
		{"intent only", []journal.Entry{start, intent, resumed}, StageIntent,
			prefix + "redoing the write of step 3 of 4 (blue=50 green=50), which the run before it had begun but not seen sent"},
		{"sent, not in sync", []journal.Entry{start, intent, written, resumed}, StageSent,
			prefix + "redoing the write of step 3 of 4 (blue=50 green=50), which the run before it had sent (change C7) but not seen INSYNC"},
		{"in sync, holding", []journal.Entry{start, intent, written, insync, resumed}, StageInSync,
			prefix + "redoing the write of step 3 of 4 (blue=50 green=50), which the run before it had seen INSYNC (change C7) but not held to its end; its hold starts again"},
		{"step passed", []journal.Entry{start, intent, written, insync, passed, resumed}, StagePassed,
			prefix + "after step 3 of 4 (blue=50 green=50) passed: going on from there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := BuildReport("app", tt.entries)
			if len(rep.Resumes) != 1 {
				t.Fatalf("%d resumes, want 1", len(rep.Resumes))
			}
			r := rep.Resumes[0]
			if stage := ""; r.Last != nil {
				stage = r.Last.Stage
				if stage != tt.stage {
					t.Errorf("stage %q, want %q", stage, tt.stage)
				}
			} else if tt.stage != "" {
				t.Errorf("no last write, want stage %q", tt.stage)
			}
			var text strings.Builder
			if err := Text.Report(&text, rep); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), "  "+tt.want) {
				t.Errorf("report lacks %q:\n%s", tt.want, text.String())
			}
			// The JSON report carries it too.
			b, _ := json.Marshal(rep)
			var back Report
			if err := json.Unmarshal(b, &back); err != nil || len(back.Resumes) != 1 || Text.Resume(back.Resumes[0]) != Text.Resume(r) {
				t.Errorf("JSON round trip: %s, %v", b, err)
			}
		})
	}

	// The resume is listed between the write it interrupted and the write it redid.
	entries := []journal.Entry{start, intent, written, resumed,
		{Kind: kindIntent, Step: 2, Time: at(65), Weights: w50, Detail: "step 3 of 4"}}
	var text strings.Builder
	Text.Report(&text, BuildReport("app", entries))
	lines := strings.Split(text.String(), "\n")
	var order []string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "resumed at"):
			order = append(order, "resumed")
		case strings.HasPrefix(strings.TrimSpace(l), "step 3 of 4"):
			order = append(order, "step")
		}
	}
	if strings.Join(order, ",") != "step,resumed,step" {
		t.Errorf("order %v, want step, resumed, step:\n%s", order, text.String())
	}
}

// TestResumedRunReportsIt resumes a real run whose runner died after sending step 3 and
// before INSYNC: the report it prints, and the one it saves, say so.
func TestResumedRunReportsIt(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	paths := PathsFor(e.dir, "app")
	w50 := map[string]int64{"blue": 50, "green": 50}
	seedJournal(t, paths.Journal, []journal.Entry{
		{Kind: kindStart, Step: stepNone, Weights: map[string]int64{"blue": 100, "green": 0}, By: "test"},
		{Kind: kindStepPassed, Step: 0}, {Kind: kindStepPassed, Step: 1},
		{Kind: kindIntent, Step: 2, Weights: w50, Detail: "step 3 of 4"},
		{Kind: kindWritten, Step: 2, Weights: w50, ChangeID: "C-lost"},
	})
	rep, err := Run(context.Background(), e.config(p), true)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	host, _ := os.Hostname()
	want := fmt.Sprintf("by test@host (pid %d on %s): redoing the write of step 3 of 4 (blue=50 green=50), which the run before it had sent (change C-lost) but not seen INSYNC", os.Getpid(), host)
	var text strings.Builder
	Text.Report(&text, rep)
	if !strings.Contains(text.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, text.String())
	}
	saved, err := os.ReadFile(paths.Report)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(saved, &back); err != nil || len(back.Resumes) != 1 || back.Resumes[0].Last == nil ||
		back.Resumes[0].Last.Stage != StageSent || back.Resumes[0].PID != os.Getpid() {
		t.Errorf("saved report's resumes: %s, %v", saved, err)
	}
}

// TestStatusSaysWhoRunsIt: `status` names the process holding the cutover (pid, host,
// since), or says that none does and what continues an unfinished cutover.
func TestStatusSaysWhoRunsIt(t *testing.T) {
	dir := t.TempDir()
	paths := PathsFor(dir, "app")
	if _, err := ReadStatus(dir, "app"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("status of a cutover never run: %v, want not-exist", err)
	}
	seedJournal(t, paths.Journal, []journal.Entry{
		{Kind: kindStart, Step: stepNone, Weights: map[string]int64{"blue": 100, "green": 0}, By: "alice@laptop"},
		{Kind: kindIntent, Step: 0, Weights: map[string]int64{"blue": 90, "green": 10}, Detail: "step 1 of 4"},
		{Kind: kindResumed, Step: stepNone, By: "bob@ci-7", Detail: "runner 0123abcd@ci-7:4242"},
	})
	text := func(st *Status) string {
		t.Helper()
		var b strings.Builder
		if err := Text.Status(&b, st); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}

	st, err := ReadStatus(dir, "app")
	if err != nil {
		t.Fatal(err)
	}
	st.PlanFile = "app.yaml"
	out := text(st)
	for _, want := range []string{
		"runner now: none on this machine; the run stopped unfinished: `crossfade cutover run --resume app.yaml` continues it",
		"last resumed at ", "by bob@ci-7 (pid 4242 on ci-7): redoing the write of step 1 of 4 (blue=90 green=10)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}

	lock, err := journal.Acquire(paths.Lock, journal.Holder{By: "carol@desk", Cutover: "app"})
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	st, err = ReadStatus(dir, "app")
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if st.Runner == nil || st.Runner.PID != os.Getpid() || st.Runner.Host != host || st.Runner.Since.IsZero() {
		t.Fatalf("runner %+v, want this process on %s", st.Runner, host)
	}
	out = text(st)
	if want := fmt.Sprintf("runner now: pid %d on host %s (carol@desk) since ", os.Getpid(), host); !strings.Contains(out, want) {
		t.Errorf("status lacks %q:\n%s", want, out)
	}
	var js strings.Builder
	if err := st.WriteJSON(&js); err != nil || !strings.Contains(js.String(), fmt.Sprintf(`"pid": %d`, os.Getpid())) ||
		!strings.Contains(js.String(), `"resumes"`) {
		t.Errorf("status JSON: %s, %v", js.String(), err)
	}
}
