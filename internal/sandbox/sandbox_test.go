package sandbox

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestCheckLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true},
		{"127.9.9.9:53", true},
		{"[::1]:0", true},
		{"localhost:10053", true},
		{"0.0.0.0:10080", false},
		{"10.0.0.1:53", false},
		{":10080", false},
		{"example.com:53", false},
		{"no-port", false},
	} {
		err := checkLoopback("--api", tc.addr)
		if (err == nil) != tc.ok {
			t.Errorf("checkLoopback(%q) = %v, want ok=%v", tc.addr, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "--api") {
			t.Errorf("error %q does not name the flag", err)
		}
	}
}

func TestStartRefusesRemoteWithoutFlag(t *testing.T) {
	_, err := Start(context.Background(), Config{APIAddr: "0.0.0.0:0", DNSAddr: "127.0.0.1:0"})
	if err == nil || !strings.Contains(err.Error(), "--allow-remote") {
		t.Fatalf("Start on 0.0.0.0 without AllowRemote: %v", err)
	}
}

// TestCloseTwice: a second Close (a test that closes the sandbox and a cleanup that closes
// it again) returns the first one's result and leaves the API closed, rather than waiting
// forever for servers that have already stopped.
func TestCloseTwice(t *testing.T) {
	sb, err := Start(context.Background(), Config{APIAddr: "127.0.0.1:0", DNSAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := sb.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if resp, err := http.Get(sb.APIURL() + "/metrics"); err == nil {
		resp.Body.Close()
		t.Errorf("the API at %s still answers after Close: %s", sb.APIURL(), resp.Status)
	}
}

func do(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAdminEndpoints(t *testing.T) {
	sb, err := Start(context.Background(), Config{APIAddr: "127.0.0.1:0", DNSAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Error(err)
		}
	})
	api := sb.APIURL()
	if code, body := do(t, "GET", api+"/_sandbox/healthz", ""); code != 200 || body != "ok\n" {
		t.Fatalf("healthz: %d %q", code, body)
	}
	if code, body := do(t, "PUT", api+"/_sandbox/faults", `{"throttleRate": 2}`); code != 400 || !strings.Contains(body, "throttleRate") {
		t.Fatalf("bad fault rate: %d %s", code, body)
	}
	if code, body := do(t, "PUT", api+"/_sandbox/faults", `{"throtleRate": 1}`); code != 400 || !strings.Contains(body, "throtleRate") {
		t.Fatalf("unknown fault field: %d %s", code, body)
	}
	if code, body := do(t, "PUT", api+"/_sandbox/faults", `{"commitThenDropRate": 1.5}`); code != 400 || !strings.Contains(body, "commitThenDropRate") {
		t.Fatalf("bad commit-then-drop rate: %d %s", code, body)
	}
	if code, body := do(t, "PUT", api+"/_sandbox/faults", `{"commitThenFailRate": 0.5, "operations": ["ChangeResourceRecordSets"]}`); code != 200 || !strings.Contains(body, `"commitThenFailRate":0.5`) {
		t.Fatalf("set commit-then-fail rate: %d %s", code, body)
	}
	if code, body := do(t, "GET", api+"/_sandbox/faults", ""); code != 200 || !strings.Contains(body, `"commitThenFailRate":0.5`) {
		t.Fatalf("read back commit-then-fail rate: %d %s", code, body)
	}
	if code, body := do(t, "PUT", api+"/_sandbox/faults", `{"throttleRate": 1, "operations": ["ListHostedZones"]}`); code != 200 {
		t.Fatalf("set faults: %d %s", code, body)
	}
	if code, body := do(t, "GET", api+"/2013-04-01/hostedzone", ""); code != 400 || !strings.Contains(body, "<Code>Throttling</Code><Message>Rate exceeded</Message>") {
		t.Fatalf("throttled call: %d %s", code, body)
	}
	if code, _ := do(t, "GET", api+"/2013-04-01/hostedzonecount", ""); code != 200 {
		t.Fatalf("operation outside the fault list: %d", code)
	}
	if code, body := do(t, "PUT", api+"/_sandbox/faults", `{}`); code != 200 {
		t.Fatalf("clear faults: %d %s", code, body)
	}

	if code, body := do(t, "PUT", api+"/_sandbox/health/hc-1", `{"healthy": false}`); code != 200 || !strings.Contains(body, `"healthy":false`) {
		t.Fatalf("set health: %d %s", code, body)
	}
	if sb.Store().Healthy("hc-1") {
		t.Fatal("health check still healthy after PUT")
	}
	if code, body := do(t, "PUT", api+"/_sandbox/health/hc-1", `{}`); code != 400 || !strings.Contains(body, "hc-1") {
		t.Fatalf("health without a value: %d %s", code, body)
	}

	_, metrics := do(t, "GET", api+"/metrics", "")
	for _, want := range []string{
		`crossfade_sandbox_api_calls_total{operation="ListHostedZones",result="Throttling"} 1`,
		`crossfade_sandbox_api_calls_total{operation="GetHostedZoneCount",result="ok"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
