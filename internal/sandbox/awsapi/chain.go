// Package awsapi is the protocol layer every AWS API of the sandbox (Route 53, ELBv2,
// CloudWatch, Cloud Map) serves its requests through: the error type, the request id, the
// region of a signed request, the middleware chain (request id, call metrics, injected
// faults including a response lost after the request took effect, the body limit) and the
// bbolt helpers of the stores. Each API supplies only its codec (REST-XML, query-XML,
// JSON 1.1, rpc-v2-cbor) and its handlers.
package awsapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/sandbox/apicalls"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
)

// ResultDropped is the metrics result label of a request whose connection an injected
// fault closed unanswered.
const ResultDropped = "ConnectionDropped"

// unknownOp is the operation label of a request that names no operation the API serves.
const unknownOp = "Unknown"

// Handler runs one operation and writes its result to w. An error is answered in the
// API's error shape instead; the handler must not have written to w then.
type Handler func(w http.ResponseWriter, r *http.Request) error

// Codec is what one API supplies to the chain: how a request names its operation and how
// an error is written in the API's protocol.
type Codec interface {
	// Decode names the operation r calls and returns its handler. On an error, op is the
	// operation the request named if the codec got that far ("" otherwise: counted as
	// Unknown) and the error is answered without running anything.
	Decode(r *http.Request, reqID string) (op string, h Handler, err error)
	// WriteError answers e in the API's error shape.
	WriteError(w http.ResponseWriter, r *http.Request, reqID string, e *Error)
	// Internal is the API's answer to an error that is not an *Error: a bug, logged.
	Internal() *Error
}

// Chain serves requests of one API: it sets the request id, counts the call, injects the
// configured faults, bounds the body, and answers errors through the API's codec.
type Chain struct {
	// Service names the API in log lines ("route53").
	Service string
	Codec   Codec
	Calls   *apicalls.Metrics
	// Faults are the injected faults; nil: none.
	Faults       *faults.Injector
	MaxBodyBytes int64
	Logger       *slog.Logger
	// Now is the clock of the latency metric; nil: time.Now.
	Now func() time.Time
}

// Options are what every API's Config holds for its chain.
type Options struct {
	Faults *faults.Injector // nil: no faults
	// Registerer receives the sandbox's shared call counter and latency histogram
	// (crossfade_sandbox_api_calls_total, crossfade_sandbox_api_call_duration_seconds),
	// joined if another API registered them first. nil: not registered.
	Registerer prometheus.Registerer
	// MaxBodyBytes bounds a request body; 0 or less: DefaultMaxBodyBytes.
	MaxBodyBytes, DefaultMaxBodyBytes int64
	Logger                            *slog.Logger // nil: discard
	Now                               func() time.Time
}

// NewChain returns the chain of the API service with its codec, the defaults of o filled
// in and the shared call metrics registered, or joined.
func NewChain(service string, codec Codec, o Options) (*Chain, error) {
	calls, err := apicalls.New(o.Registerer)
	if err != nil {
		return nil, fmt.Errorf("%s api: %w", service, err)
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = o.DefaultMaxBodyBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Chain{Service: service, Codec: codec, Calls: calls, Faults: o.Faults,
		MaxBodyBytes: o.MaxBodyBytes, Logger: o.Logger, Now: o.Now}, nil
}

// ServeHTTP serves one request of the API, routed by its codec.
func (c *Chain) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.serve(w, r, c.Codec.Decode)
}

// Operation serves requests as operation op with h, for an API that routes requests
// itself (Route 53's REST paths); the codec's Decode is not called.
func (c *Chain) Operation(op string, h Handler) http.Handler {
	decode := func(*http.Request, string) (string, Handler, error) { return op, h, nil }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.serve(w, r, decode) })
}

func (c *Chain) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Chain) serve(w http.ResponseWriter, r *http.Request, decode func(*http.Request, string) (string, Handler, error)) {
	start := c.now()
	reqID := RequestID()
	w.Header().Set("x-amzn-RequestId", reqID)
	op, result := unknownOp, "ok"
	var lose func() // loses the response, once the attempt is counted
	defer func() {
		c.Calls.Observe(op, result, c.now().Sub(start))
		// Counted first, so that /metrics shows the attempt before the client can see the
		// connection go and retry.
		if lose != nil {
			lose()
		}
	}()
	r.Body = http.MaxBytesReader(w, r.Body, c.MaxBodyBytes)
	name, h, err := decode(r, reqID)
	if name != "" {
		op = name
	}
	if err != nil {
		result = c.writeError(w, r, op, reqID, err)
		return
	}
	var d faults.Decision
	if c.Faults != nil {
		d = c.Faults.Decide(op)
		if d.Delay > 0 {
			t := time.NewTimer(d.Delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
			}
		}
	}
	if d.Fault != nil {
		result = c.writeError(w, r, op, reqID, faultError(*d.Fault))
		return
	}
	if d.After != faults.Respond {
		result, lose = c.serveThenLose(w, r, op, reqID, h, d.After)
		return
	}
	if err := h(w, r); err != nil {
		result = c.writeError(w, r, op, reqID, err)
	}
}

// serveThenLose serves a request whose response an injected fault loses: the operation runs
// (a write commits; a read just reads) and the client gets ServerError in place of the
// result, or, for DropAfterCommit, nothing at all: lose closes the connection. A request the
// API refuses is answered as usual, because nothing took effect that a lost response could
// hide.
func (c *Chain) serveThenLose(w http.ResponseWriter, r *http.Request, op, reqID string, h Handler, after faults.AfterCommit) (result string, lose func()) {
	if err := h(&discarded{header: http.Header{}}, r); err != nil {
		return c.writeError(w, r, op, reqID, err), nil
	}
	c.logger().Info(c.Service+" api: response lost after the operation took effect (injected fault)", "operation", op, "request_id", reqID, "fault", after.String())
	if after == faults.FailAfterCommit {
		return c.writeError(w, r, op, reqID, faultError(faults.ServerError)), nil
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// A writer that cannot hand its connection over (HTTP/2, a test recorder): abort the
		// response instead, which the server turns into a closed connection or reset stream.
		return ResultDropped, func() { panic(http.ErrAbortHandler) }
	}
	return ResultDropped, func() { _ = conn.Close() }
}

// writeError answers err through the codec and returns the metrics result label, the code.
func (c *Chain) writeError(w http.ResponseWriter, r *http.Request, op, reqID string, err error) string {
	var e *Error
	if !errors.As(err, &e) {
		c.logger().Error(c.Service+" api: internal error", "operation", op, "path", r.URL.Path, "request_id", reqID, "err", err)
		e = c.Codec.Internal()
	}
	c.logger().Debug(c.Service+" api: error", "operation", op, "code", e.Code, "message", e.Message)
	c.Codec.WriteError(w, r, reqID, e)
	return e.Code
}

func (c *Chain) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

func faultError(f faults.Fault) *Error {
	return &Error{Status: f.Status, Code: f.Code, Message: f.Message}
}

// discarded is the response writer of a response that is going to be lost.
type discarded struct{ header http.Header }

func (d *discarded) Header() http.Header         { return d.header }
func (d *discarded) Write(b []byte) (int, error) { return len(b), nil }
func (d *discarded) WriteHeader(int)             {}
