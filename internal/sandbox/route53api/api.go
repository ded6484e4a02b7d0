// Package route53api serves the Route 53 REST XML API (2013-04-01) over the sandbox's zone
// store, as the AWS SDKs, the AWS CLI, external-dns and Terraform speak it.
package route53api

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
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
	chain   *awsapi.Chain
	changes *prometheus.CounterVec
	now     func() time.Time
}

// RecordChangesMetric is the counter of the record-set changes ChangeResourceRecordSets
// applied, labelled by action (CREATE, UPSERT, DELETE).
const RecordChangesMetric = "crossfade_sandbox_record_changes_total"

// New builds the handler and registers its metrics.
func New(cfg Config) (*API, error) {
	if cfg.Store == nil {
		return nil, errors.New("route53api: no store")
	}
	a := &API{
		cfg: cfg,
		mux: http.NewServeMux(),
		now: time.Now,
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: RecordChangesMetric,
			Help: "Record-set changes applied by ChangeResourceRecordSets, by action.",
		}, []string{"action"}),
	}
	chain, err := awsapi.NewChain("route53", codec{}, awsapi.Options{Faults: cfg.Faults, Registerer: cfg.Registerer,
		MaxBodyBytes: cfg.MaxBodyBytes, DefaultMaxBodyBytes: DefaultMaxBodyBytes, Logger: cfg.Logger, Now: func() time.Time { return a.now() }})
	if err != nil {
		return nil, err
	}
	a.chain, a.cfg.Logger = chain, chain.Logger
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
	handle := func(pattern, op string, h awsapi.Handler) {
		a.mux.Handle(pattern, a.chain.Operation(op, h))
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
	a.mux.Handle("/", a.chain.Operation("Unknown", func(w http.ResponseWriter, r *http.Request) error {
		return &awsapi.Error{Status: http.StatusBadRequest, Code: "InvalidAction",
			Message: fmt.Sprintf("%s %s is not supported by the crossfade sandbox: it serves the Route 53 2013-04-01 hosted-zone, record-set, change and tag operations only (no health checks, traffic policies, DNSSEC, query logging, VPC associations or reusable delegation sets)", r.Method, r.URL.Path)}
	}))
}

// ServeHTTP serves the API.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

func invalidInput(format string, args ...any) *awsapi.Error {
	return awsapi.Errorf(zones.CodeInvalidInput, format, args...)
}

// schema words the front end's checks of a request member with Route 53's code.
var schema = awsapi.Schema{Code: zones.CodeInvalidInput}

// unsupported refuses what Route 53 would accept but the sandbox deliberately does not
// implement. The message must say so in the sandbox's own words: one that imitated a
// Route 53 validation error would send the reader hunting for a mistake in a valid request.
// The code stays InvalidInput, a 400 that no client retries.
func unsupported(format string, args ...any) *awsapi.Error {
	return invalidInput(format, args...)
}

// statusOf maps store error codes to the HTTP statuses Route 53 uses.
var statusOf = map[string]int{
	zones.CodeNoSuchHostedZone:        http.StatusNotFound,
	zones.CodeNoSuchChange:            http.StatusNotFound,
	zones.CodeHostedZoneAlreadyExists: http.StatusConflict,
}

// codec writes Route 53's REST-XML errors; the REST paths route requests (see routes), so
// Decode is never called.
type codec struct{}

func (codec) Decode(*http.Request, string) (string, awsapi.Handler, error) {
	return "", nil, errors.New("route53api: requests are routed by path")
}

func (codec) Internal() *awsapi.Error {
	return &awsapi.Error{Status: http.StatusInternalServerError, Code: "InternalFailure", Message: "internal error"}
}

// WriteError answers e as <ErrorResponse><Error><Type/><Code/><Message/></Error>
// <RequestId/></ErrorResponse>, with the status Route 53 uses for e's code (400 unless
// statusOf says otherwise).
func (codec) WriteError(w http.ResponseWriter, _ *http.Request, reqID string, e *awsapi.Error) {
	def := http.StatusBadRequest
	if s, ok := statusOf[e.Code]; ok {
		def = s
	}
	status := e.StatusOr(def)
	var resp errorResponse
	resp.Error.Type = awsapi.Fault(status)
	resp.Error.Code, resp.Error.Message, resp.RequestID = e.Code, e.Message, reqID
	writeXML(w, status, resp)
}

func writeXML(w http.ResponseWriter, status int, v any) {
	body, err := xml.Marshal(v)
	awsapi.Write(w, status, "text/xml", append([]byte(xml.Header), body...), err)
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

func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// zoneID accepts an id with or without the /hostedzone/ prefix the API returns.
func zoneID(r *http.Request) string {
	return strings.TrimPrefix(strings.TrimPrefix(r.PathValue("id"), "/"), "hostedzone/")
}
