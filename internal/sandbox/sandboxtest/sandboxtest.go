// Package sandboxtest starts sandboxes for tests and reads their API-call counters, so
// that tests count Route 53 calls the way the issues ask: from the sandbox's metrics.
package sandboxtest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	sdtypes "github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"

	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/apicalls"
)

// Start runs a sandbox on free loopback ports and closes it when the test ends.
func Start(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	return StartWith(t, sandbox.Config{})
}

// StartWith is Start with cfg's other settings (e.g. ChangeDelay); the addresses are
// always free loopback ports.
func StartWith(t testing.TB, cfg sandbox.Config) *sandbox.Sandbox {
	t.Helper()
	cfg.APIAddr, cfg.DNSAddr = "127.0.0.1:0", "127.0.0.1:0"
	sb, err := sandbox.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Errorf("close sandbox: %v", err)
		}
	})
	return sb
}

// StartStateful runs a sandbox on free loopback ports keeping its state in the file state,
// for a test that restarts it: stop closes it, so that the test can start another on the
// same state (StartWith with Config.StatePath), and the test's end closes it unless stop
// was called. Calling stop again returns the first Close's error (Sandbox.Close).
func StartStateful(t testing.TB, state string) (sb *sandbox.Sandbox, stop func() error) {
	t.Helper()
	sb, err := sandbox.Start(context.Background(), sandbox.Config{APIAddr: "127.0.0.1:0", DNSAddr: "127.0.0.1:0", StatePath: state})
	if err != nil {
		t.Fatalf("start sandbox on state %s: %v", state, err)
	}
	stopped := false
	t.Cleanup(func() {
		if stopped {
			return // the test has seen Close's error
		}
		if err := sb.Close(); err != nil {
			t.Errorf("close sandbox on state %s: %v", state, err)
		}
	})
	return sb, func() error {
		stopped = true
		return sb.Close()
	}
}

// APICalls reads crossfade_sandbox_api_calls_total from the sandbox's /metrics, keyed
// by "operation result" (e.g. "ChangeResourceRecordSets ok").
func APICalls(t testing.TB, sb *sandbox.Sandbox) map[string]int {
	t.Helper()
	return Counts(t, sb, apicalls.CallsMetric, "operation", "result")
}

// Counts reads the counter metric from the sandbox's /metrics, keyed by the values of
// labels joined by a space (apicalls.ParseCounts), e.g. Counts(t, sb,
// route53api.RecordChangesMetric, "action") is the record-set changes applied by action.
func Counts(t testing.TB, sb *sandbox.Sandbox, metric string, labels ...string) map[string]int {
	t.Helper()
	out, err := apicalls.ReadCounts(context.Background(), sb.APIURL(), metric, labels...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Route53Client is the real AWS SDK's Route 53 client pointed at sb, with throw-away
// credentials.
func Route53Client(sb *sandbox.Sandbox) *route53.Client {
	return route53.New(route53.Options{Region: "us-east-1", BaseEndpoint: aws.String(sb.APIURL()),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
}

// SetFaults replaces sb's fault configuration through its admin API (PUT
// /_sandbox/faults), as an operator would while it runs; body is the JSON configuration.
func SetFaults(t testing.TB, sb *sandbox.Sandbox, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, sb.APIURL()+sandbox.AdminPrefix+"faults", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT %sfaults %s: %s", sandbox.AdminPrefix, body, resp.Status)
	}
}

// CloudMapService creates, through api, the Cloud Map namespace named namespace (a private
// DNS namespace in vpc, or an HTTP one when vpc is ""), waits for the operation creating it
// to succeed, as a client must before using the namespace, and creates svc in it
// (svc.NamespaceId is set here). It returns the service.
func CloudMapService(t testing.TB, api *sd.Client, namespace, vpc string, svc sd.CreateServiceInput) sdtypes.Service {
	t.Helper()
	ctx := context.Background()
	var opID *string
	if vpc == "" {
		out, err := api.CreateHttpNamespace(ctx, &sd.CreateHttpNamespaceInput{Name: aws.String(namespace)})
		if err != nil {
			t.Fatalf("create namespace %s: %v", namespace, err)
		}
		opID = out.OperationId
	} else {
		out, err := api.CreatePrivateDnsNamespace(ctx, &sd.CreatePrivateDnsNamespaceInput{Name: aws.String(namespace), Vpc: aws.String(vpc)})
		if err != nil {
			t.Fatalf("create namespace %s: %v", namespace, err)
		}
		opID = out.OperationId
	}
	var nsID string
	for deadline := time.Now().Add(10 * time.Second); nsID == ""; time.Sleep(10 * time.Millisecond) {
		op, err := api.GetOperation(ctx, &sd.GetOperationInput{OperationId: opID})
		if err != nil {
			t.Fatalf("namespace %s: operation %s: %v", namespace, aws.ToString(opID), err)
		}
		switch op.Operation.Status {
		case sdtypes.OperationStatusSuccess:
			nsID = op.Operation.Targets[string(sdtypes.OperationTargetTypeNamespace)]
		case sdtypes.OperationStatusFail:
			t.Fatalf("namespace %s: operation failed: %s", namespace, aws.ToString(op.Operation.ErrorMessage))
		}
		if nsID == "" && time.Now().After(deadline) {
			t.Fatalf("namespace %s: operation %s not done after 10s (%s)", namespace, aws.ToString(opID), op.Operation.Status)
		}
	}
	svc.NamespaceId = aws.String(nsID)
	out, err := api.CreateService(ctx, &svc)
	if err != nil {
		t.Fatalf("create service %s in %s: %v", aws.ToString(svc.Name), namespace, err)
	}
	return *out.Service
}
