package cutoverctl

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/cutover/api/v1alpha1"
)

// withStatus is a Cutover app in default at generation gen with status st.
func withStatus(gen int64, paused bool, st v1alpha1.CutoverStatus) *v1alpha1.Cutover {
	c := &v1alpha1.Cutover{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "default", Generation: gen}, Status: st}
	c.Spec.Paused = paused
	return c
}

// conds are Ready and Reconciling with reason, and Stalled as stalled.
func conds(reason string, reconciling, stalled bool) []metav1.Condition {
	s := func(b bool) metav1.ConditionStatus {
		if b {
			return metav1.ConditionTrue
		}
		return metav1.ConditionFalse
	}
	return []metav1.Condition{
		{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: "msg " + reason},
		{Type: v1alpha1.ConditionReconciling, Status: s(reconciling), Reason: reason, Message: "msg " + reason},
		{Type: v1alpha1.ConditionStalled, Status: s(stalled), Reason: reason, Message: "msg " + reason},
	}
}

// TestPauseShown: a pause is shown by Paused, or, before the start, by Pending paused
// before its start in a status of the pause's generation; a resume by neither, in a status
// of its generation; a drift pause and an ended cutover never show a resume, and say why.
func TestPauseShown(t *testing.T) {
	for _, tc := range []struct {
		name    string
		c       *v1alpha1.Cutover
		paused  bool
		gen     int64
		want    bool
		wantErr string
	}{
		{"pause: still progressing", withStatus(3, true, v1alpha1.CutoverStatus{Phase: v1alpha1.PhaseProgressing, ObservedGeneration: 2, Conditions: conds("Step1Of3", true, false)}), true, 3, false, ""},
		{"pause: paused", withStatus(3, true, v1alpha1.CutoverStatus{Phase: v1alpha1.PhasePaused, ObservedGeneration: 3, Conditions: conds("Paused", false, false)}), true, 3, true, ""},
		{"pause: pending, status of the generation before", withStatus(2, true, v1alpha1.CutoverStatus{Phase: v1alpha1.PhasePending, ObservedGeneration: 1, Conditions: conds("Pending", true, false)}), true, 2, false, ""},
		{"pause: pending, reconciling (not paused) at its generation", withStatus(2, true, v1alpha1.CutoverStatus{Phase: v1alpha1.PhasePending, ObservedGeneration: 2, Conditions: conds("Pending", true, false)}), true, 2, false, ""},
		{"pause: paused before its start", withStatus(2, true, v1alpha1.CutoverStatus{Phase: v1alpha1.PhasePending, ObservedGeneration: 2, Conditions: conds("PausedBeforeStart", false, false)}), true, 2, true, ""},
		{"pause: no status yet", withStatus(2, true, v1alpha1.CutoverStatus{}), true, 2, false, ""},
		{"pause: completed meanwhile", withStatus(2, true, v1alpha1.CutoverStatus{Phase: v1alpha1.PhaseCompleted, ObservedGeneration: 2, Conditions: conds("Completed", false, false)}), true, 2, false, "ended (Completed)"},
		{"resume: still paused, old generation", withStatus(4, false, v1alpha1.CutoverStatus{Phase: v1alpha1.PhasePaused, ObservedGeneration: 3, Conditions: conds("Paused", false, false)}), false, 4, false, ""},
		{"resume: progressing, old generation", withStatus(4, false, v1alpha1.CutoverStatus{Phase: v1alpha1.PhaseProgressing, ObservedGeneration: 3, Conditions: conds("Step1Of3", true, false)}), false, 4, false, ""},
		{"resume: progressing", withStatus(4, false, v1alpha1.CutoverStatus{Phase: v1alpha1.PhaseProgressing, ObservedGeneration: 4, Conditions: conds("Step2Of3", true, false)}), false, 4, true, ""},
		{"resume: paused before start, at its generation", withStatus(4, false, v1alpha1.CutoverStatus{Phase: v1alpha1.PhasePending, ObservedGeneration: 4, Conditions: conds("PausedBeforeStart", false, false)}), false, 4, false, ""},
		{"resume: pending, reconciling", withStatus(4, false, v1alpha1.CutoverStatus{Phase: v1alpha1.PhasePending, ObservedGeneration: 4, Conditions: conds("Pending", true, false)}), false, 4, true, ""},
		{"resume: drift pause", withStatus(4, false, v1alpha1.CutoverStatus{Phase: v1alpha1.PhasePaused, ObservedGeneration: 4, Conditions: conds("DriftPaused", false, true)}), false, 4, false, "paused on drift"},
		{"resume: rolled back", withStatus(4, false, v1alpha1.CutoverStatus{Phase: v1alpha1.PhaseRolledBack, ObservedGeneration: 4, Conditions: conds("GateFailed", false, true)}), false, 4, false, "ended (RolledBack)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PauseShown(tc.c, tc.paused, tc.gen)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "default/app") {
					t.Fatalf("PauseShown = %v, %v; want an error naming default/app and %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("PauseShown = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestPausePatch: one merge patch sets spec.paused and names who set it.
func TestPausePatch(t *testing.T) {
	for _, paused := range []bool{true, false} {
		var got map[string]any
		if err := json.Unmarshal(PausePatch(paused, "alice"), &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"metadata": map[string]any{"annotations": map[string]any{v1alpha1.PausedByAnnotation: "alice"}}, "spec": map[string]any{"paused": paused}}
		if g, w := mustJSON(got), mustJSON(want); g != w {
			t.Errorf("PausePatch(%t) = %s, want %s", paused, g, w)
		}
	}
}

// TestCommandPatch: the JSON patch tests the annotation is absent (null) before it adds
// it; on an object without annotations, the whole map.
func TestCommandPatch(t *testing.T) {
	req := v1alpha1.CommandRequest{Command: "promote", ID: "k-1", By: "alice", At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), SkipGates: true}
	value := `{"command":"promote","id":"k-1","by":"alice","at":"2026-01-02T03:04:05Z","skipGates":true}`
	for _, tc := range []struct {
		has  bool
		want string
	}{
		{true, `[{"op":"test","path":"/metadata/annotations/crossfade.io~1command","value":null},` +
			`{"op":"add","path":"/metadata/annotations/crossfade.io~1command","value":` + mustJSON(value) + `}]`},
		{false, `[{"op":"test","path":"/metadata/annotations","value":null},` +
			`{"op":"add","path":"/metadata/annotations","value":{"crossfade.io/command":` + mustJSON(value) + `}}]`},
	} {
		got, err := CommandPatch(req, tc.has)
		if err != nil || string(got) != tc.want {
			t.Errorf("CommandPatch(annotations %t) = %s, %v\nwant %s", tc.has, got, err, tc.want)
		}
	}
}

// TestOutcomeOf: a command's outcome is its journal entry or its answer, found by ID;
// another command's are not it. A refusal, or an entry saying it was not acted on, is an
// error naming the cutover and why.
func TestOutcomeOf(t *testing.T) {
	result := func(id, refused, detail string) map[string]string {
		return map[string]string{v1alpha1.ResultAnnotation: mustJSON(v1alpha1.CommandResult{ID: id, Command: "promote", By: "alice", Refused: refused, Detail: detail})}
	}
	journal := []v1alpha1.JournalEntry{{Seq: 1, Kind: "start", Step: -1}, {Seq: 7, Kind: "control", Step: -1, ID: "k-1", By: "alice", Detail: "promote"},
		{Seq: 8, Kind: "control", Step: -1, ID: "k-2", By: "bob", Detail: "pause ignored: rolling back"}}
	req := v1alpha1.CommandRequest{Command: "promote", ID: "k-1"}
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		journal  []v1alpha1.JournalEntry
		id       string
		found    bool
		entrySeq int
		wantErr  string
	}{
		{"nothing yet", nil, journal[:1], "k-1", false, 0, ""},
		{"journaled", nil, journal, "k-1", true, 7, ""},
		{"journaled as not acted on", nil, journal, "k-2", true, 8, "not acted on: rolling back"},
		{"another command's answer", result("k-9", "no", ""), journal[:1], "k-1", false, 0, ""},
		{"refused", result("k-1", "the cutover has not started", ""), journal[:1], "k-1", true, 0, "refused by the controller: the cutover has not started"},
		{"done", result("k-1", "", "released 2 records"), journal[:1], "k-1", true, 0, ""},
		{"an answer that is not JSON", map[string]string{v1alpha1.ResultAnnotation: "{"}, journal[:1], "k-1", false, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := withStatus(1, false, v1alpha1.CutoverStatus{Journal: tc.journal})
			c.Annotations = tc.ann
			out, ok := OutcomeOf(c, tc.id)
			if ok != tc.found {
				t.Fatalf("OutcomeOf found = %v, want %v (%+v)", ok, tc.found, out)
			}
			if tc.entrySeq != 0 && (out.Entry == nil || out.Entry.Seq != tc.entrySeq) {
				t.Errorf("entry %+v, want seq %d", out.Entry, tc.entrySeq)
			}
			r := req
			r.ID = tc.id
			err := out.Err("default/app", r)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Err = %v, want nil", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "default/app")):
				t.Errorf("Err = %v, want one naming default/app and %q", err, tc.wantErr)
			}
		})
	}
}

// TestErrorMessages: the refusals name the object, the command in the way, and what to do.
func TestErrorMessages(t *testing.T) {
	waiting := mustJSON(v1alpha1.CommandRequest{Command: "abort", ID: "k-77", By: "bob", At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	for _, tc := range []struct {
		err  error
		want []string
	}{
		{&WaitingError{Cutover: "shop/app", Waiting: waiting}, []string{"cutover shop/app: another command is waiting: abort k-77 by bob at 2026-01-02T03:04:05Z",
			"kubectl annotate cutover app -n shop crossfade.io/command-"}},
		{&WaitingError{Cutover: "shop/app", Waiting: "junk"}, []string{"another command is waiting: junk"}},
		{&NoControllerError{Cutover: "shop/app", Timeout: time.Minute}, []string{"no controller took the command within 60s: is `crossfade controller --cutovers` running for namespace shop?",
			"The command is still waiting in annotation crossfade.io/command of Cutover shop/app", "kubectl annotate cutover app -n shop crossfade.io/command-"}},
		{&NoControllerError{Cutover: "shop/app", Timeout: 1500 * time.Millisecond, Taken: true}, []string{"taken from annotation crossfade.io/command of Cutover shop/app but not journaled or answered within 1.5s",
			"kubectl crossfade status app -n shop"}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.err.Error(), w) {
				t.Errorf("%T: %q lacks %q", tc.err, tc.err.Error(), w)
			}
		}
	}
}

// TestNewID: an ID is "k-" and 12 hex digits, valid as the protocol wants, and new each time.
func TestNewID(t *testing.T) {
	a, b := NewID(), NewID()
	if a == b || len(a) != 14 || !strings.HasPrefix(a, "k-") {
		t.Fatalf("NewID = %q, %q", a, b)
	}
	if _, err := v1alpha1.ParseCommandRequest(mustJSON(v1alpha1.CommandRequest{Command: "abort", ID: a})); err != nil {
		t.Errorf("ID %q refused by the protocol: %v", a, err)
	}
}

// TestTable: NAME PHASE STEP WEIGHTS AGE, a dash for what is not there yet.
func TestTable(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	a := withStatus(1, false, v1alpha1.CutoverStatus{Phase: v1alpha1.PhasePaused, Progress: "2/4", Weights: map[string]int64{"green": 50, "blue": 50}})
	a.CreationTimestamp = metav1.NewTime(now.Add(-90 * time.Minute))
	b := withStatus(1, false, v1alpha1.CutoverStatus{})
	b.Name, b.CreationTimestamp = "web", metav1.NewTime(now.Add(-5*time.Second))
	var buf bytes.Buffer
	if err := Table(&buf, []v1alpha1.Cutover{*a, *b}, now); err != nil {
		t.Fatal(err)
	}
	want := "NAME   PHASE    STEP   WEIGHTS            AGE\n" +
		"app    Paused   2/4    blue=50,green=50   90m\n" +
		"web    -        -      -                  5s\n"
	if buf.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", buf.String(), want)
	}
}
