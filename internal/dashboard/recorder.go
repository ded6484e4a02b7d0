// Package dashboard is the live view of a cutover: a Recorder that folds the cutover's
// progress events and the traffic a load generator observes into time series, and a
// page (embedded, nothing fetched from the internet) that draws them from a JSON API.
// Serve listens on loopback only and refuses a Host that is not a loopback name (DNS
// rebinding): the page shows a production change and has no authentication.
package dashboard

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
)

// Caps keep a long cutover's page light: 2,000 points are 33 minutes at one a second.
// Once the cutover has ended, the points after its end (a demo kept up, its clients still
// reporting) keep at least tailPoints of the room, and the cutover's own points the rest.
const (
	maxPoints  = 2000
	maxErrors  = 50
	tailPoints = 300
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
	// now is time.Now, replaceable so that tests see exact times.
	now func() time.Time

	mu    sync.Mutex
	state State
	// last is the previous traffic observation, to turn counts into rates.
	last     *Traffic
	observed bool
	// lastW is the last weights charted, to add a point only when they change.
	lastW map[string]int64
	// reason is the rollback reason already listed among the errors.
	reason string
	// failedGate is the gate whose check failed last: a failed check rolls back.
	failedGate string
}

// NewRecorder returns a Recorder for the cutover named cutover, moving from → to.
func NewRecorder(cutover, from, to string) *Recorder {
	return newRecorder(cutover, from, to, time.Now)
}

func newRecorder(name, from, to string, now func() time.Time) *Recorder {
	// Empty, not nil, slices and maps: the API promises arrays and objects, never null.
	return &Recorder{now: now, state: State{Version: APIVersion, Cutover: name, From: from, To: to,
		Started:  now().UTC(),
		Current:  Current{Weights: map[string]int64{}},
		Series:   Series{Weights: []Point{}, DNSShares: []Point{}, Requests: []Point{}, ALBShares: []Point{}, ClientShares: []Point{}},
		Timeline: []Stage{}, Gates: []GateResult{}, Errors: []Problem{}, TargetHealth: []GroupHealth{}}}
}

// SetLever says which lever the cutover pulls (cutover.LeverRoute53 or cutover.LeverALB),
// so that the page shows that lever's proof from the start rather than once its first
// gate result tells it.
func (r *Recorder) SetLever(lever string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state.Lever = lever
}

// State returns the document GET /api/v1/state would serve now, for embedders and tests
// that read it without HTTP.
func (r *Recorder) State() State { return r.snapshot() }

// Event records one moment of the cutover; it implements cutover.Progress.
func (r *Recorder) Event(e cutover.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.event(r.now().UTC(), e)
}

// EventAt records e as having happened at at: a Follower replays a journal written
// earlier (a Cutover object's status), and the page's timeline shows when each step
// happened, not when the follower read it.
func (r *Recorder) EventAt(at time.Time, e cutover.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.event(at.UTC(), e)
}

// event records e at now; r.mu is held.
func (r *Recorder) event(now time.Time, e cutover.Event) {
	r.current(e)
	if e.Phase == cutover.PhaseDone && r.state.Ended.IsZero() {
		r.state.Ended = now
	}
	if len(e.Weights) > 0 && !maps.Equal(e.Weights, r.lastW) {
		r.lastW = maps.Clone(e.Weights)
		r.state.Series.Weights = r.appendPoint(r.state.Series.Weights, Point{T: now, Values: percents(e.Weights)})
	}
	r.stage(now, e)
	for _, g := range e.Gates {
		r.gate(now, g)
	}
	r.rollback(now, e)
}

// current keeps where the cutover stands.
func (r *Recorder) current(e cutover.Event) {
	c := &r.state.Current
	c.Phase, c.LeftSeconds, c.Message = e.Phase, max(e.Left.Seconds(), 0), e.Message
	c.Done = e.Phase == cutover.PhaseDone
	// TTL writes carry no weights: the last ones written still stand.
	if len(e.Weights) > 0 {
		c.Weights = maps.Clone(e.Weights)
	}
	// Rollback stops, TTL phases, retire and done are not steps: keep the step reached.
	if e.Total > 0 && e.Phase != cutover.PhaseRollingBack && e.Phase != cutover.PhaseDone {
		c.Step, c.Total = e.Step+1, e.Total
	}
	if e.Phase == cutover.PhaseRollingBack || rolledBack(e) {
		c.RolledBack = true
	}
	if e.GatesSkipped {
		c.GatesSkipped = true
	}
}

// rolledBack tells the final event of a rolled-back cutover ("rolled back: REASON").
func rolledBack(e cutover.Event) bool {
	return e.Phase == cutover.PhaseDone && strings.HasPrefix(e.Message, "rolled back")
}

// Observe records traffic a load generator saw; the page charts it as requests per
// second per cluster and failures per second, and as each cluster's share of the
// requests that landed.
func (r *Recorder) Observe(t Traffic) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &r.state
	if !r.observed {
		// Clients now speak for the traffic: drop what gate probes said before, which
		// counted requests per check, not per second.
		r.observed = true
		s.Series.Requests, s.RequestsSource, s.RequestsGate = []Point{}, SourceClients, ""
	}
	cur := Traffic{At: t.At.UTC(), Requests: maps.Clone(t.Requests), Failures: t.Failures}
	if t.At.IsZero() {
		cur.At = r.now().UTC()
	}
	prev := r.last
	r.last = &cur
	if prev == nil {
		return
	}
	dt := cur.At.Sub(prev.At).Seconds()
	if dt <= 0 {
		// Out of order or the same instant: no rate to tell; cur is the new baseline.
		return
	}
	// Both clusters always, so that a line starts at 0 rather than where its first
	// request landed; counts that went down (a restarted generator) count as 0.
	ids := map[string]bool{s.From: true, s.To: true}
	for id := range prev.Requests {
		ids[id] = true
	}
	for id := range cur.Requests {
		ids[id] = true
	}
	v := map[string]float64{"failures": float64(max(cur.Failures-prev.Failures, 0)) / dt}
	landed := map[string]float64{}
	var sum float64
	for id := range ids {
		if id != "" {
			n := float64(max(cur.Requests[id]-prev.Requests[id], 0))
			v[id], landed[id] = n/dt, n
			sum += n
		}
	}
	s.Series.Requests = r.appendPoint(s.Series.Requests, Point{T: cur.At, Values: v})
	// A share needs requests: an interval in which none landed has no point.
	if sum > 0 {
		for id, n := range landed {
			landed[id] = 100 * n / sum
		}
		s.Series.ClientShares = r.appendPoint(s.Series.ClientShares, Point{T: cur.At, Values: landed})
	}
}

// snapshot copies the state for encoding outside the lock. Maps inside it are never
// changed once stored (they are replaced), so copying the slices is enough.
func (r *Recorder) snapshot() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.state
	s.Now = r.now().UTC()
	s.Series = Series{Weights: slices.Clone(s.Series.Weights), DNSShares: slices.Clone(s.Series.DNSShares),
		Requests: slices.Clone(s.Series.Requests), ALBShares: slices.Clone(s.Series.ALBShares),
		ClientShares: slices.Clone(s.Series.ClientShares)}
	s.Timeline = slices.Clone(s.Timeline)
	s.TargetHealth = slices.Clone(s.TargetHealth)
	s.Gates = slices.Clone(s.Gates)
	s.Errors = slices.Clone(s.Errors)
	return s
}

// appendPoint adds p and, beyond maxPoints, drops the oldest point: while the cutover
// runs, the oldest of all; once it has ended, the oldest after its end while more than
// tailPoints follow it, so that hours of idle traffic after a cutover never push the
// cutover itself off the charts (the page shows that tail compressed).
func (r *Recorder) appendPoint(ps []Point, p Point) []Point {
	ps = append(ps, p)
	if len(ps) <= maxPoints {
		return ps
	}
	drop := 0
	if ended := r.state.Ended; !ended.IsZero() {
		tail := len(ps)
		for tail > 0 && ps[tail-1].T.After(ended) {
			tail--
		}
		if len(ps)-tail > tailPoints {
			drop = tail
		}
	}
	return slices.Delete(ps, drop, drop+1)
}

// percents turns weights into each member's share of the traffic in percent: an even
// split when all are 0, as Route 53 answers; negative weights count as 0.
func percents(w map[string]int64) map[string]float64 {
	var sum int64
	for _, v := range w {
		sum += max(v, 0)
	}
	out := make(map[string]float64, len(w))
	for id, v := range w {
		if sum == 0 {
			out[id] = 100 / float64(len(w))
		} else {
			out[id] = 100 * float64(max(v, 0)) / float64(sum)
		}
	}
	return out
}
