// Package route53api serves the Route 53 REST XML API (2013-04-01) over the sandbox's zone
// store, as the AWS SDKs, the AWS CLI, external-dns and Terraform speak it.
package route53api

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"github.com/crossfade-io/crossfade/internal/sandbox/apicalls"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// DefaultMaxBodyBytes bounds a request body. A full 1,000-change batch with 32,000
// characters of values is well under 1 MiB of XML.
const DefaultMaxBodyBytes = 4 << 20

// Config holds what the API serves from and reports to.
type Config struct {
	Store  *zones.Store
	Faults *faults.Injector // nil: no faults
	// Registerer receives the API's metrics; nil: not registered.
	Registerer prometheus.Registerer
	// ChangeDelay is how long GetChange reports PENDING after a write.
	ChangeDelay  time.Duration
	MaxBodyBytes int64
	Logger       *slog.Logger
}

// API is the Route 53 HTTP handler.
type API struct {
	cfg     Config
	mux     *http.ServeMux
	calls   *apicalls.Metrics
	changes *prometheus.CounterVec
	now     func() time.Time
}

// New builds the handler and registers its metrics.
func New(cfg Config) (*API, error) {
	if cfg.Store == nil {
		return nil, errors.New("route53api: no store")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	a := &API{
		cfg: cfg,
		mux: http.NewServeMux(),
		now: time.Now,
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crossfade_sandbox_record_changes_total",
			Help: "Record-set changes applied by ChangeResourceRecordSets, by action.",
		}, []string{"action"}),
	}
	calls, err := apicalls.New(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("route53api: %w", err)
	}
	a.calls = calls
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(a.changes); err != nil {
			return nil, fmt.Errorf("route53api: register metrics: %w", err)
		}
	}
	a.routes()
	return a, nil
}

func (a *API) routes() {
	const v = "/2013-04-01"
	handle := func(pattern, op string, h handler) {
		a.mux.Handle(pattern, a.operation(op, h))
	}
	handle("POST "+v+"/hostedzone", "CreateHostedZone", a.createHostedZone)
	handle("GET "+v+"/hostedzone", "ListHostedZones", a.listHostedZones)
	handle("GET "+v+"/hostedzone/{id}", "GetHostedZone", a.getHostedZone)
	handle("DELETE "+v+"/hostedzone/{id}", "DeleteHostedZone", a.deleteHostedZone)
	handle("GET "+v+"/hostedzonesbyname", "ListHostedZonesByName", a.listHostedZonesByName)
	handle("GET "+v+"/hostedzonecount", "GetHostedZoneCount", a.hostedZoneCount)
	handle("GET "+v+"/hostedzone/{id}/rrset", "ListResourceRecordSets", a.listRRSets)
	handle("GET "+v+"/hostedzone/{id}/rrset/", "ListResourceRecordSets", a.listRRSets)
	handle("POST "+v+"/hostedzone/{id}/rrset", "ChangeResourceRecordSets", a.changeRRSets)
	handle("POST "+v+"/hostedzone/{id}/rrset/", "ChangeResourceRecordSets", a.changeRRSets)
	handle("GET "+v+"/change/{id}", "GetChange", a.getChange)
	handle("GET "+v+"/tags/{type}/{id}", "ListTagsForResource", a.listTagsForResource)
	handle("POST "+v+"/tags/{type}/{id}", "ChangeTagsForResource", a.changeTags)
	handle("POST "+v+"/tags/{type}", "ListTagsForResources", a.listTagsForResources)
	a.mux.Handle("/", a.operation("Unknown", func(w http.ResponseWriter, r *http.Request) error {
		return &apiError{status: http.StatusBadRequest, code: "InvalidAction",
			msg: fmt.Sprintf("%s %s is not supported by the crossfade sandbox: it serves the Route 53 2013-04-01 hosted-zone, record-set, change and tag operations only (no health checks, traffic policies, DNSSEC, query logging, VPC associations or reusable delegation sets)", r.Method, r.URL.Path)}
	}))
}

// ServeHTTP serves the API.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// apiError is an error the handler answers with its own status and code.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

func invalidInput(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: zones.CodeInvalidInput, msg: fmt.Sprintf(format, args...)}
}

// unsupported refuses what Route 53 would accept but the sandbox deliberately does not
// implement. The message must say so in the sandbox's own words: one that imitated a
// Route 53 validation error would send the reader hunting for a mistake in a valid request.
// The code stays InvalidInput, a 400 that no client retries.
func unsupported(format string, args ...any) *apiError {
	return invalidInput(format, args...)
}

// statusOf maps store error codes to the HTTP statuses Route 53 uses.
var statusOf = map[string]int{
	zones.CodeNoSuchHostedZone:        http.StatusNotFound,
	zones.CodeNoSuchChange:            http.StatusNotFound,
	zones.CodeHostedZoneAlreadyExists: http.StatusConflict,
}

// resultDropped is the result label of a request whose connection was closed unanswered.
const resultDropped = "ConnectionDropped"

// operation wraps a handler with the request id, injected faults, metrics and the error
// response shape.
func (a *API) operation(op string, h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := a.now()
		reqID := requestID()
		w.Header().Set("x-amzn-RequestId", reqID)
		result := "ok"
		var lose func() // loses the response, once the attempt is counted
		defer func() {
			a.calls.Observe(op, result, a.now().Sub(start))
			// Counted first, so that /metrics shows the attempt before the client can see
			// the connection go and retry.
			if lose != nil {
				lose()
			}
		}()
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
			result = a.writeError(w, r, op, reqID, &apiError{status: d.Fault.Status, code: d.Fault.Code, msg: d.Fault.Message})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, a.cfg.MaxBodyBytes)
		if d.After != faults.Respond {
			result, lose = a.serveThenLose(w, r, op, reqID, h, d.After)
			return
		}
		if err := h(w, r); err != nil {
			result = a.writeError(w, r, op, reqID, err)
		}
	})
}

// handler serves one operation; an error is answered in Route 53's error shape.
type handler func(w http.ResponseWriter, r *http.Request) error

// serveThenLose serves a request whose response an injected fault loses: the operation runs
// (a change batch commits) and the client gets ServerError in place of the result, or, for
// DropAfterCommit, nothing at all: lose closes the connection. A request the sandbox refuses
// is answered as usual, because nothing took effect that a lost response could hide.
func (a *API) serveThenLose(w http.ResponseWriter, r *http.Request, op, reqID string, h handler, after faults.AfterCommit) (result string, lose func()) {
	if err := h(&discarded{header: http.Header{}}, r); err != nil {
		return a.writeError(w, r, op, reqID, err), nil
	}
	a.cfg.Logger.Info("route53 api: response lost after the operation took effect (injected fault)", "operation", op, "request_id", reqID, "fault", after.String())
	if after == faults.FailAfterCommit {
		f := faults.ServerError
		return a.writeError(w, r, op, reqID, &apiError{status: f.Status, code: f.Code, msg: f.Message}), nil
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// A writer that cannot hand its connection over (HTTP/2, a test recorder): abort the
		// response instead, which the server turns into a closed connection or reset stream.
		return resultDropped, func() { panic(http.ErrAbortHandler) }
	}
	return resultDropped, func() { _ = conn.Close() }
}

// discarded is the response writer of a response that is going to be lost.
type discarded struct{ header http.Header }

func (d *discarded) Header() http.Header         { return d.header }
func (d *discarded) Write(b []byte) (int, error) { return len(b), nil }
func (d *discarded) WriteHeader(int)             {}

func (a *API) writeError(w http.ResponseWriter, r *http.Request, op, reqID string, err error) string {
	status, code, msg := http.StatusInternalServerError, "InternalFailure", "internal error"
	var ae *apiError
	var ze *zones.Error
	switch {
	case errors.As(err, &ae):
		status, code, msg = ae.status, ae.code, ae.msg
	case errors.As(err, &ze):
		status, code, msg = http.StatusBadRequest, ze.Code, ze.Message
		if s, ok := statusOf[ze.Code]; ok {
			status = s
		}
	default:
		a.cfg.Logger.Error("route53 api: internal error", "operation", op, "path", r.URL.Path, "err", err)
	}
	var resp errorResponse
	resp.Error.Type = "Sender"
	if status >= 500 {
		resp.Error.Type = "Receiver"
	}
	resp.Error.Code, resp.Error.Message, resp.RequestID = code, msg, reqID
	a.cfg.Logger.Debug("route53 api: error", "operation", op, "code", code, "message", msg)
	writeXML(w, status, resp)
	return code
}

func writeXML(w http.ResponseWriter, status int, v any) {
	body, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, "encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, xml.Header)
	_, _ = w.Write(body)
}

// decodeXML reads a request body into v, naming what is wrong with it.
func decodeXML(r *http.Request, root string, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return invalidInput("Request body of %s is larger than %d bytes", root, mb.Limit)
		}
		return invalidInput("Could not read the %s body: %v", root, err)
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return invalidInput("Invalid XML ; %s: the request body is empty", root)
	}
	if err := xml.Unmarshal(body, v); err != nil {
		var se *xml.SyntaxError
		if errors.As(err, &se) {
			return invalidInput("Invalid XML ; %s, line %d: %s", root, se.Line, se.Msg)
		}
		return invalidInput("Invalid XML ; %s: %v", root, err)
	}
	return nil
}

func requestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// zoneID accepts an id with or without the /hostedzone/ prefix the API returns.
func zoneID(r *http.Request) string {
	return strings.TrimPrefix(strings.TrimPrefix(r.PathValue("id"), "/"), "hostedzone/")
}
