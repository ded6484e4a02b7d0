package main

import (
	"strings"
	"testing"
	"time"
)

// verboseOutput is dnsperf 2.10's stdout for a short -v run, with one timeout.
const verboseOutput = `DNS Performance Testing Tool
Version 2.10.0

[Status] Command line: dnsperf -s 127.0.0.1 -p 18053 -d q.txt -l 1 -v -Q 5
[Status] Sending queries (to 127.0.0.1:18053)
> NOERROR h00001.bench.test A 0.000370
> NOERROR h00002.bench.test A 0.000294
> T h00003.bench.test A
> NOERROR h00004.bench.test A 0.001500
[Status] Testing complete (time limit)

Statistics:

  Queries sent:         4
  Queries completed:    3 (75.00%)
  Queries lost:         1 (25.00%)

  Response codes:       NOERROR 3 (100.00%)
  Average packet size:  request 35, response 51
  Run time (s):         1.000258
  Queries per second:   2.999226

  Average Latency (s):  0.000721 (min 0.000294, max 0.001500)
  Latency StdDev (s):   0.000046
`

func TestScanAndParse(t *testing.T) {
	var res perfResult
	summary, err := scanOutput(strings.NewReader(verboseOutput), &res, true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(summary, "> ") {
		t.Errorf("summary kept response lines:\n%s", summary)
	}
	if err := parseSummary(summary, &res); err != nil {
		t.Fatal(err)
	}
	if res.sent != 4 || res.completed != 3 || res.lost != 1 || res.noError != 3 {
		t.Errorf("counts = %+v", res)
	}
	if res.qps < 2.99 || res.qps > 3 || res.avg != 721*time.Microsecond || res.max != 1500*time.Microsecond {
		t.Errorf("qps %v avg %v max %v", res.qps, res.avg, res.max)
	}
	if res.hist.n != 3 || res.timeouts != 1 || res.unparsedResponses != 0 {
		t.Errorf("hist n %d, timeouts %d, unparsed %d", res.hist.n, res.timeouts, res.unparsedResponses)
	}
	if got := res.hist.quantile(0.99); got != 1500*time.Microsecond {
		t.Errorf("p99 = %v, want 1.5ms", got)
	}
}

func TestHistogramQuantiles(t *testing.T) {
	h := newHistogram()
	for us := 1; us <= 100000; us++ {
		h.add(time.Duration(us) * time.Microsecond)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}} {
		got := h.quantile(tc.q)
		// Bucket upper edges overstate by at most 0.2 %.
		if got < tc.want || float64(got) > float64(tc.want)*1.002 {
			t.Errorf("quantile(%v) = %v, want %v (+0.2%%)", tc.q, got, tc.want)
		}
	}
}

func TestBucketEdges(t *testing.T) {
	for us := int64(0); us < 1<<22; us++ {
		b := bucketOf(us)
		if upperOf(b) < us || (b > 0 && upperOf(b-1) >= us) {
			t.Fatalf("%d µs: bucket %d spans (%d, %d]", us, b, upperOf(b-1), upperOf(b))
		}
	}
}
