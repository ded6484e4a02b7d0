// Package route53test connects the Route 53 provider to a test's sandbox, as httptest
// connects a client to a test server.
package route53test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsr53 "github.com/aws/aws-sdk-go-v2/service/route53"

	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// New returns a provider for sb's API with static test credentials. The backoff is
// capped at a few milliseconds so that tests which provoke throttling do not sleep, and
// requests are not paced: a test sends in a second what a controller sends in an hour
// (Paced keeps Route 53's pacing, for the tests and benchmarks of it).
func New(t testing.TB, sb *sandbox.Sandbox) *route53.Provider {
	t.Helper()
	return newProvider(t, sb, -1)
}

// Paced is New with the provider's default pacing: Route 53's account limit, 10 requests a
// second with a burst of 50, as `crossfade` runs it.
func Paced(t testing.TB, sb *sandbox.Sandbox) *route53.Provider {
	t.Helper()
	return newProvider(t, sb, 0)
}

func newProvider(t testing.TB, sb *sandbox.Sandbox, requestsPerSecond float64) *route53.Provider {
	t.Helper()
	p, err := route53.New(context.Background(), route53.Config{
		Endpoint: sb.APIURL(), Region: "us-east-1", MaxBackoff: 5 * time.Millisecond,
		Credentials:       credentials.NewStaticCredentialsProvider("test", "test", ""),
		RequestsPerSecond: requestsPerSecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Client returns a bare aws-sdk-go-v2 Route 53 client for sb's API, for a test that plays
// another writer of the zone, or that looks at what the API answers without the provider
// in between. Its retries back off for at most a few milliseconds.
func Client(sb *sandbox.Sandbox) *awsr53.Client {
	return awsr53.New(awsr53.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(sb.APIURL()),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer:      retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = 5 * time.Millisecond }),
	})
}

// Zone creates hosted zone name in sb and returns a provider for sb with the zone as the
// provider lists it.
func Zone(t testing.TB, sb *sandbox.Sandbox, name string) (*route53.Provider, provider.Zone) {
	t.Helper()
	out, err := Client(sb).CreateHostedZone(context.Background(), &awsr53.CreateHostedZoneInput{
		Name: aws.String(name), CallerReference: aws.String(name + time.Now().String())})
	if err != nil {
		t.Fatalf("create zone %s: %v", name, err)
	}
	p := New(t, sb)
	zones, err := p.Zones(context.Background())
	if err != nil {
		t.Fatalf("list zones: %v", err)
	}
	for _, z := range zones {
		if strings.HasSuffix(aws.ToString(out.HostedZone.Id), z.ID) {
			return p, z
		}
	}
	t.Fatalf("zone %s not listed after create: %v", name, zones)
	return nil, provider.Zone{}
}
