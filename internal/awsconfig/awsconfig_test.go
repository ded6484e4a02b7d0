package awsconfig

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"
)

// TestNewRetryerAttempts: MaxRetries says how many retries follow the first attempt.
func TestNewRetryerAttempts(t *testing.T) {
	for _, tc := range []struct {
		retries, want int
	}{
		{0, DefaultMaxRetries + 1},
		{-1, 1},
		{7, 8},
	} {
		if got := NewRetryer(Options{MaxRetries: tc.retries}).MaxAttempts(); got != tc.want {
			t.Errorf("MaxRetries %d: %d attempts, want %d", tc.retries, got, tc.want)
		}
	}
}

// TestNewRetryerBackoffCap: MaxBackoff bounds the delay before a retry.
func TestNewRetryerBackoffCap(t *testing.T) {
	r := NewRetryer(Options{MaxBackoff: 5 * time.Millisecond})
	throttled := &smithy.GenericAPIError{Code: "Throttling", Message: "Rate exceeded"}
	for attempt := 1; attempt <= 10; attempt++ {
		d, err := r.RetryDelay(attempt, throttled)
		if err != nil {
			t.Fatalf("attempt %d: %v", attempt, err)
		}
		if d > 5*time.Millisecond {
			t.Fatalf("attempt %d: delay %s over the 5ms cap", attempt, d)
		}
	}
}

// TestNewRetryerNoQuota: a long burst of throttling never exhausts a client-side quota.
// The SDK's default quota (500 tokens, 5 per retry) refuses the 101st retry in a row;
// crossfade's clients must go on retrying, however long the burst.
func TestNewRetryerNoQuota(t *testing.T) {
	throttled := &smithy.GenericAPIError{Code: "Throttling", Message: "Rate exceeded"}
	if !retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(throttled).Bool() {
		t.Fatal("the SDK does not take Throttling as retryable: the test proves nothing")
	}
	// The SDK's own default, for contrast: its quota runs out.
	def := retry.NewStandard()
	ran := false
	for i := range 1000 {
		if _, err := def.GetRetryToken(context.Background(), throttled); err != nil {
			ran = true
			t.Logf("the SDK's default retryer refuses retry %d: %v", i+1, err)
			break
		}
	}
	if !ran {
		t.Fatal("the SDK's default retryer never ran out: the test proves nothing")
	}
	r := NewRetryer(Options{})
	for i := range 1000 {
		if _, err := r.GetRetryToken(context.Background(), throttled); err != nil {
			t.Fatalf("retry %d refused: %v", i+1, err)
		}
	}
}

// TestLoad: the region comes from Options, else the chain, else DefaultRegion; the
// retryer is NewRetryer's; given credentials replace the chain's.
func TestLoad(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", empty)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", empty)
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	creds := credentials.NewStaticCredentialsProvider("AKID", "secret", "")
	for _, tc := range []struct {
		name, env string
		o         Options
		want      string
	}{
		{"default", "", Options{}, DefaultRegion},
		{"from the environment", "eu-west-1", Options{}, "eu-west-1"},
		{"option over environment", "eu-west-1", Options{Region: "ap-south-1"}, "ap-south-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AWS_REGION", tc.env)
			o := tc.o
			o.Credentials, o.MaxRetries = creds, 5
			cfg, err := Load(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Region != tc.want {
				t.Errorf("region %q, want %q", cfg.Region, tc.want)
			}
			if got := cfg.Retryer().MaxAttempts(); got != 6 {
				t.Errorf("retryer: %d attempts, want 6", got)
			}
			c, err := cfg.Credentials.Retrieve(context.Background())
			if err != nil || c.AccessKeyID != "AKID" {
				t.Errorf("credentials %q, %v: want the given ones", c.AccessKeyID, err)
			}
		})
	}
}

// TestLoadBadSharedConfig: a broken shared config file is an error naming the load.
func TestLoadBadSharedConfig(t *testing.T) {
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_PROFILE", "no-such-profile")
	_, err := Load(context.Background(), Options{})
	var missing config.SharedConfigProfileNotExistError
	if !errors.As(err, &missing) {
		t.Fatalf("err %v, want a missing-profile error", err)
	}
}
