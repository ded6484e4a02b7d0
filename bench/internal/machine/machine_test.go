package machine

import (
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/testenv"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name        string
		stat        string
		busy, total time.Duration
		ok          bool
	}{
		// user 100, nice 20, system 30, idle 800, iowait 50, irq 0, softirq 0, steal 0: 1.5 s busy of 10 s.
		{"all CPUs", "cpu  100 20 30 800 50 0 0 0 0 0\ncpu0 50 10 15 400 25 0 0 0 0 0\n", 1500 * time.Millisecond, 10 * time.Second, true},
		{"a CPU's line first", "cpu0 50 10 15 400 25 0 0 0 0 0\n", 0, 0, false},
		{"too few fields", "cpu  100 20 30 800\n", 0, 0, false},
		{"not a number", "cpu  100 20 thirty 800 50 0 0 0 0 0\n", 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			busy, total, ok := parseStat(tc.stat)
			if busy != tc.busy || total != tc.total || ok != tc.ok {
				t.Errorf("parseStat = %v, %v, %v; want %v, %v, %v", busy, total, ok, tc.busy, tc.total, tc.ok)
			}
		})
	}
}

// TestDescribe reads this machine: where there is a /proc, every field is known.
func TestDescribe(t *testing.T) {
	testenv.File(t, "/proc/loadavg", "no /proc (Linux has one)")
	in := Describe()
	if in.CPUs < 1 || !strings.HasPrefix(in.GoVersion, "go") || len(strings.Fields(in.LoadBefore)) != 3 || in.Date.Location() != time.UTC {
		t.Errorf("Describe = %+v", in)
	}
	if busy, total, ok := CPU(); !ok || busy <= 0 || total < busy {
		t.Errorf("CPU = %v, %v, %v; want 0 < busy ≤ total", busy, total, ok)
	}
}
