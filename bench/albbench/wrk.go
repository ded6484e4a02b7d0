package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// wrkResult is what one wrk run reports with --latency.
type wrkResult struct {
	requests  int64
	duration  time.Duration // as wrk measured it
	reqPerSec float64
	avg, max  time.Duration
	// percentiles by percent: wrk --latency prints 50, 75, 90 and 99.
	percentiles map[int]time.Duration
	// Socket errors, and answers with a status of 400 or more ("Non-2xx or 3xx").
	connectErrs, readErrs, writeErrs, timeouts, badStatus int64

	transferPerSec string // as wrk prints it, e.g. "8.89MB"
}

// failed is the number of requests that did not get a good answer.
func (r wrkResult) failed() int64 {
	return r.connectErrs + r.readErrs + r.writeErrs + r.timeouts + r.badStatus
}

// wrkRun is how wrk is run: threads, connections, duration and the URL.
type wrkRun struct {
	bin         string
	threads     int
	connections int
	duration    time.Duration
	url         string
}

// args is wrk's command line. wrk takes whole seconds.
func (w wrkRun) args() []string {
	return []string{w.bin, "-t", strconv.Itoa(w.threads), "-c", strconv.Itoa(w.connections),
		"-d", fmt.Sprintf("%ds", int(w.duration.Round(time.Second).Seconds())), "--latency", w.url}
}

// run runs wrk to its end and parses its report; cpu is the CPU time wrk used. When ctx
// ends, wrk is killed (it has nothing to clean up).
func (w wrkRun) run(ctx context.Context) (res wrkResult, cpu time.Duration, err error) {
	a := w.args()
	cmd := exec.CommandContext(ctx, a[0], a[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if ctx.Err() != nil {
		return res, cpu, context.Cause(ctx)
	}
	if err != nil {
		return res, cpu, fmt.Errorf("%s: %w: %s", strings.Join(a, " "), err, strings.TrimSpace(stderr.String()+stdout.String()))
	}
	res, err = parseWrk(stdout.String())
	if err != nil {
		return res, cpu, fmt.Errorf("%s: %w; its output:\n%s", strings.Join(a, " "), err, stdout.String())
	}
	return res, cpu, nil
}

// parseWrk reads the report wrk 4.x prints with --latency:
//
//	Running 20s test @ http://127.0.0.1:8080/
//	  2 threads and 64 connections
//	  Thread Stats   Avg      Stdev     Max   +/- Stdev
//	    Latency   617.92us  333.11us  14.81ms   86.01%
//	    Req/Sec    51.35k     2.76k   57.74k    71.25%
//	  Latency Distribution
//	     50%  547.00us
//	     75%  736.00us
//	     90%    0.96ms
//	     99%    1.89ms
//	  2044185 requests in 20.00s, 288.51MB read
//	  Socket errors: connect 0, read 3, write 0, timeout 0
//	  Non-2xx or 3xx responses: 12
//	Requests/sec: 102205.83
//	Transfer/sec:     14.43MB
//
// The socket errors and non-2xx lines appear only when there are any. Times carry wrk's
// units: us, ms, s, m, h.
func parseWrk(out string) (wrkResult, error) {
	r := wrkResult{percentiles: map[int]time.Duration{}}
	var haveLatency, haveRequests, haveRate, inDist bool
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		f := strings.Fields(line)
		var err error
		switch {
		case len(f) == 0:
		case line == "Latency Distribution":
			inDist = true
		case inDist && strings.HasSuffix(f[0], "%") && len(f) == 2:
			p, perr := strconv.ParseFloat(strings.TrimSuffix(f[0], "%"), 64)
			if perr != nil {
				return r, fmt.Errorf("latency distribution line %q: %w", line, perr)
			}
			var d time.Duration
			if d, err = wrkTime(f[1]); err == nil {
				r.percentiles[int(p)] = d
			}
		case f[0] == "Latency" && len(f) >= 4:
			inDist = false
			if r.avg, err = wrkTime(f[1]); err == nil {
				r.max, err = wrkTime(f[3])
			}
			haveLatency = true
		case len(f) >= 4 && f[1] == "requests" && f[2] == "in":
			inDist = false
			if r.requests, err = strconv.ParseInt(f[0], 10, 64); err == nil {
				r.duration, err = wrkTime(strings.TrimSuffix(f[3], ","))
			}
			haveRequests = true
		case strings.HasPrefix(line, "Socket errors:"):
			err = parseSocketErrors(strings.TrimPrefix(line, "Socket errors:"), &r)
		case strings.HasPrefix(line, "Non-2xx or 3xx responses:"):
			r.badStatus, err = strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "Non-2xx or 3xx responses:")), 10, 64)
		case f[0] == "Requests/sec:" && len(f) == 2:
			r.reqPerSec, err = strconv.ParseFloat(f[1], 64)
			haveRate = true
		case f[0] == "Transfer/sec:" && len(f) == 2:
			r.transferPerSec = f[1]
		}
		if err != nil {
			return r, fmt.Errorf("line %q: %w", line, err)
		}
	}
	var missing []string
	if !haveLatency {
		missing = append(missing, "the Latency thread stats")
	}
	for _, p := range []int{50, 99} {
		if _, ok := r.percentiles[p]; !ok {
			missing = append(missing, fmt.Sprintf("the %d%% latency (was --latency given?)", p))
		}
	}
	if !haveRequests {
		missing = append(missing, `"N requests in"`)
	}
	if !haveRate {
		missing = append(missing, "Requests/sec")
	}
	if len(missing) > 0 {
		return r, fmt.Errorf("wrk output lacks %s", strings.Join(missing, ", "))
	}
	return r, nil
}

// parseSocketErrors reads " connect 0, read 3, write 0, timeout 0".
func parseSocketErrors(s string, r *wrkResult) error {
	seen := 0
	for part := range strings.SplitSeq(s, ",") {
		f := strings.Fields(part)
		if len(f) != 2 {
			return fmt.Errorf("socket errors: %q: want \"<kind> <count>\"", part)
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return fmt.Errorf("socket errors: %q: %w", part, err)
		}
		switch f[0] {
		case "connect":
			r.connectErrs = n
		case "read":
			r.readErrs = n
		case "write":
			r.writeErrs = n
		case "timeout":
			r.timeouts = n
		default:
			return fmt.Errorf("socket errors: unknown kind %q", f[0])
		}
		seen++
	}
	if seen != 4 {
		return fmt.Errorf("socket errors: want connect, read, write and timeout, got %d of them", seen)
	}
	return nil
}

// wrkUnits are the units wrk prints times in (its units.c), in nanoseconds.
var wrkUnits = []struct {
	suffix string
	unit   time.Duration
}{
	// "us" and "ms" before "s", which they end with.
	{"us", time.Microsecond}, {"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}, {"h", time.Hour},
}

// wrkTime reads a time as wrk prints it: "617.92us", "1.89ms", "20.00s", "1.00m".
func wrkTime(s string) (time.Duration, error) {
	for _, u := range wrkUnits {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("time %q: not a number of %s", s, u.suffix)
		}
		return time.Duration(math.Round(v * float64(u.unit))), nil
	}
	return 0, errors.New("time " + strconv.Quote(s) + ": want a number with us, ms, s, m or h")
}
