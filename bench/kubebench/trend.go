package main

import "math"

// Verdicts on a soak series.
const (
	verdictFlat  = "flat"
	verdictGrows = "grows"
	// verdictFalls is a drift beyond the tolerance downwards: not a leak, but not flat
	// either, so it is not reported as such.
	verdictFalls = "falls"
	// verdictUnmeasured is a series with too few samples for a slope to mean anything;
	// a soak never calls such a series flat.
	verdictUnmeasured = "too few samples"
)

// minTrendSamples is the fewest samples a verdict needs: two points always fit a line
// exactly, so a slope only says something from three on.
const minTrendSamples = 3

// tolerance is how far a series may drift over a soak window and still be called flat:
// the larger of abs and share × the series' mean.
type tolerance struct {
	abs   float64
	share float64
}

// limit is the tolerance for a series whose mean is mean.
func (t tolerance) limit(mean float64) float64 { return math.Max(t.abs, t.share*math.Abs(mean)) }

// trend summarises one soak series: its range, its least-squares slope and whether the
// drift that slope makes over the window stays inside a tolerance.
type trend struct {
	first, last, min, max, mean float64
	// slope is per hour (xs are hours).
	slope float64
	// drift is slope × the window (last x − first x): what the fitted line gains over it.
	drift float64
	// limit is the tolerance for this series' mean; 0 when the series is not judged.
	limit   float64
	verdict string
}

// trendOf fits ys over xs (hours) and judges the drift against tol; a zero tol leaves
// the verdict empty (the series is reported, not judged).
func trendOf(xs, ys []float64, tol tolerance) trend {
	if len(ys) == 0 {
		return trend{verdict: verdictUnmeasured}
	}
	t := trend{first: ys[0], last: ys[len(ys)-1], min: math.Inf(1), max: math.Inf(-1)}
	var sum float64
	for _, y := range ys {
		t.min, t.max = math.Min(t.min, y), math.Max(t.max, y)
		sum += y
	}
	t.mean = sum / float64(len(ys))
	t.slope = slopePerHour(xs, ys)
	if len(xs) == len(ys) {
		t.drift = t.slope * (xs[len(xs)-1] - xs[0])
	}
	if tol == (tolerance{}) {
		return t
	}
	t.limit = tol.limit(t.mean)
	switch {
	case len(ys) < minTrendSamples || len(xs) != len(ys) || xs[len(xs)-1] <= xs[0]:
		t.verdict = verdictUnmeasured
	case math.Abs(t.drift) < t.limit:
		t.verdict = verdictFlat
	case t.drift > 0:
		t.verdict = verdictGrows
	default:
		t.verdict = verdictFalls
	}
	return t
}
