package gate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// dnsConcurrency is how many queries are in flight at once: 200 samples at a remote name
// server's ~20ms round trip then take half a second, not four.
const dnsConcurrency = 8

// Answer classes that are not a member.
const (
	classOther = "other" // values that belong to no member, or to several
	classEmpty = "empty" // no answer of the record's type, or an error rcode
	// classUnanswered is a query no server replied to (timed out twice, refused by the
	// network): it says where the runner stands, not what the zone answers, so it is left
	// out of the shares rather than counted as an empty answer.
	classUnanswered = "unanswered"
	// classNoData is a NOERROR answer with no record of the type when no member's target
	// has an address of that type: the record answers nothing to anyone, so it is no
	// member's and no failure (see DNS, "not applicable").
	classNoData = "nodata"
)

// DNS samples the authoritative answers for each record of a step and compares the share
// each member gets with the share its weight promises.
//
// The statistics: with n samples and a member whose expected share is p, the measured
// share has standard deviation sqrt(p(1-p)/n). At the defaults (n = 200, tolerance 0.1) a
// 1:1 split has σ ≈ 0.035, so the tolerance is ≈ 2.8σ and a correct zone still fails one
// check in ~200 by chance; a 1:3 split has σ ≈ 0.031 (3.3σ); a 1:9 split σ ≈ 0.021 (4.7σ);
// 0:1 has σ = 0 and must be exact. Because the engine checks every few seconds through a
// whole pause, one chance failure in 200 would fail a long step at 50 % quite often. So a
// record whose only fault is a share outside the tolerance is sampled once more and judged
// on both samples together (σ shrinks by √2): a real misweighting (1:3 read as 1:1 is off
// by 0.25) fails both times, while a chance failure now needs two unlucky samples in a row,
// about one check in 10⁵. Empty answers and foreign values are never retried: the promise
// is that there are none at all.
//
// A query no server replies to is not an answer: the shares are judged on the answered
// samples, and a record with fewer than half its queries answered cannot be judged, so
// the check fails with Result.Err (could not measure), which the engine holds on for a few
// checks before failing the step, rather than rolling back because the runner's own
// network dropped packets.
//
// An alias member (its value is a host name: an A or AAAA record holds only addresses
// otherwise) is judged by its target: at every check the target's name is resolved, through
// the servers (which answer the names of the zones they host, and the sandbox its load
// balancers') or, when they refuse it (Route 53's servers do for a load balancer's name),
// the system resolver, and an answer is the member's when it holds the target's addresses,
// or shares addresses with that target and with no other member (a load balancer's
// addresses change, and one answer may hold part of them). Members whose values or
// addresses cannot be told apart, and an alias with weight whose target cannot be
// resolved, make the check fail with Result.Err: a share nobody can attribute is not
// measured.
//
// An alias's target may have no address of the record's type (an AAAA alias to a load
// balancer with IPv4 addresses only, the common ALB): Route 53 then answers the member's
// share of the queries with NOERROR and no record (NODATA). Such empty answers are the
// member's when it is the only one whose target answers nothing of the type; when several
// are, an empty answer could be any of theirs, and the check fails with Result.Err. When
// every member's target was resolved and has no address of the type, and every answer is
// NODATA, the record carries no traffic of that type at all: it is "not applicable", said
// so in Detail and counted neither as a failure nor as a pass. A resolution error is never
// read as "no address".
//
// An answer that matches no member, or an empty answer no member's target explains, is
// held back while the record is sampled; if there are any, the aliases' targets are
// resolved once more (once per record per check) and those answers attributed again:
// the first resolution may be older than the answers (a system resolver's cache, a load
// balancer that scaled since), and an answer of addresses the target has now is its
// member's. Only what the second resolution does not explain is counted as matching no
// member, or empty.
//
// The check's result: a judged record's failure fails the check, even when a record after
// it could not be measured; else an error on any record (could not measure) is the result;
// else it passes if at least one record was judged, and records not applicable are named
// in Detail. A check whose every record is
// not applicable judged nothing: it passes as Pending, so the step holds on (and fails at
// its time limit) rather than passing on no measurement.
//
// A plan of many records (a fleet cutover: a thousand names) is not sampled whole at every
// check: at 200 queries a record that is 200,000 queries a check. A check samples at most
// k records (WithSampleNames, default DefaultSampleNames) in turn, plus the suspects: the
// records whose last sample failed, could not be measured, or passed only on its second
// sample (at most k more, the longest suspected first), which are sampled again at every
// check until they pass on a first sample. The turn is a rotation over the plan's records
// shuffled by a seed drawn per gate (per run): check c samples positions c·k … c·k+k-1
// (mod N) of the shuffle, so over any ⌈N/k⌉ consecutive checks every record is sampled,
// and a wrong-weighted record fails the step at the latest at the ⌈N/k⌉-th check after the
// weights took effect (a check ended early, as by an error, moves the rotation only past
// the records it reached). Until every record has been judged right since the weights took
// effect (Step.Since and the weights: a rewrite starts again), a check that finds nothing
// wrong passes as Pending, so that a step cannot pass having measured part of its records;
// Detail starts with how many are judged. With N ≤ k every record is sampled at every
// check, as always. Values add "names" (N), "names.sampled", "names.judged" and
// "names.suspects" when sampling.
//
// Values, per record key "<name>/<type>": <key>.samples (answered), .unanswered, .empty,
// .other, and per member <key>.<id>.count, .share, .expected (and .addresses, for an alias,
// the number its target resolved to); <key>.notApplicable (1), <key>.nodata and each
// member's .expected for a record not applicable, instead of the shares; <key>.reresolved
// (1) when the targets were resolved again; and the totals "empty", "other", "unanswered"
// and "judged" (records).
type DNS struct {
	name      string
	servers   []string
	samples   int
	tolerance float64
	// system resolves an alias's target that the servers refuse; nil is net.DefaultResolver.
	system *net.Resolver
	// afterResolve, when set, is called after each record's targets are first resolved in a
	// check: tests change a load balancer's addresses there, as one that scales does.
	afterResolve func()
	// sampleNames is k, the records a check samples in turn; seed orders the rotation.
	sampleNames int
	seed        uint64

	mu  sync.Mutex // serializes checks: rot is the state between them
	rot rotation
}

// NewDNS builds a DNS gate from its spec and opts. Servers may be empty here:
// cutover.NewGate fills them from --dns-server (a gate with neither is refused there).
func NewDNS(name string, g spec.DNSGate, opts ...DNSOption) (*DNS, error) {
	d := &DNS{name: name, samples: g.Samples, tolerance: spec.DefaultDNSTolerance, seed: rand.Uint64()}
	for _, o := range opts {
		o(d)
	}
	if d.sampleNames < 0 {
		return nil, fmt.Errorf("gate %s: sampleNames %d: want 0 (the default %d) or more", name, d.sampleNames, DefaultSampleNames)
	}
	if d.sampleNames == 0 {
		d.sampleNames = DefaultSampleNames
	}
	if d.samples <= 0 {
		d.samples = spec.DefaultDNSSamples
	}
	if g.Tolerance != nil {
		d.tolerance = *g.Tolerance
	}
	if d.tolerance < 0 || d.tolerance > 1 {
		return nil, fmt.Errorf("gate %s: tolerance %v: want 0..1", name, d.tolerance)
	}
	for _, s := range g.Servers {
		if strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("gate %s: servers: empty address", name)
		}
		d.servers = append(d.servers, withPort(s, "53"))
	}
	return d, nil
}

// Name is the gate's name.
func (d *DNS) Name() string { return d.name }

// Servers are the name servers asked, host:port.
func (d *DNS) Servers() []string { return slices.Clone(d.servers) }

// tally counts where one record's sampled answers went.
type tally struct {
	mu         sync.Mutex
	total      int            // answered queries
	unanswered int            // queries no server replied to
	counts     map[string]int // member, classOther, classEmpty or classNoData → answers
	examples   map[string]string
	// open are the answers no member explained when they came: counted by settle, after
	// the aliases' targets may have been resolved again.
	open []reply
}

// reply is one sampled query's outcome.
type reply struct {
	// class is a member's id or a class above; "" for an answer no member explains yet.
	class   string
	example string
	// vals are an answer's values (nil for NODATA), kept to attribute it again.
	vals []string
}

// settle counts the open answers as m attributes them: a member's, else classOther (with
// values) or classEmpty (without).
func (t *tally) settle(m *matcher) {
	t.mu.Lock()
	open := t.open
	t.open = nil
	t.mu.Unlock()
	for _, a := range open {
		a.class = m.classify(a.vals)
		if a.class == "" {
			a.class = classOther
			if len(a.vals) == 0 {
				a.class = classEmpty
			}
		} else {
			a.example = ""
		}
		t.add(a)
	}
}

// tooFewAnswers reports whether fewer than half the queries were answered: too few to
// judge the shares on.
func (t *tally) tooFewAnswers() bool { return t.total*2 < t.total+t.unanswered }

func (t *tally) add(a reply) {
	t.mu.Lock()
	defer t.mu.Unlock()
	class, example := a.class, a.example
	switch class {
	case "":
		t.open = append(t.open, a)
		return
	case classUnanswered:
		t.unanswered++
	default:
		t.total++
		t.counts[class]++
	}
	if _, ok := t.examples[class]; !ok && example != "" {
		t.examples[class] = example
	}
}

// Check samples the step's records (every one, or the rotation's turn and the suspects:
// see the type's comment) and judges the shares.
func (d *DNS) Check(ctx context.Context, s Step) Result {
	r := Result{Gate: d.name, Kind: KindDNS}
	if len(d.servers) == 0 {
		return r.fail(errors.New("no name servers to ask: set servers, or let the engine fill in the zone's"))
	}
	if len(s.Records) == 0 {
		return r.fail(fmt.Errorf("step %d has no records to sample", s.Index))
	}
	if len(s.Weights) == 0 {
		return r.fail(fmt.Errorf("step %d has no weights to compare with", s.Index))
	}
	want := expectedShares(s.Weights)
	var next atomic.Uint64 // round robin over the servers across the whole check
	// The check samples its records in the rotation's order (suspects first, in a
	// shuffle by the gate's seed); its detail lists them in the plan's, so that two checks
	// of the same records read alike.
	var problems, summary, notApplicable byRecord
	var empty, other, unanswered, judged int
	d.mu.Lock()
	defer d.mu.Unlock()
	picked := d.rot.next(s, d.sampleNames, d.seed)
	// outcome is what the check found of each record it reached; the rotation learns it
	// however the check ends (a record it ended on stays unmeasured: a suspect).
	outcome := make(map[int]nameOutcome, len(picked.idx))
	noted := false
	defer func() {
		if !noted {
			d.rot.note(picked, outcome)
		}
	}()
	// stop ends the check on err, a record it could not measure: as "could not measure"
	// (Result.Err, which the engine holds on for a few checks), unless a record already
	// failed: a measured failure is never held off behind another record's error.
	stop := func(err error) Result {
		if len(problems) == 0 {
			return r.fail(err)
		}
		r.Pass = false
		r.Detail = problems.join() + " — and the check ended on " + err.Error()
		return r
	}
	for _, ri := range picked.idx {
		rec := s.Records[ri]
		outcome[ri] = nameUnmeasured
		key := rec.Name + "/" + recordType(rec)
		qtype, members, err := d.prepare(rec, s.Weights)
		if err != nil {
			return stop(err)
		}
		m, aliases, err := d.resolveAliases(ctx, key, qtype, members, s.Weights)
		if err != nil {
			return stop(err)
		}
		if d.afterResolve != nil {
			d.afterResolve()
		}
		t := &tally{counts: map[string]int{}, examples: map[string]string{}}
		reresolved := false
		// settle attributes the answers no member explained, after resolving the targets
		// once more if there are any (see the type's comment).
		settle := func() error {
			if len(t.open) > 0 && len(m.alias) > 0 && !reresolved && ctx.Err() == nil {
				reresolved = true
				again, notes, err := d.resolveAliases(ctx, key, qtype, members, s.Weights)
				if err != nil {
					return fmt.Errorf("resolving the alias targets again, as %d answers matched no member's addresses: %w", len(t.open), err)
				}
				m, aliases = again, notes
			}
			t.settle(m)
			return nil
		}
		d.sample(ctx, rec.Name, qtype, m, t, &next)
		if err := settle(); err != nil {
			return stop(err)
		}
		na := m.noneAnswers() && t.total > 0 && t.counts[classNoData] == t.total
		bad := d.deviations(t, want)
		retried := false
		if !na && len(bad) > 0 && t.counts[classEmpty] == 0 && t.counts[classOther] == 0 && t.counts[classNoData] == 0 && !t.tooFewAnswers() && ctx.Err() == nil {
			retried = true
			d.sample(ctx, rec.Name, qtype, m, t, &next) // see the type's comment
			if err := settle(); err != nil {
				return stop(err)
			}
			bad = d.deviations(t, want)
		}
		if err := ctx.Err(); err != nil {
			return r.fail(fmt.Errorf("check interrupted: %w", err))
		}
		if t.tooFewAnswers() {
			r.set(key+".unanswered", float64(t.unanswered))
			return stop(fmt.Errorf("%s: %d of %d queries got no reply (e.g. %s): too few answers to judge",
				key, t.unanswered, t.total+t.unanswered, t.examples[classUnanswered]))
		}
		for _, id := range sortedKeys(m.alias) {
			r.set(key+"."+id+".addresses", float64(len(m.members[id])))
		}
		if reresolved {
			r.set(key+".reresolved", 1)
			aliases = append(aliases, "targets resolved again: answers matched no member's addresses first")
		}
		unanswered += t.unanswered
		r.set(key+".samples", float64(t.total))
		r.set(key+".unanswered", float64(t.unanswered))
		if na {
			// Nothing to shift: say so, and judge nothing (see the type's comment).
			r.set(key+".notApplicable", 1)
			r.set(key+".nodata", float64(t.counts[classNoData]))
			for _, id := range sortedKeys(want) {
				r.set(key+"."+id+".expected", want[id])
			}
			line := fmt.Sprintf("%s: no member's target answers %s: this record carries no traffic, nothing to shift (%d answers, all NODATA", key, dns.TypeToString[qtype], t.total)
			if len(aliases) > 0 {
				line += "; " + strings.Join(aliases, "; ")
			}
			notApplicable = notApplicable.add(ri, line+")")
			outcome[ri] = nameNotApplicable
			continue
		}
		judged++
		before := len(problems)
		// NODATA no member explains (the targets answered nothing of the type, yet some
		// answers held addresses) is an empty answer like any other.
		t.counts[classEmpty] += t.counts[classNoData]
		delete(t.counts, classNoData)
		if _, ok := t.examples[classEmpty]; !ok {
			t.examples[classEmpty] = t.examples[classNoData]
		}
		empty += t.counts[classEmpty]
		other += t.counts[classOther]
		r.set(key+".empty", float64(t.counts[classEmpty]))
		r.set(key+".other", float64(t.counts[classOther]))
		got := shares(t.counts, t.total)
		var parts []string
		for _, id := range sortedKeys(want) {
			r.set(key+"."+id+".count", float64(t.counts[id]))
			r.set(key+"."+id+".share", got[id])
			r.set(key+"."+id+".expected", want[id])
			parts = append(parts, fmt.Sprintf("%s %s (want %s)", id, fmtPct(got[id]), fmtPct(want[id])))
		}
		line := fmt.Sprintf("%s: %s of %d answers", key, strings.Join(parts, ", "), t.total)
		if len(aliases) > 0 {
			line += " (" + strings.Join(aliases, "; ") + ")"
		}
		if t.unanswered > 0 {
			line += fmt.Sprintf(" (%d queries unanswered, e.g. %s)", t.unanswered, t.examples[classUnanswered])
		}
		summary = summary.add(ri, line)
		if n := t.counts[classEmpty]; n > 0 {
			problems = problems.add(ri, fmt.Sprintf("%s: %d of %d answers empty (e.g. %s)", key, n, t.total, t.examples[classEmpty]))
		}
		if n := t.counts[classOther]; n > 0 {
			problems = problems.add(ri, fmt.Sprintf("%s: %d of %d answers matched no member (e.g. %s)", key, n, t.total, t.examples[classOther]))
		}
		// Shares are only worth a word when every answer was a member's: otherwise they are
		// off because of the answers above, and saying so twice hides the cause.
		if len(bad) > 0 && t.counts[classEmpty] == 0 && t.counts[classOther] == 0 {
			var off []string
			for _, id := range bad {
				off = append(off, fmt.Sprintf("%s %s vs %s written", id, fmtPct(got[id]), fmtPct(want[id])))
			}
			problems = problems.add(ri, fmt.Sprintf("%s: share off by more than %s: %s (%d answers)",
				key, fmtPct(d.tolerance), strings.Join(off, ", "), t.total))
		}
		switch {
		case len(problems) > before:
			outcome[ri] = nameFailed
		case retried:
			outcome[ri] = nameClose
		default:
			outcome[ri] = namePassed
		}
	}
	d.rot.note(picked, outcome)
	noted = true
	coverage := d.rot.coverage(picked, d.sampleNames)
	if coverage != "" {
		r.set("names", float64(len(s.Records)))
		r.set("names.sampled", float64(len(picked.idx)))
		r.set("names.judged", float64(len(d.rot.judged)))
		r.set("names.suspects", float64(len(d.rot.suspects)))
	}
	r.set("empty", float64(empty))
	r.set("other", float64(other))
	r.set("unanswered", float64(unanswered))
	r.set("judged", float64(judged))
	r.Pass = len(problems) == 0
	r.Detail = append(summary, notApplicable...).join()
	if coverage != "" {
		r.Detail = coverage + " — " + r.Detail
	}
	switch {
	case !r.Pass:
		r.Detail = problems.join() + " — " + r.Detail
	case len(d.rot.judged) < len(s.Records):
		// Part of the records judged: the step holds on until the rotation has judged
		// them all (see the type's comment).
		r.Pending = true
	case judged == 0:
		// Every record is not applicable: nothing was measured, so nothing passes (the
		// engine says "has not judged" before Detail).
		r.Pending = true
	}
	return r
}

// recordType is rec's type, A when unset.
func recordType(rec Record) string {
	if rec.Type == "" {
		return "A"
	}
	return strings.ToUpper(rec.Type)
}

// prepare checks that rec can be sampled and returns its query type and its members'
// values in canonical form.
func (d *DNS) prepare(rec Record, weights map[string]int64) (uint16, map[string][]string, error) {
	typ := recordType(rec)
	qtype := dns.StringToType[typ]
	if qtype != dns.TypeA && qtype != dns.TypeAAAA && qtype != dns.TypeCNAME {
		return 0, nil, fmt.Errorf("record %s: type %q: want A, AAAA or CNAME", rec.Name, rec.Type)
	}
	members := make(map[string][]string, len(rec.Members))
	for id, vals := range rec.Members {
		if _, ok := weights[id]; !ok {
			return 0, nil, fmt.Errorf("record %s/%s: member %q has no weight in the step", rec.Name, typ, id)
		}
		for _, v := range vals {
			members[id] = append(members[id], canonicalValue(v))
		}
	}
	return qtype, members, nil
}

// matcher attributes an answer's values to a member.
type matcher struct {
	// members are each member's values in canonical form: an alias's are its target's
	// addresses as resolved for this check.
	members map[string][]string
	// alias are the members whose values were resolved from an alias target.
	alias map[string]bool
	// empty are the alias members whose every target was resolved and has no address of
	// the record's type: Route 53 answers their share with NODATA.
	empty []string
}

// classify names the member whose answer vals is ("" when none is, or more than one could
// be), and a NODATA answer (vals empty) the one member whose target answers nothing of
// the type; classNoData when no member's target answers anything of the type.
func (m *matcher) classify(vals []string) string {
	if len(vals) > 0 {
		return m.match(vals)
	}
	switch {
	case m.noneAnswers():
		return classNoData
	case len(m.empty) == 1:
		return m.empty[0]
	}
	return ""
}

// noneAnswers reports whether no member's target has an address of the record's type:
// every member is an alias whose targets were resolved and answered nothing of it.
func (m *matcher) noneAnswers() bool {
	return len(m.members) > 0 && len(m.empty) == len(m.members)
}

// match names the member whose answer vals is: matchMember's, else the one alias member
// whose target's addresses vals shares and no other member's (a target answers with part
// of its addresses, or with one it did not answer the gate a moment before). "" when none
// is, or more than one could be.
func (m *matcher) match(vals []string) string {
	if id := matchMember(vals, m.members); id != "" {
		return id
	}
	found := ""
	for _, id := range sortedKeys(m.members) {
		if !overlaps(m.members[id], vals) {
			continue
		}
		if !m.alias[id] || found != "" {
			return ""
		}
		found = id
	}
	return found
}

// overlaps reports whether a and b share an element.
func overlaps(a, b []string) bool {
	return slices.ContainsFunc(a, func(v string) bool { return slices.Contains(b, v) })
}

// resolveAliases resolves, for an A or AAAA record, each member value that is a host name
// (an alias's target) to the addresses the target answers now, and checks that the members
// can be told apart: two members with the same values, or an alias sharing addresses with
// another member, would have answers the gate could only guess at. An alias whose target
// cannot be resolved fails the check when its member has weight (its share could not be
// judged); at weight 0 it keeps no addresses, so an answer of it would match no member.
// An alias whose every target was resolved and has no address of the type is one of
// m.empty; two or more of them, beside a member that has addresses, would share one empty
// answer, and are refused. It returns a note per alias for the summary.
func (d *DNS) resolveAliases(ctx context.Context, key string, qtype uint16, members map[string][]string, weights map[string]int64) (*matcher, []string, error) {
	m := &matcher{members: make(map[string][]string, len(members)), alias: map[string]bool{}}
	var notes []string
	for _, id := range sortedKeys(members) {
		if qtype == dns.TypeCNAME {
			m.members[id] = members[id]
			continue
		}
		var vals, hosts []string
		for _, v := range members[id] {
			if _, err := netip.ParseAddr(v); err == nil {
				vals = append(vals, v)
			} else {
				hosts = append(hosts, v)
			}
		}
		resolved := len(hosts) > 0 // every target resolved, so an empty vals means NODATA
		for _, h := range hosts {
			m.alias[id] = true
			addrs, err := d.resolveTarget(ctx, h, qtype)
			if err != nil {
				resolved = false
			}
			switch {
			case err != nil && weights[id] > 0:
				return nil, nil, fmt.Errorf("%s: member %s is an alias to %s, which could not be resolved to attribute its answers: %w", key, id, h, err)
			case err != nil:
				notes = append(notes, fmt.Sprintf("%s: alias to %s, not resolved (%v)", id, h, err))
			case len(addrs) == 0:
				notes = append(notes, fmt.Sprintf("%s: alias to %s, which answers no %s record", id, h, dns.TypeToString[qtype]))
			default:
				notes = append(notes, fmt.Sprintf("%s: alias to %s = %s", id, h, strings.Join(addrs, " ")))
			}
			vals = append(vals, addrs...)
		}
		slices.Sort(vals)
		m.members[id] = slices.Compact(vals)
		if resolved && len(vals) == 0 {
			m.empty = append(m.empty, id)
		}
	}
	if len(m.empty) > 1 && !m.noneAnswers() {
		return nil, nil, fmt.Errorf("%s: members %s are aliases whose targets have no %s address: Route 53 answers each one's share with the same empty answer (NODATA), so their shares cannot be judged",
			key, strings.Join(m.empty, " and "), dns.TypeToString[qtype])
	}
	ids := sortedKeys(m.members)
	for i, a := range ids {
		for _, b := range ids[i+1:] {
			va, vb := m.members[a], m.members[b]
			switch {
			case len(va) > 0 && slices.Equal(va, vb):
				return nil, nil, fmt.Errorf("%s: members %s and %s answer the same values (%s): their answers cannot be told apart, so their shares cannot be judged",
					key, a, b, strings.Join(va, " "))
			case (m.alias[a] || m.alias[b]) && overlaps(va, vb):
				return nil, nil, fmt.Errorf("%s: members %s (%s) and %s (%s) share addresses: answers of an alias cannot be attributed, so their shares cannot be judged",
					key, a, strings.Join(va, " "), b, strings.Join(vb, " "))
			}
		}
	}
	return m, notes, nil
}

// sample sends d.samples queries for name and adds each answer's class to t.
func (d *DNS) sample(ctx context.Context, name string, qtype uint16, m *matcher, t *tally, next *atomic.Uint64) {
	repeat(ctx, d.samples, dnsConcurrency, func() {
		server := d.servers[next.Add(1)%uint64(len(d.servers))]
		t.add(d.ask(ctx, server, name, qtype, m))
	})
}

// ask sends one query and classifies the answer as m attributes it: a member's id,
// classNoData, classEmpty (an error rcode) or classUnanswered, with an example for the
// report; an answer m does not explain is returned with class "" and its values, for
// settle. A query that times out is asked once more, as any stub resolver would: one lost
// UDP datagram says nothing about the zone.
func (d *DNS) ask(ctx context.Context, server, name string, qtype uint16, m *matcher) reply {
	in, err := exchange(ctx, server, name, qtype, false)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil {
		in, err = exchange(ctx, server, name, qtype, false)
	}
	if err != nil {
		return reply{class: classUnanswered, example: err.Error()}
	}
	if in.Rcode != dns.RcodeSuccess {
		return reply{class: classEmpty, example: fmt.Sprintf("%s from %s", dns.RcodeToString[in.Rcode], server)}
	}
	vals, _ := answerValues(in, qtype)
	a := reply{class: m.classify(vals), vals: vals}
	switch {
	case a.class == classNoData:
		a.example = fmt.Sprintf("NOERROR with no %s record from %s", dns.TypeToString[qtype], server)
	case a.class != "":
	case len(vals) == 0:
		a.example = fmt.Sprintf("NOERROR with no %s record from %s", dns.TypeToString[qtype], server)
	default:
		a.example = strings.Join(vals, " ")
	}
	return a
}

// answerValues returns the values of in's answer records of type qtype, canonical, sorted
// and without repeats, and the target of the last CNAME in the answer, if any.
func answerValues(in *dns.Msg, qtype uint16) (vals []string, cname string) {
	for _, rr := range in.Answer {
		if c, ok := rr.(*dns.CNAME); ok && qtype != dns.TypeCNAME {
			cname = c.Target
			continue
		}
		if rr.Header().Rrtype != qtype {
			continue
		}
		switch rr := rr.(type) {
		case *dns.A:
			vals = append(vals, canonicalValue(rr.A.String()))
		case *dns.AAAA:
			vals = append(vals, canonicalValue(rr.AAAA.String()))
		case *dns.CNAME:
			vals = append(vals, canonicalValue(rr.Target))
		}
	}
	slices.Sort(vals)
	return slices.Compact(vals), cname
}

// matchMember names the member whose values an answer shows: the one with exactly these
// values, else the first (by id) holding all of them, since a server may answer with part
// of a large set. "" when no member holds them all. Members with identical values cannot
// be told apart: resolveAliases refuses them before any answer is matched.
func matchMember(vals []string, members map[string][]string) string {
	best := ""
	for _, id := range sortedKeys(members) {
		mv := members[id]
		if !containsAll(mv, vals) {
			continue
		}
		if containsAll(vals, mv) {
			return id
		}
		if best == "" {
			best = id
		}
	}
	return best
}

// containsAll reports whether every element of sub is in set.
func containsAll(set, sub []string) bool {
	for _, v := range sub {
		if !slices.Contains(set, v) {
			return false
		}
	}
	return true
}

// canonicalValue writes a record value one way: an IP in its standard form, a host name
// in lower case without the trailing dot.
func canonicalValue(v string) string {
	v = strings.TrimSpace(v)
	if a, err := netip.ParseAddr(v); err == nil {
		return a.Unmap().String()
	}
	return strings.TrimSuffix(strings.ToLower(v), ".")
}

// deviations lists, in order, the members whose measured share is further than the
// tolerance from the expected one.
func (d *DNS) deviations(t *tally, want map[string]float64) []string {
	got := shares(t.counts, t.total)
	var bad []string
	for _, id := range sortedKeys(want) {
		// A hair of slack for float rounding, so tolerance 0.1 allows exactly 0.1.
		if math.Abs(got[id]-want[id]) > d.tolerance+1e-9 {
			bad = append(bad, id)
		}
	}
	return bad
}

// recordLine is one line of a check's detail, with the index of the record it is about.
type recordLine struct {
	record int
	text   string
}

// byRecord are a check's lines about its records, listed by join in the plan's order.
type byRecord []recordLine

// add returns l with text, a line about record ri.
func (l byRecord) add(ri int, text string) byRecord { return append(l, recordLine{ri, text}) }

// join lists the lines in the plan's order of their records (a record's own lines in the
// order they were added), separated by "; ".
func (l byRecord) join() string {
	sorted := slices.Clone(l)
	slices.SortStableFunc(sorted, func(a, b recordLine) int { return a.record - b.record })
	out := make([]string, len(sorted))
	for i, x := range sorted {
		out[i] = x.text
	}
	return strings.Join(out, "; ")
}
