// Package elbv2api serves the Elastic Load Balancing v2 query API (Version 2015-12-01) over
// the sandbox's ELBv2 store, as the AWS CLI and aws-sdk-go-v2 speak it: POST / with a form
// body Action=…&Version=2015-12-01 and member.N lists, answered in XML.
package elbv2api

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

	"github.com/crossfade-io/crossfade/internal/sandbox/elb"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
)

// Version is the API version the handler serves, the query protocol's Version parameter.
const Version = "2015-12-01"

// Namespace is the XML namespace of every response.
const Namespace = "http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/"

// DefaultMaxBodyBytes bounds a request body: a rule with five conditions and five target
// groups is a few KiB of form.
const DefaultMaxBodyBytes = 1 << 20

// Config holds what the API serves from and reports to.
type Config struct {
	Store  *elb.Store
	Faults *faults.Injector // nil: no faults
	// Registerer receives the API's metrics. The call counter and latency histogram are
	// the sandbox's shared ones, crossfade_sandbox_api_calls_total and
	// crossfade_sandbox_api_call_duration_seconds: when the Route 53 API has registered
	// them already, ELBv2 calls are counted in the same series, by operation. nil: not
	// registered.
	Registerer   prometheus.Registerer
	MaxBodyBytes int64
	Logger       *slog.Logger
}

// API is the ELBv2 HTTP handler.
type API struct {
	cfg   Config
	calls *apicalls.Metrics
	ops   map[string]handler
	now   func() time.Time
}

// handler serves one operation: it reads the request and returns the XML result body, or
// an error answered in ELBv2's error shape.
type handler func(r *request) (any, error)

// New builds the handler and registers, or joins, the shared metrics.
func New(cfg Config) (*API, error) {
	if cfg.Store == nil {
		return nil, errors.New("elbv2api: no store")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	a := &API{cfg: cfg, now: time.Now}
	calls, err := apicalls.New(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	a.calls = calls
	a.ops = a.operations()
	return a, nil
}

// request is one parsed API call.
type request struct {
	http   *http.Request
	p      params
	region string
}

// unserved are the ELBv2 operations the sandbox does not serve, refused in its own words.
var unserved = func() map[string]bool {
	m := map[string]bool{}
	for _, op := range strings.Fields(`AddListenerCertificates AddTrustStoreRevocations CreateTrustStore
		DeleteSharedTrustStoreAssociation DeleteTrustStore DescribeAccountLimits DescribeCapacityReservation
		DescribeListenerAttributes DescribeListenerCertificates DescribeLoadBalancerAttributes
		DescribeSSLPolicies DescribeTrustStoreAssociations DescribeTrustStoreRevocations DescribeTrustStores
		GetResourcePolicy GetTrustStoreCaCertificatesBundle GetTrustStoreRevocationContent
		ModifyCapacityReservation ModifyIpPools ModifyListenerAttributes ModifyLoadBalancerAttributes
		ModifyTrustStore RemoveListenerCertificates RemoveTrustStoreRevocations SetIpAddressType
		SetSecurityGroups SetSubnets`) {
		m[op] = true
	}
	return m
}()

// resultDropped is the result label of a request whose connection was closed unanswered.
const resultDropped = "ConnectionDropped"

// ServeHTTP serves one query-protocol request.
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
	r.Body = http.MaxBytesReader(w, r.Body, a.cfg.MaxBodyBytes)
	if err := r.ParseForm(); err != nil {
		result = a.writeError(w, op, reqID, &elb.Error{Code: "MalformedQueryString", Message: "The request body could not be read as a form: " + err.Error()})
		return
	}
	action := r.Form.Get("Action")
	h, ok := a.ops[action]
	if !ok {
		msg := fmt.Sprintf("The action %s is not valid for this web service.", action)
		if action == "" {
			msg = "The request must contain the parameter Action."
		} else if unserved[action] {
			msg = fmt.Sprintf("The action %s is not supported by the crossfade sandbox: it serves the ELBv2 load balancer, target group, target, listener, rule and tag operations a weighted cutover uses (see internal/sandbox/elbv2api)", action)
		}
		result = a.writeError(w, op, reqID, &elb.Error{Code: "InvalidAction", Message: msg})
		return
	}
	op = action
	if v := r.Form.Get("Version"); v != Version {
		result = a.writeError(w, op, reqID, &elb.Error{Code: "InvalidAction", Message: fmt.Sprintf("Version %q: the crossfade sandbox serves ELBv2 version %s only", v, Version)})
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
		result = a.writeFault(w, op, reqID, *d.Fault)
		return
	}
	req := &request{http: r, p: params{v: r.Form}, region: regionOf(r)}
	out, err := h(req)
	if err != nil {
		result = a.writeError(w, op, reqID, err)
		return
	}
	if d.After != faults.Respond {
		// The operation took effect; the injected fault loses its answer.
		a.cfg.Logger.Info("elbv2 api: response lost after the operation took effect (injected fault)", "operation", op, "request_id", reqID, "fault", d.After.String())
		if d.After == faults.FailAfterCommit {
			result = a.writeFault(w, op, reqID, faults.ServerError)
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
	writeResult(w, op, reqID, out)
}

// regionOf reads the region a client signed the request for, from the credential scope of
// its SigV4 Authorization header (Credential=AKID/20240101/us-east-1/elasticloadbalancing/
// aws4_request); an unsigned request is in elb.DefaultRegion.
func regionOf(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	_, cred, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return elb.DefaultRegion
	}
	cred, _, _ = strings.Cut(cred, ",")
	if f := strings.Split(cred, "/"); len(f) >= 3 && f[2] != "" {
		return f[2]
	}
	return elb.DefaultRegion
}

type errorResponse struct {
	XMLName xml.Name `xml:"ErrorResponse"`
	Xmlns   string   `xml:"xmlns,attr"`
	Error   struct {
		Type    string
		Code    string
		Message string
	}
	RequestID string `xml:"RequestId"`
}

func (a *API) writeFault(w http.ResponseWriter, op, reqID string, f faults.Fault) string {
	return a.writeErrorStatus(w, op, reqID, f.Status, f.Code, f.Message)
}

// writeError answers err in ELBv2's error shape and returns the metrics result label.
func (a *API) writeError(w http.ResponseWriter, op, reqID string, err error) string {
	var ee *elb.Error
	if errors.As(err, &ee) {
		// Every ELBv2 client error is a 400.
		return a.writeErrorStatus(w, op, reqID, http.StatusBadRequest, ee.Code, ee.Message)
	}
	a.cfg.Logger.Error("elbv2 api: internal error", "operation", op, "err", err)
	return a.writeErrorStatus(w, op, reqID, http.StatusInternalServerError, faults.ServerError.Code, faults.ServerError.Message)
}

func (a *API) writeErrorStatus(w http.ResponseWriter, op, reqID string, status int, code, msg string) string {
	resp := errorResponse{Xmlns: Namespace, RequestID: reqID}
	resp.Error.Type = "Sender"
	if status >= 500 {
		resp.Error.Type = "Receiver"
	}
	resp.Error.Code, resp.Error.Message = code, msg
	a.cfg.Logger.Debug("elbv2 api: error", "operation", op, "code", code, "message", msg)
	body, err := xml.Marshal(resp)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return code
	}
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, xml.Header)
	_, _ = w.Write(body)
	return code
}

// writeResult writes <OpResponse><OpResult>…</OpResult><ResponseMetadata/></OpResponse>.
func writeResult(w http.ResponseWriter, op, reqID string, result any) {
	var b strings.Builder
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	start := xml.StartElement{Name: xml.Name{Local: op + "Response"}, Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns"}, Value: Namespace}}}
	meta := struct {
		RequestID string `xml:"RequestId"`
	}{reqID}
	err := errors.Join(
		enc.EncodeToken(start),
		enc.EncodeElement(result, xml.StartElement{Name: xml.Name{Local: op + "Result"}}),
		enc.EncodeElement(meta, xml.StartElement{Name: xml.Name{Local: "ResponseMetadata"}}),
		enc.EncodeToken(start.End()),
		enc.Flush(),
	)
	if err != nil {
		http.Error(w, "encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, b.String())
}

func requestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
