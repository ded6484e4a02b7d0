// Package lever is the seam between the cutover engine (internal/cutover) and the levers
// it pulls (internal/cutover/lever/route53, alb, cloudmap): what a lever is, what it
// reads and writes, and the errors the engine branches on. It imports neither side.
package lever

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// Lever is what a cutover pulls to move traffic from one cluster to the other: Route 53
// weighted record sets (route53), the target-group weights of ALB listener rules (alb) or
// the custom health status of Cloud Map instances (cloudmap). The runner, the journal, the
// control commands, the rollback, the report, the progress table and the dashboard see the
// lever through this seam only, and speak of weights as the plan does: from and to
// (spec.Plan.From, To) → weight. A lever is written against its own snapshot type (Typed)
// and wrapped once (Wrap) into a Lever.
//
// A lever is used by one runner at a time; it may keep what it resolved once (a zone, a
// target group's ARN) between calls.
type Lever interface {
	// Kind names the lever in the journal and the report: Route53, ALB or CloudMap.
	Kind() string
	// Read reads what the plan moves, as it stands now, and checks that a cutover can move
	// it: a *ReadError when it could not be read at all, a *NotReadyError (or another
	// error, e.g. *HeldError) when what it read refuses the cutover.
	Read(ctx context.Context, o ReadOptions) (Snapshot, error)
	// StartProblems lists why a cutover may not start from s (e.g. members whose weights
	// differ between records or rules, a step that would send a rule's traffic nowhere);
	// nil when it may.
	StartProblems(s Snapshot) []string
	// Check lists why c may not be written on s: a run refuses the write, a rollback
	// writes what it can and logs them.
	Check(s Snapshot, c Change) []string
	// Write sends c, built on s (read just before, its drift checked), as one step: in
	// one atomic request where the API has one (a Route 53 change batch), else as the
	// lever says (ALB: one call per rule, in the plan's order; a write interrupted half
	// way is redone whole, rules already at the weights skipped). It returns what it
	// sent, for the journal and to wait on.
	Write(ctx context.Context, s Snapshot, c Change, env WriteEnv) (Written, error)
	// InEffect reports whether w is in effect: Route 53's change INSYNC, every ALB rule
	// describing the weights written.
	InEffect(ctx context.Context, w Written) (bool, error)
	// DryRun renders c built on s exactly as Write would send it (for `cutover plan`),
	// and what s becomes once it is.
	DryRun(ctx context.Context, s Snapshot, c Change) (Rendered, error)
	// Describe fills the lever's part of a preview: where it writes, what it moves as
	// it stands, and the lever's own warnings.
	Describe(ctx context.Context, s Snapshot, d *Description) error
	// Summary says, for the start entry, what the cutover moves: "zone example.com (Z1),
	// 1 records, from blue to green, TTL 60s".
	Summary(s Snapshot) string
	// DriftCause says what usually moves a weight this lever holds, for DriftError.
	DriftCause() string
	Capabilities
}

// Capabilities are what only some levers can do; Base gives each a default, so that the
// engine calls them on any lever and never probes for them.
type Capabilities interface {
	// Select selects what a plan that selects a whole cluster (spec.select,
	// spec.alb.select) moves, as the zone or the load balancers stand now. Base:
	// ErrCannotSelect.
	Select(ctx context.Context) (Selection, error)
	// LetGo removes a runner's hold on the weights where it ends with the cutover (the
	// ALB and Cloud Map levers' authority tags): me's, and others' as mode says. It
	// returns how many resources it untagged and whose tags, not me's, it removed. Base:
	// nothing held, 0 (the Route 53 lever's authority record stays until Release: its
	// publishers honour it).
	LetGo(ctx context.Context, me registry.Runner, mode LetGoMode) (int, []registry.Runner, error)
	// HeldWhat names, for logs and the journal, what LetGo removes the tags from:
	// "listener rules", "Cloud Map services". Base: "resources".
	HeldWhat() string
	// Release hands the weights back after the cutover (`cutover release`): it removes
	// the authority records or tags of the runner r.Token (every runner's of this
	// cutover with r.Force). Base: LetGo with OwnRefuseOthers, or EveryRunner with force.
	Release(ctx context.Context, r ReleaseRequest) (ReleaseResult, error)
}

// ErrCannotSelect is Base's Select: the lever cannot select what a plan moves.
var ErrCannotSelect = errors.New("the lever cannot select")

// Base gives a lever the defaults of Capabilities, as external-dns's BaseProvider does:
// a lever embeds it and overrides what it can do.
type Base struct{}

// Select refuses: the lever cannot select (ErrCannotSelect).
func (Base) Select(context.Context) (Selection, error) { return Selection{}, ErrCannotSelect }

// LetGo holds nothing that ends with the cutover: it removes nothing.
func (Base) LetGo(context.Context, registry.Runner, LetGoMode) (int, []registry.Runner, error) {
	return 0, nil, nil
}

// HeldWhat is "resources".
func (Base) HeldWhat() string { return "resources" }

// Release has nothing to hand back: it removes nothing.
func (Base) Release(context.Context, ReleaseRequest) (ReleaseResult, error) {
	return ReleaseResult{}, nil
}

// LetGoMode says whom a release removes the authority tags of.
type LetGoMode int

const (
	// OwnKeepOthers removes this runner's keys and leaves others' (a run that ends).
	OwnKeepOthers LetGoMode = iota
	// OwnRefuseOthers removes this runner's keys, and refuses (*HeldError) when another
	// runner's are there (`cutover release`).
	OwnRefuseOthers
	// EveryRunner removes every runner's keys of the cutover (`cutover release --force`).
	EveryRunner
)

// ReleaseRequest is what `cutover release` asks of a lever.
type ReleaseRequest struct {
	// Token is the runner whose records or tags are released: the journal's.
	Token string
	// Force releases whatever stands in the way: other runners' records or tags, and
	// (Route 53) publishers that ask for other weights or have not confirmed the hold.
	Force bool
	// Wait is how long to wait for the publishers (Route 53); Poll the first interval
	// between two reads while waiting (0: 10 s).
	Wait, Poll time.Duration
	// Log receives what the release waits for.
	Log *slog.Logger
}

// ReleaseResult is what a lever's Release did.
type ReleaseResult struct {
	// None says there was nothing to release (no authority record left): nothing is
	// journaled.
	None bool
	// Records is the number of authority records deleted (the tag levers: resources
	// untagged); 0 with nothing to release.
	Records int
	// ChangeID is the provider's change that deleted them (Route 53), "" otherwise.
	ChangeID string
	// TakenOver are the runners, not Token, whose records or tags were removed (force).
	TakenOver []registry.Runner
	// Changes, Gone and Unconfirmed are the Route 53 sets released anyway with force.
	Changes     []HandBack
	Gone        []Departure
	Unconfirmed []Unconfirmed
}

// Lever kinds, as Lever.Kind and the journal name them.
const (
	// Route53 is the weights of Route 53 weighted record sets.
	Route53 = "route53"
	// ALB is the target-group weights of ALB listener rules.
	ALB = "alb"
	// CloudMap is the custom health status of Cloud Map instances.
	CloudMap = "cloudmap"
)

// Snapshot is a lever as read at one moment (or as a write leaves it).
type Snapshot interface {
	// Weights are from and to → weight as they stand. Every record (every rule) of a
	// plan moves together, so the first one's speak for all.
	Weights() map[string]int64
	// Members are every weight the cutover writes or must see unchanged, as read: drift
	// is a member whose weight is not the one last written.
	Members() []Member
	// TTL is the least time, in seconds, a step holds its weights: how long clients may
	// still act on the weights before them (the records' TTL; 0 for the ALB, whose weights
	// apply to the next request).
	TTL() int64
	// GateInput is what the gates and the retire check learn of the lever with from and
	// to at w (from/to → weight; others as read; nil: as read).
	GateInput(w map[string]int64) GateInput
	// RecordTTLs are, per record, the TTL its weighted sets share (the Route 53 lever,
	// for spec.ttl.lower and its restore). SnapshotBase: none (a lever without TTLs).
	RecordTTLs() map[spec.Record]int64
	// AliasTTL is the longest TTL the plan's alias members' targets answer with, which no
	// TTL lowering changes (the Route 53 lever). SnapshotBase: 0 (no alias members).
	AliasTTL() int64
	// NoTraffic names a place where weights w (from/to → weight; others as read) would
	// leave every weight 0 ("app.example.com A", a rule), "" when there is none: Route 53
	// answers such a group evenly, an ALB forwards such a rule nowhere.
	NoTraffic(w map[string]int64) string
	// Skipped says which members a partial read (ReadOptions.Partial) left out, and why.
	Skipped() []string
	// TakenOver are the runners whose authority records (the ALB lever: authority tags)
	// the next write replaces (an abort or a forced release taking the weights over); nil
	// when there are none.
	TakenOver() []registry.Runner
	// StartData is what the start entry keeps of the snapshot for the report and a resume
	// (the records' TTLs, the rules' forward actions).
	StartData() json.RawMessage
	// LogAttr names where it was read, for logs: the zone, the load balancer's rules.
	LogAttr() slog.Attr
}

// SnapshotBase gives a snapshot the defaults of what only the Route 53 lever has: a
// snapshot embeds it and overrides what it has.
type SnapshotBase struct{}

// RecordTTLs is none: the lever has no TTLs to lower.
func (SnapshotBase) RecordTTLs() map[spec.Record]int64 { return nil }

// AliasTTL is 0: the lever has no alias members.
func (SnapshotBase) AliasTTL() int64 { return 0 }

// GateInput is what the gates learn of a lever at some weights.
type GateInput struct {
	// Targets are, per record, set identifier → the member's values, for the DNS gate
	// (the Route 53 lever).
	Targets map[spec.Record]map[string][]string
	// TargetGroups are, for the ALB gates and retire.cloudWatch, every target group of
	// the rules, with the weight the rules give it (the ALB lever).
	TargetGroups []gate.TargetGroup
}

// Description is the lever's part of a preview (`cutover plan`): the engine copies it
// into its Preview.
type Description struct {
	// Lever is the lever's kind.
	Lever string
	// Zone is where the Route 53 lever writes; TTL the members' largest TTL in seconds.
	Zone provider.Zone
	TTL  int64
	// Owners are "name type [set-id]" and its owner, one line each.
	Owners []string
	// Rules are the lever's rules (the Cloud Map service), one line each with its weights
	// now; Health is each of their target groups' (clusters') health.
	Rules, Health []string
	// Notes are what the lever wants known that is no warning; Warnings what is.
	Notes, Warnings []string
}

// Member is one weight a lever holds, as read.
type Member struct {
	// Key identifies the member across reads: "app.example.com A [blue]", or a rule's ARN
	// and a target group's ARN.
	Key string
	// Name shows it in messages: the key, or "rule …/9683b2d02a6cabee: target group green".
	Name string
	// Weight is its weight as read.
	Weight int64
	// Source says who else writes it, e.g. "published by owner blue from service/x".
	Source string
}

// Change is one write a runner asks of a lever.
type Change struct {
	// Weights are from and to → weight; nil leaves the weights as they are.
	Weights map[string]int64
	// TTLs set each record's TTL (spec.ttl.lower and its restore); nil leaves the TTLs.
	// Only the Route 53 lever has TTLs; the ALB lever refuses a change that sets them.
	TTLs map[spec.Record]int64
}

// ReadOptions say how strict a read is, and for whom it reads.
type ReadOptions struct {
	// Partial skips members that are missing or cannot be moved, instead of refusing:
	// a rollback or a release does what it still can.
	Partial bool
	// Runner is the run that writes: an authority record (the ALB lever: an authority tag
	// on a rule) of this cutover that carries another runner token is another runner's,
	// and refused (*HeldError).
	Runner registry.Runner
	// Takeover lets the write replace another runner's authority record or tags of this
	// cutover instead: an abort or a forced release taking the weights over, explicitly.
	Takeover bool
	// Held says this process has written the authority records (tags) already: finding
	// them gone means someone released the weights meanwhile, and the runner stops rather
	// than take them again behind that person's back.
	Held bool
	// Started says the cutover's journal has its start entry: a member missing then is one
	// the cutover started from and may have moved (*MemberGoneError, acted on as drift),
	// whichever process wrote last; before it, a member missing refuses the start
	// (*NotReadyError): nothing was moved yet.
	Started bool
}

// WriteEnv is what a lever's Write needs of the runner that calls it.
type WriteEnv struct {
	// What names the write in logs and errors: "step 2 of 4".
	What string
	// Comment names it to the provider, e.g. as a Route 53 change's comment.
	Comment string
	// Read reads the lever afresh as the runner reads before a write, and Drift returns
	// the drift a read shows (nil when none): a lever that retries a refused write reads
	// again, and stops on drift rather than write over it.
	Read  func(ctx context.Context) (Snapshot, error)
	Drift func(s Snapshot) error
	// BeforeSend is called with the snapshot each attempt is built on, before it is sent:
	// the runner keeps it, and journals a takeover it makes.
	BeforeSend func(s Snapshot) error
	// Log receives the lever's logs.
	Log *slog.Logger
}

// Written is what a lever's Write sent.
type Written struct {
	// ID is the provider's change id to follow (Route 53); "" where there is none.
	ID string
	// IDs are every change id of a write that sent several requests (a plan of several
	// zones: one batch per zone), ID being the first; nil when it sent one. The journal
	// keeps ID, and the lever puts IDs in Data.
	IDs []string
	// Detail says what was sent, for the journal: "5 changes", "1 ModifyRule, 1
	// ModifyListener".
	Detail string
	// Calls counts the changes or calls sent.
	Calls int
	// Data is what the journal keeps of the write for the report: for the ALB, every
	// rule's forward action as written (the Terraform block at the end).
	Data json.RawMessage
	// Pending says, in an error, what was not reached in time: "change C2 not INSYNC".
	Pending string
	// After is the lever as it is once the write is in effect.
	After Snapshot
}

// Rendered is a write as DryRun renders it.
type Rendered struct {
	// Doc is the request exactly as it would be sent: Route 53's --change-batch JSON, or
	// one `aws elbv2` command per call.
	Doc []byte
	// Calls counts the changes (Route 53) or calls (ALB) in it; 0 sends nothing.
	Calls int
	// After is the lever once it is written.
	After Snapshot
}

// Drift is one member whose weight is not the one the cutover last wrote.
type Drift struct {
	// Member names the member, e.g. "app.example.com A [blue]".
	Member string `json:"member"`
	// Found is the weight the lever holds; Wrote the one the cutover expected.
	Found int64 `json:"found"`
	Wrote int64 `json:"wrote"`
	// Source names the member's publisher: its owner and the object it comes from.
	Source string `json:"source,omitempty"`
}

// DriftError is weights found that the cutover did not write: while it holds them, only a
// writer that ignores it (crossfade's publishers keep the weights while its authority
// record is there; nothing guards an ALB rule) can have moved them, and the step's gates
// would be judging traffic at weights nobody chose.
type DriftError struct {
	// Expected says what the weights compared against are, followed by the weight in
	// messages: "the cutover wrote", or, before a run's first write, "the cutover started
	// from" or "the cutover resumed at".
	Expected string
	// Members are the members that moved.
	Members []Drift
	// Cause says what usually moves them; "" is DriftCause, the Route 53 lever's.
	Cause string
}

// DriftCause says what was seen of a held Route 53 weight that moved, and who may have
// moved it: the runner sees the weight, not its writer, so it asserts none.
const DriftCause = "written by something other than this cutover while crossfade's authority record held it (which writer is not known; " + LikelyWriters + ")"

// LikelyWriters lists who usually changes a record set behind a cutover's back.
const LikelyWriters = "likely: a publisher that ignores the authority record, e.g. external-dns with an aws-weight annotation, a person in the console or CLI, or infrastructure as code such as Terraform"

// Error names every member that moved, with the weight found, the weight written and the
// likely cause.
func (e *DriftError) Error() string {
	var parts []string
	for _, d := range e.Members {
		parts = append(parts, fmt.Sprintf("%s has weight %d, %s %d (%s)", d.Member, d.Found, e.Expected, d.Wrote, d.Source))
	}
	cause := e.Cause
	if cause == "" {
		cause = DriftCause
	}
	return fmt.Sprintf("weights drifted: %s: %s", strings.Join(parts, "; "), cause)
}

// MemberGoneError is a member the cutover holds (it has started, or this process has
// written the weights) that is gone from the lever: its record set deleted by another
// writer or by a publisher, its listener rule deleted, every instance of a cluster
// deregistered from its Cloud Map service. The runner acts on it as on drift
// (spec.onDrift), a resumed run as a running one: it pauses, or rolls back the members
// that are left; it never stops with traffic split.
type MemberGoneError struct {
	// Member names it: "app.example.com A [blue]", or "listener rule arn:…".
	Member string
	// Where is where it was looked for: "zone example.com.", "load balancer listener".
	Where string
	// Fix says how to bring it back; "" is "re-publish it".
	Fix string
}

// Error names the member, where it is gone from, and what to do.
func (e *MemberGoneError) Error() string {
	fix := e.Fix
	if fix == "" {
		fix = "re-publish it"
	}
	return fmt.Sprintf("member %s is gone from %s while the cutover held it: deleted by something other than this cutover (which writer is not known; "+
		"likely: a publisher whose source no longer lists it, a person in the console or CLI, or infrastructure as code such as Terraform): "+
		"%s, then `crossfade cutover resume`, or `crossfade cutover abort` to roll the other members back", e.Member, e.Where, fix)
}

// ReadError is a lever that could not be read at all (the provider failed, or the zone is
// not found), as opposed to one read whose state refuses the cutover.
type ReadError struct {
	Err error
}

// Error is the provider's error.
func (e *ReadError) Error() string { return e.Err.Error() }

// Unwrap gives the provider's error.
func (e *ReadError) Unwrap() error { return e.Err }

// NotReadyError lists why the zone (or the listener rules) does not hold what the plan
// moves.
type NotReadyError struct {
	Problems []string
	// Lever is the lever whose state refuses the cutover ("" is Route53): it names
	// what is not ready.
	Lever string
	// Unmeasured is set when the problems are measurements that cannot be taken now (a
	// gate, the retire rate), not the state the lever moves: the heading then names
	// those, not the zone, which may be fine.
	Unmeasured bool
}

// Error lists the problems, one per line.
func (e *NotReadyError) Error() string {
	if e.Unmeasured {
		return "what this cutover measures cannot be read now:\n  " + strings.Join(e.Problems, "\n  ")
	}
	what := "the zone"
	switch e.Lever {
	case ALB:
		what = "the listener rules are"
	case CloudMap:
		what = "the Cloud Map service is"
	default:
		what += " is"
	}
	return what + " not ready for this cutover:\n  " + strings.Join(e.Problems, "\n  ")
}

// FormatWeights renders "blue=90 green=10" in set identifier order.
func FormatWeights(w map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(w)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, w[k]))
	}
	return strings.Join(parts, " ")
}

// GateClients are what gates call besides the URLs their specs name.
type GateClients struct {
	// DNSServers are asked by DNS gates whose spec lists no servers (the zone's
	// authoritative servers, as the caller knows them).
	DNSServers []string
	// ELB reads target health for targetHealth gates.
	ELB gate.TargetHealthAPI
	// CloudWatch reads the ALB's metrics for albTraffic gates.
	CloudWatch gate.MetricsAPI
	// CloudWatchDelay is how long after a period ends CloudWatch holds all of it: the
	// plan's spec.alb.cloudWatch.delay (spec.Plan.CloudWatchDelay).
	CloudWatchDelay time.Duration
	// ServiceDiscovery calls DiscoverInstances for cloudMapDiscovery gates, with the
	// plan's service and query, CloudMap.
	ServiceDiscovery gate.DiscoveryAPI
	CloudMap         *spec.CloudMap
}

// Factory builds the lever a plan pulls and the clients its gates call. It is given the
// engine's own copy of the plan: a selecting plan's records or rules are filled in on it
// after the lever is built, and the lever must see them. Building calls no AWS API.
type Factory func(p *spec.Plan) (Lever, GateClients, error)
