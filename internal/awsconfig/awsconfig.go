// Package awsconfig loads the AWS configuration every crossfade client is built from
// (Route 53, ELBv2, CloudWatch, Cloud Map): the standard chain, a region when the chain
// names none, and one retry policy, so that a long-running controller or cutover treats
// a throttled call the same whichever API it went to.
package awsconfig

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
)

const (
	// DefaultRegion is used when neither Options nor the chain names one: Route 53 is a
	// global service signed in us-east-1, and the sandbox answers any region.
	DefaultRegion = "us-east-1"
	// DefaultMaxRetries is how often a throttled or failed call is retried.
	DefaultMaxRetries = 3
)

// Options are what crossfade's flags change in the standard configuration.
type Options struct {
	// Region overrides the chain's region.
	Region string
	// MaxRetries is how often the SDK retries a throttled, PriorRequestNotComplete or 5xx
	// call; 0 means DefaultMaxRetries, a negative value disables retries.
	MaxRetries int
	// MaxBackoff caps the delay between retries; 0 keeps the SDK's 20 s.
	MaxBackoff time.Duration
	// Credentials overrides the standard credential chain (env, shared files, IRSA, IMDS).
	Credentials aws.CredentialsProvider
}

// Load reads the standard chain (environment, shared config files, web identity,
// instance metadata) with o's overrides and crossfade's retryer (NewRetryer).
func Load(ctx context.Context, o Options) (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer { return NewRetryer(o) }),
	}
	if o.Region != "" {
		opts = append(opts, config.WithRegion(o.Region))
	}
	if o.Credentials != nil {
		opts = append(opts, config.WithCredentialsProvider(o.Credentials))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	return cfg, nil
}

// NewRetryer is the SDK's standard retryer (it retries Throttling,
// PriorRequestNotComplete, 5xx answers and network errors with jittered exponential
// backoff) with o's attempts and backoff cap, and without the SDK's client-side retry
// quota. That quota (500 tokens, 5 per retry) is built for short-lived programs: after a
// burst of throttling it makes every later call fail at once, unretried, until enough
// calls succeed to refill it. A controller that runs for months, or a cutover holding
// for an hour, would lock itself out exactly when the API is struggling; each has its own
// pacing between calls instead.
func NewRetryer(o Options) aws.Retryer {
	return retry.NewStandard(func(so *retry.StandardOptions) {
		switch {
		case o.MaxRetries < 0:
			so.MaxAttempts = 1
		case o.MaxRetries == 0:
			so.MaxAttempts = DefaultMaxRetries + 1
		default:
			so.MaxAttempts = o.MaxRetries + 1
		}
		if o.MaxBackoff > 0 {
			so.MaxBackoff = o.MaxBackoff
		}
		so.RateLimiter = ratelimit.None
	})
}
