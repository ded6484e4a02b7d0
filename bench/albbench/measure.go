package main

import (
	"context"
	"fmt"
	"os"
	"time"
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
	if p.proc != nil && p.proc.exited() {
		res.err = p.proc.earlyExit()
		return res
	}

	run.duration = o.duration
	servedBefore := servedCounts(backends)
	proxyBefore, proxyOK1 := readCPU(p.cpu)
	selfBefore, selfOK1 := processCPU(os.Getpid())
	busyBefore, totalBefore, machineOK1 := machineCPU()
	start := time.Now()

	var err error
	res.wrk, res.wrkCPU, err = run.run(ctx)

	res.wall = time.Since(start)
	busyAfter, totalAfter, machineOK2 := machineCPU()
	selfAfter, selfOK2 := processCPU(os.Getpid())
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
	case p.proc != nil && p.proc.exited():
		res.err = p.proc.earlyExit()
	}
	return res
}

// readCPU calls cpu, which is nil for the direct path.
func readCPU(cpu func() (time.Duration, bool)) (time.Duration, bool) {
	if cpu == nil {
		return 0, false
	}
	return cpu()
}
