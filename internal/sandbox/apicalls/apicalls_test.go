package apicalls

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestSharedAcrossAPIs: every API of one sandbox registers in one registry and counts in
// the same series.
func TestSharedAcrossAPIs(t *testing.T) {
	reg := prometheus.NewRegistry()
	r53, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	elb, err := New(reg)
	if err != nil {
		t.Fatalf("second API: %v", err)
	}
	r53.Observe("ListHostedZones", "ok", time.Millisecond)
	elb.Observe("DescribeRules", "ok", time.Millisecond)
	elb.Observe("DescribeRules", "RuleNotFound", time.Millisecond)
	if n := testutil.CollectAndCount(reg, "crossfade_sandbox_api_calls_total"); n != 3 {
		t.Errorf("%d call series, want 3", n)
	}
	if v := r53.Count("DescribeRules", "ok"); v != 1 {
		t.Errorf("DescribeRules ok = %v through the first API's handle, want 1 (one shared counter)", v)
	}
	if _, err := New(nil); err != nil {
		t.Errorf("unregistered: %v", err)
	}
}

func TestParseCounts(t *testing.T) {
	exposition := `# HELP crossfade_sandbox_api_calls_total AWS API calls to the sandbox.
# TYPE crossfade_sandbox_api_calls_total counter
crossfade_sandbox_api_calls_total{operation="ChangeResourceRecordSets",result="ok"} 35
crossfade_sandbox_api_calls_total{operation="ListHostedZones",result="Throttling"} 1
crossfade_sandbox_api_calls_total{operation="ListHostedZones",result="ok"} 2
crossfade_sandbox_api_calls_total{operation="ListResourceRecordSets",result="ok"} 67
crossfade_sandbox_api_call_duration_seconds_bucket{operation="ListHostedZones",le="0.0005"} 0
# TYPE crossfade_sandbox_record_changes_total counter
crossfade_sandbox_record_changes_total{action="CREATE"} 20000
crossfade_sandbox_record_changes_total{action="DELETE"} 3
go_goroutines 12
`
	for _, tc := range []struct {
		name    string
		text    string
		metric  string
		labels  []string
		want    map[string]int
		wantErr string
	}{
		{name: "calls among other metrics", text: exposition, metric: CallsMetric, labels: []string{"operation", "result"},
			want: map[string]int{"ChangeResourceRecordSets ok": 35, "ListHostedZones Throttling": 1, "ListHostedZones ok": 2, "ListResourceRecordSets ok": 67}},
		{name: "another counter", text: exposition, metric: "crossfade_sandbox_record_changes_total", labels: []string{"action"},
			want: map[string]int{"CREATE": 20000, "DELETE": 3}},
		{name: "a label left out sums the series", text: exposition, metric: CallsMetric, labels: []string{"operation"},
			want: map[string]int{"ChangeResourceRecordSets": 35, "ListHostedZones": 3, "ListResourceRecordSets": 67}},
		{name: "no counters yet", text: "go_goroutines 12\n", metric: CallsMetric, labels: []string{"operation", "result"}, want: map[string]int{}},
		{name: "untyped count in exponent form", text: `crossfade_sandbox_api_calls_total{operation="GetChange",result="ok"} 1.2e+06` + "\n",
			metric: CallsMetric, labels: []string{"operation", "result"}, want: map[string]int{"GetChange ok": 1200000}},
		{name: "label value with a comma and a quote", text: `crossfade_sandbox_api_calls_total{operation="GetChange",result="a,b\"c"} 4` + "\n",
			metric: CallsMetric, labels: []string{"operation", "result"}, want: map[string]int{`GetChange a,b"c`: 4}},
		{name: "value missing", text: `crossfade_sandbox_api_calls_total{operation="GetChange",result="ok"}` + "\n",
			metric: CallsMetric, labels: []string{"operation", "result"}, wantErr: "parse metrics"},
		{name: "value not a count", text: `crossfade_sandbox_api_calls_total{operation="GetChange",result="ok"} 1.5` + "\n",
			metric: CallsMetric, labels: []string{"operation", "result"}, wantErr: `crossfade_sandbox_api_calls_total {operation="GetChange",result="ok"}: value 1.5 is not a count`},
		{name: "negative value", text: `crossfade_sandbox_api_calls_total{operation="GetChange",result="ok"} -1` + "\n",
			metric: CallsMetric, labels: []string{"operation", "result"}, wantErr: "value -1 is not a count"},
		{name: "label missing", text: `crossfade_sandbox_api_calls_total{operation="GetChange"} 1` + "\n",
			metric: CallsMetric, labels: []string{"operation", "result"}, wantErr: `{operation="GetChange"}: no label result`},
		{name: "malformed line elsewhere", text: exposition + "go_threads{ 3\n", metric: CallsMetric, labels: []string{"operation", "result"}, wantErr: "parse metrics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCounts(strings.NewReader(tc.text), tc.metric, tc.labels...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q (got %v)", err, tc.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestReadCalls reads the counters a registry serves over HTTP, as the sandbox's /metrics
// does, and refuses a page that is not the metrics.
func TestReadCalls(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.Observe("ListHostedZones", "ok", time.Millisecond)
	m.Observe("ListHostedZones", "ok", time.Millisecond)
	m.Observe("GetChange", "NoSuchChange", time.Millisecond)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	got, err := ReadCalls(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"ListHostedZones ok": 2, "GetChange NoSuchChange": 1}; !maps.Equal(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
	if got, err := ReadCalls(context.Background(), srv.URL+"/nothing"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("metrics from a path that serves none: %v, %v; want a 404 error", got, err)
	}
}
