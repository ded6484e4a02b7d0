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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
	"github.com/crossfade-io/crossfade/internal/sandbox/cloudmapstore"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
)

// TargetPrefix is the X-Amz-Target prefix of every Cloud Map operation.
const TargetPrefix = "Route53AutoNaming_v20170314"

// DefaultMaxBodyBytes bounds a request body: an instance's attributes are at most 5,000
// characters, a tag list 200 tags.
const DefaultMaxBodyBytes = 1 << 20

// Config holds what the API serves from and reports to.
type Config struct {
	Store  *cloudmapstore.Store
	Faults *faults.Injector // nil: no faults
	// Registerer receives the call metrics every sandbox API shares (awsapi.Options);
	// nil: not registered.
	Registerer   prometheus.Registerer
	MaxBodyBytes int64
	Logger       *slog.Logger
}

// API is the Cloud Map HTTP handler.
type API struct {
	cfg   Config
	chain *awsapi.Chain
	ops   map[string]handler
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
	a := &API{cfg: cfg}
	chain, err := awsapi.NewChain("servicediscovery", codec{a}, awsapi.Options{Faults: cfg.Faults, Registerer: cfg.Registerer,
		MaxBodyBytes: cfg.MaxBodyBytes, DefaultMaxBodyBytes: DefaultMaxBodyBytes, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	a.chain = chain
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
)

// ServeHTTP serves one JSON 1.1 request.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.chain.ServeHTTP(w, r) }

// codec is Cloud Map's JSON 1.1 protocol: X-Amz-Target names the operation, the body and
// the answer are JSON.
type codec struct{ a *API }

// Decode names the operation and reads the body (the chain has bounded it).
func (c codec) Decode(r *http.Request, _ string) (string, awsapi.Handler, error) {
	target := r.Header.Get("X-Amz-Target")
	prefix, name, _ := strings.Cut(target, ".")
	h, ok := c.a.ops[name]
	switch {
	case r.Method != http.MethodPost:
		return "", nil, &awsapi.Error{Status: http.StatusMethodNotAllowed, Code: codeUnknownOperation, Message: "Cloud Map takes POST / only"}
	case prefix != TargetPrefix || !ok:
		msg := fmt.Sprintf("The operation %q is not valid for this web service.", target)
		if prefix == TargetPrefix && unserved[name] {
			msg = fmt.Sprintf("The operation %s is not supported by the crossfade sandbox: it serves the namespace, service, instance, discovery, health, operation and tag operations (see internal/sandbox/servicediscoveryapi)", name)
		}
		return "", nil, &awsapi.Error{Status: http.StatusBadRequest, Code: codeUnknownOperation, Message: msg}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return name, nil, &awsapi.Error{Status: http.StatusBadRequest, Code: codeSerialization, Message: "The request body could not be read: " + err.Error()}
	}
	return name, func(w http.ResponseWriter, r *http.Request) error {
		out, err := h(&request{http: r, body: body, region: awsapi.Region(r, cloudmapstore.DefaultRegion)})
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}, nil
}

// Internal is Cloud Map's InternalFailure.
func (codec) Internal() *awsapi.Error {
	return &awsapi.Error{Status: http.StatusInternalServerError, Code: codeInternal, Message: "An internal error occurred."}
}

// WriteError answers e in the JSON 1.1 error shape, {"__type": code, "Message": …} with
// the exception's other members, the code in X-Amzn-ErrorType too. Every Cloud Map
// exception is a 400.
func (codec) WriteError(w http.ResponseWriter, _ *http.Request, _ string, e *awsapi.Error) {
	body := map[string]string{}
	for k, v := range e.Fields {
		body[k] = v
	}
	body["__type"], body["Message"] = e.Code, e.Message
	w.Header().Set("X-Amzn-ErrorType", e.Code)
	writeJSON(w, e.StatusOr(http.StatusBadRequest), body)
}

// decode reads the request body into v; a body that is not the operation's JSON is a
// SerializationException, as AWS's front end answers it.
func decode(r *request, v any) error {
	if len(strings.TrimSpace(string(r.body))) == 0 {
		return nil
	}
	if err := json.Unmarshal(r.body, v); err != nil {
		return &awsapi.Error{Status: http.StatusBadRequest, Code: codeSerialization, Message: "The request body is not valid for the operation: " + err.Error()}
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	awsapi.Write(w, status, "application/x-amz-json-1.1", data, err)
}
