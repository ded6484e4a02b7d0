package dashboard

import (
	"maps"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
)

// gate keeps each gate's latest result, the DNS shares it measured, the requests an HTTP
// gate's public probes landed per cluster (while no load generator reports), and failures.
func (r *Recorder) gate(now time.Time, g gate.Result) {
	s := &r.state
	r.latest(GateResult{Gate: g.Gate, Kind: g.Kind, Pass: g.Pass, Detail: g.Detail, Err: g.Err,
		Values: maps.Clone(g.Values), At: now})
	if !g.Pass {
		r.failedGate = g.Gate
		msg := "gate " + g.Gate + ": " + g.Detail
		if g.Err != "" && g.Err != g.Detail {
			msg += " (" + g.Err + ")"
		}
		r.problem(now, g.Gate, msg)
	}
	switch g.Kind {
	case gate.KindDNS:
		if v := dnsShares(g.Values); len(v) > 0 {
			s.Series.DNSShares = r.appendPoint(s.Series.DNSShares, Point{T: now, Values: v})
		}
	case gate.KindHTTP:
		if r.observed {
			return
		}
		if v := publicCounts(g.Values); len(v) > 0 {
			s.RequestsSource, s.RequestsGate = SourceGate, g.Gate
			s.Series.Requests = r.appendPoint(s.Series.Requests, Point{T: now, Values: v})
		}
	}
}

// latest stores g as its gate's latest result, in the order gates were first seen.
func (r *Recorder) latest(g GateResult) {
	for i := range r.state.Gates {
		if r.state.Gates[i].Gate == g.Gate {
			r.state.Gates[i] = g
			return
		}
	}
	r.state.Gates = append(r.state.Gates, g)
}

// rollback lists a rollback's reason among the errors once, under the gate whose failed
// check caused it, if one did (the engine shows that check just before it rolls back).
func (r *Recorder) rollback(now time.Time, e cutover.Event) {
	var reason string
	switch {
	case e.Phase == cutover.PhaseRollingBack:
		reason = e.Message
	case rolledBack(e):
		reason = strings.TrimPrefix(strings.TrimPrefix(e.Message, "rolled back"), ": ")
	default:
		return
	}
	if reason == r.reason {
		return
	}
	r.reason = reason
	msg := "rolling back"
	if reason != "" {
		msg += ": " + reason
	}
	r.problem(now, r.failedGate, msg)
}

// problem lists a failure, once while it repeats, keeping the last maxErrors.
func (r *Recorder) problem(now time.Time, gateName, msg string) {
	e := r.state.Errors
	if n := len(e); n > 0 && e[n-1].Gate == gateName && e[n-1].Message == msg {
		return
	}
	e = append(e, Problem{T: now, Gate: gateName, Message: msg})
	if len(e) > maxErrors {
		e = e[len(e)-maxErrors:]
	}
	r.state.Errors = e
}

// dnsShares averages, per cluster, the answer shares a DNS gate measured over its
// records, in percent. Keys are "<name>/<type>.<set-id>.share": the name holds dots and
// may the set identifier, the type never does, so the set identifier is what follows
// the first dot after the last slash.
func dnsShares(values map[string]float64) map[string]float64 {
	sum, n := map[string]float64{}, map[string]int{}
	for k, v := range values {
		rest, ok := strings.CutSuffix(k, ".share")
		if !ok {
			continue
		}
		var id string
		if i := strings.LastIndex(rest, "/"); i >= 0 {
			_, id, _ = strings.Cut(rest[i:], ".")
		} else if i := strings.LastIndex(rest, "."); i >= 0 {
			id = rest[i+1:]
		}
		if id == "" {
			continue
		}
		sum[id] += 100 * v
		n[id]++
	}
	for id := range sum {
		sum[id] /= float64(n[id])
	}
	return sum
}

// publicCounts reads, from an HTTP gate's values, how many of its requests through the
// public name each cluster served ("public.cluster.<id>").
func publicCounts(values map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range values {
		if id, ok := strings.CutPrefix(k, "public.cluster."); ok && id != "" {
			out[id] = v
		}
	}
	return out
}
