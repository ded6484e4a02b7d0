// Package machine describes the machine a benchmark program runs on, for its report: on
// a small machine shared with other work, the load matters as much as the code measured.
// It reads Linux's /proc; where that is not there, what it cannot tell is "" or not ok.
package machine

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Info is where and when a run happened.
type Info struct {
	// Date is when the run started, in UTC.
	Date time.Time
	// CPUs is how many CPUs this process may use.
	CPUs int
	// CPUModel is the first "model name" of /proc/cpuinfo; "" where there is none.
	CPUModel string
	// GoVersion is the Go release the benchmark was built with.
	GoVersion string
	// LoadBefore and LoadAfter are LoadAverage at the start and at the end of the run
	// (the caller sets LoadAfter); "" where unknown.
	LoadBefore, LoadAfter string
}

// Describe is Info as of now, with no LoadAfter yet.
func Describe() Info {
	return Info{
		Date:       time.Now().UTC(),
		CPUs:       runtime.NumCPU(),
		CPUModel:   cpuModel(),
		GoVersion:  runtime.Version(),
		LoadBefore: LoadAverage(),
	}
}

// cpuModel is the first "model name" of /proc/cpuinfo, "" where there is none.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// LoadAverage is the 1-, 5- and 15-minute load average, "0.52 0.61 0.70"; "" where
// /proc/loadavg is not there.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// userHZ is the unit of /proc's CPU times: 100 on every Linux architecture Go supports
// (reading it would need cgo).
const userHZ = 100

// CPU is the CPU time all processes have used (busy) out of the time passed on every CPU
// (total), from /proc/stat; ok is false where that is not available. Two readings around
// a measured run tell how much CPU the processes that were not measured took.
func CPU() (busy, total time.Duration, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	return parseStat(string(b))
}

// parseStat reads the first line of /proc/stat: "cpu  user nice system idle iowait irq
// softirq steal guest guest_nice", in USER_HZ. Guest time is in user and nice already.
func parseStat(s string) (busy, total time.Duration, ok bool) {
	line, _, _ := strings.Cut(s, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, false
	}
	var ticks [8]int64
	for i := range ticks {
		var err error
		if ticks[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
			return 0, 0, false
		}
	}
	var sum int64
	for _, t := range ticks {
		sum += t
	}
	idle := ticks[3] + ticks[4]
	return time.Duration(sum-idle) * time.Second / userHZ, time.Duration(sum) * time.Second / userHZ, true
}
