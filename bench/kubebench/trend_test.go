package main

import (
	"math"
	"testing"
)

func TestTrendOf(t *testing.T) {
	const mib = 1 << 20
	hours := []float64{0, 0.25, 0.5, 0.75, 1}
	heap := tolerance{abs: mib, share: 0.02}
	for _, tc := range []struct {
		name        string
		xs, ys      []float64
		tol         tolerance
		wantVerdict string
		wantDrift   float64
		wantLimit   float64
	}{
		{"constant is flat", hours, []float64{20 * mib, 20 * mib, 20 * mib, 20 * mib, 20 * mib}, heap, verdictFlat, 0, mib},
		// A sawtooth of ±5 MiB around a level line: wide, but no trend.
		{"sawtooth without trend is flat", hours, []float64{20 * mib, 25 * mib, 15 * mib, 25 * mib, 20 * mib}, heap, verdictFlat, 0, mib},
		{"just under 1 MiB an hour is flat", hours, []float64{20 * mib, 20.2 * mib, 20.4 * mib, 20.6 * mib, 20.8 * mib}, heap, verdictFlat, 0.8 * mib, mib},
		{"1.2 MiB an hour grows", hours, []float64{20 * mib, 20.3 * mib, 20.6 * mib, 20.9 * mib, 21.2 * mib}, heap, verdictGrows, 1.2 * mib, mib},
		{"a fall past the limit is not flat", hours, []float64{20 * mib, 19.5 * mib, 19 * mib, 18.5 * mib, 18 * mib}, heap, verdictFalls, -2 * mib, mib},
		// At a 100 MiB mean the 2 % share (2 MiB) is the limit, not the 1 MiB floor.
		{"share of a large mean", hours, []float64{100 * mib, 100.4 * mib, 100.8 * mib, 101.2 * mib, 101.6 * mib}, heap, verdictFlat, 1.6 * mib, 2.016 * mib},
		// The limit applies to the whole window: 0.5 MiB in half an hour is 1 MiB an hour
		// but only 0.5 MiB gained.
		{"short window judges its own drift", []float64{0, 0.25, 0.5}, []float64{20 * mib, 20.25 * mib, 20.5 * mib}, heap, verdictFlat, 0.5 * mib, mib},
		{"goroutines one more is flat", hours, []float64{45, 46, 45, 46, 46}, tolerance{abs: 2}, verdictFlat, 0.8, 2},
		{"goroutines leaking is not", hours, []float64{45, 47, 49, 51, 53}, tolerance{abs: 2}, verdictGrows, 8, 2},
		{"two samples are not enough", []float64{0, 1}, []float64{20 * mib, 20 * mib}, heap, verdictUnmeasured, 0, mib},
		{"samples at one time are not enough", []float64{0.5, 0.5, 0.5}, []float64{1, 2, 3}, heap, verdictUnmeasured, 0, mib},
		{"not judged", hours, []float64{1, 2, 3, 4, 5}, tolerance{}, "", 4, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := trendOf(tc.xs, tc.ys, tc.tol)
			if got.verdict != tc.wantVerdict {
				t.Errorf("verdict %q, want %q (drift %v, limit %v)", got.verdict, tc.wantVerdict, got.drift, got.limit)
			}
			if math.Abs(got.drift-tc.wantDrift) > 1e-6*math.Max(1, math.Abs(tc.wantDrift)) {
				t.Errorf("drift %v, want %v", got.drift, tc.wantDrift)
			}
			if math.Abs(got.limit-tc.wantLimit) > 1e-6*math.Max(1, tc.wantLimit) {
				t.Errorf("limit %v, want %v", got.limit, tc.wantLimit)
			}
		})
	}
}

func TestTrendOfRange(t *testing.T) {
	got := trendOf([]float64{0, 0.5, 1}, []float64{5, 2, 8}, tolerance{abs: 1})
	if got.first != 5 || got.last != 8 || got.min != 2 || got.max != 8 || got.mean != 5 {
		t.Errorf("trend %+v, want first 5 last 8 min 2 max 8 mean 5", got)
	}
	if empty := trendOf(nil, nil, tolerance{abs: 1}); empty.verdict != verdictUnmeasured {
		t.Errorf("no samples: verdict %q, want %q", empty.verdict, verdictUnmeasured)
	}
}
