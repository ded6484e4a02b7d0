package gate

import (
	"fmt"
	"math"
	"testing"
)

// TestCloudMapHealthyExamples: the assignments an SRE would expect.
func TestCloudMapHealthyExamples(t *testing.T) {
	for _, tc := range []struct {
		nFrom, nTo int
		wFrom, wTo int64
		hFrom, hTo int
	}{
		{3, 3, 100, 0, 3, 0},
		{3, 3, 0, 100, 0, 3},
		{3, 3, 50, 50, 3, 3},
		{3, 3, 90, 10, 3, 0}, // 1 of 4 (25 %) is farther from 10 % than none
		{9, 9, 90, 10, 9, 1},
		{9, 9, 1, 1, 9, 9},
		{1, 1, 90, 10, 1, 0},
		{1, 1, 10, 90, 0, 1},
		{1, 1, 50, 50, 1, 1},
		{2, 1, 50, 50, 1, 1},
		{0, 3, 100, 0, 0, 3}, // no from instance: to's rather than none
		{3, 0, 0, 100, 3, 0},
		{9, 9, 3, 6, 4, 8}, // 2/3 exactly, with the most instances that give it
		{10, 10, 67, 33, 10, 5},
	} {
		hf, ht, ok := CloudMapHealthy(tc.nFrom, tc.nTo, tc.wFrom, tc.wTo)
		if !ok || hf != tc.hFrom || ht != tc.hTo {
			t.Errorf("CloudMapHealthy(%d, %d, %d, %d) = %d, %d, %v; want %d, %d", tc.nFrom, tc.nTo, tc.wFrom, tc.wTo, hf, ht, ok, tc.hFrom, tc.hTo)
		}
	}
	for _, tc := range [][4]int64{{0, 0, 1, 1}, {3, 3, 0, 0}} {
		if _, _, ok := CloudMapHealthy(int(tc[0]), int(tc[1]), tc[2], tc[3]); ok {
			t.Errorf("CloudMapHealthy%v: ok, want no assignment", tc)
		}
	}
}

// TestCloudMapHealthyProperties: for every instance count 1..12 per cluster and every
// percent, the answer is never empty, counts stay within the instances, 0 % and 100 %
// take the other cluster wholly out, the share is the closest one possible, and it never
// goes down as the percent goes up.
func TestCloudMapHealthyProperties(t *testing.T) {
	for nf := 0; nf <= 12; nf++ {
		for nt := 0; nt <= 12; nt++ {
			if nf+nt == 0 {
				continue
			}
			t.Run(fmt.Sprintf("%d+%d", nf, nt), func(t *testing.T) {
				prev := -1.0
				for p := int64(0); p <= 100; p++ {
					hf, ht, ok := CloudMapHealthy(nf, nt, 100-p, p)
					if !ok || hf+ht == 0 || hf < 0 || ht < 0 || hf > nf || ht > nt {
						t.Fatalf("%d %%: %d, %d, %v", p, hf, ht, ok)
					}
					share := float64(ht) / float64(hf+ht)
					if share < prev {
						t.Fatalf("%d %%: share %.3f below the previous %.3f", p, share, prev)
					}
					prev = share
					if p == 0 && nf > 0 && (ht != 0 || hf != nf) || p == 100 && nt > 0 && (hf != 0 || ht != nt) {
						t.Fatalf("%d %%: %d, %d", p, hf, ht)
					}
					// No other pair is closer.
					best := math.Abs(share - float64(p)/100)
					for f := 0; f <= nf; f++ {
						for g := 0; g <= nt; g++ {
							if f+g > 0 && math.Abs(float64(g)/float64(f+g)-float64(p)/100) < best-1e-12 {
								t.Fatalf("%d %%: %d, %d (share %.3f), but %d, %d is closer", p, hf, ht, share, f, g)
							}
						}
					}
				}
			})
		}
	}
}
