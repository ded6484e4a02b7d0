package awsapi

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/crossfade-io/crossfade/internal/sandbox/apicalls"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
)

func TestRegion(t *testing.T) {
	for _, tc := range []struct {
		name, auth, want string
	}{
		{"signed", "AWS4-HMAC-SHA256 Credential=AKID/20240101/eu-west-1/elasticloadbalancing/aws4_request, SignedHeaders=host, Signature=x", "eu-west-1"},
		{"unsigned", "", "us-east-1"},
		{"no region in the scope", "AWS4-HMAC-SHA256 Credential=AKID/20240101//monitoring/aws4_request", "us-east-1"},
		{"short scope", "AWS4-HMAC-SHA256 Credential=AKID/20240101", "us-east-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			if got := Region(r, "us-east-1"); got != tc.want {
				t.Fatalf("Region(%q) = %q, want %q", tc.auth, got, tc.want)
			}
		})
	}
}

func TestRequestID(t *testing.T) {
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	a, b := RequestID(), RequestID()
	if !uuid.MatchString(a) || a == b {
		t.Fatalf("request ids %q, %q: want two different UUIDs", a, b)
	}
}

func TestErrorWith(t *testing.T) {
	e := Errorf("NamespaceAlreadyExists", "exists: %s", "ns-1").With("NamespaceId", "ns-1")
	if e.Error() != "NamespaceAlreadyExists: exists: ns-1" || e.Fields["NamespaceId"] != "ns-1" || e.StatusOr(400) != 400 {
		t.Fatalf("error %+v", e)
	}
	if (&Error{Status: 409}).StatusOr(400) != 409 {
		t.Fatal("an error's own status must win over the codec's default")
	}
}

// testCodec names the operation by the path and writes errors as "code: message".
type testCodec struct{ h Handler }

func (c testCodec) Decode(r *http.Request, _ string) (string, Handler, error) {
	if r.URL.Path == "/refuse-unknown" {
		return "", nil, &Error{Code: "InvalidAction", Message: "no such operation"}
	}
	return strings.TrimPrefix(r.URL.Path, "/"), c.h, nil
}

func (testCodec) WriteError(w http.ResponseWriter, _ *http.Request, _ string, e *Error) {
	w.WriteHeader(e.StatusOr(http.StatusBadRequest))
	_, _ = io.WriteString(w, e.Code+": "+e.Message)
}

func (testCodec) Internal() *Error {
	return &Error{Status: http.StatusInternalServerError, Code: "InternalFailure", Message: "internal error"}
}

// TestChain serves requests through the chain with each fault and checks what the handler
// saw (did the operation run?), what the client got, and what was counted. A refused
// request under a commit-then-lose fault must be answered with its own refusal: nothing took
// effect that a lost response could hide.
func TestChain(t *testing.T) {
	for _, tc := range []struct {
		name    string
		faults  faults.Config
		path    string
		refuse  bool   // the handler refuses the request
		runs    int    // times the handler ran
		status  int    // 0: the connection is dropped
		body    string // the answer's body
		counted string // "op result"
	}{
		{"ok", faults.Config{}, "/Put", false, 1, 200, "done", "Put ok"},
		{"refused", faults.Config{}, "/Put", true, 1, 400, "Invalid: bad value", "Put Invalid"},
		{"unknown operation", faults.Config{}, "/refuse-unknown", false, 0, 400, "InvalidAction: no such operation", "Unknown InvalidAction"},
		{"throttled", faults.Config{ThrottleRate: 1}, "/Put", false, 0, 400, "Throttling: Rate exceeded", "Put Throttling"},
		{"other operation", faults.Config{ThrottleRate: 1, Operations: []string{"Get"}}, "/Put", false, 1, 200, "done", "Put ok"},
		{"fail after commit", faults.Config{CommitThenFailRate: 1}, "/Put", false, 1, 500, "InternalFailure: " + faults.ServerError.Message, "Put InternalFailure"},
		{"fail after a refusal", faults.Config{CommitThenFailRate: 1}, "/Put", true, 1, 400, "Invalid: bad value", "Put Invalid"},
		{"drop after commit", faults.Config{CommitThenDropRate: 1}, "/Put", false, 1, 0, "", "Put ConnectionDropped"},
		{"drop after a refusal", faults.Config{CommitThenDropRate: 1}, "/Put", true, 1, 400, "Invalid: bad value", "Put Invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inj, err := faults.New(tc.faults)
			if err != nil {
				t.Fatal(err)
			}
			calls, err := apicalls.New(nil)
			if err != nil {
				t.Fatal(err)
			}
			var runs atomic.Int32
			h := func(w http.ResponseWriter, r *http.Request) error {
				runs.Add(1)
				if tc.refuse {
					return Errorf("Invalid", "bad value")
				}
				_, _ = io.WriteString(w, "done")
				return nil
			}
			c := &Chain{Service: "test", Codec: testCodec{h}, Calls: calls, Faults: inj, MaxBodyBytes: 1 << 10}
			srv := httptest.NewServer(c)
			defer srv.Close()
			resp, err := http.Post(srv.URL+tc.path, "text/plain", strings.NewReader("x"))
			if tc.status == 0 {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("got HTTP %d, want the connection dropped", resp.StatusCode)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.status || string(body) != tc.body || resp.Header.Get("x-amzn-RequestId") == "" {
					t.Fatalf("HTTP %d %q (request id %q), want %d %q with a request id", resp.StatusCode, body, resp.Header.Get("x-amzn-RequestId"), tc.status, tc.body)
				}
			}
			if n := int(runs.Load()); n != tc.runs {
				t.Fatalf("the handler ran %d times, want %d", n, tc.runs)
			}
			op, result, _ := strings.Cut(tc.counted, " ")
			if n := calls.Count(op, result); n != 1 {
				t.Fatalf("counted %v calls of %s with result %s, want 1", n, op, result)
			}
		})
	}
}

// TestChainBodyLimit checks that the chain bounds what a handler can read.
func TestChainBodyLimit(t *testing.T) {
	calls, err := apicalls.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	readErr := make(chan error, 1)
	h := func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.ReadAll(r.Body)
		readErr <- err
		return nil
	}
	c := &Chain{Service: "test", Codec: testCodec{h}, Calls: calls, MaxBodyBytes: 4}
	srv := httptest.NewServer(c)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/Put", "text/plain", strings.NewReader("longer than four bytes"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var mb *http.MaxBytesError
	if err := <-readErr; !errors.As(err, &mb) || mb.Limit != 4 {
		t.Fatalf("reading a 22-byte body under a 4-byte limit: %v, want http.MaxBytesError", err)
	}
}
