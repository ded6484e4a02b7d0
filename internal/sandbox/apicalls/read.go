package apicalls

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// CallsMetric is the counter of API calls, labelled by operation and result.
const CallsMetric = "crossfade_sandbox_api_calls_total"

// ReadCalls reads CallsMetric from the /metrics of the sandbox API at apiURL, keyed by
// "operation result" (e.g. "ChangeResourceRecordSets ok"). The sandbox counts neither
// /metrics nor its admin API in it, so reading it costs no call.
func ReadCalls(ctx context.Context, apiURL string) (map[string]int, error) {
	return ReadCounts(ctx, apiURL, CallsMetric, "operation", "result")
}

// ReadCounts reads the counter metric from the /metrics of the sandbox API at apiURL, as
// ParseCounts does.
func ReadCounts(ctx context.Context, apiURL, metric string, labels ...string) (map[string]int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, apiURL+"/metrics", nil)
	if err != nil {
		return nil, fmt.Errorf("sandbox metrics at %s: %w", apiURL, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("sandbox metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("sandbox metrics: GET %s/metrics: %s", apiURL, resp.Status)
	}
	out, err := ParseCounts(resp.Body, metric, labels...)
	if err != nil {
		return nil, fmt.Errorf("sandbox metrics at %s: %w", apiURL, err)
	}
	return out, nil
}

// ParseCalls picks CallsMetric out of Prometheus text exposition, keyed by "operation
// result":
//
//	crossfade_sandbox_api_calls_total{operation="ListHostedZones",result="ok"} 3
func ParseCalls(r io.Reader) (map[string]int, error) {
	return ParseCounts(r, CallsMetric, "operation", "result")
}

// ParseCounts picks the counter metric out of Prometheus text exposition, keyed by the
// values of labels joined by a space, in the order given; series whose keys are the same
// (labels left out) are summed. A series without one of labels, or whose value is not a
// whole number of at least 0, is an error: a counter counts, and a count read wrong would
// make a test pass on calls that were never made. It lives here, beside the metric it
// reads, rather than in sandboxtest: the benchmarks are programs that read the counters
// too and report a bad read as an error, where a test helper fails a *testing.T.
func ParseCounts(r io.Reader, metric string, labels ...string) (map[string]int, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	out := map[string]int{}
	for _, m := range families[metric].GetMetric() {
		values := make([]string, len(labels))
		for i, name := range labels {
			v, ok := label(m, name)
			if !ok {
				return nil, fmt.Errorf("metric %s %s: no label %s", metric, series(m), name)
			}
			values[i] = v
		}
		n := m.GetCounter().GetValue()
		if m.Counter == nil {
			n = m.GetUntyped().GetValue()
		}
		if n < 0 || n != math.Trunc(n) || n > 1<<53 {
			return nil, fmt.Errorf("metric %s %s: value %v is not a count", metric, series(m), n)
		}
		out[strings.Join(values, " ")] += int(n)
	}
	return out, nil
}

// label is the value of m's label name.
func label(m *dto.Metric, name string) (string, bool) {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue(), true
		}
	}
	return "", false
}

// series names m by its labels, for errors: {operation="GetChange",result="ok"}.
func series(m *dto.Metric) string {
	parts := make([]string, 0, len(m.GetLabel()))
	for _, lp := range m.GetLabel() {
		parts = append(parts, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
	}
	return "{" + strings.Join(parts, ",") + "}"
}
