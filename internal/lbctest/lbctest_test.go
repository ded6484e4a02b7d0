package lbctest

import (
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
)

// TestArgs: every AWS service the controller makes a client for is pointed at the test's
// endpoint, the add-ons calling other services are off, every listener it has an address
// flag for is on the loopback address given, leader election is off, and Options fill in
// the rest.
func TestArgs(t *testing.T) {
	args := Args(Options{ClusterName: "green", Endpoint: "http://127.0.0.1:4566", Args: []string{"--log-level=debug"}},
		"/k/kubeconfig", "/k/certs", "127.0.0.1:1", "127.0.0.1:2", 3)
	for _, want := range []string{
		"--kubeconfig=/k/kubeconfig", "--cluster-name=green", "--aws-region=us-east-1", "--aws-vpc-id=vpc-1",
		"--enable-shield=false", "--enable-waf=false", "--enable-wafv2=false",
		"--metrics-bind-addr=127.0.0.1:1", "--health-probe-bind-addr=127.0.0.1:2", "--webhook-bind-port=3",
		"--webhook-cert-dir=/k/certs", "--enable-leader-election=false", "--log-level=info",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("args %q lack %s", args, want)
		}
	}
	if args[len(args)-1] != "--log-level=debug" {
		t.Errorf("Options.Args are not last (a later flag wins): %q", args)
	}
	var endpoints string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--aws-api-endpoints="); ok {
			endpoints = v
		}
	}
	got := map[string]string{}
	for _, kv := range strings.Split(endpoints, ",") {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	// The SDK service IDs of the clients in the controller's
	// pkg/aws/provider/default_aws_clients_provider.go, and the metadata client's.
	for _, id := range []string{"Elastic Load Balancing v2", "EC2", "STS", "ACM", "WAFV2", "WAF Regional", "Shield",
		"Resource Groups Tagging API", "Global Accelerator", "ec2imds"} {
		if got[id] != "http://127.0.0.1:4566" {
			t.Errorf("--aws-api-endpoints: %s=%q, want the test's endpoint (all: %s)", id, got[id], endpoints)
		}
	}
}

// TestEnv: the controller gets static fake credentials and no instance metadata, and none
// of the developer's AWS settings that could send it elsewhere.
func TestEnv(t *testing.T) {
	env := Env([]string{"PATH=/bin", "AWS_PROFILE=prod", "AWS_ENDPOINT_URL=https://elasticloadbalancing.us-east-1.amazonaws.com",
		"AWS_ACCESS_KEY_ID=AKIAREAL", "NODENAME=i-0abc", "HOME=/root"})
	for _, want := range []string{"PATH=/bin", "HOME=/root", "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true"} {
		if !slices.Contains(env, want) {
			t.Errorf("env %q lacks %s", env, want)
		}
	}
	for _, bad := range []string{"AWS_PROFILE=prod", "AWS_ENDPOINT_URL=", "AWS_ACCESS_KEY_ID=AKIAREAL", "NODENAME="} {
		for _, kv := range env {
			if strings.HasPrefix(kv, bad) {
				t.Errorf("env keeps %s", kv)
			}
		}
	}
}

func TestCheckEndpoint(t *testing.T) {
	for _, tc := range []struct {
		endpoint string
		ok       bool
	}{
		{"http://127.0.0.1:4566", true},
		{"http://127.0.0.1:4566/", true},
		{"https://[::1]:443", true},
		{"", false},
		{"127.0.0.1:4566", false},
		{"http://localhost:4566", false}, // a name may resolve elsewhere
		{"http://10.0.0.1:4566", false},
		{"https://elasticloadbalancing.us-east-1.amazonaws.com", false},
	} {
		if err := checkEndpoint(tc.endpoint); (err == nil) != tc.ok {
			t.Errorf("checkEndpoint(%q) = %v, want ok %v", tc.endpoint, err, tc.ok)
		}
	}
}

// TestPaths: a cache without the controller or its CRDs names what is missing and how to
// get it.
func TestPaths(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	bin := filepath.Join(cache, "crossfade", "bin")
	if _, _, err := Paths(); !errors.Is(err, ErrNotBuilt) || !strings.Contains(err.Error(), Binary+" and "+CRDsFile) ||
		!strings.Contains(err.Error(), "scripts/deps.sh test") {
		t.Fatalf("empty cache: %v", err)
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, Binary), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Paths(); !errors.Is(err, ErrNotBuilt) || !strings.Contains(err.Error(), CRDsFile+" not in "+bin) {
		t.Fatalf("no CRDs: %v", err)
	}
	if err := os.WriteFile(filepath.Join(bin, CRDsFile), []byte("---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	binary, crds, err := Paths()
	if err != nil || binary != filepath.Join(bin, Binary) || crds != filepath.Join(bin, CRDsFile) {
		t.Fatalf("Paths() = %s, %s, %v", binary, crds, err)
	}
}

// TestWriteWebhookCert: the pair loads as a TLS serving certificate.
func TestWriteWebhookCert(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	if err := WriteWebhookCert(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")); err != nil {
		t.Fatal(err)
	}
}

// TestRecorder: calls through the recorder reach the API behind it unchanged and are
// recorded with their service, operation and outcome, through the real AWS SDK v2 client
// (SigV4, the query protocol, an XML error).
func TestRecorder(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), "Action=DescribeTargetGroups") {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `<ErrorResponse><Error><Type>Sender</Type><Code>ValidationError</Code><Message>not this</Message></Error></ErrorResponse>`)
			return
		}
		w.Header().Set("Content-Type", "text/xml")
		_, _ = io.WriteString(w, `<DescribeTargetGroupsResponse xmlns="http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/"><DescribeTargetGroupsResult><TargetGroups><member><TargetGroupName>blue</TargetGroupName></member></TargetGroups></DescribeTargetGroupsResult></DescribeTargetGroupsResponse>`)
	}))
	defer api.Close()
	rec := NewRecorder(t, api.URL)
	client := elbv2.New(elbv2.Options{Region: "us-east-1", BaseEndpoint: aws.String(rec.URL),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	out, err := client.DescribeTargetGroups(t.Context(), &elbv2.DescribeTargetGroupsInput{Names: []string{"blue"}})
	if err != nil || len(out.TargetGroups) != 1 || aws.ToString(out.TargetGroups[0].TargetGroupName) != "blue" {
		t.Fatalf("DescribeTargetGroups through the recorder: %+v, %v", out, err)
	}
	if _, err := client.DescribeListeners(t.Context(), &elbv2.DescribeListenersInput{}); err == nil || !strings.Contains(err.Error(), "ValidationError") {
		t.Fatalf("DescribeListeners through the recorder: %v, want the API's ValidationError", err)
	}
	got := rec.Calls()
	want := []Call{
		{Service: "elasticloadbalancing", Operation: "DescribeTargetGroups", Params: url.Values{"Names.member.1": {"blue"}}, Status: 200},
		{Service: "elasticloadbalancing", Operation: "DescribeListeners", Params: url.Values{}, Status: 400, Error: "ValidationError", Message: "not this"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("recorded %+v, want %+v", got, want)
	}
	if f := rec.Failed(); len(f) != 1 || f[0].String() != "elasticloadbalancing DescribeListeners: ValidationError (400)" {
		t.Errorf("Failed() = %v", f)
	}
	if s := rec.Summary(); s["elasticloadbalancing DescribeTargetGroups: ok"] != 1 || len(s) != 2 {
		t.Errorf("Summary() = %v", s)
	}
}

func TestErrorCode(t *testing.T) {
	for _, tc := range []struct {
		body, code, message string
	}{
		{`<Response><Errors><Error><Code>InvalidGroup.NotFound</Code><Message>The security group &#39;sg-1&#39; does not exist</Message></Error></Errors><RequestID>r</RequestID></Response>`,
			"InvalidGroup.NotFound", "The security group 'sg-1' does not exist"},
		{`{"__type":"com.amazonaws.shield#ResourceNotFoundException","message":"nope"}`, "ResourceNotFoundException", "nope"},
		{`{"__type":"AccessDeniedException","Message":"no"}`, "AccessDeniedException", "no"},
		{`404 page not found`, "", "404 page not found"},
	} {
		if code, msg := errorCode([]byte(tc.body)); code != tc.code || msg != tc.message {
			t.Errorf("errorCode(%s) = %q, %q; want %q, %q", tc.body, code, msg, tc.code, tc.message)
		}
	}
}
