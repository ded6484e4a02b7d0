package cloudwatchapi

import (
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"time"
)

// statKind is the statistic a query asks for.
type statKind int

const (
	statSum statKind = iota
	statAverage
	statMinimum
	statMaximum
	statSampleCount
	statPercentile
)

// statistic is a parsed Stat or ExtendedStatistic.
type statistic struct {
	name string // as the client gave it: "Sum", "p99"
	kind statKind
	pct  float64 // statPercentile: 0–100
}

var basicStats = map[string]statKind{
	"Sum": statSum, "Average": statAverage, "Minimum": statMinimum, "Maximum": statMaximum,
	"SampleCount": statSampleCount,
}

var (
	percentileRe = regexp.MustCompile(`^p(\d{1,3})(\.\d{1,2})?$`)
	// otherExtendedRe matches the extended statistics CloudWatch has besides percentiles
	// (trimmed/winsorized means, trimmed counts and sums, percentile ranks, IQM): valid
	// there, not served here.
	otherExtendedRe = regexp.MustCompile(`^(?:(?:tm|wm|tc|ts)\d{1,3}(?:\.\d{1,2})?|(?:TM|WM|TC|TS|PR)\([^)]*\)|IQM)$`)
)

// statVerdict says whether a Stat is one the sandbox computes, one CloudWatch knows but
// the sandbox does not compute, or no statistic at all.
type statVerdict int

const (
	statOK statVerdict = iota
	statUnsupported
	statInvalid
)

func parseStat(s string) (statistic, statVerdict) {
	if k, ok := basicStats[s]; ok {
		return statistic{name: s, kind: k}, statOK
	}
	if m := percentileRe.FindStringSubmatch(s); m != nil {
		p, err := strconv.ParseFloat(s[1:], 64)
		if err != nil || p > 100 {
			return statistic{}, statInvalid
		}
		return statistic{name: s, kind: statPercentile, pct: p}, statOK
	}
	if otherExtendedRe.MatchString(s) {
		return statistic{}, statUnsupported
	}
	return statistic{}, statInvalid
}

// validPeriod is CloudWatch's rule: 1, 5, 10, 20 or 30 seconds (high resolution), or a
// multiple of 60.
func validPeriod(p int64) bool {
	switch p {
	case 1, 5, 10, 20, 30:
		return true
	}
	return p >= 60 && p%60 == 0
}

const day = 24 * time.Hour

// alignStart rounds a query's start down the way CloudWatch documents it: a high-resolution
// period to an even division of the minute, any other to the minute, or to 5 minutes or
// an hour once the start is more than 15 or 63 days old.
func alignStart(start, now time.Time, period int64) time.Time {
	if period < 60 {
		return start.Truncate(time.Duration(period) * time.Second)
	}
	switch age := now.Sub(start); {
	case age > 63*day:
		return start.Truncate(time.Hour)
	case age > 15*day:
		return start.Truncate(5 * time.Minute)
	default:
		return start.Truncate(time.Minute)
	}
}

// retained reports whether CloudWatch still has data at t at this period: high-resolution
// data for 3 hours, 1-minute data for 15 days, 5-minute data for 63 days, then hourly.
// Outside that, CloudWatch returns no data points for the period rather than an error.
func retained(t, now time.Time, period int64) bool {
	var multiple int64 = 1
	switch age := now.Sub(t); {
	case age > 63*day:
		multiple = 3600
	case age > 15*day:
		multiple = 300
	case age > 3*time.Hour:
		multiple = 60
	}
	return period%multiple == 0
}

// bucket accumulates the points of one period.
type bucket struct {
	start       time.Time
	sampleCount float64
	sum         float64
	min, max    float64
	values      []float64
	// valuesMissing is set when a point could not contribute its values, so no percentile
	// is given for the period rather than a wrong one.
	valuesMissing bool
}

func (b *bucket) add(p Point) {
	if b.sampleCount == 0 {
		b.min, b.max = p.Minimum, p.Maximum
	} else {
		b.min, b.max = math.Min(b.min, p.Minimum), math.Max(b.max, p.Maximum)
	}
	b.sampleCount += p.SampleCount
	b.sum += p.Sum
	switch {
	case len(p.Values) > 0:
		b.values = append(b.values, p.Values...)
	case p.SampleCount == 1:
		b.values = append(b.values, p.Sum)
	default:
		b.valuesMissing = true
	}
}

// value is the statistic of the bucket; ok is false when it has none.
func (b *bucket) value(st statistic) (v float64, ok bool) {
	if b.sampleCount <= 0 {
		return 0, false
	}
	switch st.kind {
	case statSum:
		return b.sum, true
	case statAverage:
		return b.sum / b.sampleCount, true
	case statMinimum:
		return b.min, true
	case statMaximum:
		return b.max, true
	case statSampleCount:
		return b.sampleCount, true
	case statPercentile:
		if b.valuesMissing || len(b.values) == 0 {
			return 0, false
		}
		return percentile(b.values, st.pct), true
	}
	return 0, false
}

// percentile is the nearest-rank percentile of vs (sorted in place).
func percentile(vs []float64, pct float64) float64 {
	sort.Float64s(vs)
	rank := int(math.Ceil(pct / 100 * float64(len(vs))))
	return vs[max(0, min(rank-1, len(vs)-1))]
}

// aggregate groups points into periods of period seconds from start (already aligned)
// until end, oldest first. A period without data has no bucket: CloudWatch returns no
// data point for it, not a zero. For a count metric a zero point is no data either, as
// the ALB reports those metrics only when they are non-zero.
func aggregate(points []Point, start, end time.Time, period int64, countLike bool) []*bucket {
	step := time.Duration(period) * time.Second
	byIndex := map[int64]*bucket{}
	for _, p := range points {
		if p.Time.Before(start) || !p.Time.Before(end) || p.SampleCount <= 0 || (countLike && p.Sum == 0) {
			continue
		}
		i := int64(p.Time.Sub(start) / step)
		b := byIndex[i]
		if b == nil {
			b = &bucket{start: start.Add(time.Duration(i) * step)}
			byIndex[i] = b
		}
		b.add(p)
	}
	out := make([]*bucket, 0, len(byIndex))
	for _, b := range byIndex {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b *bucket) int { return a.start.Compare(b.start) })
	return out
}

// datapoint is one value of a GetMetricData result.
type datapoint struct {
	t time.Time
	v float64
}

// datapoints computes st over the buckets, oldest first, dropping the periods that
// CloudWatch no longer holds at this period.
func datapoints(buckets []*bucket, st statistic, now time.Time, period int64) []datapoint {
	out := make([]datapoint, 0, len(buckets))
	for _, b := range buckets {
		if !retained(b.start, now, period) {
			continue
		}
		if v, ok := b.value(st); ok {
			out = append(out, datapoint{t: b.start, v: v})
		}
	}
	return out
}
