package lever

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/registry"
)

// snapA and snapB are two levers' snapshot types: a lever written against snapA must
// never be handed a snapB as one.
type snapA struct {
	SnapshotBase
	w map[string]int64
}

func (s *snapA) Weights() map[string]int64            { return s.w }
func (s *snapA) Members() []Member                    { return nil }
func (s *snapA) TTL() int64                           { return 0 }
func (s *snapA) GateInput(map[string]int64) GateInput { return GateInput{} }
func (s *snapA) NoTraffic(map[string]int64) string    { return "" }
func (s *snapA) Skipped() []string                    { return nil }
func (s *snapA) TakenOver() []registry.Runner         { return nil }
func (s *snapA) StartData() json.RawMessage           { return nil }
func (s *snapA) LogAttr() slog.Attr                   { return slog.String("lever", "a") }

type snapB struct{ snapA }

// typedA is a lever written against *snapA; it records the snapshots its methods got.
type typedA struct {
	Base
	got []*snapA
	// readErr fails Read, returning no snapshot.
	readErr error
}

func (l *typedA) Kind() string { return "a" }
func (l *typedA) Read(context.Context, ReadOptions) (*snapA, error) {
	if l.readErr != nil {
		return nil, l.readErr
	}
	return &snapA{w: map[string]int64{"blue": 100}}, nil
}
func (l *typedA) StartProblems(s *snapA) []string { l.got = append(l.got, s); return nil }
func (l *typedA) Check(s *snapA, _ Change) []string {
	l.got = append(l.got, s)
	return nil
}
func (l *typedA) Write(ctx context.Context, s *snapA, _ Change, env Env[*snapA]) (Written, error) {
	l.got = append(l.got, s)
	fresh, err := env.Read(ctx)
	if err != nil {
		return Written{}, err
	}
	l.got = append(l.got, fresh)
	return Written{After: fresh}, env.BeforeSend(fresh)
}
func (l *typedA) InEffect(_ context.Context, _ Written, after *snapA) (bool, error) {
	l.got = append(l.got, after)
	return after != nil, nil
}
func (l *typedA) DryRun(_ context.Context, s *snapA, _ Change) (Rendered, error) {
	l.got = append(l.got, s)
	return Rendered{After: s}, nil
}
func (l *typedA) Describe(_ context.Context, s *snapA, d *Description) error {
	l.got = append(l.got, s)
	d.Lever = "a"
	return nil
}
func (l *typedA) Summary(s *snapA) string { l.got = append(l.got, s); return "lever a" }
func (l *typedA) DriftCause() string      { return "a test" }

// TestWrapConvertsOnce: a wrapped lever gets its own snapshots back, in every method and
// through WriteEnv; a snapshot of another lever's type is refused with an error naming
// both types, never a panic; a failed read is a nil Snapshot, not a typed nil; the
// capabilities it does not have are Base's.
func TestWrapConvertsOnce(t *testing.T) {
	ctx := context.Background()
	ta := &typedA{}
	lv := Wrap[*snapA](ta)
	s, err := lv.Read(ctx, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	own := s.(*snapA)
	lv.StartProblems(s)
	lv.Check(s, Change{})
	var sent Snapshot
	w, err := lv.Write(ctx, s, Change{}, WriteEnv{What: "step 1",
		Read:       func(context.Context) (Snapshot, error) { return s, nil },
		BeforeSend: func(s Snapshot) error { sent = s; return nil }})
	if err != nil || sent != s || w.After != s {
		t.Fatalf("write: %v, before send got %v, after %v; want the snapshot read", err, sent, w.After)
	}
	if ok, err := lv.InEffect(ctx, w); !ok || err != nil {
		t.Errorf("in effect: %v, %v", ok, err)
	}
	if _, err := lv.DryRun(ctx, s, Change{}); err != nil {
		t.Error(err)
	}
	var d Description
	if err := lv.Describe(ctx, s, &d); err != nil || d.Lever != "a" {
		t.Errorf("describe: %v, %+v", err, d)
	}
	if got := lv.Summary(s); got != "lever a" {
		t.Errorf("summary %q", got)
	}
	for i, g := range ta.got {
		if g != own {
			t.Errorf("call %d got snapshot %p, want the one read, %p", i, g, own)
		}
	}

	// Another lever's snapshot: refused by every method, naming both types.
	other := &snapB{}
	const names = "snapshot is a *lever.snapB, want a *lever.snapA"
	for name, got := range map[string]string{
		"start problems": strings.Join(lv.StartProblems(other), ""),
		"check":          strings.Join(lv.Check(other, Change{}), ""),
		"summary":        lv.Summary(other),
	} {
		if !strings.Contains(got, names) {
			t.Errorf("%s on another lever's snapshot: %q, want %q", name, got, names)
		}
	}
	errs := map[string]error{}
	_, errs["write"] = lv.Write(ctx, other, Change{}, WriteEnv{What: "step 1"})
	_, errs["in effect"] = lv.InEffect(ctx, Written{After: other})
	_, errs["dry run"] = lv.DryRun(ctx, other, Change{})
	errs["describe"] = lv.Describe(ctx, other, &Description{})
	_, errs["env read"] = lv.Write(ctx, s, Change{}, WriteEnv{What: "step 1",
		Read: func(context.Context) (Snapshot, error) { return other, nil }, BeforeSend: func(Snapshot) error { return nil }})
	for name, err := range errs {
		if err == nil || !strings.Contains(err.Error(), names) {
			t.Errorf("%s on another lever's snapshot: %v, want an error with %q", name, err, names)
		}
	}

	// A failed read returns no snapshot at all: the engine tests it against nil.
	failing := Wrap[*snapA](&typedA{readErr: errors.New("throttled")})
	if s, err := failing.Read(ctx, ReadOptions{}); s != nil || err == nil {
		t.Errorf("failed read: %#v, %v; want nil and the error", s, err)
	}

	// Base: no selection, nothing to let go of, nothing to release.
	if _, err := lv.Select(ctx); !errors.Is(err, ErrCannotSelect) {
		t.Errorf("select: %v, want ErrCannotSelect", err)
	}
	if n, others, err := lv.LetGo(ctx, registry.Runner{Token: "t"}, OwnKeepOthers); n != 0 || others != nil || err != nil {
		t.Errorf("let go: %d %v %v, want nothing", n, others, err)
	}
	if r, err := lv.Release(ctx, ReleaseRequest{Token: "t"}); err != nil || r.Records != 0 {
		t.Errorf("release: %+v %v, want nothing", r, err)
	}
	if own.AliasTTL() != 0 || own.RecordTTLs() != nil {
		t.Errorf("SnapshotBase: alias TTL %d, record TTLs %v; want none", own.AliasTTL(), own.RecordTTLs())
	}
}
