package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsr53 "github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

func TestAPIResult(t *testing.T) {
	apiErr := func(code string) error { return &smithy.GenericAPIError{Code: code, Message: "m"} }
	// As the SDK hands errors to callers: wrapped in an OperationError.
	opErr := func(err error) error {
		return &smithy.OperationError{ServiceID: "Route 53", OperationName: "ChangeResourceRecordSets", Err: err}
	}
	status := func(code int) error {
		return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: errors.New("no body")}}
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ResultOK},
		{"Route 53 throttling", apiErr("Throttling"), ResultThrottled},
		{"prior request not complete", apiErr("PriorRequestNotComplete"), ResultThrottled},
		{"throttling wrapped by the SDK", opErr(apiErr("Throttling")), ResultThrottled},
		{"throttling wrapped with context", fmt.Errorf("zone example.com: %w", opErr(apiErr("Throttling"))), ResultThrottled},
		{"another service's throttling code", apiErr("ThrottlingException"), ResultThrottled},
		{"bare HTTP 429", status(http.StatusTooManyRequests), ResultThrottled},
		{"typed Route 53 error", &types.InvalidChangeBatch{Message: aws.String("already exists")}, ResultError},
		{"no such zone", apiErr("NoSuchHostedZone"), ResultError},
		{"server error", apiErr("InternalFailure"), ResultError},
		{"HTTP 500", status(http.StatusInternalServerError), ResultError},
		{"HTTP 400 without a code", status(http.StatusBadRequest), ResultError},
		{"network", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, ResultError},
		{"canceled", context.Canceled, ResultError},
	} {
		if got := APIResult(tc.err); got != tc.want {
			t.Errorf("%s: APIResult(%v) = %q, want %q", tc.name, tc.err, got, tc.want)
		}
	}
}

// TestAWSAPIOptionCountsAttempts runs a plain aws-sdk-go-v2 Route 53 client against the
// sandbox, with the option installed, and checks what it counted against what the
// sandbox itself saw: every attempt, retries included, under its operation and result.
func TestAWSAPIOptionCountsAttempts(t *testing.T) {
	sb := sandboxtest.Start(t)
	m := New()
	const attempts = 3
	client := awsr53.New(awsr53.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(sb.APIURL()),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = attempts
			o.MaxBackoff = 5 * time.Millisecond
			o.RateLimiter = ratelimit.None // every retry is made, whatever came before
		}),
		APIOptions: []func(*middleware.Stack) error{m.AWSAPIOption()},
	})
	ctx := context.Background()

	zone, err := client.CreateHostedZone(ctx, &awsr53.CreateHostedZoneInput{
		Name: aws.String("example.com"), CallerReference: aws.String("metrics-test")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.ListHostedZones(ctx, &awsr53.ListHostedZonesInput{}); err != nil {
		t.Fatal(err)
	}
	change := func(zoneID string) error {
		_, err := client.ChangeResourceRecordSets(ctx, &awsr53.ChangeResourceRecordSetsInput{
			HostedZoneId: aws.String(zoneID),
			ChangeBatch: &types.ChangeBatch{Changes: []types.Change{{Action: types.ChangeActionCreate,
				ResourceRecordSet: &types.ResourceRecordSet{Name: aws.String("www.example.com"), Type: types.RRTypeA,
					TTL: aws.Int64(60), ResourceRecords: []types.ResourceRecord{{Value: aws.String("192.0.2.1")}}}}}},
		})
		return err
	}
	// Every attempt throttled: the SDK tries `attempts` times, then gives up.
	sandboxtest.SetFaults(t, sb, `{"throttleRate": 1, "operations": ["ChangeResourceRecordSets"]}`)
	if err := change(aws.ToString(zone.HostedZone.Id)); APIResult(err) != ResultThrottled {
		t.Fatalf("change under throttling: %v, want a throttling error", err)
	}
	sandboxtest.SetFaults(t, sb, `{}`)
	// A refusal is not retried: one attempt, an error.
	var nz *types.NoSuchHostedZone
	if err := change("/hostedzone/Z0000000NOSUCH"); !errors.As(err, &nz) {
		t.Fatalf("change in a missing zone: %v, want NoSuchHostedZone", err)
	}

	fams := scrape(t, serve(t, m.Handler(nil)))
	want := map[[2]string]float64{
		{"CreateHostedZone", ResultOK}:                1,
		{"ListHostedZones", ResultOK}:                 1,
		{"ChangeResourceRecordSets", ResultThrottled}: attempts,
		{"ChangeResourceRecordSets", ResultError}:     1,
	}
	got := map[[2]string]float64{}
	for _, s := range fams[NameAPICalls].GetMetric() {
		var k [2]string
		for _, l := range s.GetLabel() {
			switch l.GetName() {
			case "operation":
				k[0] = l.GetValue()
			case "result":
				k[1] = l.GetValue()
			}
		}
		got[k] = value(s)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s = %v, want %v", NameAPICalls, got, want)
	}

	// The sandbox counts requests as they arrive: the two must agree, operation by
	// operation, or the option misses (or invents) requests.
	perOp := map[string]float64{}
	for k, n := range got {
		perOp[k[0]] += n
	}
	seen := map[string]float64{}
	for k, n := range sandboxtest.APICalls(t, sb) {
		op, _, _ := strings.Cut(k, " ")
		seen[op] += float64(n)
	}
	if fmt.Sprint(perOp) != fmt.Sprint(seen) {
		t.Errorf("counted per operation %v, the sandbox saw %v", perOp, seen)
	}
}
