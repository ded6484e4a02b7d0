package main

import (
	"math/bits"
	"time"
)

// histogram counts latencies in microseconds (dnsperf's resolution) in log-linear buckets:
// exact below 1,024 µs, then 512 buckets per power of two (at most 0.2 % wide), so the
// verbose run's millions of samples take a few kilobytes and no sample is kept.
type histogram struct {
	counts []uint64
	n      uint64
	sum    time.Duration
	max    time.Duration
}

const (
	histExact = 1024           // values below are their own bucket
	histSub   = histExact / 2  // buckets per power of two above histExact
	histMaxUS = int64(1) << 40 // about 12 days: beyond any dnsperf timeout
)

func newHistogram() *histogram {
	return &histogram{counts: make([]uint64, bucketOf(histMaxUS-1)+1)}
}

// bucketOf maps a latency in µs to its bucket.
func bucketOf(us int64) int {
	if us < histExact {
		return int(us)
	}
	// us has e+10 significant bits; keep the top 10 (512..1023) of them.
	e := bits.Len64(uint64(us)) - 10
	sub := int(us >> e) // in [histSub, histExact)
	return histExact + (e-1)*histSub + (sub - histSub)
}

// upperOf is the largest latency in µs that falls into bucket b, so that a quantile read
// from the histogram never understates the latency.
func upperOf(b int) int64 {
	if b < histExact {
		return int64(b)
	}
	e := (b-histExact)/histSub + 1
	sub := int64((b-histExact)%histSub + histSub)
	return (sub+1)<<e - 1
}

// add records one latency.
func (h *histogram) add(d time.Duration) {
	us := min(max(d.Microseconds(), 0), histMaxUS-1)
	h.counts[bucketOf(us)]++
	h.n++
	h.sum += d
	h.max = max(h.max, d)
}

// quantile returns the latency at or below which a fraction q of the samples lie (nearest
// rank, rounded up to its bucket's upper edge); 0 if there are no samples.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.999999)
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(time.Duration(upperOf(b))*time.Microsecond, h.max)
		}
	}
	return h.max
}
