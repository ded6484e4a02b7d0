package gate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultSampleNames is how many records a DNS gate samples per check from its rotation
// when the plan has more: at 200 queries a record, 4,000 queries a check, what a check of
// 20 records always cost.
const DefaultSampleNames = 20

// DNSOption sets what a DNS gate's spec does not.
type DNSOption func(*DNS)

// WithSampleNames sets how many records a check samples from the rotation (see DNS); 0
// means DefaultSampleNames.
func WithSampleNames(n int) DNSOption { return func(d *DNS) { d.sampleNames = n } }

// WithSeed sets the seed of the rotation's order (default: random, a new order each run).
func WithSeed(seed uint64) DNSOption { return func(d *DNS) { d.seed = seed } }

// nameOutcome is what a check found of one sampled record.
type nameOutcome int

const (
	// nameUnmeasured: the check could not judge it (too few answers, an alias that could
	// not be resolved, interrupted).
	nameUnmeasured nameOutcome = iota
	// nameFailed: judged, and it failed (a share off, empty or foreign answers).
	nameFailed
	// nameClose: passed, but only on its second sample: its first was off.
	nameClose
	// namePassed: passed on its first sample.
	namePassed
	// nameNotApplicable: no member's target answers the type; nothing to shift.
	nameNotApplicable
)

// judged reports whether the outcome counts towards coverage: the record was measured and
// found right.
func (o nameOutcome) judged() bool {
	return o == namePassed || o == nameClose || o == nameNotApplicable
}

// suspect reports whether the record is sampled again at the next check, whatever the
// rotation's turn: it failed, could not be measured, or passed narrowly.
func (o nameOutcome) suspect() bool { return o == nameUnmeasured || o == nameFailed || o == nameClose }

// rotation chooses which records a check samples, and remembers which have been judged
// since the weights took effect. See DNS for the rule and its bound.
type rotation struct {
	// keys identifies the step's records (another resets the rotation), epoch its weights
	// and Since (another resets what was judged).
	keys, epoch string
	// order is the records' indexes in the rotation's order: a shuffle, by the gate's
	// seed, of the plan's (stable) order.
	order []int
	// cursor is the position in order of the next check's window.
	cursor int
	// judged are the records (indexes) measured right in this epoch.
	judged map[int]bool
	// suspects are the records to sample again at the next check, with the check that
	// made them suspect first, so that the oldest go first when there are more than k.
	suspects map[int]int
	checks   int
}

// pick is one check's choice.
type pick struct {
	// idx are the records to sample, in order: the suspects, then the window.
	idx []int
	// window are the rotation's positions of idx's window part, in order, with the
	// records' indexes; suspects are the rest of idx.
	window [][2]int
	// rechecked counts the suspects sampled outside the window.
	rechecked int
}

// keysOf fingerprints the records of s: their keys, in the plan's order.
func keysOf(s Step) string {
	var b strings.Builder
	for _, rec := range s.Records {
		b.WriteString(rec.Name + "/" + recordType(rec) + " ")
	}
	return b.String()
}

// epochOf fingerprints what a check judges the records against: the weights and when they
// took effect. Records judged right against other weights say nothing of these.
func epochOf(s Step) string {
	var b strings.Builder
	for _, id := range sortedKeys(s.Weights) {
		b.WriteString(id + "=" + strconv.FormatInt(s.Weights[id], 10) + " ")
	}
	b.WriteString(s.Since.Format(time.RFC3339Nano))
	return b.String()
}

// next chooses the records of the next check of s: every record when there are at most k;
// else the suspects (at most k, the oldest first) and the next k records of the rotation.
func (r *rotation) next(s Step, k int, seed uint64) pick {
	n := len(s.Records)
	if keys := keysOf(s); keys != r.keys || len(r.order) != n {
		r.keys, r.epoch = keys, ""
		r.order = rand.New(rand.NewPCG(seed, uint64(n))).Perm(n)
		r.cursor = 0
	}
	if e := epochOf(s); e != r.epoch {
		r.epoch, r.judged, r.suspects, r.checks = e, map[int]bool{}, map[int]int{}, 0
	}
	r.checks++
	var p pick
	if n <= k {
		for pos, i := range r.order {
			p.idx = append(p.idx, i)
			p.window = append(p.window, [2]int{pos, i})
		}
		return p
	}
	inWindow := map[int]bool{}
	for j := range k {
		pos := (r.cursor + j) % n
		inWindow[r.order[pos]] = true
		p.window = append(p.window, [2]int{pos, r.order[pos]})
	}
	sus := make([]int, 0, len(r.suspects))
	for i := range r.suspects {
		if !inWindow[i] {
			sus = append(sus, i)
		}
	}
	slices.SortFunc(sus, func(a, b int) int {
		if c := r.suspects[a] - r.suspects[b]; c != 0 {
			return c
		}
		return a - b
	})
	sus = sus[:min(len(sus), k)]
	p.rechecked = len(sus)
	p.idx = append(p.idx, sus...)
	for _, w := range p.window {
		p.idx = append(p.idx, w[1])
	}
	return p
}

// note records a check's outcomes: judged records count as covered, suspects are sampled
// again next time, and the window moves past every record of it the check reached (one
// not reached, because the check ended early, is first in the next window).
func (r *rotation) note(p pick, out map[int]nameOutcome) {
	for i, o := range out {
		if o.judged() {
			r.judged[i] = true
		}
		if o.suspect() {
			if _, ok := r.suspects[i]; !ok {
				r.suspects[i] = r.checks
			}
		} else {
			delete(r.suspects, i)
		}
	}
	if len(p.window) == 0 || len(p.window) == len(r.order) {
		return
	}
	reached := 0
	for _, w := range p.window {
		if _, ok := out[w[1]]; !ok {
			break
		}
		reached++
	}
	r.cursor = (r.cursor + reached) % len(r.order)
}

// coverage says, for Detail, how far the rotation has come: "" when every record is
// sampled at every check.
func (r *rotation) coverage(p pick, k int) string {
	n := len(r.order)
	if n <= k {
		return ""
	}
	line := fmt.Sprintf("sampled %d of %d records this check (%d in turn", len(p.idx), n, len(p.window))
	if p.rechecked > 0 {
		line += fmt.Sprintf(", %d again as they failed, could not be measured or passed narrowly last time", p.rechecked)
	}
	line += fmt.Sprintf("); %d of %d judged since the weights took effect", len(r.judged), n)
	if len(r.judged) < n {
		line += ": the rest in the next checks"
	}
	return line
}
