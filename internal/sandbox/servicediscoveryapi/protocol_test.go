package servicediscoveryapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/sandbox/cloudmapstore"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
)

// rawCall posts a JSON 1.1 request as any client would and returns the decoded answer, or
// an error "HTTP <status> <X-Amzn-ErrorType>: <body>".
func rawCall(endpoint, op, body string) (map[string]any, error) {
	req, err := http.NewRequest(http.MethodPost, endpoint+"/", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", TargetPrefix+"."+op)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("HTTP %d: body %q: %w", resp.StatusCode, data, err)
	}
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("HTTP %d %s: %s", resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), data)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-amz-json-1.1" {
		return out, fmt.Errorf("content type %q", ct)
	}
	return out, nil
}

func TestProtocol(t *testing.T) {
	f := newFixture(t, cloudmapstore.Options{})
	for _, tc := range []struct {
		name   string
		method string
		target string
		body   string
		status int
		code   string
		msg    string
	}{
		{"unknown operation", "POST", TargetPrefix + ".FlyToTheMoon", `{}`, 400, "UnknownOperationException", "is not valid for this web service"},
		{"another service's target", "POST", "GraniteServiceVersion20100801.GetMetricData", `{}`, 400, "UnknownOperationException", ""},
		{"unserved operation", "POST", TargetPrefix + ".UpdateService", `{}`, 400, "UnknownOperationException", "not supported by the crossfade sandbox"},
		{"not JSON", "POST", TargetPrefix + ".GetNamespace", `{"Id": `, 400, "SerializationException", ""},
		{"wrong member type", "POST", TargetPrefix + ".GetNamespace", `{"Id": 5}`, 400, "SerializationException", ""},
		{"GET", "GET", TargetPrefix + ".ListNamespaces", ``, 405, "UnknownOperationException", "POST"},
		{"service error", "POST", TargetPrefix + ".GetService", `{"Id": "srv-nope"}`, 400, "ServiceNotFound", "srv-nope"},
		{"empty body is an empty request", "POST", TargetPrefix + ".GetService", ``, 400, "InvalidInput", "Value null at 'id'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, f.srv.URL+"/", strings.NewReader(tc.body))
			req.Header.Set("X-Amz-Target", tc.target)
			req.Header.Set("Content-Type", "application/x-amz-json-1.1")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]string
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status || body["__type"] != tc.code || resp.Header.Get("X-Amzn-ErrorType") != tc.code ||
				!strings.Contains(body["Message"], tc.msg) || resp.Header.Get("x-amzn-RequestId") == "" {
				t.Errorf("HTTP %d %v %v", resp.StatusCode, resp.Header, body)
			}
		})
	}
	// Lists are [] when empty, never null; timestamps are epoch seconds.
	out, err := rawCall(f.srv.URL, "ListNamespaces", `{}`)
	if err != nil || fmt.Sprint(out["Namespaces"]) != "[]" {
		t.Errorf("empty list %v, %v", out, err)
	}
	op, err := rawCall(f.srv.URL, "CreateHttpNamespace", `{"Name": "shop"}`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rawCall(f.srv.URL, "GetOperation", fmt.Sprintf(`{"OperationId": %q}`, op["OperationId"]))
	if err != nil {
		t.Fatal(err)
	}
	o := got["Operation"].(map[string]any)
	if _, ok := o["CreateDate"].(float64); !ok || o["Status"] != "SUCCESS" || o["Type"] != "CREATE_NAMESPACE" {
		t.Errorf("operation %v", o)
	}
}

// TestFaultsAndMetrics: the sandbox's fault injection reaches Cloud Map's operations, and
// every call is counted in the shared call counter by operation and result.
func TestFaultsAndMetrics(t *testing.T) {
	f := newFixture(t, cloudmapstore.Options{})
	if err := f.faults.Set(faults.Config{ThrottleRate: 1, Operations: []string{"ListNamespaces"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rawCall(f.srv.URL, "ListNamespaces", `{}`); err == nil || !strings.Contains(err.Error(), "HTTP 400 Throttling") || !strings.Contains(err.Error(), "Rate exceeded") {
		t.Errorf("throttled call: %v", err)
	}
	// A lost answer: the namespace is created, the client sees a 500.
	if err := f.faults.Set(faults.Config{CommitThenFailRate: 1, Operations: []string{"CreateHttpNamespace"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rawCall(f.srv.URL, "CreateHttpNamespace", `{"Name": "lost"}`); err == nil || !strings.Contains(err.Error(), "HTTP 500 InternalFailure") {
		t.Errorf("lost answer: %v", err)
	}
	if err := f.faults.Set(faults.Config{}); err != nil {
		t.Fatal(err)
	}
	out, err := rawCall(f.srv.URL, "ListNamespaces", `{}`)
	if err != nil || len(out["Namespaces"].([]any)) != 1 {
		t.Errorf("namespace of the lost answer: %v, %v", out, err)
	}
	if _, err := rawCall(f.srv.URL, "GetNamespace", `{"Id": "ns-nope"}`); err == nil {
		t.Error("GetNamespace of an unknown id succeeded")
	}
	for _, tc := range []struct{ op, result string }{
		{"ListNamespaces", "Throttling"}, {"ListNamespaces", "ok"}, {"CreateHttpNamespace", "InternalFailure"}, {"GetNamespace", "NamespaceNotFound"},
	} {
		if n := f.api.chain.Calls.Count(tc.op, tc.result); n != 1 {
			t.Errorf("%s %s counted %v times", tc.op, tc.result, n)
		}
	}
}
