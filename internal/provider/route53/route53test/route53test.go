// Package route53test connects the Route 53 provider to a test's sandbox, as httptest
// connects a client to a test server.
package route53test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// New returns a provider for sb's API with static test credentials. The backoff is
// capped at a few milliseconds so that tests which provoke throttling do not sleep.
func New(t testing.TB, sb *sandbox.Sandbox) *route53.Provider {
	t.Helper()
	p, err := route53.New(context.Background(), route53.Config{
		Endpoint: sb.APIURL(), Region: "us-east-1", MaxBackoff: 5 * time.Millisecond,
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
