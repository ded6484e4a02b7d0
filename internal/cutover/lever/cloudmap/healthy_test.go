package cloudmap

import (
	"testing"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
)

// TestHealthyAround: without fixed instances it is gate.CloudMapHealthy, which the
// cloudMapDiscovery gate judges by; with them, the share counts them as they answer.
func TestHealthyAround(t *testing.T) {
	for nf := 0; nf <= 4; nf++ {
		for nt := 0; nt <= 4; nt++ {
			for _, to := range []int64{0, 1, 10, 25, 33, 50, 67, 90, 100} {
				gf, gt, gok := gate.CloudMapHealthy(nf, nt, 100-to, to)
				hf, ht, ok := healthyAround(nf, nt, 0, 0, 100-to, to)
				if gf != hf || gt != ht || gok != ok {
					t.Errorf("healthyAround(%d, %d, 0, 0, %d, %d) = %d %d %v, gate.CloudMapHealthy %d %d %v", nf, nt, 100-to, to, hf, ht, ok, gf, gt, gok)
				}
			}
		}
	}
	for _, tc := range []struct {
		nf, nt, ff, ft int
		wf, wt         int64
		hf, ht         int
		ok             bool
	}{
		// A HEALTHY green instance not moved: 50/50 of 2+2 is 2 blue, 1 green (2 of 4).
		{2, 2, 0, 1, 50, 50, 2, 1, true},
		// 0/100 with a HEALTHY blue instance not moved: every green, no blue (2 of 3).
		{2, 2, 1, 0, 0, 100, 0, 2, true},
		// 100/0 with a HEALTHY green one: every blue (green's share 1 of 3, the least).
		{2, 2, 0, 1, 100, 0, 2, 0, true},
		// Never none of the lever's own, even when the fixed ones alone would be closer.
		{0, 1, 0, 2, 0, 100, 0, 1, true},
		{0, 0, 1, 1, 50, 50, 0, 0, false},
		{2, 2, 0, 1, 0, 0, 0, 0, false},
	} {
		hf, ht, ok := healthyAround(tc.nf, tc.nt, tc.ff, tc.ft, tc.wf, tc.wt)
		if hf != tc.hf || ht != tc.ht || ok != tc.ok {
			t.Errorf("healthyAround(%d, %d, %d, %d, %d, %d) = %d %d %v, want %d %d %v", tc.nf, tc.nt, tc.ff, tc.ft, tc.wf, tc.wt, hf, ht, ok, tc.hf, tc.ht, tc.ok)
		}
	}
}
