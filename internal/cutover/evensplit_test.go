package cutover

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// TestStartRefusesAnEvenSplit: a record whose weighted sets are all 0 (e.g. after a
// release and a re-sync of two sources that ask for 0) is answered evenly by Route 53.
// plan and run refuse to start there, naming the record, what Route 53 does with it and
// how to set a start, and run writes nothing. A third cluster's weight that carries the
// traffic makes 0/0 members an ordinary start.
func TestStartRefusesAnEvenSplit(t *testing.T) {
	e := newEnv(t, 0, 0)
	cfg := e.config(testPlan(t))
	wants := []string{
		"app.example.com A: every weighted set has weight 0 (blue=0 green=0)",
		"Route 53 answers a group whose weights are all 0 evenly",
		"service/default/app: set external-dns.alpha.kubernetes.io/aws-weight to 100 and sync it, so that blue has all the traffic",
	}
	for name, call := range map[string]func() error{
		"plan": func() error { _, err := DryRun(context.Background(), cfg); return err },
		"run":  func() error { _, err := Run(context.Background(), cfg, false); return err },
	} {
		err := call()
		var nr *NotReadyError
		if !errors.As(err, &nr) {
			t.Fatalf("%s from 0/0: %v, want *NotReadyError", name, err)
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", name, err, w)
			}
		}
	}
	if _, ok := e.authorityOf(t); ok {
		t.Error("run wrote the authority record though it refused to start")
	}
	if entries, _ := journal.Read(PathsFor(e.dir, "app").Journal); len(entries) != 0 {
		t.Errorf("run journaled %d entries though it refused to start: %+v", len(entries), entries)
	}

	// A third cluster at 50 takes the traffic: 0/0 members are not an even split then.
	if rep, err := publishAs(e.DNS, "purple", "127.0.0.30", 50, 1); err != nil || rep.Err() != nil {
		t.Fatalf("publish purple: %v", errors.Join(err, rep.Err()))
	}
	if _, err := DryRun(context.Background(), cfg); err != nil {
		t.Errorf("plan with purple at 50: %v", err)
	}
}

// TestStepRefusesAnEvenSplit: a step whose weights are both 0 where no other set of the
// record carries traffic is refused, at plan and at run: Route 53 splits it evenly, which
// is what percent 50 says plainly; it does not take the traffic off both members.
func TestStepRefusesAnEvenSplit(t *testing.T) {
	e := newEnv(t, 100, 0)
	p := testPlan(t)
	p.Steps[1].Weights = spec.Weights{}
	cfg := e.config(p)
	want := "spec.steps[1]: weights from 0, to 0 leave every weighted set of app.example.com A at 0, which Route 53 answers evenly"
	if _, err := DryRun(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("plan: %v, want %q", err, want)
	}
	if _, err := Run(context.Background(), cfg, false); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("run: %v, want %q", err, want)
	}
	if a, _ := e.Weights(t); a["blue"] != 100 || a["green"] != 0 {
		t.Errorf("weights %v after a refused run", a)
	}
	// Beside a third cluster at 50, 0/0 moves all traffic to it: allowed.
	if rep, err := publishAs(e.DNS, "purple", "127.0.0.30", 50, 1); err != nil || rep.Err() != nil {
		t.Fatalf("publish purple: %v", errors.Join(err, rep.Err()))
	}
	if _, err := DryRun(context.Background(), cfg); err != nil {
		t.Errorf("plan with purple at 50: %v", err)
	}
}

// TestRollbackNeverLandsOnAnEvenSplit: a cutover journaled with a 0/0 start (begun before
// such a start was refused) and aborted at 50/50 rolls back to all traffic on from, not
// onto the even split it started from.
func TestRollbackNeverLandsOnAnEvenSplit(t *testing.T) {
	e := newEnv(t, 50, 50)
	paths := PathsFor(e.dir, "app")
	seedJournal(t, paths.Journal, []journal.Entry{
		{Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 0, "green": 0}, By: "test"},
		{Kind: kindStepPassed, Step: 0}, {Kind: kindStepPassed, Step: 1},
		{Kind: kindIntent, Step: 2, Weights: map[string]int64{"blue": 50, "green": 50}},
	})
	if _, err := Abort(context.Background(), e.config(testPlan(t))); err != nil {
		t.Fatalf("abort: %v", err)
	}
	if a, _ := e.Weights(t); a["blue"] != 100 || a["green"] != 0 {
		t.Errorf("weights after the rollback %v, want blue=100 green=0", a)
	}
}

// TestRollbackHome is the rule behind it, per start: the rollback returns to the starting
// weights unless they would leave a record's weighted sets all 0 (the lever's NoTraffic;
// the Route 53 lever's is tested with it).
func TestRollbackHome(t *testing.T) {
	for _, tc := range []struct {
		name   string
		start  map[string]int64
		others map[string]int64
		want   string
	}{
		{"ordinary start", map[string]int64{"blue": 100, "green": 0}, nil, "blue=100 green=0"},
		{"all on to", map[string]int64{"blue": 0, "green": 100}, nil, "blue=0 green=100"},
		{"even split", map[string]int64{"blue": 0, "green": 0}, nil, "blue=100 green=0"},
		{"even split with a third at 0", map[string]int64{"blue": 0, "green": 0}, map[string]int64{"purple": 0}, "blue=100 green=0"},
		{"a third cluster carries the traffic", map[string]int64{"blue": 0, "green": 0}, map[string]int64{"purple": 50}, "blue=0 green=0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPlan(t)
			r := &runner{p: p, start: tc.start, log: slog.New(slog.DiscardHandler), live: evenSnap{others: tc.others}}
			stops := rollbackStops(p, map[string]int64{"blue": 50, "green": 50}, r.home())
			if got := FormatWeights(stops[len(stops)-1]); got != tc.want {
				t.Errorf("rollback to %s, want %s", got, tc.want)
			}
		})
	}
}

// evenSnap is a lever of one record whose members have the weights a runner gives, and
// others (other clusters' sets) theirs: it has no traffic where every weight is 0, as
// Route 53 answers such a group evenly.
type evenSnap struct {
	fakeSnap
	others map[string]int64
}

func (s evenSnap) NoTraffic(w map[string]int64) string {
	for _, m := range []map[string]int64{w, s.others} {
		for _, v := range m {
			if v != 0 {
				return ""
			}
		}
	}
	return "app.example.com A"
}

// TestGradualRollbackStopsAreNeverAnEvenSplit: the stops a gradual rollback passes
// through are percents, and the start it ends at is never all 0, from any step.
func TestGradualRollbackStopsAreNeverAnEvenSplit(t *testing.T) {
	p := testPlan(t)
	p.Rollback = spec.PlanRollback{Mode: spec.RollbackGradual, Steps: []spec.Weights{{From: 0, To: 100}, {From: 50, To: 50}, {From: 90, To: 10}, {From: 100, To: 0}}}
	l := evenSnap{}
	r := &runner{p: p, start: map[string]int64{"blue": 0, "green": 0}, live: l, log: slog.New(slog.DiscardHandler)}
	for _, current := range []map[string]int64{{"blue": 0, "green": 0}, {"blue": 0, "green": 100}, {"blue": 1, "green": 3}, {"blue": 50, "green": 50}} {
		for _, stop := range rollbackStops(p, current, r.home()) {
			if l.NoTraffic(stop) != "" {
				t.Errorf("rollback from %s passes through the even split %s", FormatWeights(current), FormatWeights(stop))
			}
		}
	}
}
