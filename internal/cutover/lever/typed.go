package lever

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/crossfade-io/crossfade/internal/registry"
)

// Typed is a lever written against its own snapshot type S (a Route 53 zone as read, ALB
// listener rules, a Cloud Map service): Wrap makes it a Lever, converting the engine's
// Snapshot back to S in one checked place, so that no lever asserts a snapshot's type.
type Typed[S Snapshot] interface {
	// Kind, Summary and DriftCause are Lever's.
	Kind() string
	// Read is Lever.Read, returning the lever's own snapshot.
	Read(ctx context.Context, o ReadOptions) (S, error)
	// StartProblems, Check, DryRun, Describe and Summary are Lever's, on S.
	StartProblems(s S) []string
	Check(s S, c Change) []string
	// Write is Lever.Write on S, with an Env that reads S.
	Write(ctx context.Context, s S, c Change, env Env[S]) (Written, error)
	// InEffect is Lever.InEffect, with after the snapshot w leaves (w.After as S; its
	// zero value when the write kept none).
	InEffect(ctx context.Context, w Written, after S) (bool, error)
	DryRun(ctx context.Context, s S, c Change) (Rendered, error)
	Describe(ctx context.Context, s S, d *Description) error
	Summary(s S) string
	DriftCause() string
	Capabilities
}

// Env is WriteEnv for a lever written against S.
type Env[S Snapshot] struct {
	// What and Comment name the write, as in WriteEnv.
	What, Comment string
	// Read, Drift and BeforeSend are WriteEnv's, on S.
	Read       func(ctx context.Context) (S, error)
	Drift      func(s S) error
	BeforeSend func(s S) error
	// Log receives the lever's logs.
	Log *slog.Logger
}

// Wrap makes t a Lever: the one place a Snapshot becomes a lever's own S again. A
// snapshot of another type (another lever's, given by mistake) is an error naming both
// types, never a panic: Check and StartProblems refuse with it.
func Wrap[S Snapshot](t Typed[S]) Lever { return wrapped[S]{t: t} }

// wrapped is a Typed lever as the engine sees it.
type wrapped[S Snapshot] struct {
	t Typed[S]
}

// As converts s to the snapshot type S of a lever of kind kind.
func As[S Snapshot](kind string, s Snapshot) (S, error) {
	v, ok := s.(S)
	if !ok {
		var zero S
		return zero, fmt.Errorf("%s lever: snapshot is a %T, want a %T", kind, s, zero)
	}
	return v, nil
}

func (w wrapped[S]) as(s Snapshot) (S, error) { return As[S](w.t.Kind(), s) }

// Kind is the lever's.
func (w wrapped[S]) Kind() string { return w.t.Kind() }

// Read returns the lever's snapshot; none (nil) with an error the lever returns none with.
func (w wrapped[S]) Read(ctx context.Context, o ReadOptions) (Snapshot, error) {
	s, err := w.t.Read(ctx, o)
	if err != nil && isZero(s) {
		return nil, err
	}
	return s, err
}

// isZero reports whether s is S's zero value (a nil pointer): an interface holding one
// is not nil, and the engine tests a snapshot against nil.
func isZero[S Snapshot](s S) bool {
	var zero S
	return any(s) == any(zero)
}

// StartProblems is the lever's, or the conversion's error.
func (w wrapped[S]) StartProblems(s Snapshot) []string {
	v, err := w.as(s)
	if err != nil {
		return []string{err.Error()}
	}
	return w.t.StartProblems(v)
}

// Check is the lever's, or the conversion's error: the write is refused.
func (w wrapped[S]) Check(s Snapshot, c Change) []string {
	v, err := w.as(s)
	if err != nil {
		return []string{err.Error()}
	}
	return w.t.Check(v, c)
}

// Write converts s and the env's snapshots to S.
func (w wrapped[S]) Write(ctx context.Context, s Snapshot, c Change, env WriteEnv) (Written, error) {
	v, err := w.as(s)
	if err != nil {
		return Written{}, fmt.Errorf("%s: %w", env.What, err)
	}
	te := Env[S]{What: env.What, Comment: env.Comment, Log: env.Log}
	if env.Read != nil {
		te.Read = func(ctx context.Context) (S, error) {
			fresh, err := env.Read(ctx)
			if err != nil {
				var zero S
				return zero, err
			}
			return w.as(fresh)
		}
	}
	if env.Drift != nil {
		te.Drift = func(s S) error { return env.Drift(s) }
	}
	if env.BeforeSend != nil {
		te.BeforeSend = func(s S) error { return env.BeforeSend(s) }
	}
	return w.t.Write(ctx, v, c, te)
}

// InEffect converts w.After (none: S's zero value).
func (w wrapped[S]) InEffect(ctx context.Context, wr Written) (bool, error) {
	var after S
	if wr.After != nil {
		v, err := w.as(wr.After)
		if err != nil {
			return false, err
		}
		after = v
	}
	return w.t.InEffect(ctx, wr, after)
}

// DryRun is the lever's on s converted.
func (w wrapped[S]) DryRun(ctx context.Context, s Snapshot, c Change) (Rendered, error) {
	v, err := w.as(s)
	if err != nil {
		return Rendered{}, err
	}
	return w.t.DryRun(ctx, v, c)
}

// Describe is the lever's on s converted.
func (w wrapped[S]) Describe(ctx context.Context, s Snapshot, d *Description) error {
	v, err := w.as(s)
	if err != nil {
		return err
	}
	return w.t.Describe(ctx, v, d)
}

// Summary is the lever's on s converted, or the conversion's error.
func (w wrapped[S]) Summary(s Snapshot) string {
	v, err := w.as(s)
	if err != nil {
		return err.Error()
	}
	return w.t.Summary(v)
}

// DriftCause is the lever's.
func (w wrapped[S]) DriftCause() string { return w.t.DriftCause() }

// Select is the lever's.
func (w wrapped[S]) Select(ctx context.Context) (Selection, error) { return w.t.Select(ctx) }

// LetGo is the lever's.
func (w wrapped[S]) LetGo(ctx context.Context, me registry.Runner, mode LetGoMode) (int, []registry.Runner, error) {
	return w.t.LetGo(ctx, me, mode)
}

// HeldWhat is the lever's.
func (w wrapped[S]) HeldWhat() string { return w.t.HeldWhat() }

// Release is the lever's.
func (w wrapped[S]) Release(ctx context.Context, r ReleaseRequest) (ReleaseResult, error) {
	return w.t.Release(ctx, r)
}
