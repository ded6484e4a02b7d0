package metrics

import (
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestDeletionsHeld: each planned zone's count is set (0 included), a zone reconciled but
// not planned (its listing failed) keeps its last count, and a zone no longer reconciled
// loses its series.
func TestDeletionsHeld(t *testing.T) {
	reg := prometheus.NewRegistry()
	d, err := NewDeletionsHeld(reg)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name  string
		zones []string
		held  map[string]int
		want  string
	}{
		{"held in one zone", []string{"a.com", "b.com"}, map[string]int{"a.com": 20, "b.com": 0},
			"crossfade_deletions_held{zone=\"a.com\"} 20\ncrossfade_deletions_held{zone=\"b.com\"} 0\n"},
		{"a.com not listed: its count stands", []string{"a.com", "b.com"}, map[string]int{"b.com": 3},
			"crossfade_deletions_held{zone=\"a.com\"} 20\ncrossfade_deletions_held{zone=\"b.com\"} 3\n"},
		{"let through", []string{"a.com", "b.com"}, map[string]int{"a.com": 0, "b.com": 0},
			"crossfade_deletions_held{zone=\"a.com\"} 0\ncrossfade_deletions_held{zone=\"b.com\"} 0\n"},
		{"b.com no longer managed", []string{"a.com"}, map[string]int{"a.com": 0},
			"crossfade_deletions_held{zone=\"a.com\"} 0\n"},
	}
	for _, s := range steps {
		d.Set(s.zones, s.held)
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		for _, f := range fams {
			for _, m := range f.GetMetric() {
				got.WriteString(f.GetName() + "{zone=\"" + m.GetLabel()[0].GetValue() + "\"} " + strconv.FormatFloat(m.GetGauge().GetValue(), 'f', -1, 64) + "\n")
			}
		}
		if got.String() != s.want {
			t.Errorf("%s: got\n%swant\n%s", s.name, got.String(), s.want)
		}
	}
}
