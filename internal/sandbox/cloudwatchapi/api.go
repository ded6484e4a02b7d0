// Package cloudwatchapi serves the subset of the CloudWatch API that a real AWS user reads
// ALB traffic with: GetMetricData and GetMetricStatistics for namespace AWS/ApplicationELB
// (RequestCount, HTTPCode_Target_5XX_Count, HTTPCode_ELB_5XX_Count, TargetResponseTime, by
// LoadBalancer and by TargetGroup with LoadBalancer), from the per-second counts of the
// sandbox's ALB proxy. It speaks the three protocols CloudWatch clients use: query (the
// AWS CLI 2.9 of Debian), json (botocore 1.43+) and smithy rpc-v2-cbor (aws-sdk-go-v2).
package cloudwatchapi

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultMaxBodyBytes bounds a request body: 500 queries with their dimensions fit in far
// less.
const DefaultMaxBodyBytes = 4 << 20

// Config holds what the API serves from and reports to.
type Config struct {
	// Source gives the ALB traffic. Required.
	Source Source
	// Registerer receives the API's metrics; nil: not registered.
	Registerer prometheus.Registerer
	// Now is the clock for CloudWatch's start rounding and retention; nil: time.Now.
	Now          func() time.Time
	MaxBodyBytes int64
	Logger       *slog.Logger
}

// API is the CloudWatch HTTP handler.
type API struct {
	cfg     Config
	now     func() time.Time
	calls   *prometheus.CounterVec
	latency *prometheus.HistogramVec
}

// The sandbox counts every AWS API's calls in one metric, keyed by operation, so that
// tests and benchmarks read them in one place. Its options must equal the Route 53 API's
// exactly (help text included) for a registry to hand back the collector it already holds
// (prometheus.AlreadyRegisteredError) instead of refusing a second one of the same name.
var (
	callsOpts = prometheus.CounterOpts{
		Name: "crossfade_sandbox_api_calls_total",
		Help: "Route 53 API calls by operation and result (ok or the error code).",
	}
	latencyOpts = prometheus.HistogramOpts{
		Name:    "crossfade_sandbox_api_call_duration_seconds",
		Help:    "Route 53 API call latency, injected delay included.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 4, 8),
	}
)

// New builds the handler and registers, or joins, the shared call metrics.
func New(cfg Config) (*API, error) {
	if cfg.Source == nil {
		return nil, errors.New("cloudwatchapi: no source")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	a := &API{cfg: cfg, now: cfg.Now,
		calls:   prometheus.NewCounterVec(callsOpts, []string{"operation", "result"}),
		latency: prometheus.NewHistogramVec(latencyOpts, []string{"operation"}),
	}
	if a.now == nil {
		a.now = time.Now
	}
	if cfg.Registerer != nil {
		var err error
		if a.calls, err = register(cfg.Registerer, a.calls); err != nil {
			return nil, err
		}
		if a.latency, err = register(cfg.Registerer, a.latency); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// register registers c, or returns the equal collector reg already holds.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("cloudwatchapi: register metrics: %w", err)
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
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	began := time.Now()
	reqID := requestID()
	w.Header().Set("x-amzn-RequestId", reqID)
	op, result := "Unknown", "ok"
	defer func() {
		a.calls.WithLabelValues(op, result).Inc()
		a.latency.WithLabelValues(op).Observe(time.Since(began).Seconds())
	}()
	req, err := decode(r, a.cfg.MaxBodyBytes)
	if err == nil {
		var out obj
		switch req.op {
		case "GetMetricData":
			op = req.op
			out, err = a.getMetricData(r.Context(), req.params)
		case "GetMetricStatistics":
			op = req.op
			out, err = a.getMetricStatistics(r.Context(), req.params)
		default:
			err = &apiError{code: codeInvalidAction, msg: "The action " + req.op + " is not served by the crossfade sandbox's CloudWatch API: it serves GetMetricData and GetMetricStatistics for namespace " + Namespace + " only."}
		}
		if err == nil {
			writeOutput(w, req, reqID, out)
			return
		}
	}
	var ae *apiError
	if !errors.As(err, &ae) {
		a.cfg.Logger.Error("cloudwatch api: internal error", "operation", op, "err", err)
		ae = &apiError{code: codeInternal, msg: "internal error"}
	}
	a.cfg.Logger.Debug("cloudwatch api: error", "operation", op, "protocol", req.proto.String(), "code", ae.code, "message", ae.msg)
	result = ae.code
	writeError(w, req.proto, reqID, ae)
}

func requestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
