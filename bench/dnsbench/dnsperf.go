package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/bench/internal/machine"
	"github.com/crossfade-io/crossfade/internal/child"
)

// role is what a target stands for in the ratios the report computes.
type role int

const (
	roleWeighted role = iota // the sandbox serving weighted A pairs
	rolePlain                // the sandbox serving plain A records
	roleCoreDNS              // CoreDNS's file plugin, plain A records
	roleKnot                 // Knot DNS, plain A records
)

// target is one DNS server under test and what was measured on it.
type target struct {
	name    string
	role    role
	kind    string // what its records are, for the report
	addr    string
	proc    *child.Process
	runs    []perfResult // saturating throughput runs, in order
	latency *perfResult  // verbose run the p99 comes from
	notes   []string
}

// best is the throughput run with the highest qps.
func (t *target) best() perfResult {
	var b perfResult
	for _, r := range t.runs {
		if r.qps > b.qps {
			b = r
		}
	}
	return b
}

// perfRun is one dnsperf invocation.
type perfRun struct {
	addr        string
	file        string
	duration    time.Duration
	clients     int
	threads     int
	outstanding int
	rate        int  // -Q; 0: as fast as the server answers
	verbose     bool // -v: one line per response, folded into a histogram
}

// perfResult is what dnsperf reported, plus CPU use of both sides.
type perfResult struct {
	args              []string
	sent, completed   int64
	lost              int64
	noError           int64
	qps               float64
	avg, min, max     time.Duration
	runTime           time.Duration // dnsperf's "Run time": the sending phase
	serverCPU         time.Duration // -1: not measurable here
	perfCPU           time.Duration // dnsperf's own user+system time, drain included
	otherCPU          time.Duration // everything else on the machine; -1: not measurable
	window            time.Duration // wall time otherCPU was measured over
	elapsed           time.Duration
	hist              *histogram // verbose runs only
	timeouts          int64      // verbose runs only: "> T" lines
	unparsedResponses int64      // verbose lines that did not parse; should stay 0
}

// writeQueryFile writes the names once each, type A, in a random order fixed by seed:
// dnsperf replays the file in a loop, so every name is asked about equally often and no
// server profits from the order the names were created in.
func writeQueryFile(path string, names int, seed uint64) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("query file: %w", err)
	}
	w := bufio.NewWriter(f)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for _, i := range rng.Perm(names) {
		fmt.Fprintf(w, "%s A\n", hostName(i))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("query file: %w", err)
	}
	return f.Close()
}

// measureDNS runs the throughput rounds, the servers taking turns so that drift in machine
// load hits all alike, then one verbose latency run per server.
func measureDNS(ctx context.Context, o options, file string, targets []*target, log *slog.Logger) error {
	base := perfRun{file: file, duration: o.duration, clients: o.clients, threads: o.threads, outstanding: o.outstanding}
	for round := 1; round <= o.rounds; round++ {
		for _, t := range targets {
			run := base
			run.addr = t.addr
			res, err := runMeasured(ctx, run, t)
			if err != nil {
				return fmt.Errorf("dnsperf round %d, %s: %w", round, t.name, err)
			}
			log.Info("throughput run", "server", t.name, "round", round, "qps", int(res.qps), "lost", res.lost,
				"avg", res.avg, "server_cpu", res.serverCPU, "dnsperf_cpu", res.perfCPU)
			t.runs = append(t.runs, res)
		}
	}
	rate := latencyRate(o.latencyRate, targets)
	for _, t := range targets {
		run := base
		run.addr, run.duration, run.rate, run.verbose = t.addr, o.latencyLength, rate, true
		res, err := runMeasured(ctx, run, t)
		if err != nil {
			return fmt.Errorf("dnsperf latency run, %s: %w", t.name, err)
		}
		log.Info("latency run", "server", t.name, "rate", rate, "qps", int(res.qps),
			"p50", res.hist.quantile(0.50), "p99", res.hist.quantile(0.99), "lost", res.lost)
		t.latency = &res
	}
	return nil
}

// latencyRate is the offered rate of the latency runs. By default it is half the lowest of
// the servers' best qps: the same load for all, which none is saturated by, so p99
// shows how fast a server answers rather than how deep dnsperf's queue (-q) is.
func latencyRate(flagValue int, targets []*target) int {
	switch {
	case flagValue > 0:
		return flagValue
	case flagValue < 0:
		return 0
	}
	low := 0.0
	for i, t := range targets {
		if q := t.best().qps; i == 0 || q < low {
			low = q
		}
	}
	return max(int(low/2), 1)
}

// cpuSample holds the CPU counters runMeasured compares before and after a run.
type cpuSample struct {
	server, self, busy, total time.Duration
	ok                        bool
}

func sampleCPU(server *child.Process) cpuSample {
	srv, err1 := child.CPUTime(server.Pid())
	self, err2 := child.CPUTime(os.Getpid())
	busy, total, ok := machine.CPU()
	return cpuSample{server: srv, self: self, busy: busy, total: total, ok: err1 == nil && err2 == nil && ok}
}

// runMeasured runs dnsperf against t and adds the CPU time t's server used meanwhile and
// the CPU time of everything else on the machine: on a small shared machine, whether the
// numbers mean anything depends on it.
func runMeasured(ctx context.Context, run perfRun, t *target) (perfResult, error) {
	before := sampleCPU(t.proc)
	res, err := runDNSPerf(ctx, run)
	if err != nil {
		return res, err
	}
	after := sampleCPU(t.proc)
	if before.ok && after.ok {
		res.serverCPU = after.server - before.server
		res.window = (after.total - before.total) / time.Duration(runtime.NumCPU())
		res.otherCPU = (after.busy - before.busy) - res.serverCPU - res.perfCPU - (after.self - before.self)
	}
	if t.proc.Exited() {
		return res, t.proc.ExitError()
	}
	return res, checkResult(res)
}

// checkResult rejects a run whose numbers cannot be compared: nothing answered, or answers
// that were not NOERROR (a misconfigured zone answers fast and wrong).
func checkResult(r perfResult) error {
	switch {
	case r.completed == 0:
		return fmt.Errorf("no query completed (%d sent)", r.sent)
	case r.noError != r.completed:
		return fmt.Errorf("%d of %d responses were not NOERROR", r.completed-r.noError, r.completed)
	case r.hist != nil && r.unparsedResponses > 0:
		return fmt.Errorf("%d verbose response lines did not parse", r.unparsedResponses)
	}
	return nil
}

func (r perfRun) args() ([]string, error) {
	host, port, err := net.SplitHostPort(r.addr)
	if err != nil {
		return nil, fmt.Errorf("server address %q: %w", r.addr, err)
	}
	args := []string{"dnsperf", "-s", host, "-p", port, "-d", r.file,
		"-l", strconv.FormatFloat(r.duration.Seconds(), 'f', -1, 64),
		"-c", strconv.Itoa(r.clients), "-T", strconv.Itoa(r.threads), "-q", strconv.Itoa(r.outstanding)}
	if r.rate > 0 {
		args = append(args, "-Q", strconv.Itoa(r.rate))
	}
	if r.verbose {
		args = append(args, "-v")
	}
	return args, nil
}

// runDNSPerf runs dnsperf and parses its report. Its stdout is read as a stream: in verbose
// mode each response line goes into a histogram and only the other lines are kept.
func runDNSPerf(ctx context.Context, r perfRun) (perfResult, error) {
	res := perfResult{serverCPU: -1, otherCPU: -1}
	args, err := r.args()
	if err != nil {
		return res, err
	}
	res.args = args
	// dnsperf stops itself after -l plus its query timeout (-t, 5 s); the extra bound only
	// matters if it hangs.
	ctx, cancel := context.WithTimeout(ctx, r.duration+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	stderr := &tailBuffer{max: 4096}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return res, fmt.Errorf("dnsperf: %w", err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("dnsperf: %w", err)
	}
	summary, scanErr := scanOutput(stdout, &res, r.verbose)
	if scanErr != nil {
		// Drain so that dnsperf is never blocked on a full pipe while Wait waits for it.
		_, _ = io.Copy(io.Discard, stdout)
	}
	waitErr := cmd.Wait()
	res.elapsed = time.Since(start)
	if st := cmd.ProcessState; st != nil {
		res.perfCPU = st.UserTime() + st.SystemTime()
	}
	if err := errors.Join(waitErr, scanErr); err != nil {
		return res, fmt.Errorf("dnsperf %s: %w; stderr: %s", strings.Join(args[1:], " "), err, strings.TrimSpace(stderr.String()))
	}
	if err := parseSummary(summary, &res); err != nil {
		return res, fmt.Errorf("dnsperf output: %w; stdout: %s", err, summary)
	}
	return res, nil
}

// scanOutput reads dnsperf's stdout, returning every line but the per-response ones.
func scanOutput(stdout io.Reader, res *perfResult, verbose bool) (string, error) {
	if verbose {
		res.hist = newHistogram()
	}
	var summary strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if verbose && strings.HasPrefix(line, "> ") {
			addResponseLine(line, res)
			continue
		}
		summary.WriteString(line)
		summary.WriteByte('\n')
	}
	return summary.String(), sc.Err()
}

// addResponseLine folds one verbose line into the histogram. dnsperf 2.10 prints
// "> RCODE qname qtype 0.000370" per response and "> T qname qtype" per timed-out query.
func addResponseLine(line string, res *perfResult) {
	f := strings.Fields(line)
	if len(f) >= 2 && (f[1] == "T" || f[1] == "I") {
		res.timeouts++
		return
	}
	sec, err := strconv.ParseFloat(f[len(f)-1], 64)
	if err != nil || len(f) < 3 {
		res.unparsedResponses++
		return
	}
	res.hist.add(time.Duration(sec * float64(time.Second)))
}

var (
	reSent      = regexp.MustCompile(`Queries sent:\s+(\d+)`)
	reCompleted = regexp.MustCompile(`Queries completed:\s+(\d+)`)
	reLost      = regexp.MustCompile(`Queries lost:\s+(\d+)`)
	reNoError   = regexp.MustCompile(`Response codes:.*\bNOERROR (\d+)`)
	reQPS       = regexp.MustCompile(`Queries per second:\s+([\d.]+)`)
	reRunTime   = regexp.MustCompile(`Run time \(s\):\s+([\d.]+)`)
	reLatency   = regexp.MustCompile(`Average Latency \(s\):\s+([\d.]+) \(min ([\d.]+), max ([\d.]+)\)`)
)

// parseSummary reads dnsperf's closing statistics.
func parseSummary(out string, res *perfResult) error {
	ints := []struct {
		re  *regexp.Regexp
		dst *int64
	}{{reSent, &res.sent}, {reCompleted, &res.completed}, {reLost, &res.lost}}
	for _, f := range ints {
		m := f.re.FindStringSubmatch(out)
		if m == nil {
			return fmt.Errorf("no %q line", strings.SplitN(f.re.String(), ":", 2)[0])
		}
		*f.dst, _ = strconv.ParseInt(m[1], 10, 64) // \d+ always parses
	}
	if m := reNoError.FindStringSubmatch(out); m != nil {
		res.noError, _ = strconv.ParseInt(m[1], 10, 64)
	}
	m := reQPS.FindStringSubmatch(out)
	if m == nil {
		return errors.New(`no "Queries per second" line`)
	}
	res.qps, _ = strconv.ParseFloat(m[1], 64)
	if m := reRunTime.FindStringSubmatch(out); m != nil {
		res.runTime = seconds(m[1])
	}
	m = reLatency.FindStringSubmatch(out)
	if m == nil {
		return errors.New(`no "Average Latency" line`)
	}
	res.avg, res.min, res.max = seconds(m[1]), seconds(m[2]), seconds(m[3])
	return nil
}

// seconds converts one of dnsperf's decimal-seconds fields.
func seconds(s string) time.Duration {
	f, _ := strconv.ParseFloat(s, 64)
	return time.Duration(f * float64(time.Second))
}
