package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/crossfade-io/crossfade/bench/internal/machine"
	"github.com/crossfade-io/crossfade/internal/child"
)

// result is one path's measured run.
type result struct {
	path
	wrk  wrkResult
	err  error
	wall time.Duration // the measured wrk run, start to exit

	// CPU time over the measured run: the proxy's process tree, this process (the
	// backends), wrk, and every process on the machine (busy out of total).
	proxyCPU    time.Duration
	proxyCPUOK  bool
	selfCPU     time.Duration
	selfCPUOK   bool
	wrkCPU      time.Duration
	busy, total time.Duration
	machineOK   bool

	// served is how many requests each backend answered during the measured run.
	served []int64
}

// measure warms the path up with a wrk run whose numbers are dropped, then measures it
// with another, reading CPU times and the backends' counts around the second.
func measure(ctx context.Context, o options, wrkBin string, p path, backends []*backend) *result {
	res := &result{path: p}
	run := wrkRun{bin: wrkBin, threads: o.threads, connections: o.connections, url: p.url}
	if o.warmup > 0 {
		warm := run
		warm.duration = o.warmup
		if _, _, err := warm.run(ctx); err != nil {
			res.err = fmt.Errorf("warm-up: %w", err)
			return res
		}
	}
	if p.proc != nil && p.proc.Exited() {
		res.err = p.proc.ExitError()
		return res
	}

	run.duration = o.duration
	servedBefore := servedCounts(backends)
	proxyBefore, proxyOK1 := readCPU(p.cpu)
	selfBefore, selfOK1 := readCPU(selfCPU)
	busyBefore, totalBefore, machineOK1 := machine.CPU()
	start := time.Now()

	var err error
	res.wrk, res.wrkCPU, err = run.run(ctx)

	res.wall = time.Since(start)
	busyAfter, totalAfter, machineOK2 := machine.CPU()
	selfAfter, selfOK2 := readCPU(selfCPU)
	proxyAfter, proxyOK2 := readCPU(p.cpu)
	servedAfter := servedCounts(backends)

	res.proxyCPU, res.proxyCPUOK = proxyAfter-proxyBefore, proxyOK1 && proxyOK2
	res.selfCPU, res.selfCPUOK = selfAfter-selfBefore, selfOK1 && selfOK2
	res.busy, res.total, res.machineOK = busyAfter-busyBefore, totalAfter-totalBefore, machineOK1 && machineOK2
	res.served = make([]int64, len(backends))
	for i := range backends {
		res.served[i] = servedAfter[i] - servedBefore[i]
	}
	switch {
	case err != nil:
		res.err = err
	case p.proc != nil && p.proc.Exited():
		res.err = p.proc.ExitError()
	}
	return res
}

// readCPU calls cpu, which is nil for the direct path; ok is false where the CPU time
// could not be read (no /proc), and the report then says n/a.
func readCPU(cpu func() (time.Duration, error)) (time.Duration, bool) {
	if cpu == nil {
		return 0, false
	}
	d, err := cpu()
	return d, err == nil
}

// selfCPU is this process's CPU time: the backends'.
func selfCPU() (time.Duration, error) { return child.CPUTime(os.Getpid()) }
