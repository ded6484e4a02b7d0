// Package dashboard is the live view of a cutover: a Recorder that folds the cutover's
// progress events and the traffic a load generator observes into time series, and a
// page (embedded, nothing fetched from the internet) that draws them from a JSON API.
package dashboard

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
)

// Caps keep a long cutover's page light.
const (
	maxPoints = 2000
	maxErrors = 50
)

// Traffic is what a load generator saw up to a moment: cumulative requests that landed on
// each cluster, and cumulative failures.
type Traffic struct {
	At       time.Time
	Requests map[string]int64
	Failures int64
}

// Recorder collects what the page shows. It is safe for concurrent use: the cutover's
// runner and a load generator call it while the server reads it.
type Recorder struct {
	mu    sync.Mutex
	state State
	// last is the previous traffic observation, to turn counts into rates.
	last     *Traffic
	observed bool
	lastW    map[string]int64
}

// NewRecorder returns a Recorder for the cutover named name, moving from → to.
func NewRecorder(name, from, to string) *Recorder {
	return &Recorder{state: State{Version: 1, Cutover: name, From: from, To: to, Started: time.Now().UTC(),
		Series:   Series{Weights: []Point{}, DNSShares: []Point{}, Requests: []Point{}},
		Timeline: []Stage{}, Gates: []GateResult{}, Errors: []Problem{}}}
}

// Event records one moment of the cutover (it implements cutover.Progress).
func (r *Recorder) Event(e cutover.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now().UTC()
	s := &r.state
	cur := Current{Phase: e.Phase, Step: e.Step + 1, Total: e.Total, Weights: maps.Clone(e.Weights),
		LeftSeconds: e.Left.Seconds(), Message: e.Message, Done: e.Phase == cutover.PhaseDone}
	if e.Total == 0 || e.Phase == cutover.PhaseRollingBack {
		// Done, retiring, TTL phases and rollback stops are not steps: the page keeps
		// showing the step the cutover reached.
		cur.Step, cur.Total = s.Current.Step, s.Current.Total
	}
	s.Current = cur
	if len(e.Weights) > 0 && !maps.Equal(e.Weights, r.lastW) {
		r.lastW = maps.Clone(e.Weights)
		s.Series.Weights = appendPoint(s.Series.Weights, Point{T: now, Values: percents(e.Weights)})
	}
	r.stage(now, e)
	for _, g := range e.Gates {
		r.gate(now, g)
	}
	if e.Phase == cutover.PhaseDone && strings.HasPrefix(e.Message, "rolled back") {
		r.problem(now, e.Message)
	}
}

// stage keeps the timeline: a new entry whenever the step, rollback stop or phase group
// changes; the one before it ends then, with an outcome read from what follows.
func (r *Recorder) stage(now time.Time, e cutover.Event) {
	name := stageName(e)
	tl := r.state.Timeline
	if n := len(tl); n > 0 && tl[n-1].Name == name && e.Phase != cutover.PhaseDone {
		tl[n-1].Phase = e.Phase
		if len(e.Weights) > 0 {
			tl[n-1].Weights = maps.Clone(e.Weights)
		}
		return
	}
	if n := len(tl); n > 0 && tl[n-1].Ended.IsZero() {
		prev := &tl[n-1]
		prev.Ended = now
		switch {
		case strings.HasPrefix(prev.Name, "rollback"):
			prev.Outcome = "held"
		case strings.HasPrefix(name, "rollback"), e.Phase == cutover.PhaseDone && strings.HasPrefix(e.Message, "rolled back"):
			prev.Outcome = "failed"
		default:
			prev.Outcome = "passed"
		}
	}
	if e.Phase == cutover.PhaseDone {
		return
	}
	r.state.Timeline = append(tl, Stage{Name: name, Phase: e.Phase, Weights: maps.Clone(e.Weights), Started: now, Outcome: "running"})
}

// stageName names an event's stage as the terminal does: "step 2/4", "rollback 1/2".
func stageName(e cutover.Event) string {
	switch e.Phase {
	case cutover.PhaseLoweringTTL:
		return "lower TTL"
	case cutover.PhaseRetiring:
		return "retire"
	case cutover.PhaseRollingBack:
		return fmt.Sprintf("rollback %d/%d", e.Step+1, e.Total)
	case cutover.PhaseDone:
		return "done"
	}
	if e.Total > 0 {
		return fmt.Sprintf("step %d/%d", e.Step+1, e.Total)
	}
	return e.Message
}

// gate keeps each gate's latest result, the DNS shares it measured, the requests an HTTP
// gate's public probes landed per cluster (when no load generator reports), and failures.
func (r *Recorder) gate(now time.Time, g gate.Result) {
	s := &r.state
	res := GateResult{Gate: g.Gate, Kind: g.Kind, Pass: g.Pass, Detail: g.Detail, Err: g.Err, At: now}
	replaced := false
	for i := range s.Gates {
		if s.Gates[i].Gate == g.Gate {
			s.Gates[i], replaced = res, true
		}
	}
	if !replaced {
		s.Gates = append(s.Gates, res)
	}
	if !g.Pass {
		r.problem(now, fmt.Sprintf("gate %s: %s", g.Gate, g.Detail))
	}
	switch g.Kind {
	case gate.KindDNS:
		// Keys are "<name>/<type>.<set-id>.share": average each member over the records.
		sum, n := map[string]float64{}, map[string]int{}
		for k, v := range g.Values {
			rest, ok := strings.CutSuffix(k, ".share")
			if !ok {
				continue
			}
			id := rest[strings.LastIndex(rest, ".")+1:]
			sum[id] += 100 * v
			n[id]++
		}
		if len(sum) > 0 {
			for id := range sum {
				sum[id] /= float64(n[id])
			}
			s.Series.DNSShares = appendPoint(s.Series.DNSShares, Point{T: now, Values: sum})
		}
	case gate.KindHTTP:
		if r.observed {
			return
		}
		counts := map[string]float64{}
		for k, v := range g.Values {
			if id, ok := strings.CutPrefix(k, "public.cluster."); ok {
				counts[id] = v
			}
		}
		if len(counts) > 0 {
			s.RequestsSource = "http gate " + g.Gate + " (requests per check through the public name)"
			s.Series.Requests = appendPoint(s.Series.Requests, Point{T: now, Values: counts})
		}
	}
}

func (r *Recorder) problem(now time.Time, msg string) {
	e := append(r.state.Errors, Problem{T: now, Message: msg})
	if len(e) > maxErrors {
		e = e[len(e)-maxErrors:]
	}
	r.state.Errors = e
}

// Observe records traffic a load generator saw; the page charts it as requests per
// second per cluster, and failures per second.
func (r *Recorder) Observe(t Traffic) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.observed {
		// Clients now speak for the traffic: drop what gate probes said before.
		r.observed = true
		r.state.Series.Requests = []Point{}
	}
	r.state.RequestsSource = "clients (requests per second landing on each cluster)"
	cur := Traffic{At: t.At.UTC(), Requests: maps.Clone(t.Requests), Failures: t.Failures}
	prev := r.last
	r.last = &cur
	if prev == nil {
		return
	}
	dt := cur.At.Sub(prev.At).Seconds()
	if dt <= 0 {
		return
	}
	v := map[string]float64{"failures": float64(cur.Failures-prev.Failures) / dt}
	for id, n := range cur.Requests {
		v[id] = float64(n-prev.Requests[id]) / dt
	}
	r.state.Series.Requests = appendPoint(r.state.Series.Requests, Point{T: cur.At, Values: v})
}

// snapshot is a deep enough copy of the state for encoding outside the lock.
func (r *Recorder) snapshot() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.state
	s.Now = time.Now().UTC()
	// Clones of non-nil slices stay non-nil: the API promises arrays, never null.
	s.Series = Series{Weights: slices.Clone(s.Series.Weights), DNSShares: slices.Clone(s.Series.DNSShares),
		Requests: slices.Clone(s.Series.Requests)}
	s.Timeline = slices.Clone(s.Timeline)
	s.Gates = slices.Clone(s.Gates)
	s.Errors = slices.Clone(s.Errors)
	return s
}

func appendPoint(ps []Point, p Point) []Point {
	ps = append(ps, p)
	if len(ps) > maxPoints {
		ps = ps[len(ps)-maxPoints:]
	}
	return ps
}

// percents turns weights into each member's share of the traffic in percent (an even
// split when all are 0, as Route 53 answers).
func percents(w map[string]int64) map[string]float64 {
	var sum int64
	for _, v := range w {
		sum += v
	}
	out := make(map[string]float64, len(w))
	for id, v := range w {
		if sum == 0 {
			out[id] = 100 / float64(len(w))
		} else {
			out[id] = 100 * float64(v) / float64(sum)
		}
	}
	return out
}
