package cloudwatchapi

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// form builds a request tree the way the query protocol's parameters arrive.
func form(t *testing.T, kv ...string) map[string]any {
	t.Helper()
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	tree, err := formTree(v)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// gmd is a valid GetMetricData request with one query; extra pairs override or add.
func gmd(t *testing.T, extra ...string) map[string]any {
	t.Helper()
	base := map[string]string{
		"StartTime":                     "2026-05-20T11:00:00Z",
		"EndTime":                       "2026-05-20T11:05:00Z",
		"MetricDataQueries.member.1.Id": "m1",
		"MetricDataQueries.member.1.MetricStat.Metric.Namespace":                 "AWS/ApplicationELB",
		"MetricDataQueries.member.1.MetricStat.Metric.MetricName":                "RequestCount",
		"MetricDataQueries.member.1.MetricStat.Metric.Dimensions.member.1.Name":  "LoadBalancer",
		"MetricDataQueries.member.1.MetricStat.Metric.Dimensions.member.1.Value": testLB,
		"MetricDataQueries.member.1.MetricStat.Period":                           "60",
		"MetricDataQueries.member.1.MetricStat.Stat":                             "Sum",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "<absent>" {
			delete(base, extra[i])
		} else {
			base[extra[i]] = extra[i+1]
		}
	}
	var kv []string
	for k, v := range base {
		kv = append(kv, k, v)
	}
	return form(t, kv...)
}

func TestBindGetMetricData(t *testing.T) {
	const q1 = "MetricDataQueries.member.1."
	for _, tc := range []struct {
		name  string
		extra []string
		want  string // the whole ValidationError message; "" for none
	}{
		{"valid", nil, ""},
		{"start equals end", []string{"EndTime", "2026-05-20T11:00:00Z"},
			"The parameter StartTime must not equal parameter EndTime.\n"},
		{"start and end within one second", []string{"StartTime", "2026-05-20T11:00:00.020Z", "EndTime", "2026-05-20T11:00:00.987Z"},
			"The parameter StartTime must not equal parameter EndTime.\n"},
		{"end before start", []string{"EndTime", "2026-05-20T10:00:00Z"},
			"The parameter EndTime must be greater than StartTime.\n"},
		{"no start", []string{"StartTime", "<absent>"}, "The parameter StartTime is required.\n"},
		{"no queries", []string{q1 + "Id", "<absent>", q1 + "MetricStat.Metric.Namespace", "<absent>", q1 + "MetricStat.Metric.MetricName", "<absent>",
			q1 + "MetricStat.Metric.Dimensions.member.1.Name", "<absent>", q1 + "MetricStat.Metric.Dimensions.member.1.Value", "<absent>",
			q1 + "MetricStat.Period", "<absent>", q1 + "MetricStat.Stat", "<absent>"},
			"The parameter MetricDataQueries is required.\n"},
		{"id pattern", []string{q1 + "Id", "Blue"},
			"The value Blue for parameter MetricDataQueries.member.1.Id is not matching the expected pattern ^[a-z][a-zA-Z0-9_]*$.\n"},
		{"no id", []string{q1 + "Id", "<absent>"}, "The parameter MetricDataQueries.member.1.Id is required.\n"},
		{"period not allowed", []string{q1 + "MetricStat.Period", "45"},
			"The parameter MetricDataQueries.member.1.MetricStat.Period must be a value in the set [ 1, 5, 10, 20, 30 ] or a multiple of 60.\n"},
		{"no period", []string{q1 + "MetricStat.Period", "<absent>"}, "The parameter MetricDataQueries.member.1.MetricStat.Period is required.\n"},
		{"statistic", []string{q1 + "MetricStat.Stat", "Total"},
			"The value Total for parameter MetricDataQueries.member.1.MetricStat.Stat is not a valid statistic.\n"},
		{"no metric name", []string{q1 + "MetricStat.Metric.MetricName", "<absent>"},
			"The parameter MetricDataQueries.member.1.MetricStat.Metric.MetricName is required.\n"},
		{"period beside the metric stat", []string{q1 + "Period", "60"},
			"The parameters MetricDataQueries.member.1.Period and MetricDataQueries.member.1.MetricStat are mutually exclusive and you have specified both.\n"},
		{"no metric stat", []string{q1 + "MetricStat.Metric.Namespace", "<absent>", q1 + "MetricStat.Metric.MetricName", "<absent>",
			q1 + "MetricStat.Metric.Dimensions.member.1.Name", "<absent>", q1 + "MetricStat.Metric.Dimensions.member.1.Value", "<absent>",
			q1 + "MetricStat.Period", "<absent>", q1 + "MetricStat.Stat", "<absent>", q1 + "Label", "x"},
			"The parameter MetricDataQueries.member.1.MetricStat is required.\n"},
		{"duplicate ids", []string{"MetricDataQueries.member.2.Id", "m1", "MetricDataQueries.member.2.MetricStat.Metric.MetricName", "RequestCount",
			"MetricDataQueries.member.2.MetricStat.Period", "60", "MetricDataQueries.member.2.MetricStat.Stat", "Sum"},
			"The values for parameter id in MetricDataQueries are not unique.\n"},
		{"every problem, one line each", []string{"EndTime", "2026-05-20T11:00:00Z", q1 + "Id", "1x", q1 + "MetricStat.Stat", "avg"},
			"The parameter StartTime must not equal parameter EndTime.\n" +
				"The value 1x for parameter MetricDataQueries.member.1.Id is not matching the expected pattern ^[a-z][a-zA-Z0-9_]*$.\n" +
				"The value avg for parameter MetricDataQueries.member.1.MetricStat.Stat is not a valid statistic.\n"},
		{"scan by", []string{"ScanBy", "Newest"},
			"The value Newest for parameter ScanBy is not valid: it must be a value in the set [TimestampDescending, TimestampAscending].\n"},
		{"max data points", []string{"MaxDatapoints", "0"}, "The parameter MaxDatapoints must be greater than or equal to 1.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := bindGetMetricData(gmd(t, tc.extra...))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var ae *apiError
			if !errors.As(err, &ae) || ae.Code != codeValidation || ae.Message != tc.want {
				t.Fatalf("error %v\nwant ValidationError: %q", err, tc.want)
			}
		})
	}

	// What the sandbox does not serve is refused in its own words, not as a CloudWatch error.
	for name, extra := range map[string][]string{
		"expression":      {"MetricDataQueries.member.2.Id", "e1", "MetricDataQueries.member.2.Expression", "SUM(METRICS())"},
		"trimmed mean":    {q1 + "MetricStat.Stat", "tm99"},
		"percentile rank": {q1 + "MetricStat.Stat", "PR(:0.5)"},
	} {
		_, err := bindGetMetricData(gmd(t, extra...))
		var ae *apiError
		if !errors.As(err, &ae) || ae.Code != codeValidation || !strings.HasPrefix(ae.Message, "The crossfade sandbox does not serve this: ") {
			t.Errorf("%s: %v, want the sandbox's refusal", name, err)
		}
	}

	in, err := bindGetMetricData(gmd(t, q1+"ReturnData", "false", q1+"Label", "blue", "ScanBy", "TimestampAscending", "MaxDatapoints", "7"))
	if err != nil {
		t.Fatal(err)
	}
	q := in.queries[0]
	if q.returnData || q.label != "blue" || in.scanBy != scanAscending || in.maxDatapoints != 7 || q.stat.period != 60 ||
		len(q.stat.dims) != 1 || q.stat.dims[0] != (dimension{DimLoadBalancer, testLB}) {
		t.Fatalf("bound %+v %+v", in, q)
	}
}

func TestBindGetMetricStatistics(t *testing.T) {
	valid := []string{"Namespace", Namespace, "MetricName", RequestCount, "StartTime", "2026-05-20T11:00:00Z",
		"EndTime", "2026-05-20T12:00:00Z", "Period", "60", "Statistics.member.1", "Sum"}
	with := func(extra ...string) []string {
		out := append([]string{}, valid...)
		for i := 0; i+1 < len(extra); i += 2 {
			found := false
			for j := 0; j < len(out); j += 2 {
				if out[j] == extra[i] {
					out[j+1], found = extra[i+1], true
				}
			}
			if !found {
				out = append(out, extra[i], extra[i+1])
			}
		}
		var kept []string
		for i := 0; i < len(out); i += 2 {
			if out[i+1] != "<absent>" {
				kept = append(kept, out[i], out[i+1])
			}
		}
		return kept
	}
	for _, tc := range []struct {
		name      string
		kv        []string
		code, msg string
	}{
		{"valid", valid, "", ""},
		{"no namespace", with("Namespace", "<absent>"), codeMissingParameter, "The parameter Namespace is required."},
		{"no period", with("Period", "<absent>"), codeMissingParameter, "The parameter Period is required."},
		{"start after end", with("StartTime", "2026-05-20T13:00:00Z"), codeInvalidParameterValue, "The parameter StartTime must be less than the parameter EndTime."},
		{"period", with("Period", "90"), codeInvalidParameterValue, "The parameter Period must be a value in the set [ 1, 5, 10, 20, 30 ] or a multiple of 60."},
		{"no statistics", with("Statistics.member.1", "<absent>"), codeMissingParameter, "Must specify either Statistics or ExtendedStatistics."},
		{"both kinds", with("ExtendedStatistics.member.1", "p99"), codeInvalidParameterCombination,
			"The parameters Statistics and ExtendedStatistics are mutually exclusive and you have specified both."},
		{"percentile among statistics", with("Statistics.member.1", "p99"), codeInvalidParameterValue,
			"The parameter Statistics.member.1.<list element> must be a value in the set [SampleCount, Average, Sum, Minimum, Maximum]."},
		{"bad extended statistic", with("Statistics.member.1", "<absent>", "ExtendedStatistics.member.1", "q99"), codeInvalidParameterValue,
			"The value q99 for parameter ExtendedStatistics.member.1 is not a valid extended statistic."},
		{"bad period value", with("Period", "sixty"), codeInvalidParameterValue, "The value sixty for parameter Period is not a valid integer."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := bindGetMetricStatistics(form(t, tc.kv...))
			if tc.code == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var ae *apiError
			if !errors.As(err, &ae) || ae.Code != tc.code || ae.Message != tc.msg {
				t.Fatalf("error %v\nwant %s: %s", err, tc.code, tc.msg)
			}
		})
	}
}

func TestFormTree(t *testing.T) {
	tree := form(t,
		"A.member.2.B", "second", "A.member.1.B", "first", "A.member.10.B", "tenth",
		"C.member.1", "x", "D", "", "E.F", "g")
	a, ok := tree["A"].([]any)
	if !ok || len(a) != 3 || a[0].(map[string]any)["B"] != "first" || a[2].(map[string]any)["B"] != "tenth" {
		t.Fatalf("A = %#v: want a list in index order", tree["A"])
	}
	if c, ok := tree["C"].([]any); !ok || len(c) != 1 || c[0] != "x" {
		t.Fatalf("C = %#v", tree["C"])
	}
	if tree["D"] != "" || tree["E"].(map[string]any)["F"] != "g" {
		t.Fatalf("tree %#v", tree)
	}
	if _, err := formTree(url.Values{"A": {"x"}, "A.B": {"y"}}); err == nil {
		t.Fatal("a parameter both a value and a structure was accepted")
	}
}
