// Package servicediscoveryapi serves the AWS Cloud Map API (servicediscovery 2017-03-14)
// over the sandbox's Cloud Map store, as the AWS CLI and aws-sdk-go-v2 speak it: the JSON
// 1.1 protocol, POST / with X-Amz-Target: Route53AutoNaming_v20170314.<Operation> and a
// JSON body, answered in JSON; errors carry their exception name in __type.
//
// Clients send DiscoverInstances to the endpoint's host with "data-" in front (the model's
// host prefix). Against a custom endpoint that name does not resolve, so clients turn the
// prefix off (smithyhttp.DisableEndpointHostPrefix in Go, AWS_DISABLE_HOST_PREFIX_INJECTION
// for the AWS CLI); the handler serves the operation on whatever host it arrives at.
package servicediscoveryapi

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/sandbox/apicalls"
	"github.com/crossfade-io/crossfade/internal/sandbox/cloudmap"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
)

// TargetPrefix is the X-Amz-Target prefix of every Cloud Map operation.
const TargetPrefix = "Route53AutoNaming_v20170314"

// DefaultMaxBodyBytes bounds a request body: an instance's attributes are at most 5,000
// characters, a tag list 200 tags.
const DefaultMaxBodyBytes = 1 << 20

// Config holds what the API serves from and reports to.
type Config struct {
	Store  *cloudmap.Store
	Faults *faults.Injector // nil: no faults
	// Registerer receives the sandbox's shared call counter and latency histogram
	// (crossfade_sandbox_api_calls_total, crossfade_sandbox_api_call_duration_seconds),
	// joined if another API registered them first. nil: not registered.
	Registerer   prometheus.Registerer
	MaxBodyBytes int64
	Logger       *slog.Logger
}

// API is the Cloud Map HTTP handler.
type API struct {
	cfg   Config
	calls *apicalls.Metrics
	ops   map[string]handler
	now   func() time.Time
}

// handler serves one operation: it decodes the JSON body and returns the result to
// encode, or an error answered in Cloud Map's error shape.
type handler func(r *request) (any, error)

// request is one API call.
type request struct {
	http   *http.Request
	body   []byte
	region string
}

// New builds the handler and registers, or joins, the shared metrics.
func New(cfg Config) (*API, error) {
	if cfg.Store == nil {
		return nil, errors.New("servicediscoveryapi: no store")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	calls, err := apicalls.New(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	a := &API{cfg: cfg, calls: calls, now: time.Now}
	a.ops = a.operations()
	return a, nil
}

// unserved are the Cloud Map operations the sandbox does not serve, refused in its own
// words.
var unserved = map[string]bool{
	"UpdateService": true, "UpdateHttpNamespace": true, "UpdatePrivateDnsNamespace": true,
	"UpdatePublicDnsNamespace": true, "GetServiceAttributes": true, "UpdateServiceAttributes": true,
	"DeleteServiceAttributes": true,
}

// Error shapes of the protocol layer, as AWS's JSON front end names them.
const (
	codeUnknownOperation = "UnknownOperationException"
	codeSerialization    = "SerializationException"
	codeInternal         = "InternalFailure"
	resultDropped        = "ConnectionDropped"
)

// protoError is an error of the protocol layer, before an operation runs.
type protoError struct {
	status int
	code   string
	msg    string
}

func (e *protoError) Error() string { return e.code + ": " + e.msg }

// ServeHTTP serves one JSON 1.1 request.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := a.now()
	reqID := requestID()
	w.Header().Set("x-amzn-RequestId", reqID)
	op := "Unknown"
	result := "ok"
	var lose func()
	defer func() {
		a.calls.Observe(op, result, a.now().Sub(start))
		// Counted first, so that /metrics shows the attempt before the client can see the
		// connection go and retry.
		if lose != nil {
			lose()
		}
	}()
	target := r.Header.Get("X-Amz-Target")
	prefix, name, _ := strings.Cut(target, ".")
	h, ok := a.ops[name]
	switch {
	case r.Method != http.MethodPost:
		result = a.writeError(w, op, &protoError{http.StatusMethodNotAllowed, codeUnknownOperation, "Cloud Map takes POST / only"})
		return
	case prefix != TargetPrefix || !ok:
		msg := fmt.Sprintf("The operation %q is not valid for this web service.", target)
		if prefix == TargetPrefix && unserved[name] {
			msg = fmt.Sprintf("The operation %s is not supported by the crossfade sandbox: it serves the namespace, service, instance, discovery, health, operation and tag operations (see internal/sandbox/servicediscoveryapi)", name)
		}
		result = a.writeError(w, op, &protoError{http.StatusBadRequest, codeUnknownOperation, msg})
		return
	}
	op = name
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.cfg.MaxBodyBytes))
	if err != nil {
		result = a.writeError(w, op, &protoError{http.StatusBadRequest, codeSerialization, "The request body could not be read: " + err.Error()})
		return
	}
	var d faults.Decision
	if a.cfg.Faults != nil {
		d = a.cfg.Faults.Decide(op)
		if d.Delay > 0 {
			select {
			case <-time.After(d.Delay):
			case <-r.Context().Done():
			}
		}
	}
	if d.Fault != nil {
		result = a.writeError(w, op, &protoError{d.Fault.Status, d.Fault.Code, d.Fault.Message})
		return
	}
	out, err := h(&request{http: r, body: body, region: regionOf(r)})
	if err != nil {
		result = a.writeError(w, op, err)
		return
	}
	if d.After != faults.Respond {
		// The operation took effect; the injected fault loses its answer.
		a.cfg.Logger.Info("servicediscovery api: response lost after the operation took effect (injected fault)", "operation", op, "request_id", reqID, "fault", d.After.String())
		if d.After == faults.FailAfterCommit {
			result = a.writeError(w, op, &protoError{faults.ServerError.Status, faults.ServerError.Code, faults.ServerError.Message})
			return
		}
		result = resultDropped
		conn, _, herr := http.NewResponseController(w).Hijack()
		if herr != nil {
			lose = func() { panic(http.ErrAbortHandler) }
		} else {
			lose = func() { _ = conn.Close() }
		}
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// decode reads the request body into v; a body that is not the operation's JSON is a
// SerializationException, as AWS's front end answers it.
func decode(r *request, v any) error {
	if len(strings.TrimSpace(string(r.body))) == 0 {
		return nil
	}
	if err := json.Unmarshal(r.body, v); err != nil {
		return &protoError{http.StatusBadRequest, codeSerialization, "The request body is not valid for the operation: " + err.Error()}
	}
	return nil
}

// regionOf reads the region a client signed the request for, from the credential scope of
// its SigV4 Authorization header; an unsigned request is in cloudmap.DefaultRegion.
func regionOf(r *http.Request) string {
	_, cred, ok := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	if !ok {
		return cloudmap.DefaultRegion
	}
	cred, _, _ = strings.Cut(cred, ",")
	if f := strings.Split(cred, "/"); len(f) >= 3 && f[2] != "" {
		return f[2]
	}
	return cloudmap.DefaultRegion
}

// writeError answers err in the JSON 1.1 error shape, {"__type": code, "Message": …} with
// the exception's other members, the code in X-Amzn-ErrorType too, and returns the metrics
// result label. Every Cloud Map exception is a 400.
func (a *API) writeError(w http.ResponseWriter, op string, err error) string {
	status, code, msg := http.StatusInternalServerError, codeInternal, "An internal error occurred."
	body := map[string]string{}
	var ce *cloudmap.Error
	var pe *protoError
	switch {
	case errors.As(err, &ce):
		status, code, msg = http.StatusBadRequest, ce.Code, ce.Message
		for k, v := range ce.Fields {
			body[k] = v
		}
	case errors.As(err, &pe):
		status, code, msg = pe.status, pe.code, pe.msg
	default:
		a.cfg.Logger.Error("servicediscovery api: internal error", "operation", op, "err", err)
	}
	body["__type"], body["Message"] = code, msg
	a.cfg.Logger.Debug("servicediscovery api: error", "operation", op, "code", code, "message", msg)
	w.Header().Set("X-Amzn-ErrorType", code)
	writeJSON(w, status, body)
	return code
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

func requestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
