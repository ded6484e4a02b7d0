package cutover

import (
	"context"
	"fmt"

	"github.com/crossfade-io/crossfade/internal/cutover/lever"
)

// The seam between the engine and its levers lives in package lever; these are its names
// as the engine and its callers have always spelt them.
type (
	// Lever is lever.Lever: what a cutover pulls.
	Lever = lever.Lever
	// Snapshot is lever.Snapshot: a lever as read at one moment.
	Snapshot = lever.Snapshot
	// Member is lever.Member: one weight a lever holds.
	Member = lever.Member
	// Change is lever.Change: one write a runner asks of a lever.
	Change = lever.Change
	// ReadOptions is lever.ReadOptions: how strict a read is, and for whom.
	ReadOptions = lever.ReadOptions
	// WriteEnv is lever.WriteEnv: what a lever's Write needs of the runner.
	WriteEnv = lever.WriteEnv
	// Written is lever.Written: what a lever's Write sent.
	Written = lever.Written
	// Rendered is lever.Rendered: a write as DryRun renders it.
	Rendered = lever.Rendered
	// Selection is lever.Selection: what a selecting plan selected at start.
	Selection = lever.Selection
	// Drift is lever.Drift: one member whose weight the cutover did not write.
	Drift = lever.Drift
	// DriftError is lever.DriftError: weights found that the cutover did not write.
	DriftError = lever.DriftError
	// MemberGoneError is lever.MemberGoneError: a held member gone from the lever.
	MemberGoneError = lever.MemberGoneError
	// ReadError is lever.ReadError: a lever that could not be read at all.
	ReadError = lever.ReadError
	// NotReadyError is lever.NotReadyError: what the plan moves is not ready.
	NotReadyError = lever.NotReadyError
	// HeldError is lever.HeldError: another runner of the cutover holds its weights.
	HeldError = lever.HeldError
	// HandBack is lever.HandBack: a set whose publisher asks for another weight.
	HandBack = lever.HandBack
	// Departure is lever.Departure: a set no source asks for any more.
	Departure = lever.Departure
	// Unconfirmed is lever.Unconfirmed: a set whose publisher has not confirmed the hold.
	Unconfirmed = lever.Unconfirmed
	// ReleaseRefusedError is lever.ReleaseRefusedError: a release that would change traffic.
	ReleaseRefusedError = lever.ReleaseRefusedError
)

// Lever kinds, as Lever.Kind and the journal name them.
const (
	// LeverRoute53 is lever.Route53.
	LeverRoute53 = lever.Route53
	// LeverALB is lever.ALB.
	LeverALB = lever.ALB
	// LeverCloudMap is lever.CloudMap.
	LeverCloudMap = lever.CloudMap
)

// FormatWeights renders "blue=90 green=10" in set identifier order (lever.FormatWeights).
func FormatWeights(w map[string]int64) string { return lever.FormatWeights(w) }

// newLever builds the lever the plan pulls, and the clients its gates call: cfg.Lever
// when set, else cfg.Levers's.
func newLever(cfg Config) (Lever, GateClients, error) {
	switch {
	case cfg.Lever != nil:
		return cfg.Lever, GateClients{DNSServers: cfg.DNSServers}, nil
	case cfg.Levers == nil:
		// A runner that only replays its journal (or takes commands) pulls nothing: the
		// lack is an error when, and only if, the lever is pulled.
		return noLever{cutover: cfg.Plan.Name}, GateClients{DNSServers: cfg.DNSServers}, nil
	}
	lv, gc, err := cfg.Levers(cfg.Plan)
	gc.DNSServers = cfg.DNSServers
	return lv, gc, err
}

// noLever stands for the lever of a Config that gives none: every pull fails naming the
// cutover; what needs no lever (replaying the journal, control commands) works.
type noLever struct {
	lever.Base
	cutover string
}

// err is what every pull of the missing lever returns.
func (n noLever) err() error {
	return fmt.Errorf("cutover %s: no lever to pull: the configuration gives neither Levers nor Lever", n.cutover)
}

// Kind is "none".
func (n noLever) Kind() string { return "none" }

// Read fails: there is nothing to read.
func (n noLever) Read(context.Context, ReadOptions) (Snapshot, error) {
	return nil, &ReadError{Err: n.err()}
}

// StartProblems refuses the start.
func (n noLever) StartProblems(Snapshot) []string { return []string{n.err().Error()} }

// Check refuses every write.
func (n noLever) Check(Snapshot, Change) []string { return []string{n.err().Error()} }

// Write fails.
func (n noLever) Write(context.Context, Snapshot, Change, WriteEnv) (Written, error) {
	return Written{}, n.err()
}

// InEffect fails.
func (n noLever) InEffect(context.Context, Written) (bool, error) { return false, n.err() }

// DryRun fails.
func (n noLever) DryRun(context.Context, Snapshot, Change) (Rendered, error) {
	return Rendered{}, n.err()
}

// Describe fails.
func (n noLever) Describe(context.Context, Snapshot, *lever.Description) error { return n.err() }

// Summary says there is none.
func (n noLever) Summary(Snapshot) string { return "no lever" }

// DriftCause is unknown.
func (n noLever) DriftCause() string { return "unknown (no lever)" }

// Release fails: there is nothing to release with.
func (n noLever) Release(context.Context, lever.ReleaseRequest) (lever.ReleaseResult, error) {
	return lever.ReleaseResult{}, n.err()
}

// memberWeights returns each member's weight by key: what a write leaves (after it is in
// effect) or what a run starts from, for drift to compare against.
func memberWeights(s Snapshot) map[string]int64 {
	ms := s.Members()
	out := make(map[string]int64, len(ms))
	for _, m := range ms {
		out[m.Key] = m.Weight
	}
	return out
}

// drift lists the members of s whose weight differs from expect (key → weight, as
// memberWeights returns it). A member expect does not know counts as written 0: weighing
// nothing, it is no drift; weighing more, it takes traffic nobody chose (a target group
// added to an ALB rule). (A Route 53 read has the same members every time.)
func drift(s Snapshot, expect map[string]int64) []Drift {
	var out []Drift
	for _, m := range s.Members() {
		want := expect[m.Key]
		if want == m.Weight {
			continue
		}
		out = append(out, Drift{Member: m.Name, Found: m.Weight, Wrote: want, Source: m.Source})
	}
	return out
}
