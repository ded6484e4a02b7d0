// Package ec2api serves the subset of the Amazon EC2 query API (Version 2016-11-15) that
// the AWS Load Balancer Controller calls to bind pods and nodes to target groups, over the
// sandbox's EC2 store: DescribeVpcs, DescribeSubnets, DescribeSecurityGroups,
// DescribeNetworkInterfaces, DescribeInstances, AuthorizeSecurityGroupIngress and
// RevokeSecurityGroupIngress. It speaks EC2's own dialect of the query protocol, as the
// AWS CLI and aws-sdk-go-v2 send it: POST / with Action=…&Version=2016-11-15, lists as
// Name.N (GroupId.1, Filter.1.Value.1, IpPermissions.1.IpRanges.1.CidrIp), answered in
// XML in the 2016-11-15 namespace with a <requestId>, errors as
// <Response><Errors><Error>…</Error></Errors><RequestID>…</RequestID></Response>. Every
// other EC2 action answers UnsupportedOperation; a name that is no EC2 action answers
// InvalidAction, as EC2 does.
package ec2api

import (
	"bytes"
	_ "embed"
	"encoding/xml"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
	"github.com/crossfade-io/crossfade/internal/sandbox/ec2"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
)

// Version is the API version the handler serves, the query protocol's Version parameter.
const Version = "2016-11-15"

// Namespace is the XML namespace of every response.
const Namespace = "http://ec2.amazonaws.com/doc/2016-11-15/"

// DefaultMaxBodyBytes bounds a request body: a describe call with a few hundred pod IPs in
// a filter is tens of KiB.
const DefaultMaxBodyBytes = 1 << 20

// CodeUnsupported is the code of the answer to an action the sandbox does not serve.
const CodeUnsupported = "UnsupportedOperation"

// CodeInvalidAction is the code of the answer to an action EC2 does not have.
const CodeInvalidAction = "InvalidAction"

// actionList is every action of the EC2 API, one a line: the operations of aws-sdk-go-v2's
// EC2 client (TestActionsAreTheSDKs keeps it in step).
//
//go:embed actions.txt
var actionList string

// actions is actionList as a set.
var actions = func() map[string]bool {
	m := map[string]bool{}
	for _, a := range strings.Fields(actionList) {
		m[a] = true
	}
	return m
}()

// Config holds what the API serves from and reports to.
type Config struct {
	Store  *ec2.Store
	Faults *faults.Injector // nil: no faults
	// Registerer receives the call metrics every sandbox API shares (awsapi.Options), EC2
	// calls counted by action; nil: not registered.
	Registerer   prometheus.Registerer
	MaxBodyBytes int64
	Logger       *slog.Logger
}

// API is the EC2 HTTP handler.
type API struct {
	cfg   Config
	chain *awsapi.Chain
	ops   map[string]handler
}

// handler serves one action: it reads the request and returns the XML result, an element
// named <Action>Response, or an error answered in EC2's error shape.
type handler func(p params) (any, error)

// New builds the handler and registers, or joins, the shared metrics.
func New(cfg Config) (*API, error) {
	if cfg.Store == nil {
		return nil, errors.New("ec2api: no store")
	}
	a := &API{cfg: cfg}
	chain, err := awsapi.NewChain("ec2", codec{a}, awsapi.Options{Faults: cfg.Faults, Registerer: cfg.Registerer,
		MaxBodyBytes: cfg.MaxBodyBytes, DefaultMaxBodyBytes: DefaultMaxBodyBytes, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	a.chain = chain
	a.ops = a.operations()
	return a, nil
}

// ServeHTTP serves one query-protocol request.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.chain.ServeHTTP(w, r) }

// Actions are the actions the API serves, sorted.
func (a *API) Actions() []string {
	out := make([]string, 0, len(a.ops))
	for op := range a.ops {
		out = append(out, op)
	}
	return sortStrings(out)
}

// codec is EC2's query protocol: the form's Action names the operation, results and errors
// are XML.
type codec struct{ a *API }

// Decode reads the form (the chain has bounded the body), the Action and the Version.
func (c codec) Decode(r *http.Request, reqID string) (string, awsapi.Handler, error) {
	if err := r.ParseForm(); err != nil {
		return "", nil, &awsapi.Error{Code: "MalformedQueryString", Message: "The request body could not be read as a form: " + err.Error()}
	}
	action := r.Form.Get("Action")
	if action == "" {
		return "", nil, &awsapi.Error{Code: "MissingAction", Message: "The request must contain the parameter Action."}
	}
	h, ok := c.a.ops[action]
	if !ok && !actions[action] {
		// Not an EC2 action at all: EC2's answer, which tells a client it has the wrong
		// endpoint rather than an unserved call.
		return "", nil, &awsapi.Error{Code: CodeInvalidAction, Message: fmt.Sprintf("The action %s is not valid for this web service.", action)}
	}
	if !ok {
		return "", nil, &awsapi.Error{Code: CodeUnsupported, Message: fmt.Sprintf(
			"%s is not supported by the crossfade sandbox: its EC2 serves %s, the calls the AWS Load Balancer Controller makes to bind targets (see internal/sandbox/ec2api)",
			action, strings.Join(c.a.Actions(), ", "))}
	}
	if v := r.Form.Get("Version"); v != Version {
		// EC2's answer to a version it does not have.
		return action, nil, &awsapi.Error{Code: "NoSuchVersion", Message: fmt.Sprintf("The requested version (%s) of service AmazonEC2 does not exist; the crossfade sandbox serves %s", v, Version)}
	}
	return action, func(w http.ResponseWriter, r *http.Request) error {
		p := newParams(r.Form)
		if p.str("DryRun") == "true" {
			// EC2 answers a permitted dry run with this error, status 412.
			return &awsapi.Error{Status: http.StatusPreconditionFailed, Code: "DryRunOperation", Message: "Request would have succeeded, but DryRun flag is set."}
		}
		out, err := h(p)
		if err != nil {
			return err
		}
		writeResult(w, action, reqID, out)
		return nil
	}, nil
}

// Internal is EC2's InternalError.
func (codec) Internal() *awsapi.Error {
	return &awsapi.Error{Status: http.StatusInternalServerError, Code: "InternalError", Message: "An internal error has occurred"}
}

type errorResponse struct {
	XMLName xml.Name `xml:"Response"`
	Errors  struct {
		Error struct {
			Code    string
			Message string
		}
	}
	RequestID string
}

// WriteError answers e in EC2's error shape; every EC2 client error is a 400.
func (codec) WriteError(w http.ResponseWriter, _ *http.Request, reqID string, e *awsapi.Error) {
	status := e.StatusOr(http.StatusBadRequest)
	resp := errorResponse{RequestID: reqID}
	resp.Errors.Error.Code, resp.Errors.Error.Message = e.Code, e.Message
	body, err := xml.Marshal(resp)
	awsapi.Write(w, status, "text/xml;charset=UTF-8", append([]byte(xml.Header), body...), err)
}

// writeResult writes <ActionResponse xmlns=…><requestId>…</requestId>…</ActionResponse>:
// EC2 puts the result's fields directly in the response element, after the request id.
func writeResult(w http.ResponseWriter, action, reqID string, result any) {
	var inner bytes.Buffer
	err := xml.NewEncoder(&inner).EncodeElement(result, xml.StartElement{Name: xml.Name{Local: "r"}})
	// The encoder needs an element around the fields: its exact first and last tags go.
	fields := bytes.TrimSuffix(bytes.TrimPrefix(inner.Bytes(), []byte("<r>")), []byte("</r>"))
	var b bytes.Buffer
	b.WriteString(xml.Header)
	fmt.Fprintf(&b, "<%sResponse xmlns=%q><requestId>", action, Namespace)
	err = errors.Join(err, xml.EscapeText(&b, []byte(reqID)))
	b.WriteString("</requestId>")
	b.Write(fields)
	fmt.Fprintf(&b, "</%sResponse>", action)
	awsapi.Write(w, http.StatusOK, "text/xml;charset=UTF-8", b.Bytes(), err)
}
