package awsapi

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
)

// Error is an AWS API error as every sandbox API and store returns it: the code clients
// branch on (the SDKs turn it into a typed exception), the message AWS prints, and what
// each protocol's error shape carries besides.
type Error struct {
	// Status is the HTTP status of the answer; 0 leaves it to the API's codec, which knows
	// its service's status for Code (400 for most).
	Status  int
	Code    string
	Message string
	// Fields are extra members of the exception (Cloud Map's NamespaceAlreadyExists carries
	// NamespaceId), which the JSON protocols write beside the message.
	Fields map[string]string
	// Messages holds every rule a request broke when Message joins several (Route 53's
	// InvalidChangeBatch), so that callers need not split the message.
	Messages []string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns the error code with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// With adds the exception member k and returns e.
func (e *Error) With(k, v string) *Error {
	if e.Fields == nil {
		e.Fields = map[string]string{}
	}
	e.Fields[k] = v
	return e
}

// StatusOr returns e's status, or def when e leaves it to the codec.
func (e *Error) StatusOr(def int) int {
	if e.Status != 0 {
		return e.Status
	}
	return def
}

// Fault names the side of the failure the query and REST-XML error shapes carry in their
// Type element: "Receiver" for a 5xx, "Sender" for anything else.
func Fault(status int) string {
	if status >= 500 {
		return "Receiver"
	}
	return "Sender"
}

// RequestID returns a fresh id in the form AWS sends in x-amzn-RequestId, a random UUID.
func RequestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Region reads the region a client signed r for, from the credential scope of its SigV4
// Authorization header (Credential=AKID/20240101/us-east-1/elasticloadbalancing/
// aws4_request, …); an unsigned request, or one whose scope names no region, is in def.
func Region(r *http.Request, def string) string {
	_, cred, ok := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	if !ok {
		return def
	}
	cred, _, _ = strings.Cut(cred, ",")
	if f := strings.Split(cred, "/"); len(f) >= 3 && f[2] != "" {
		return f[2]
	}
	return def
}

// Write answers status with body as contentType. When encoding the body failed (err), it
// answers a plain-text 500 naming the failure instead: a response must never be a
// truncated document.
func Write(w http.ResponseWriter, status int, contentType string, body []byte, err error) {
	if err != nil {
		http.Error(w, "encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
