// Package faults decides, per API request, whether the sandbox answers as a struggling
// AWS API would (Route 53, ELBv2, CloudWatch and Cloud Map share one injector): throttled,
// "prior request not complete", a server error, late, capped at an account's request rate,
// or with the response lost after the request took effect (for a CloudWatch read, which
// commits nothing, simply lost).
// Tests and benchmarks set it at start-up or at run time.
package faults

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Config says which faults to inject. Rates are fractions of requests, 0 to 1.
type Config struct {
	// ThrottleRate answers HTTP 400 Throttling "Rate exceeded".
	ThrottleRate float64 `json:"throttleRate,omitempty"`
	// PriorRequestRate answers HTTP 400 PriorRequestNotComplete.
	PriorRequestRate float64 `json:"priorRequestRate,omitempty"`
	// ServerErrorRate answers HTTP 500 InternalFailure.
	ServerErrorRate float64 `json:"serverErrorRate,omitempty"`
	// CommitThenFailRate serves the request (a change batch commits: it is applied and its
	// GetChange id exists) and then answers HTTP 500 InternalFailure in place of the result:
	// the lost response a client must tell apart from a failed write. A request the sandbox
	// refuses is answered as usual, since nothing took effect.
	CommitThenFailRate float64 `json:"commitThenFailRate,omitempty"`
	// CommitThenDropRate serves the request like CommitThenFailRate and then closes the
	// connection without writing a byte, as a network failure after the commit would.
	CommitThenDropRate float64 `json:"commitThenDropRate,omitempty"`
	// Latency is added to a LatencyRate fraction of requests (all of them if LatencyRate is 0).
	Latency     Duration `json:"latency,omitempty"`
	LatencyRate float64  `json:"latencyRate,omitempty"`
	// RequestsPerSecond caps the accepted request rate, as Route 53 caps an account
	// (historically 5/s); requests over the cap are throttled. 0 means no cap.
	RequestsPerSecond float64 `json:"requestsPerSecond,omitempty"`
	// Burst is the token bucket's size for RequestsPerSecond; 0 means 1.
	Burst int `json:"burst,omitempty"`
	// Operations limits the faults to these API operations; empty means every operation.
	Operations []string `json:"operations,omitempty"`
}

// Duration is a time.Duration that reads and writes JSON as "250ms".
type Duration time.Duration

// MarshalJSON writes the duration as text.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "250ms" or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("latency: want a duration like \"250ms\", got %s", b)
		}
		*d = Duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("latency %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}

// Validate names the first field that is out of range.
func (c Config) Validate() error {
	for _, r := range []struct {
		name string
		v    float64
	}{{"throttleRate", c.ThrottleRate}, {"priorRequestRate", c.PriorRequestRate},
		{"serverErrorRate", c.ServerErrorRate}, {"commitThenFailRate", c.CommitThenFailRate},
		{"commitThenDropRate", c.CommitThenDropRate}, {"latencyRate", c.LatencyRate}} {
		if r.v < 0 || r.v > 1 {
			return fmt.Errorf("faults: %s %v: want a fraction between 0 and 1", r.name, r.v)
		}
	}
	if c.RequestsPerSecond < 0 {
		return fmt.Errorf("faults: requestsPerSecond %v: want 0 (no cap) or more", c.RequestsPerSecond)
	}
	if c.Burst < 0 {
		return fmt.Errorf("faults: burst %d: want 0 or more", c.Burst)
	}
	if c.Latency < 0 {
		return fmt.Errorf("faults: latency %v: want 0 or more", time.Duration(c.Latency))
	}
	return nil
}

// Fault is an injected error response.
type Fault struct {
	Status  int
	Code    string
	Message string
}

// AfterCommit is what becomes of a request's response once the request has been served.
type AfterCommit int

// What becomes of a served request's response.
const (
	// Respond answers with the result, as normal.
	Respond AfterCommit = iota
	// FailAfterCommit answers ServerError in place of the result.
	FailAfterCommit
	// DropAfterCommit closes the connection without answering.
	DropAfterCommit
)

// String names the outcome as logs show it.
func (a AfterCommit) String() string {
	switch a {
	case Respond:
		return "respond"
	case FailAfterCommit:
		return "fail-after-commit"
	case DropAfterCommit:
		return "drop-after-commit"
	default:
		return fmt.Sprintf("AfterCommit(%d)", int(a))
	}
}

// ServerError is Route 53's answer to a request that failed on its side.
var ServerError = Fault{Status: 500, Code: "InternalFailure", Message: "The request processing has failed because of an unknown error, exception or failure."}

// Decision is what to do with one request.
type Decision struct {
	Delay time.Duration
	Fault *Fault // nil: serve the request
	// After applies when Fault is nil: what to do with the response once the request has
	// been served.
	After AfterCommit
}

// Injector holds the current configuration; safe for concurrent use.
type Injector struct {
	mu      sync.Mutex
	cfg     Config
	limiter *rate.Limiter
}

// New returns an injector with cfg, which must be valid.
func New(cfg Config) (*Injector, error) {
	in := &Injector{}
	if err := in.Set(cfg); err != nil {
		return nil, err
	}
	return in, nil
}

// Set replaces the configuration.
func (in *Injector) Set(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.cfg = cfg
	in.limiter = nil
	if cfg.RequestsPerSecond > 0 {
		in.limiter = rate.NewLimiter(rate.Limit(cfg.RequestsPerSecond), max(cfg.Burst, 1))
	}
	return nil
}

// Config returns the current configuration.
func (in *Injector) Config() Config {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.cfg
}

// Throttled is the fault Route 53 answers when an account goes over its rate.
var Throttled = Fault{Status: 400, Code: "Throttling", Message: "Rate exceeded"}

// Decide draws the faults for one request of operation op.
func (in *Injector) Decide(op string) Decision {
	in.mu.Lock()
	defer in.mu.Unlock()
	c := in.cfg
	if len(c.Operations) > 0 && !slices.Contains(c.Operations, op) {
		return Decision{}
	}
	var d Decision
	if c.Latency > 0 && (c.LatencyRate == 0 || rand.Float64() < c.LatencyRate) {
		d.Delay = time.Duration(c.Latency)
	}
	switch {
	case in.limiter != nil && !in.limiter.Allow():
		d.Fault = &Throttled
	case hit(c.ThrottleRate):
		d.Fault = &Throttled
	case hit(c.PriorRequestRate):
		d.Fault = &Fault{Status: 400, Code: "PriorRequestNotComplete", Message: "The request was rejected because Route 53 was still processing a prior request."}
	case hit(c.ServerErrorRate):
		d.Fault = &ServerError
	case hit(c.CommitThenFailRate):
		d.After = FailAfterCommit
	case hit(c.CommitThenDropRate):
		d.After = DropAfterCommit
	}
	return d
}

func hit(p float64) bool { return p > 0 && rand.Float64() < p }
