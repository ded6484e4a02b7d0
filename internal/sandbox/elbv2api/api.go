// Package elbv2api serves the Elastic Load Balancing v2 query API (Version 2015-12-01) over
// the sandbox's ELBv2 store, as the AWS CLI and aws-sdk-go-v2 speak it: POST / with a form
// body Action=…&Version=2015-12-01 and member.N lists, answered in XML.
package elbv2api

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
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
	// Registerer receives the call metrics every sandbox API shares (awsapi.Options), ELBv2
	// calls counted by operation; nil: not registered.
	Registerer   prometheus.Registerer
	MaxBodyBytes int64
	Logger       *slog.Logger
}

// API is the ELBv2 HTTP handler.
type API struct {
	cfg   Config
	chain *awsapi.Chain
	ops   map[string]handler
}

// handler serves one operation: it reads the request and returns the XML result body, or
// an error answered in ELBv2's error shape.
type handler func(r *request) (any, error)

// New builds the handler and registers, or joins, the shared metrics.
func New(cfg Config) (*API, error) {
	if cfg.Store == nil {
		return nil, errors.New("elbv2api: no store")
	}
	a := &API{cfg: cfg}
	chain, err := awsapi.NewChain("elbv2", codec{a}, awsapi.Options{Faults: cfg.Faults, Registerer: cfg.Registerer,
		MaxBodyBytes: cfg.MaxBodyBytes, DefaultMaxBodyBytes: DefaultMaxBodyBytes, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	a.chain = chain
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

// ServeHTTP serves one query-protocol request.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.chain.ServeHTTP(w, r) }

// codec is ELBv2's query protocol: the form's Action names the operation, results and
// errors are XML.
type codec struct{ a *API }

// Decode reads the form (the chain has bounded the body), the Action and the Version.
func (c codec) Decode(r *http.Request, reqID string) (string, awsapi.Handler, error) {
	if err := r.ParseForm(); err != nil {
		return "", nil, &awsapi.Error{Code: "MalformedQueryString", Message: "The request body could not be read as a form: " + err.Error()}
	}
	action := r.Form.Get("Action")
	h, ok := c.a.ops[action]
	if !ok {
		msg := fmt.Sprintf("The action %s is not valid for this web service.", action)
		if action == "" {
			msg = "The request must contain the parameter Action."
		} else if unserved[action] {
			msg = fmt.Sprintf("The action %s is not supported by the crossfade sandbox: it serves the ELBv2 load balancer, target group, target, listener, rule and tag operations a weighted cutover uses (see internal/sandbox/elbv2api)", action)
		}
		return "", nil, &awsapi.Error{Code: "InvalidAction", Message: msg}
	}
	if v := r.Form.Get("Version"); v != Version {
		return action, nil, &awsapi.Error{Code: "InvalidAction", Message: fmt.Sprintf("Version %q: the crossfade sandbox serves ELBv2 version %s only", v, Version)}
	}
	return action, func(w http.ResponseWriter, r *http.Request) error {
		out, err := h(&request{http: r, p: params{v: r.Form}, region: awsapi.Region(r, elb.DefaultRegion)})
		if err != nil {
			return err
		}
		writeResult(w, action, reqID, out)
		return nil
	}, nil
}

// Internal is ELBv2's InternalFailure.
func (codec) Internal() *awsapi.Error {
	f := faults.ServerError
	return &awsapi.Error{Status: f.Status, Code: f.Code, Message: f.Message}
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

// WriteError answers e in ELBv2's error shape; every ELBv2 client error is a 400.
func (codec) WriteError(w http.ResponseWriter, _ *http.Request, reqID string, e *awsapi.Error) {
	status := e.StatusOr(http.StatusBadRequest)
	resp := errorResponse{Xmlns: Namespace, RequestID: reqID}
	resp.Error.Type = awsapi.Fault(status)
	resp.Error.Code, resp.Error.Message = e.Code, e.Message
	body, err := xml.Marshal(resp)
	awsapi.Write(w, status, "text/xml", append([]byte(xml.Header), body...), err)
}

// writeResult writes <OpResponse><OpResult>…</OpResult><ResponseMetadata/></OpResponse>.
func writeResult(w http.ResponseWriter, op, reqID string, result any) {
	var b bytes.Buffer
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
	awsapi.Write(w, http.StatusOK, "text/xml", b.Bytes(), err)
}
