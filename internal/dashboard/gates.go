package dashboard

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/cutover/gate"
)

// gate keeps each gate's latest result, the DNS or ALB request shares it measured, the
// target groups' health, the requests an HTTP gate's public probes landed per cluster
// (while no load generator reports), and failures.
func (r *Recorder) gate(now time.Time, g gate.Result) {
	s := &r.state
	r.latest(GateResult{Gate: g.Gate, Kind: g.Kind, Pass: g.Pass, Detail: g.Detail, Err: g.Err,
		Values: maps.Clone(g.Values), At: now, Pending: g.Pending})
	if !g.Pass {
		r.failedGate = g.Gate
		msg := "gate " + g.Gate + ": " + g.Detail
		if g.Err != "" && g.Err != g.Detail {
			msg += " (" + g.Err + ")"
		}
		r.problem(now, g.Gate, msg)
	}
	if s.Lever == "" {
		// Without SetLever, a gate that judges only one lever tells it.
		switch g.Kind {
		case gate.KindTargetHealth, gate.KindALBTraffic:
			s.Lever = cutover.LeverALB
		case gate.KindDNS:
			s.Lever = cutover.LeverRoute53
		}
	}
	switch g.Kind {
	case gate.KindTargetHealth:
		for _, h := range groupHealth(g.Values) {
			h.Gate, h.At = g.Gate, now
			r.health(h)
		}
	case gate.KindALBTraffic:
		if v := albShares(g.Values, s.From, s.To); len(v) > 0 {
			s.Series.ALBShares = r.appendPoint(s.Series.ALBShares, Point{T: now, Values: v})
		}
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
	r.state.Gates = upsert(r.state.Gates, g, func(o GateResult) bool { return o.Gate == g.Gate })
}

// health stores h as its group's latest health, in the order groups were first seen.
func (r *Recorder) health(h GroupHealth) {
	r.state.TargetHealth = upsert(r.state.TargetHealth, h, func(o GroupHealth) bool { return o.Group == h.Group })
}

// upsert puts v in place of the first element of list that same says it replaces, or
// appends it: the latest of each, in the order each was first seen.
func upsert[T any](list []T, v T, same func(T) bool) []T {
	if i := slices.IndexFunc(list, same); i >= 0 {
		list[i] = v
		return list
	}
	return append(list, v)
}

// rollback lists a rollback's reason among the errors once, under the gate whose failed
// check caused it, if one did (the engine shows that check just before it rolls back),
// and each transient write failure that is being retried, in any stage.
func (r *Recorder) rollback(now time.Time, e cutover.Event) {
	var reason string
	switch {
	case e.Retrying:
		// A write of the stage waits to be retried: worth listing (AWS is refusing it),
		// but it is no new reason, and the rollback's own is not listed again after it.
		r.problem(now, "", e.Message)
		return
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

// groupHealth reads, from a targetHealth gate's values ("<group>.healthy" and
// "<group>.targets", the group named by its cluster, else by itself), each group it
// checked, sorted by name. A group is only checked while the step gives it weight, so a
// check names the groups it judged and leaves the others as last found.
func groupHealth(values map[string]float64) []GroupHealth {
	var out []GroupHealth
	for _, k := range slices.Sorted(maps.Keys(values)) {
		id, ok := strings.CutSuffix(k, ".healthy")
		if !ok || id == "" {
			continue
		}
		targets, ok := values[id+".targets"]
		if !ok {
			continue
		}
		out = append(out, GroupHealth{Group: id, Healthy: int(values[k]), Targets: int(targets)})
	}
	return out
}

// albShares reads, from an albTraffic gate's values, the share of from's and to's
// requests each group got ("<cluster>.share", 0..1), in percent. A check that counted no
// request yet has no shares.
func albShares(values map[string]float64, from, to string) map[string]float64 {
	out := map[string]float64{}
	for _, id := range []string{from, to} {
		if v, ok := values[id+".share"]; ok {
			out[id] = 100 * v
		}
	}
	return out
}
