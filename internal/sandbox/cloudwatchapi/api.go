// Package cloudwatchapi serves the subset of the CloudWatch API that a real AWS user reads
// ALB traffic with: GetMetricData and GetMetricStatistics for namespace AWS/ApplicationELB
// (RequestCount, HTTPCode_Target_5XX_Count, HTTPCode_ELB_5XX_Count, TargetResponseTime, by
// LoadBalancer and by TargetGroup with LoadBalancer), from the per-second counts of the
// sandbox's ALB proxy, and for namespace AWS/NetworkELB (NewFlowCount, ActiveFlowCount,
// TCP_ELB_Reset_Count, by the same dimensions) from its NLB proxy. It speaks the three protocols CloudWatch clients use: query (the
// AWS CLI 2.9 of Debian), json (botocore 1.43+) and smithy rpc-v2-cbor (aws-sdk-go-v2).
package cloudwatchapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
)

// DefaultMaxBodyBytes bounds a request body: 500 queries with their dimensions fit in far
// less.
const DefaultMaxBodyBytes = 4 << 20

// Config holds what the API serves from and reports to.
type Config struct {
	// Source gives the ALB traffic. Required.
	Source Source
	// Faults are the injected faults the other APIs share; nil: none. CloudWatch reads
	// commit nothing, so a response lost after the read (commitThenFail, commitThenDrop)
	// is simply a failed read.
	Faults *faults.Injector
	// Registerer receives the API's metrics; nil: not registered.
	Registerer prometheus.Registerer
	// Now is the clock for CloudWatch's start rounding and retention; nil: time.Now.
	Now          func() time.Time
	MaxBodyBytes int64
	Logger       *slog.Logger
}

// API is the CloudWatch HTTP handler.
type API struct {
	cfg   Config
	now   func() time.Time
	chain *awsapi.Chain
}

// New builds the handler and registers, or joins, the shared call metrics.
func New(cfg Config) (*API, error) {
	if cfg.Source == nil {
		return nil, errors.New("cloudwatchapi: no source")
	}
	a := &API{cfg: cfg, now: cfg.Now}
	if a.now == nil {
		a.now = time.Now
	}
	// The latency metric reads the real clock: cfg.Now may be a test's fixed one.
	chain, err := awsapi.NewChain("cloudwatch", codec{a}, awsapi.Options{Faults: cfg.Faults, Registerer: cfg.Registerer,
		MaxBodyBytes: cfg.MaxBodyBytes, DefaultMaxBodyBytes: DefaultMaxBodyBytes, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	a.chain, a.cfg.Logger, a.cfg.MaxBodyBytes = chain, chain.Logger, chain.MaxBodyBytes
	return a, nil
}

// Matches reports whether r is a CloudWatch call, for the sandbox's dispatcher, which
// serves several AWS APIs on one address: an rpc-v2-cbor path, a json X-Amz-Target, a
// SigV4 credential scope naming "monitoring" (every signed client: CLI and SDKs), or,
// unsigned, a query Version of 2010-08-01. The body of an unsigned form request is read to
// find that out and put back for the handler.
func (a *API) Matches(r *http.Request) bool {
	switch detect(r) {
	case protoCBOR, protoJSON:
		return true
	}
	if svc, ok := signedService(r.Header.Get("Authorization")); ok {
		return svc == sigV4Service
	}
	if r.URL.Query().Get("Version") == apiVersion {
		return true
	}
	if r.Method != http.MethodPost || r.Body == nil {
		return false
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		return false
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, a.cfg.MaxBodyBytes))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil {
		return false
	}
	form, err := url.ParseQuery(string(head))
	return err == nil && form.Get("Version") == apiVersion
}

// signedService reads the service of a SigV4 Authorization header's credential scope:
// "AWS4-HMAC-SHA256 Credential=AKID/20240101/us-east-1/monitoring/aws4_request, …".
func signedService(auth string) (string, bool) {
	_, rest, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return "", false
	}
	cred, _, _ := strings.Cut(rest, ",")
	parts := strings.Split(strings.TrimSpace(cred), "/")
	if len(parts) != 5 {
		return "", false
	}
	return parts[3], true
}

// ServeHTTP serves the API.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.chain.ServeHTTP(w, r) }

// codec speaks the request's protocol (query, json or rpc-v2-cbor), found by detect.
type codec struct{ a *API }

// Decode reads the request in its protocol and names the operation; an operation the
// sandbox does not serve is counted as Unknown.
func (c codec) Decode(r *http.Request, reqID string) (string, awsapi.Handler, error) {
	req, err := decode(r)
	if err != nil {
		return "", nil, err
	}
	var run func(context.Context, map[string]any) (obj, error)
	switch req.op {
	case "GetMetricData":
		run = c.a.getMetricData
	case "GetMetricStatistics":
		run = c.a.getMetricStatistics
	default:
		return "", nil, &apiError{Code: codeInvalidAction, Message: "The action " + req.op + " is not served by the crossfade sandbox's CloudWatch API: it serves GetMetricData and GetMetricStatistics for namespaces " + Namespace + " and " + NetworkNamespace + " only."}
	}
	return req.op, func(w http.ResponseWriter, r *http.Request) error {
		out, err := run(r.Context(), req.params)
		if err != nil {
			return err
		}
		writeOutput(w, req, reqID, out)
		return nil
	}, nil
}

// Internal is CloudWatch's InternalServiceError.
func (codec) Internal() *awsapi.Error {
	return &apiError{Code: codeInternal, Message: "internal error"}
}

// WriteError answers e in the request's protocol.
func (codec) WriteError(w http.ResponseWriter, r *http.Request, reqID string, e *awsapi.Error) {
	writeError(w, detect(r), reqID, e)
}
