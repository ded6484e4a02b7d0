package child

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/testenv"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       Stat
		wantErr    bool
	}{
		{name: "plain", stat: "4242 (crossfade) S 1 4242 4242 0 -1 4194560 1000 0 0 0 150 25 0 0 20 0 12 0 100 0 0",
			want: Stat{State: "S", PPid: 1, PGrp: 4242, CPU: 1750 * time.Millisecond}},
		{name: "command name with spaces and parentheses", stat: "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 0 0 0",
			want: Stat{State: "R", PPid: 1, PGrp: 7, CPU: 70 * time.Millisecond}},
		{name: "truncated", stat: "7 (x) R 1 7", wantErr: true},
		{name: "no command", stat: "garbage", wantErr: true},
		{name: "not a number", stat: "7 (x) R 1 7 7 0 -1 0 0 0 0 0 lots 4 0 0 20 0 1 0 0 0 0", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat(tc.stat)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("parseStat = %+v, %v; want %+v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestParseMemory(t *testing.T) {
	for _, tc := range []struct {
		name, status string
		want         Memory
		wantErr      bool
	}{
		{name: "process",
			status: "Name:\tcrossfade\nState:\tS (sleeping)\nVmPeak:\t 1407152 kB\nVmHWM:\t   81384 kB\nVmRSS:\t   79000 kB\nRssAnon:\t   60000 kB\nRssFile:\t   19000 kB\nThreads:\t12\n",
			want:   Memory{Peak: 81384 << 10, Anon: 60000 << 10, File: 19000 << 10}},
		{name: "kernel thread: no memory fields", status: "Name:\tkthreadd\nThreads:\t1\n"},
		{name: "a size that is not a number", status: "VmHWM:\t lots kB\n", wantErr: true},
		{name: "a size not in kB", status: "VmHWM:\t 12\n", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseMemory(strings.NewReader(tc.status))
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("parseMemory = %+v, %v; want %+v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestReadProcess reads this test process's own /proc entries: it has used CPU time (it
// burns some first), has resident memory, and its parent is the one it was told of.
func TestReadProcess(t *testing.T) {
	testenv.File(t, "/proc/self/stat", "no /proc (Linux has one)")
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	pid := os.Getpid()
	st, err := ReadStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	if st.PPid != os.Getppid() || st.State == "Z" {
		t.Errorf("stat = %+v; want parent %d, not a zombie", st, os.Getppid())
	}
	if cpu, err := CPUTime(pid); err != nil || cpu <= 0 {
		t.Errorf("CPUTime = %v, %v; want more than 0", cpu, err)
	}
	if tree, err := TreeCPUTime(pid); err != nil || tree < st.CPU {
		t.Errorf("TreeCPUTime = %v, %v; want at least the process's own %v", tree, err, st.CPU)
	}
	m, err := ReadMemory(pid)
	if err != nil || m.Peak == 0 || m.Anon == 0 || m.File == 0 {
		t.Errorf("ReadMemory = %+v, %v; want every field above 0", m, err)
	}
	if _, err := ReadStat(1 << 30); err == nil {
		t.Error("ReadStat of a pid that cannot exist succeeded")
	}
}
