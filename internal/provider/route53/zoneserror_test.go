package route53

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// TestZonesErrorNamesTheCallOnce: the SDK's error already says "operation error Route 53:
// ListHostedZones"; the provider adds only whose error it is, not a second name for the
// call, so a failed listing reads as one failure.
func TestZonesErrorNamesTheCallOnce(t *testing.T) {
	// A port nothing listens on: take one, and close it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p, err := New(context.Background(), Config{Endpoint: "http://" + addr, Region: "us-east-1", MaxRetries: -1,
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider("test", "test", ""))})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Zones(context.Background())
	if err == nil {
		t.Fatal("Zones succeeded against a closed port")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "route53: operation error Route 53: ListHostedZones") || strings.Contains(strings.ToLower(msg), "list hosted zones") {
		t.Errorf("error %q: want it to start \"route53: operation error Route 53: ListHostedZones\" and name the call once", msg)
	}
}
