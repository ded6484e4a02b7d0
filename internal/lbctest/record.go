package lbctest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Call is one AWS API call a Recorder saw.
type Call struct {
	// Service is the signing name of the request's SigV4 credential scope
	// (elasticloadbalancing, ec2, sts …), "" if it was not signed.
	Service string
	// Operation is the query protocol's Action, the JSON protocol's X-Amz-Target
	// operation, or "METHOD path" for anything else.
	Operation string
	// Params are the query protocol's parameters other than Action and Version (nil for
	// other protocols): what an API must understand of the call.
	Params url.Values
	// Status is the HTTP status of the answer.
	Status int
	// Error is the AWS error code of an answer ≥ 400 ("" if none could be read); Message
	// its message.
	Error, Message string
}

// String is "service Operation: ok" or "service Operation: Code (status)".
func (c Call) String() string {
	if c.Status < 400 {
		return c.Service + " " + c.Operation + ": ok"
	}
	return fmt.Sprintf("%s %s: %s (%d)", c.Service, c.Operation, c.Error, c.Status)
}

// Recorder is a loopback HTTP proxy in front of an AWS API endpoint that records every call
// passing through it, with its outcome: the controller's AWS calls, in order, whichever
// API they are for (the sandbox counts only the calls of the APIs it serves).
type Recorder struct {
	// URL is the proxy's address, to give the controller as its endpoint.
	URL string

	mu    sync.Mutex
	calls []Call
}

// NewRecorder starts a Recorder forwarding to target (a loopback URL); it stops when t ends.
func NewRecorder(t testing.TB, target string) *Recorder {
	t.Helper()
	if err := checkEndpoint(target); err != nil {
		t.Fatalf("lbctest: recorder target: %v", err)
	}
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("lbctest: recorder target %q: %v", target, err)
	}
	r := &Recorder{}
	transport := &http.Transport{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.Transport = &recordingTransport{next: transport, rec: r}
	srv := httptest.NewServer(proxy)
	t.Cleanup(func() {
		srv.Close()
		transport.CloseIdleConnections()
	})
	r.URL = srv.URL
	return r
}

// Calls returns the calls seen so far, in the order they were answered.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// Summary counts the calls seen so far by their String (service, operation, outcome).
func (r *Recorder) Summary() map[string]int {
	out := map[string]int{}
	for _, c := range r.Calls() {
		out[c.String()]++
	}
	return out
}

// Failed returns the calls answered with an error.
func (r *Recorder) Failed() []Call {
	var out []Call
	for _, c := range r.Calls() {
		if c.Status >= 400 {
			out = append(out, c)
		}
	}
	return out
}

func (r *Recorder) add(c Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

// recordingTransport records each round trip it forwards.
type recordingTransport struct {
	next http.RoundTripper
	rec  *Recorder
}

// maxRecordedBody bounds what is buffered of a request or error body to read its operation
// or error code.
const maxRecordedBody = 4 << 20

func (rt *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := Call{Service: signingName(req.Header.Get("Authorization"))}
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(io.LimitReader(req.Body, maxRecordedBody))
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("lbctest recorder: reading the request: %w", err)
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	c.Operation = operation(req, body)
	c.Params = queryParams(req, body)
	resp, err := rt.next.RoundTrip(req)
	if err != nil {
		c.Status, c.Error, c.Message = http.StatusBadGateway, "RoundTripError", err.Error()
		rt.rec.add(c)
		return nil, err
	}
	c.Status = resp.StatusCode
	if resp.StatusCode >= 400 {
		data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxRecordedBody))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(data))
		if rerr == nil {
			c.Error, c.Message = errorCode(data)
		}
	}
	rt.rec.add(c)
	return resp, nil
}

// credentialScope finds the service of a SigV4 Authorization header's credential scope:
// Credential=AKID/DATE/REGION/SERVICE/aws4_request.
var credentialScope = regexp.MustCompile(`Credential=[^/,\s]+/[^/]+/[^/]+/([^/]+)/aws4_request`)

func signingName(auth string) string {
	if m := credentialScope.FindStringSubmatch(auth); m != nil {
		return m[1]
	}
	return ""
}

// operation names the call in req (with its body already read).
func operation(req *http.Request, body []byte) string {
	if t := req.Header.Get("X-Amz-Target"); t != "" {
		_, op, _ := strings.Cut(t, ".")
		return op
	}
	if a := req.URL.Query().Get("Action"); a != "" {
		return a
	}
	if strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		if form, err := url.ParseQuery(string(body)); err == nil && form.Get("Action") != "" {
			return form.Get("Action")
		}
	}
	return req.Method + " " + req.URL.Path
}

// queryParams are the parameters of a query-protocol call (in its form body or URL) but
// Action and Version; nil if it is not one.
func queryParams(req *http.Request, body []byte) url.Values {
	var form url.Values
	if strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		form, _ = url.ParseQuery(string(body))
	}
	if form.Get("Action") == "" {
		form = req.URL.Query()
	}
	if form.Get("Action") == "" {
		return nil
	}
	form.Del("Action")
	form.Del("Version")
	return form
}

// xmlCode and xmlMessage find the error of an XML error body (query and REST-XML protocols;
// EC2's <Response><Errors><Error> as ELBv2's <ErrorResponse><Error>).
var (
	xmlCode    = regexp.MustCompile(`<Code>([^<]*)</Code>`)
	xmlMessage = regexp.MustCompile(`<Message>([^<]*)</Message>`)
)

// errorCode reads the AWS error code and message of an error body, XML or JSON.
func errorCode(body []byte) (code, message string) {
	if m := xmlCode.FindSubmatch(body); m != nil {
		code = html.UnescapeString(string(m[1]))
		if mm := xmlMessage.FindSubmatch(body); mm != nil {
			message = html.UnescapeString(string(mm[1]))
		}
		return code, message
	}
	var j struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
		Msg     string `json:"Message"`
	}
	if json.Unmarshal(body, &j) == nil && j.Type != "" {
		_, code, _ = strings.Cut(j.Type, "#")
		if code == "" {
			code = j.Type
		}
		return code, j.Message + j.Msg
	}
	return "", strings.TrimSpace(string(body[:min(len(body), 200)]))
}
