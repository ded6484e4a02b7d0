package demo

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	leveralb "github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// TestWeightsErrors checks that reading the final weights, which the demo does after its
// cutover, keeps the cause of a failed read matchable (a Ctrl-C is context.Canceled,
// not just text) and names what it read, and that a missing zone, rule or listener says
// so instead of "<nil>".
func TestWeightsErrors(t *testing.T) {
	sb := sandboxtest.Start(t)
	dns := route53test.New(t, sb)
	awsCfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(accessKey, secretKey, "")}
	api := leveralb.NewELBv2(awsCfg, sb.APIURL())
	missing := &albSetup{
		rule:     "arn:aws:elasticloadbalancing:" + region + ":000000000000:listener-rule/app/demo/0/0/0",
		listener: "arn:aws:elasticloadbalancing:" + region + ":000000000000:listener/app/demo/0/0",
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	alb := func(ctx context.Context) error {
		_, _, err := missing.weights(ctx, api)
		return err
	}
	zone := func(ctx context.Context) error {
		_, err := weights(ctx, dns)
		return err
	}
	for _, tc := range []struct {
		name     string
		read     func(context.Context) error
		ctx      context.Context
		canceled bool   // the error must match context.Canceled
		want     string // the message must contain it
	}{
		{"zone canceled", zone, canceled, true, "read zone " + zoneName},
		{"zone missing", zone, context.Background(), false, "read zone " + zoneName + ": no such hosted zone"},
		{"rule canceled", alb, canceled, true, "describe rule " + missing.rule},
		{"rule missing", alb, context.Background(), false, "describe rule " + missing.rule + ": "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.read(tc.ctx)
			if err == nil {
				t.Fatal("err = nil, want an error")
			}
			if got := errors.Is(err, context.Canceled); got != tc.canceled {
				t.Errorf("errors.Is(%v, context.Canceled) = %v, want %v", err, got, tc.canceled)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "nil") {
				t.Errorf("err = %q: says nil instead of what is missing", err)
			}
		})
	}
}

// TestWaitPublishedCanceled checks that the --kube demo's wait for the controllers to
// publish, stopped by Ctrl-C, returns an error that is context.Canceled, not just one
// that says so.
func TestWaitPublishedCanceled(t *testing.T) {
	sb := sandboxtest.Start(t)
	dns := route53test.New(t, sb)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := (&kube{}).waitPublished(ctx, dns)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("errors.Is(%v, context.Canceled) = false, want true", err)
	}
	if err != nil && !strings.Contains(err.Error(), "the controllers did not publish within") {
		t.Errorf("err = %q, want it to say what did not happen", err)
	}
}
