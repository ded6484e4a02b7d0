package metrics

import (
	"context"
	"errors"
	"net/http"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go/middleware"
	"github.com/prometheus/client_golang/prometheus"
)

// apiCallsMiddlewareID names the counting middleware in the SDK's stack.
const apiCallsMiddlewareID = "crossfadeAPICallMetrics"

// AWSAPIOption returns an aws-sdk-go-v2 API option (for a client's Options.APIOptions)
// that counts every request the client sends in crossfade_provider_api_calls_total, by
// operation and result.
//
// It counts attempts, not calls: a call that the SDK retries twice after throttling
// counts three requests, two of them throttled. Route 53 rate-limits requests, retries
// included, so attempts are what an operator must compare with the account's limit; and
// a throttled attempt the SDK then retried with success would vanish from a per-call
// count. The middleware sits at the end of the Finalize step, after the SDK's retry loop
// (which re-runs the rest of the stack once per attempt) and signing, so each request on
// the wire passes it once.
func (m *Metrics) AWSAPIOption() func(*middleware.Stack) error {
	return CountAttempts(apiCallsMiddlewareID, m.apiCalls)
}

// CountAttempts returns an aws-sdk-go-v2 API option that counts every attempt of the
// client's calls in calls, labelled by operation and APIResult, at the place and for the
// reasons AWSAPIOption's doc gives. id names the middleware in the stack: one per counter.
func CountAttempts(id string, calls *prometheus.CounterVec) func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Finalize.Add(middleware.FinalizeMiddlewareFunc(id,
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleFinalize(ctx, in)
				calls.WithLabelValues(label(awsmiddleware.GetOperationName(ctx)), APIResult(err)).Inc()
				return out, md, err
			}), middleware.After)
	}
}

// throttles tells a throttled attempt by its error code, with the SDK's own list (Route
// 53's Throttling and PriorRequestNotComplete among them): "throttled" here means what
// the SDK's retryer backs off from as a throttle.
var throttles = retry.ThrottleErrorCode{Codes: retry.DefaultThrottleErrorCodes}

// APIResult classifies one API attempt's error as the result label shows it: "ok" for
// nil, "throttled" for a throttling error code (Throttling, PriorRequestNotComplete, …)
// or an HTTP 429, "error" for anything else (a refused change, a 5xx, a network error).
func APIResult(err error) string {
	if err == nil {
		return ResultOK
	}
	if throttles.IsErrorThrottle(err).Bool() {
		return ResultThrottled
	}
	// Some AWS APIs throttle with a bare 429 and no code the list knows; Route 53 answers
	// 400 with a code, but the option may be given to other clients.
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) && status.HTTPStatusCode() == http.StatusTooManyRequests {
		return ResultThrottled
	}
	return ResultError
}
