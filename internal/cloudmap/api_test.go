package cloudmap

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/aws/smithy-go"
)

// TestNewClientRetries: the publisher's client retries as many times as asked, and a long
// burst of throttling never locks it out (no client-side retry quota): it runs for months.
func TestNewClientRetries(t *testing.T) {
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_PROFILE", "")
	c, err := NewClient(context.Background(), ClientConfig{Endpoint: "http://127.0.0.1:1", Region: "eu-west-1", MaxRetries: 6})
	if err != nil {
		t.Fatal(err)
	}
	o := c.Options()
	if o.Region != "eu-west-1" {
		t.Errorf("region %q, want eu-west-1", o.Region)
	}
	if got := o.Retryer.MaxAttempts(); got != 7 {
		t.Errorf("%d attempts, want 7", got)
	}
	throttled := &smithy.GenericAPIError{Code: "ThrottlingException"}
	for i := range 500 {
		if _, err := o.Retryer.GetRetryToken(context.Background(), throttled); err != nil {
			t.Fatalf("retry %d refused: %v", i+1, err)
		}
	}
}
