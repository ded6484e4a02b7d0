package main

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// wrkClean is wrk 4.1.0's report of a run without errors, as Debian's wrk prints it.
const wrkClean = `Running 2s test @ http://127.0.0.1:41371/
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   617.92us  333.11us  14.81ms   86.01%
    Req/Sec    51.35k     2.76k   57.74k    71.25%
  Latency Distribution
     50%  547.00us
     75%  736.00us
     90%    0.96ms
     99%    1.89ms
  204418 requests in 2.00s, 28.85MB read
Requests/sec: 102205.83
Transfer/sec:     14.43MB
`

// wrkErrors is a report with socket errors, bad statuses and times in seconds.
const wrkErrors = `Running 1m test @ http://127.0.0.1:8080/
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.20s   300.00ms   2.00s    70.00%
    Req/Sec    12.00      4.00     20.00     60.00%
  Latency Distribution
     50%    1.10s 
     75%    1.40s 
     90%    1.80s 
     99%    1.99s 
  1440 requests in 1.00m, 210.94KB read
  Socket errors: connect 1, read 2, write 3, timeout 40
  Non-2xx or 3xx responses: 7
Requests/sec:     23.99
Transfer/sec:      3.51KB
`

func TestParseWrk(t *testing.T) {
	for _, tc := range []struct {
		name    string
		out     string
		want    wrkResult
		wantErr string // a part of the error; "" for none
	}{
		{
			name: "clean run",
			out:  wrkClean,
			want: wrkResult{
				requests: 204418, duration: 2 * time.Second, reqPerSec: 102205.83,
				avg: 617920 * time.Nanosecond, max: 14810 * time.Microsecond,
				percentiles: map[int]time.Duration{
					50: 547 * time.Microsecond, 75: 736 * time.Microsecond,
					90: 960 * time.Microsecond, 99: 1890 * time.Microsecond,
				},
				transferPerSec: "14.43MB",
			},
		},
		{
			name: "errors, seconds and minutes",
			out:  wrkErrors,
			want: wrkResult{
				requests: 1440, duration: time.Minute, reqPerSec: 23.99,
				avg: 1200 * time.Millisecond, max: 2 * time.Second,
				percentiles: map[int]time.Duration{
					50: 1100 * time.Millisecond, 75: 1400 * time.Millisecond,
					90: 1800 * time.Millisecond, 99: 1990 * time.Millisecond,
				},
				connectErrs: 1, readErrs: 2, writeErrs: 3, timeouts: 40, badStatus: 7,
				transferPerSec: "3.51KB",
			},
		},
		{
			name:    "no --latency",
			out:     cut(wrkClean, "  Latency Distribution", "  204418"),
			wantErr: "the 50% latency (was --latency given?)",
		},
		{
			name:    "no summary",
			out:     cut(wrkClean, "  204418", ""),
			wantErr: `lacks "N requests in", Requests/sec`,
		},
		{
			name:    "empty",
			out:     "",
			wantErr: "lacks the Latency thread stats",
		},
		{
			name:    "unknown time unit",
			out:     strings.Replace(wrkClean, "1.89ms", "1.89ks", 1),
			wantErr: `time "1.89ks"`,
		},
		{
			name:    "socket errors cut short",
			out:     strings.Replace(wrkErrors, ", timeout 40", "", 1),
			wantErr: "want connect, read, write and timeout, got 3",
		},
		{
			name:    "socket error of an unknown kind",
			out:     strings.Replace(wrkErrors, "timeout 40", "reset 40", 1),
			wantErr: `unknown kind "reset"`,
		},
		{
			name:    "bad rate",
			out:     strings.Replace(wrkClean, "102205.83", "lots", 1),
			wantErr: `line "Requests/sec: lots"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseWrk(tc.out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parseWrk:\n got %+v\nwant %+v", got, tc.want)
			}
			if got.failed() != tc.want.connectErrs+tc.want.readErrs+tc.want.writeErrs+tc.want.timeouts+tc.want.badStatus {
				t.Errorf("failed() = %d", got.failed())
			}
		})
	}
}

// cut removes s's text from the line starting with from up to the line starting with to
// ("" to the end).
func cut(s, from, to string) string {
	i := strings.Index(s, from)
	if to == "" {
		return s[:i]
	}
	return s[:i] + s[strings.Index(s, to):]
}

func TestWrkTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"547.00us", 547 * time.Microsecond, true},
		{"0.96ms", 960 * time.Microsecond, true},
		{"1.89ms", 1890 * time.Microsecond, true},
		{"20.00s", 20 * time.Second, true},
		{"1.50m", 90 * time.Second, true},
		{"2.00h", 2 * time.Hour, true},
		{"12", 0, false},
		{"-1.00ms", 0, false},
		{"ms", 0, false},
	} {
		got, err := wrkTime(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("wrkTime(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestWrkArgs(t *testing.T) {
	got := wrkRun{bin: "wrk", threads: 2, connections: 64, duration: 20 * time.Second, url: "http://127.0.0.1:1/"}.args()
	want := []string{"wrk", "-t", "2", "-c", "64", "-d", "20s", "--latency", "http://127.0.0.1:1/"}
	if !slices.Equal(got, want) {
		t.Errorf("args = %q, want %q", got, want)
	}
}
