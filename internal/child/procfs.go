package child

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// What a benchmark measures of a process, read from /proc: where there is no /proc
// (outside Linux) every read fails, and the benchmark reports n/a.

// userHZ is the unit of /proc's CPU times: 100 on every Linux architecture Go supports
// (reading it would need cgo).
const userHZ = 100

// Stat is what is read of /proc/<pid>/stat.
type Stat struct {
	// State is R (running), S (sleeping), Z (zombie), ….
	State string
	// PPid is the parent's pid, PGrp the process group's id.
	PPid, PGrp int
	// CPU is the user + system time the process has used so far.
	CPU time.Duration
}

// ReadStat reads /proc/<pid>/stat.
func ReadStat(pid int) (Stat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Stat{}, err
	}
	st, err := parseStat(string(b))
	if err != nil {
		return Stat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return st, nil
}

// parseStat reads /proc/<pid>/stat text. The command name (field 2) may hold spaces and
// parentheses; the fields after its closing parenthesis are plain: state is the 3rd
// field, ppid the 4th, pgrp the 5th, utime the 14th, stime the 15th.
func parseStat(s string) (Stat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Stat{}, errors.New("no command name")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return Stat{}, fmt.Errorf("%d fields after the command name, want 13 or more", len(f))
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	utime, err3 := strconv.ParseInt(f[11], 10, 64)
	stime, err4 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return Stat{}, err
	}
	return Stat{State: f[0], PPid: ppid, PGrp: pgrp, CPU: time.Duration(utime+stime) * time.Second / userHZ}, nil
}

// CPUTime is the user + system CPU time process pid has used so far.
func CPUTime(pid int) (time.Duration, error) {
	st, err := ReadStat(pid)
	return st.CPU, err
}

// TreeCPUTime is the CPU time of process pid and of its live children (nginx's master
// and workers). A child's time reaches its parent's only once it is reaped, so this
// counts workers that live as long as their master in full.
func TreeCPUTime(pid int) (time.Duration, error) {
	total, err := CPUTime(pid)
	if err != nil {
		return 0, err
	}
	for _, n := range pids() {
		// A process that has gone since the listing was no child worth counting.
		if st, err := ReadStat(n); err == nil && st.PPid == pid {
			total += st.CPU
		}
	}
	return total, nil
}

// GroupMembers lists the processes of group pgid that have not exited, from /proc: what a
// test checks is gone after a child's stop. A zombie is left out: it has exited, and only
// waits for whoever inherited it to reap it.
func GroupMembers(pgid int) []int {
	var out []int
	for _, pid := range pids() {
		if st, err := ReadStat(pid); err == nil && st.PGrp == pgid && st.State != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// pids lists the processes in /proc; none where it cannot be read.
func pids() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// Memory is what is read of /proc/<pid>/status, in bytes.
type Memory struct {
	// Peak is VmHWM: the most resident memory the process has had.
	Peak uint64
	// Anon and File are RssAnon and RssFile: resident anonymous memory, and resident
	// file-backed memory (the binary, mapped files).
	Anon, File uint64
}

// ReadMemory reads /proc/<pid>/status.
func ReadMemory(pid int) (Memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, err
	}
	defer f.Close()
	m, err := parseMemory(f)
	if err != nil {
		return Memory{}, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	return m, nil
}

// parseMemory reads /proc/<pid>/status text: "VmHWM:\t  123456 kB" lines. A field that
// is not there (a kernel thread has no memory) is 0.
func parseMemory(r io.Reader) (Memory, error) {
	var m Memory
	fields := map[string]*uint64{"VmHWM": &m.Peak, "RssAnon": &m.Anon, "RssFile": &m.File}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		dst := fields[key]
		if !ok || dst == nil {
			continue
		}
		num, ok := strings.CutSuffix(strings.TrimSpace(val), " kB")
		if !ok {
			return Memory{}, fmt.Errorf("field %s %q: not in kB", key, val)
		}
		n, err := strconv.ParseUint(strings.TrimSpace(num), 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("field %s %q: %w", key, val, err)
		}
		*dst = n * 1024
	}
	return m, sc.Err()
}
