package cutover

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/authority"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/levertest"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// The authority-tag protocol's runs through the engine, one table run for every lever it
// guards (levertest.TagLevers), each against the sandbox's real API for that lever: the
// tags at a run's first write and at its end, a second runner refused, an abort's
// takeover, tags a run could not remove, release, and a resume as the same runner. What a
// lever's read, write and let-go do alone is lever/authority's tags_test.go.

// tagConfig is a Config for p with h's lever over its API, counted in c (nil: the bare
// client), in state directory dir.
func tagConfig(h *levertest.TagLever, p *spec.Plan, c *levertest.Calls, dir string) Config {
	cfg := quietConfig(p, dir)
	cfg.Levers = h.Levers(c)
	return cfg
}

// journalKinds are the kinds of the entries of cutover name's journal in dir.
func journalKinds(t *testing.T, dir, name string) []string {
	t.Helper()
	entries, err := journal.Read(PathsFor(dir, name).Journal)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Kind)
	}
	return out
}

// TestAuthorityTagsRun runs cutovers through the engine against the sandbox: the run tags
// the resources at its first write, before any weight write, and removes its tags when it
// ends, journaling it; a second runner (another state directory) is refused naming the
// holder, with nothing written; abort from a third takes the resources over and rolls
// back; a run whose tags could not be removed at its end leaves them to `run --resume` of
// the ended cutover; `release` then finds nothing left, and refuses another runner's tags
// unless --force.
func TestAuthorityTagsRun(t *testing.T) {
	levertest.ForEachTagLever(t, func(t *testing.T, h *levertest.TagLever) {
		ctx := context.Background()
		h.Reset(t)

		// A whole run: tagged at the first write, untagged at the end.
		dir := t.TempDir()
		c := levertest.NewCalls()
		if _, err := Run(ctx, tagConfig(h, h.Plan("whole"), c, dir), false); err != nil {
			t.Fatal(err)
		}
		if got := h.Authority(t); len(got) != 0 {
			t.Errorf("tags after the run: %q", got)
		}
		if k := journalKinds(t, dir, "whole"); k[len(k)-2] != kindDone || k[len(k)-1] != kindReleased {
			t.Errorf("journal %v: want done, then released", k)
		}
		if c.N(h.TagOp) != len(h.Res) || c.N(h.UntagOp) != len(h.Res) {
			t.Errorf("calls %v: want %d %s and %d %s", c, len(h.Res), h.TagOp, len(h.Res), h.UntagOp)
		}
		for _, op := range h.WriteOps {
			if c.First(op) < 0 || c.First(h.TagOp) > c.First(op) {
				t.Errorf("calls %v: want %s before any %s", c, h.TagOp, op)
			}
		}
		if got := h.State(t); got != h.AtTo {
			t.Fatalf("weights after the run: %s, want %s", got, h.AtTo)
		}
		h.Reset(t)

		// Another machine holds the resources: the run is refused before it writes.
		holder := registry.Runner{Token: "0d0d0d0d0d0d0d0d", Host: "ci-7", PID: 4242}
		h.Put(t, levertest.OnEvery, authority.Key("second", holder.Token), authority.Value(holder))
		dir = t.TempDir()
		c = levertest.NewCalls()
		_, err := Run(ctx, tagConfig(h, h.Plan("second"), c, dir), false)
		var held *HeldError
		if !errors.As(err, &held) || held.Holder != holder || !strings.Contains(err.Error(), "held by another runner, runner 0d0d0d0d0d0d0d0d@ci-7:4242 (tag "+authority.Key("second", holder.Token)+" on "+h.First().Name+")") {
			t.Fatalf("second runner: %v, want *HeldError naming the holder", err)
		}
		if k := journalKinds(t, dir, "second"); slices.Contains(k, kindWritten) || slices.Contains(k, kindStart) || h.Writes(c) > 0 {
			t.Errorf("the refused runner journaled %v, calls %v", k, c)
		}
		// An abort from a machine with a journal of the cutover takes the resources over.
		dir = t.TempDir()
		start := fmt.Sprintf(`{"seq":1,"time":%q,"kind":"start","step":-1,"weights":%s,"token":"b0b0b0b0b0b0b0b0"}`+"\n", time.Now().UTC().Format(time.RFC3339Nano), h.AbortStart)
		if err := os.WriteFile(filepath.Join(dir, "second.journal"), []byte(start), 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := Abort(ctx, tagConfig(h, h.Plan("second"), nil, dir))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(rep.Controls, func(e journal.Entry) bool {
			return e.Kind == kindTakeover && strings.Contains(e.Detail, "took the weights over from runner 0d0d0d0d0d0d0d0d@ci-7:4242")
		}) {
			t.Errorf("abort's report controls %+v: want the takeover", rep.Controls)
		}
		if got := h.State(t); got != h.AbortState {
			t.Errorf("weights after the abort: %s, want its start %s", got, h.AbortState)
		}
		if got := h.Authority(t); len(got) != 0 {
			t.Errorf("tags after the abort ended: %q", got)
		}
		h.Reset(t)

		// Tags left by a run that could not remove them: the resume of the ended cutover does.
		dir = t.TempDir()
		c = levertest.NewCalls()
		c.FailUntag = h.DenyUntag
		if _, err := Run(ctx, tagConfig(h, h.Plan("left"), c, dir), false); err != nil {
			t.Fatal(err)
		}
		if got := h.Authority(t); len(got) != len(h.Res) {
			t.Fatalf("tags after a run that could not remove them: %q", got)
		}
		if _, err := Run(ctx, tagConfig(h, h.Plan("left"), nil, dir), true); err != nil {
			t.Fatal(err)
		}
		if got := h.Authority(t); len(got) != 0 {
			t.Errorf("tags after the resume of the ended cutover: %q", got)
		}
		if k := journalKinds(t, dir, "left"); k[len(k)-1] != kindReleased {
			t.Errorf("journal %v: want the resume's released entry last", k)
		}
		if rel, err := Release(ctx, tagConfig(h, h.Plan("left"), nil, dir), ReleaseOptions{}); err != nil || rel.Records != 0 {
			t.Errorf("release after all: %+v %v, want nothing to remove", rel, err)
		}
		// Release refuses another runner's tag of the cutover, and removes it with force.
		h.Put(t, levertest.OnFirst, authority.Key("left", holder.Token), authority.Value(holder))
		if _, err := Release(ctx, tagConfig(h, h.Plan("left"), nil, dir), ReleaseOptions{}); !errors.As(err, &held) {
			t.Errorf("release of another runner's tags: %v, want *HeldError", err)
		}
		rel, err := Release(ctx, tagConfig(h, h.Plan("left"), nil, dir), ReleaseOptions{Force: true})
		if err != nil || rel.Records != 1 || !slices.Equal(rel.TakenOver, []registry.Runner{holder}) {
			t.Errorf("release --force: %+v %v", rel, err)
		}
		if got := h.Authority(t); len(got) != 0 {
			t.Errorf("tags after release --force: %q", got)
		}
	})
}

// TestAuthorityTagsResume: a runner stopped after its first write (a kill, as far as the
// resources know) resumes as the same runner, its token from the journal: the tags it left
// are its own, and the resume completes without a takeover.
func TestAuthorityTagsResume(t *testing.T) {
	levertest.ForEachTagLever(t, func(t *testing.T, h *levertest.TagLever) {
		h.Reset(t)
		dir := t.TempDir()
		p := h.Plan("resumed")
		p.Steps[0].Pause = time.Hour
		ctx, cancel := context.WithCancel(context.Background())
		cfg := tagConfig(h, p, nil, dir)
		done := make(chan error, 1)
		go func() { _, err := Run(ctx, cfg, false); done <- err }()
		deadline := time.Now().Add(10 * time.Second)
		for len(h.Authority(t)) < len(h.Res) || h.State(t) != h.AtHalf {
			if time.Now().After(deadline) {
				cancel()
				<-done
				t.Fatal("the run never wrote its first step")
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		<-done
		tags := h.Authority(t)
		p.Steps[0].Pause = 0
		if _, err := Run(context.Background(), cfg, true); err != nil {
			t.Fatalf("resume: %v (tags before: %q)", err, tags)
		}
		entries, err := journal.Read(PathsFor(dir, "resumed").Journal)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Kind == kindTakeover {
				t.Errorf("the resume took the resources over from itself: %+v", e)
			}
		}
		if got := h.State(t); got != h.AtTo {
			t.Errorf("weights %s after the resume, want %s", got, h.AtTo)
		}
		if got := h.Authority(t); len(got) != 0 {
			t.Errorf("tags after the resumed run ended: %q", got)
		}
	})
}

// quietConfig is a Config for the shared run tests: fast checks, no log.
func quietConfig(p *spec.Plan, dir string) Config {
	return Config{Plan: p, StateDir: dir, By: "test@host", CheckInterval: 5 * time.Millisecond, PollInterval: 5 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)}
}
