package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// Zone is one hosted zone a provider writes to.
type Zone struct {
	// ID is the provider's zone id, without any "/hostedzone/" prefix.
	ID string
	// Name is the zone apex, lower case, without the trailing dot.
	Name string
	// Private is true for a zone only visible inside its networks (a Route 53 private zone).
	Private bool
}

// String renders "example.com (Z123)" for messages and logs.
func (z Zone) String() string { return z.Name + " (" + z.ID + ")" }

// Holding returns the zones among zones with the longest name that holds name (a
// normalised name), in their order: more than one when a public and a private zone share
// that name.
func Holding(zones []Zone, name string) []Zone {
	var out []Zone
	for _, z := range zones {
		if !endpoint.InDomain(name, z.Name) {
			continue
		}
		switch {
		case len(out) == 0 || len(z.Name) > len(out[0].Name):
			out = []Zone{z}
		case len(z.Name) == len(out[0].Name):
			out = append(out, z)
		}
	}
	return out
}

// Provider reads and writes the records of a DNS service. Every method is part of the
// interface, so no caller probes for an optional one: a back end without its own
// AdjustEndpoints or DryRun embeds BaseProvider and gets the defaults.
type Provider interface {
	// Zones lists the zones this provider may manage, after its filters.
	Zones(ctx context.Context) ([]Zone, error)
	// Records lists every record set of zone.
	Records(ctx context.Context, zone Zone) ([]*endpoint.Endpoint, error)
	// Apply writes batch to zone in one atomic request, in order. A batch the service
	// refuses as invalid yields an error wrapping *RejectedError.
	Apply(ctx context.Context, zone Zone, batch changes.Batch) error
	// Limits says how large one batch may be; the planner splits batches to fit.
	Limits() changes.Limits
	// AdjustEndpoints returns desired in the form the service stores it (Route 53 writes
	// an alias CNAME as an alias A), so that the planner compares like with like. It does
	// not modify its input.
	AdjustEndpoints(desired []*endpoint.Endpoint) []*endpoint.Endpoint
	// DryRun renders, without sending it, exactly the request Apply would send for batch,
	// in the provider's own format (safety rule 5: every write has a dry-run). A provider
	// that cannot returns an error wrapping ErrNoDryRun, never an empty rendering.
	DryRun(ctx context.Context, zone Zone, batch changes.Batch) ([]byte, error)
}

// ErrNoDryRun is DryRun's error from a provider that cannot render a batch without sending
// it: a dry run through it fails rather than show nothing.
var ErrNoDryRun = errors.New("the provider cannot render a batch without sending it")

// BaseProvider gives a Provider the defaults of its optional behaviour; embed it and
// implement the rest. Its zero value is ready to use.
type BaseProvider struct{}

// AdjustEndpoints returns desired unchanged: the service stores records as sources state
// them.
func (BaseProvider) AdjustEndpoints(desired []*endpoint.Endpoint) []*endpoint.Endpoint {
	return desired
}

// DryRun fails with an error wrapping ErrNoDryRun and naming zone.
func (BaseProvider) DryRun(_ context.Context, zone Zone, _ changes.Batch) ([]byte, error) {
	return nil, fmt.Errorf("zone %s: dry run: %w", zone, ErrNoDryRun)
}

// RejectedError is a batch the DNS service refused as invalid (Route 53's
// InvalidChangeBatch or InvalidInput). Nothing of the batch was applied, and sending it
// again will fail the same way: callers must not retry it unchanged.
type RejectedError struct {
	// Zone is the zone the batch was for.
	Zone Zone
	// Code is the service's error code, e.g. "InvalidChangeBatch".
	Code string
	// Messages are the service's reasons, one per rejected change where it says so.
	Messages []string
	// Err is the underlying service error.
	Err error
}

// Error renders "change batch rejected: InvalidChangeBatch: reason; reason".
func (e *RejectedError) Error() string {
	return fmt.Sprintf("change batch rejected: %s: %s", e.Code, strings.Join(e.Messages, "; "))
}

// Unwrap returns the service error.
func (e *RejectedError) Unwrap() error { return e.Err }

// InvalidChangeError is a change the provider cannot turn into a request at all (e.g. an
// alias whose target no known zone holds). Nothing of its batch was sent; the batch
// without that change may well be accepted.
type InvalidChangeError struct {
	// Zone is the zone the batch was for.
	Zone Zone
	// Index is the change's position in its batch, from 0.
	Index int
	// Change is the change itself.
	Change changes.Change
	// Err says what is wrong with it.
	Err error
}

// Error renders "change 3 (CREATE www.example.com A): reason".
func (e *InvalidChangeError) Error() string {
	what := "?"
	if e.Change.Endpoint != nil {
		what = e.Change.Endpoint.Key().String()
	}
	return fmt.Sprintf("change %d (%s %s): %v", e.Index+1, e.Change.Action, what, e.Err)
}

// Unwrap returns the reason.
func (e *InvalidChangeError) Unwrap() error { return e.Err }
