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
	"github.com/crossfade-io/crossfade/internal/sandbox/apicalls"
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
	cfg   Config
	now   func() time.Time
	calls *apicalls.Metrics
}

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
	a := &API{cfg: cfg, now: cfg.Now}
	if a.now == nil {
		a.now = time.Now
	}
	calls, err := apicalls.New(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	a.calls = calls
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
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	began := time.Now()
	reqID := requestID()
	w.Header().Set("x-amzn-RequestId", reqID)
	op, result := "Unknown", "ok"
	defer func() {
		a.calls.Observe(op, result, time.Since(began))
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
