package route53

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/aws/smithy-go/middleware"
	"golang.org/x/time/rate"
)

// Pacing defaults: Route 53's account limit since July 2026, a token bucket refilling 10
// requests a second with room for a burst of 50 (see Config.RequestsPerSecond).
const (
	DefaultRequestsPerSecond = 10
	DefaultBurst             = 50
)

// paceLogAfter is the wait for a request slot worth a debug line: a shorter one is the
// bucket doing its job unseen.
const paceLogAfter = time.Second

// NewLimiter is the token bucket that paces Route 53 requests at requestsPerSecond with
// room for burst, with the defaults of Config.RequestsPerSecond and Config.Burst: give the
// same one (Config.Limiter) to every Provider of a process that calls one account, so
// that together they stay within its rate. nil when requestsPerSecond is negative (no
// pacing).
func NewLimiter(requestsPerSecond float64, burst int) *rate.Limiter {
	if requestsPerSecond < 0 {
		return nil
	}
	if requestsPerSecond == 0 {
		requestsPerSecond = DefaultRequestsPerSecond
	}
	if burst == 0 {
		burst = DefaultBurst
	}
	return rate.NewLimiter(rate.Limit(requestsPerSecond), burst)
}

// validatePacing names the pacing field that is out of range.
func (c Config) validatePacing() error {
	if math.IsNaN(c.RequestsPerSecond) || math.IsInf(c.RequestsPerSecond, 0) {
		return fmt.Errorf("route53: requests per second %v: want a number (0 for the default %d, negative for no pacing)", c.RequestsPerSecond, DefaultRequestsPerSecond)
	}
	if c.Burst < 0 {
		return fmt.Errorf("route53: burst %d: want 0 (the default %d) or more", c.Burst, DefaultBurst)
	}
	return nil
}

// limiter is the bucket cfg paces with: its Limiter, else one of the Provider's own; nil
// when pacing is off.
func (c Config) limiter() *rate.Limiter {
	if c.Limiter != nil {
		return c.Limiter
	}
	return NewLimiter(c.RequestsPerSecond, c.Burst)
}

// paceMiddleware takes a token from the bucket before every attempt of every call: it
// sits after the SDK's retry middleware, so a retry is paced like a first attempt, as
// Route 53 counts it.
type paceMiddleware struct {
	lim *rate.Limiter
	log *slog.Logger
}

// ID names the middleware in the SDK's stack.
func (paceMiddleware) ID() string { return "CrossfadePace" }

// HandleFinalize waits for a request slot, as long as ctx allows, then sends the attempt.
func (m paceMiddleware) HandleFinalize(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	start := time.Now()
	if err := m.lim.Wait(ctx); err != nil {
		// rate.Limiter refuses at once a wait the context's deadline would cut short.
		return middleware.FinalizeOutput{}, middleware.Metadata{}, fmt.Errorf("%s: waiting for a request slot (paced at %v requests/s, burst %d): %w",
			middleware.GetOperationName(ctx), float64(m.lim.Limit()), m.lim.Burst(), err)
	}
	if waited := time.Since(start); waited >= paceLogAfter {
		m.log.DebugContext(ctx, "request paced to the account's rate", "operation", middleware.GetOperationName(ctx),
			"waited", waited, "rate", float64(m.lim.Limit()), "burst", m.lim.Burst())
	}
	return next.HandleFinalize(ctx, in)
}

// pace returns the API option adding the pacing middleware after the retries.
func pace(lim *rate.Limiter, log *slog.Logger) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		mw := paceMiddleware{lim: lim, log: log}
		if err := s.Finalize.Insert(mw, "Retry", middleware.After); err != nil {
			// No retry middleware: every call is one attempt, paced all the same.
			return s.Finalize.Add(mw, middleware.Before)
		}
		return nil
	}
}

// logger is the pacing middleware's logger: Config.Logger, as the Provider's own logs.
func (c Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger.With("provider", "route53")
}
