package lever

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// HeldError is a cutover whose weights another runner of it holds: its authority record
// (the ALB lever: an authority tag on a listener rule) carries another runner token. Two runners of one cutover (two machines, two state
// directories) would write over each other's steps; the one that came second stops.
type HeldError struct {
	// Cutover is the cutover's name.
	Cutover string
	// Record is the authority record's name (the Route 53 lever).
	Record string
	// Tag names the authority tag and the resource it is on (the ALB lever: a listener
	// rule; the Cloud Map lever: the service), e.g. "tag crossfade.io/cutover/shop/TOKEN
	// on rule shop/9683b2d02a6cabee".
	Tag string
	// Holder is the runner the record or tag names; zero for a record written before
	// runners were recorded.
	Holder registry.Runner
}

// Error names the holder and what can be done.
func (e *HeldError) Error() string {
	who := "runner " + e.Holder.String()
	if e.Holder.Token == "" {
		who = "a runner that records no token (crossfade before runner tokens, or its journal from then)"
		if e.Holder.Host != "" {
			who += " at " + e.Holder.Host
		}
	}
	where := "record " + e.Record
	if e.Tag != "" {
		where = e.Tag
	}
	return fmt.Sprintf("cutover %s: its weights are held by another runner, %s (%s): a cutover runs from one place at a time; "+
		"if that runner is gone, or its run ended without `crossfade cutover release`, take the weights over from here with `crossfade cutover abort` (rolls back) or `crossfade cutover release --force`",
		e.Cutover, who, where)
}

// HandBack is a weighted set whose publisher asks for another weight than the zone holds:
// the weight that publisher writes at its next sync once the weights are released. The
// publisher records what its source asks for, while a cutover holds the weight, in the
// set's ownership record (endpoint.WantsWeightLabel).
type HandBack struct {
	// Member is the set's key, e.g. "app.example.com A [blue]".
	Member string
	// Wants is the weight the source asks for; Holds the one the zone holds.
	Wants, Holds int64
	// Advice says which source to change, and how, for the weight to stay as it is.
	Advice string
}

// String says how source and zone differ.
func (h HandBack) String() string {
	if h.Wants < 0 {
		return fmt.Sprintf("%s: its ownership record does not say which weight its source asks for, the zone holds %d", h.Member, h.Holds)
	}
	return fmt.Sprintf("%s: its source asks for weight %d, the zone holds %d", h.Member, h.Wants, h.Holds)
}

// Effect says what a release lets happen to the set.
func (h HandBack) Effect() string {
	if h.Wants < 0 {
		return fmt.Sprintf("%s goes to whatever weight its source asks for at its publisher's next sync", h.Member)
	}
	return fmt.Sprintf("%s goes from weight %d to %d at its publisher's next sync", h.Member, h.Holds, h.Wants)
}

// Unconfirmed is a weighted set of a held name whose publisher has not confirmed, since
// the hold began, what its source asks for (endpoint.ConfirmsHoldLabel): it may write
// anything at its next sync once the weights are released.
type Unconfirmed struct {
	// Member is the set's key, e.g. "app.example.com A [blue]".
	Member string
	// Owner is the owner id in its ownership record: the publisher that must confirm.
	Owner string
	// Resource is the object that published it, "" when unknown.
	Resource string
	// Seen is the hold its ownership record confirms, "" for none (an earlier hold's id
	// otherwise).
	Seen string
}

// String names the set, its publisher and what its record says.
func (u Unconfirmed) String() string {
	s := fmt.Sprintf("%s: owner %s", u.Member, u.Owner)
	if u.Resource != "" {
		s += " (" + u.Resource + ")"
	}
	if u.Seen == "" {
		return s + " has not confirmed this hold"
	}
	return s + " last confirmed an earlier hold (" + u.Seen + "), not this one"
}

// Departure is a weighted set of a held name that no source asks for any more: its
// publisher keeps it while the hold lasts, and deletes it at its next sync once the
// weights are released.
type Departure struct {
	// Member is the set's key, e.g. "app.example.com A [blue]".
	Member string
	// Holds is the set's weight in the zone.
	Holds int64
	// Advice says how to keep the set.
	Advice string
}

// String says what the publisher asks.
func (d Departure) String() string {
	return fmt.Sprintf("%s: no source asks for it any more, the zone holds weight %d", d.Member, d.Holds)
}

// Effect says what a release lets happen to the set.
func (d Departure) Effect() string {
	return fmt.Sprintf("%s (weight %d) goes away at its publisher's next sync", d.Member, d.Holds)
}

// ReleaseRefusedError is a release that would change traffic, or might: publishers ask
// for other weights than the zone holds, or for no member at all, and would write that at
// their next sync; or a publisher has not confirmed since the hold began what its source
// asks for, and could write anything.
type ReleaseRefusedError struct {
	// Cutover is the cutover's name.
	Cutover string
	// Sets are the weighted sets whose weight would change.
	Sets []HandBack
	// Gone are the weighted sets no source asks for any more: deleted at their
	// publisher's next sync.
	Gone []Departure
	// Unconfirmed are the weighted sets whose publisher has not confirmed this hold.
	Unconfirmed []Unconfirmed
	// Waited is how long release waited for the publishers (release --wait); 0 when it
	// did not wait.
	Waited time.Duration
}

// Error names each set, both weights (or what is missing) and what to do.
func (e *ReleaseRefusedError) Error() string {
	var b strings.Builder
	if len(e.Sets)+len(e.Gone) > 0 {
		fmt.Fprintf(&b, "cutover %s: release would change traffic: once released, each publisher writes the weight its source asks for at its next sync, and these sources ask for other weights than the zone holds:", e.Cutover)
		for _, h := range e.Sets {
			fmt.Fprintf(&b, "\n  %s: %s", h, h.Advice)
		}
		for _, g := range e.Gone {
			fmt.Fprintf(&b, "\n  %s: %s", g, g.Advice)
		}
		b.WriteString("\nset each source to the weight the zone holds and sync it, then release again; or `crossfade cutover release --force` to let those weights apply")
	}
	if len(e.Unconfirmed) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "cutover %s: release refused: no confirmation since the hold began from the publishers of these sets, so what they would write once released is unknown:", e.Cutover)
		for _, u := range e.Unconfirmed {
			fmt.Fprintf(&b, "\n  %s", u)
		}
		b.WriteString("\nrun `crossfade sync` for that cluster, or wait for its controller: it confirms within 5 minutes; `crossfade cutover release --wait 10m` waits; `--force` releases without")
	}
	if e.Waited > 0 {
		fmt.Fprintf(&b, "\nwaited %s for the publishers", e.Waited)
	}
	return b.String()
}

// Selection is what a plan that selects a whole cluster (spec.select, spec.alb.select)
// selected when its cutover started. It is kept in the start entry: every later run
// (a resume, an abort, a release) moves exactly these, so that a name or a rule added
// to the zone or the load balancer mid-cutover is never moved half way.
type Selection struct {
	// Records are the weighted record sets selected (spec.select), in name order.
	Records []spec.Record `json:"records,omitempty"`
	// ListenerRules are the listener and rule ARNs selected (spec.alb.select), in the
	// load balancers' order, each listener's default action before its rules.
	ListenerRules []string `json:"listenerRules,omitempty"`
}

// Lines lists the selection for people, one record or rule each.
func (s Selection) Lines() []string {
	var out []string
	for _, r := range s.Records {
		out = append(out, r.Name+" "+r.Type)
	}
	for _, arn := range s.ListenerRules {
		out = append(out, ruleKind(arn)+" "+arn)
	}
	return out
}

// ruleKind names what an ARN is: "listener" (its default action) or "rule".
func ruleKind(arn string) string {
	if spec.IsListenerARN(arn) {
		return "listener"
	}
	return "rule"
}

// Backoff waits before attempt+1 of a refused write: growing, with jitter, so that two
// writers racing for the same resources do not keep meeting.
func Backoff(ctx context.Context, attempt int) error {
	d := time.Duration(attempt) * 25 * time.Millisecond
	d += rand.N(d)
	return Sleep(ctx, d)
}

// Sleep waits for d, or until ctx is done (its error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Drifts are the members that moved, for the journal.
func (e *DriftError) Drifts(map[string]int64) []Drift { return e.Members }

// Drifts is the member gone, found at weight 0, expect (the weights written) giving the
// weight it had.
func (e *MemberGoneError) Drifts(expect map[string]int64) []Drift {
	return []Drift{{Member: e.Member, Found: 0, Wrote: expect[e.Member], Source: "gone from " + e.Where}}
}

// LowerTTLs returns the TTL writes that lower every record whose weighted sets have a TTL
// above lower (from ttls, a record's TTL) to lower; a record already at or below it keeps
// its own.
func LowerTTLs(ttls map[spec.Record]int64, lower int64) map[spec.Record]int64 {
	out := map[spec.Record]int64{}
	for r, t := range ttls {
		if t > lower {
			out[r] = lower
		}
	}
	return out
}

// CASAttempts bounds how many times a write is built again from a fresh read after the
// provider refused it because something it read changed before it landed (a publisher's
// new targets for a member, another runner's tag): the compare-and-swap lost a race, and
// the next try usually wins.
const CASAttempts = 8

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
