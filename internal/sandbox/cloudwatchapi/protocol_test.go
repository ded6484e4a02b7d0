package cloudwatchapi

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/smithy-go/encoding/cbor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/crossfade-io/crossfade/internal/sandbox/route53api"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// wireFixture serves the API on loopback over trafficSource for raw-protocol requests.
func wireFixture(t *testing.T) (*API, *httptest.Server, time.Time) {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Minute)
	t0 := now.Add(-10 * time.Minute)
	api, err := New(Config{Source: trafficSource(t0), Registerer: prometheus.NewRegistry(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return api, srv, t0
}

func do(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// TestQueryProtocol sends GetMetricData as the AWS CLI 2.9 does (form-encoded, Version
// 2010-08-01) and reads the XML answer and error as botocore's query parser does.
func TestQueryProtocol(t *testing.T) {
	_, srv, t0 := wireFixture(t)
	v := url.Values{
		"Action": {"GetMetricData"}, "Version": {"2010-08-01"},
		"StartTime": {t0.Format(time.RFC3339)}, "EndTime": {t0.Add(2 * time.Minute).Format(time.RFC3339)},
		"ScanBy":                           {"TimestampAscending"},
		"MetricDataQueries.member.1.Id":    {"blue"},
		"MetricDataQueries.member.1.Label": {"a < b & c"},
		"MetricDataQueries.member.1.MetricStat.Metric.Namespace":                 {Namespace},
		"MetricDataQueries.member.1.MetricStat.Metric.MetricName":                {RequestCount},
		"MetricDataQueries.member.1.MetricStat.Metric.Dimensions.member.1.Name":  {DimTargetGroup},
		"MetricDataQueries.member.1.MetricStat.Metric.Dimensions.member.1.Value": {testTGA},
		"MetricDataQueries.member.1.MetricStat.Metric.Dimensions.member.2.Name":  {DimLoadBalancer},
		"MetricDataQueries.member.1.MetricStat.Metric.Dimensions.member.2.Value": {testLB},
		"MetricDataQueries.member.1.MetricStat.Period":                           {"60"},
		"MetricDataQueries.member.1.MetricStat.Stat":                             {"Sum"},
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/", strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	resp, body := do(t, req)
	var out struct {
		XMLName xml.Name `xml:"http://monitoring.amazonaws.com/doc/2010-08-01/ GetMetricDataResponse"`
		Result  struct {
			Results []struct {
				ID         string   `xml:"Id"`
				Label      string   `xml:"Label"`
				Timestamps []string `xml:"Timestamps>member"`
				Values     []string `xml:"Values>member"`
				StatusCode string   `xml:"StatusCode"`
			} `xml:"MetricDataResults>member"`
		} `xml:"GetMetricDataResult"`
		RequestID string `xml:"ResponseMetadata>RequestId"`
	}
	if err := xml.Unmarshal(body, &out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s: %v", resp.StatusCode, body, err)
	}
	r := out.Result.Results
	if len(r) != 1 || r[0].ID != "blue" || r[0].Label != "a < b & c" || r[0].StatusCode != "Complete" ||
		strings.Join(r[0].Values, ",") != "180,180" || r[0].Timestamps[0] != t0.Format(time.RFC3339) || out.RequestID == "" ||
		out.RequestID != resp.Header.Get("x-amzn-RequestId") {
		t.Fatalf("response %+v from\n%s", out, body)
	}

	v.Set("MetricDataQueries.member.1.MetricStat.Period", "61")
	req, _ = http.NewRequest(http.MethodPost, srv.URL+"/", strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, body = do(t, req)
	var e struct {
		XMLName xml.Name `xml:"ErrorResponse"`
		Type    string   `xml:"Error>Type"`
		Code    string   `xml:"Error>Code"`
		Message string   `xml:"Error>Message"`
		ReqID   string   `xml:"RequestId"`
	}
	if err := xml.Unmarshal(body, &e); err != nil || resp.StatusCode != 400 || e.Type != "Sender" || e.Code != "ValidationError" ||
		e.Message != "The parameter MetricDataQueries.member.1.MetricStat.Period must be a value in the set [ 1, 5, 10, 20, 30 ] or a multiple of 60.\n" || e.ReqID == "" {
		t.Fatalf("%d %+v from\n%s (%v)", resp.StatusCode, e, body, err)
	}
}

// TestJSONProtocol sends GetMetricData as botocore 1.43+ does (the pyenv aws 1.x): json
// 1.0 with X-Amz-Target, epoch-second timestamps; errors carry X-Amzn-Query-Error.
func TestJSONProtocol(t *testing.T) {
	_, srv, t0 := wireFixture(t)
	send := func(body string) (*http.Response, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/", strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "GraniteServiceVersion20100801.GetMetricData")
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		resp, raw := do(t, req)
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return resp, out
	}
	q := `{"Id": "green", "MetricStat": {"Metric": {"Namespace": "AWS/ApplicationELB", "MetricName": "RequestCount",
		"Dimensions": [{"Name": "LoadBalancer", "Value": "` + testLB + `"}, {"Name": "TargetGroup", "Value": "` + testTGB + `"}]}, "Period": 60, "Stat": "Sum"}}`
	resp, out := send(`{"MetricDataQueries": [` + q + `], "StartTime": ` + jsonTime(t0) + `, "EndTime": ` + jsonTime(t0.Add(2*time.Minute)) + `, "MaxDatapoints": 1}`)
	results := out["MetricDataResults"].([]any)
	first := results[0].(map[string]any)
	if resp.StatusCode != 200 || first["StatusCode"] != "PartialData" || first["Values"].([]any)[0] != 60.0 ||
		first["Timestamps"].([]any)[0] != float64(t0.Add(time.Minute).Unix()) || out["NextToken"] == nil {
		t.Fatalf("%d %v", resp.StatusCode, out)
	}
	resp, out = send(`{"MetricDataQueries": [` + q + `], "StartTime": ` + jsonTime(t0) + `, "EndTime": ` + jsonTime(t0.Add(2*time.Minute)) +
		`, "MaxDatapoints": 1, "NextToken": "` + out["NextToken"].(string) + `"}`)
	first = out["MetricDataResults"].([]any)[0].(map[string]any)
	if resp.StatusCode != 200 || first["StatusCode"] != "Complete" || first["Timestamps"].([]any)[0] != float64(t0.Unix()) || out["NextToken"] != nil {
		t.Fatalf("second page %d %v", resp.StatusCode, out)
	}

	resp, out = send(`{"MetricDataQueries": [` + q + `], "StartTime": ` + jsonTime(t0) + `, "EndTime": ` + jsonTime(t0) + `}`)
	if resp.StatusCode != 400 || resp.Header.Get("X-Amzn-Query-Error") != "ValidationError;Sender" ||
		out["__type"] != "com.amazon.coral.validate#ValidationException" || out["message"] != "The parameter StartTime must not equal parameter EndTime.\n" {
		t.Fatalf("%d %v %v", resp.StatusCode, resp.Header, out)
	}
}

func jsonTime(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

// TestCBORErrors checks the rpc-v2-cbor error shape byte-level: the SDK test covers how
// the client reads it.
func TestCBORErrors(t *testing.T) {
	_, srv, _ := wireFixture(t)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+cborPrefix+"PutMetricData", strings.NewReader(string(cbor.Encode(cbor.Map{}))))
	req.Header.Set("Smithy-Protocol", "rpc-v2-cbor")
	req.Header.Set("Content-Type", "application/cbor")
	resp, body := do(t, req)
	v, err := cbor.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	m := v.(cbor.Map)
	if resp.StatusCode != 400 || resp.Header.Get("Smithy-Protocol") != "rpc-v2-cbor" || resp.Header.Get("X-Amzn-Query-Error") != "InvalidAction;Sender" ||
		m["__type"] != cbor.String("com.amazon.coral.service#UnknownOperationException") || !strings.Contains(string(m["message"].(cbor.String)), "PutMetricData") {
		t.Fatalf("%d %v %v", resp.StatusCode, resp.Header, m)
	}
	req, _ = http.NewRequest(http.MethodPost, srv.URL+cborPrefix+"GetMetricData", strings.NewReader("\xff\xff"))
	resp, _ = do(t, req)
	if resp.StatusCode != 400 || resp.Header.Get("X-Amzn-Query-Error") != "SerializationException;Sender" {
		t.Fatalf("bad CBOR: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestMatches(t *testing.T) {
	api, err := New(Config{Source: memSource{}})
	if err != nil {
		t.Fatal(err)
	}
	form := func(body string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		return r
	}
	signed := func(svc string) *http.Request {
		r := form("Action=DescribeLoadBalancers&Version=2015-12-01")
		r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20260520/us-east-1/"+svc+"/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc")
		return r
	}
	target := httptest.NewRequest(http.MethodPost, "/", nil)
	target.Header.Set("X-Amz-Target", "GraniteServiceVersion20100801.GetMetricData")
	for _, tc := range []struct {
		name string
		r    *http.Request
		want bool
	}{
		{"rpc-v2-cbor path", httptest.NewRequest(http.MethodPost, cborPrefix+"GetMetricData", nil), true},
		{"json target", target, true},
		{"signed for monitoring", signed("monitoring"), true},
		{"signed for elasticloadbalancing", signed("elasticloadbalancing"), false},
		{"signed for route53", signed("route53"), false},
		{"unsigned query 2010-08-01", form("Action=GetMetricData&Version=2010-08-01"), true},
		{"unsigned query 2015-12-01", form("Action=DescribeLoadBalancers&Version=2015-12-01"), false},
		{"version in the URL", httptest.NewRequest(http.MethodGet, "/?Action=GetMetricData&Version=2010-08-01", nil), true},
		{"route 53 REST", httptest.NewRequest(http.MethodGet, "/2013-04-01/hostedzone", nil), false},
	} {
		if got := api.Matches(tc.r); got != tc.want {
			t.Errorf("%s: Matches = %v, want %v", tc.name, got, tc.want)
		}
	}
	// The body Matches read is still there for whoever serves the request.
	r := form("Action=DescribeLoadBalancers&Version=2015-12-01")
	api.Matches(r)
	if body, _ := io.ReadAll(r.Body); string(body) != "Action=DescribeLoadBalancers&Version=2015-12-01" {
		t.Fatalf("body after Matches: %q", body)
	}
}

// TestSharedCallMetric checks that the API joins the Route 53 API's call counter in one
// registry, as the sandbox serves them both, and counts its calls there.
func TestSharedCallMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	store, err := zones.Open(zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if _, err := route53api.New(route53api.Config{Store: store, Registerer: reg}); err != nil {
		t.Fatal(err)
	}
	api, err := New(Config{Source: memSource{}, Registerer: reg})
	if err != nil {
		t.Fatalf("joining the Route 53 API's metrics: %v", err)
	}
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/?Action=ListMetrics&Version=2010-08-01", nil))
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "<Code>InvalidAction</Code>") {
		t.Fatalf("ListMetrics: %d %s", rec.Code, rec.Body)
	}
	if n, err := testutil.GatherAndCount(reg, "crossfade_sandbox_api_calls_total"); err != nil || n != 1 {
		t.Fatalf("%d series, %v", n, err)
	}
	if got := api.chain.Calls.Count("Unknown", "InvalidAction"); got != 1 {
		t.Fatalf("counted %v", got)
	}
}

// growingSource answers with one more second of traffic each time it is read, as the
// proxy's newest second keeps filling between pages.
type growingSource struct {
	mu    sync.Mutex
	t0    time.Time
	reads int
}

func (g *growingSource) Series(_ context.Context, _, _, _ string, from, to time.Time) ([]Point, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reads++
	var out []Point
	for i := range 5 + g.reads {
		if at := g.t0.Add(time.Duration(i) * time.Second); !at.Before(from) && at.Before(to) {
			out = append(out, CountPoint(at, 1))
		}
	}
	return out, nil
}

// TestPagingWhileDataArrives pages newest first through a series that grows between
// pages: every second is handed out once, and the new ones are not (they are newer than
// the first page's start).
func TestPagingWhileDataArrives(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Minute)
	src := &growingSource{t0: now.Add(-time.Minute)}
	api, err := New(Config{Source: src, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	params := func(token string) map[string]any {
		p := gmd(t, "StartTime", src.t0.Format(time.RFC3339), "EndTime", now.Format(time.RFC3339), "MaxDatapoints", "2",
			"MetricDataQueries.member.1.MetricStat.Period", "1")
		if token != "" {
			p["NextToken"] = token
		}
		return p
	}
	seen := map[int64]int{}
	token := ""
	for page := 0; ; page++ {
		if page > 10 {
			t.Fatal("no end of pages")
		}
		out, err := api.getMetricData(context.Background(), params(token))
		if err != nil {
			t.Fatal(err)
		}
		res := out[0].v.(list)[0].(obj)
		for _, ts := range res[2].v.(list) {
			seen[ts.(time.Time).Unix()]++
		}
		token = ""
		for _, m := range out {
			if m.name == "NextToken" {
				token = m.v.(string)
			}
		}
		if token == "" {
			break
		}
	}
	if len(seen) != 6 {
		t.Fatalf("seconds seen %v: want the 6 there were at the first page, once each", seen)
	}
	for s, n := range seen {
		if n != 1 {
			t.Fatalf("second %d handed out %d times", s, n)
		}
	}
	// A token from another request is refused.
	_, err = api.getMetricData(context.Background(), func() map[string]any {
		p := params(token)
		p["NextToken"] = makeToken("another", []cursor{{}})
		return p
	}())
	if ae, ok := err.(*apiError); !ok || ae.Code != codeInvalidNextToken {
		t.Fatalf("foreign token: %v", err)
	}
}

// TestShapeFor checks the __type the json and rpc-v2-cbor protocols carry for CloudWatch's
// own codes and for the codes of the sandbox's injected faults, which CloudWatch's model
// does not list: a throttle must read as AWS's ThrottlingException.
func TestShapeFor(t *testing.T) {
	for _, tc := range []struct{ code, want string }{
		{codeInvalidParameterValue, "com.amazonaws.cloudwatch#InvalidParameterValueException"},
		{codeInternal, "com.amazonaws.cloudwatch#InternalServiceFault"},
		{"Throttling", "com.amazon.coral.availability#ThrottlingException"},
		{"InternalFailure", "com.amazon.coral.service#InternalFailure"},
		{"PriorRequestNotComplete", "com.amazon.coral.service#PriorRequestNotComplete"},
	} {
		if got := shapeFor(tc.code); got != tc.want {
			t.Errorf("shapeFor(%s) = %q, want %q", tc.code, got, tc.want)
		}
	}
}
