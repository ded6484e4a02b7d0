// Package endpoint is crossfade's record model: Endpoint, RoutingPolicy and Labels, with
// validation that names the object and field. It does no I/O.
package endpoint
