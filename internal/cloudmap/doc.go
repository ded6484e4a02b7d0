// Package cloudmap publishes a cluster's endpoints as AWS Cloud Map instances, the way the
// controller publishes DNS records: each ready endpoint of an annotated Service becomes an
// instance carrying its address, port, the cluster's id, a version and the Service's own
// attributes, in a Cloud Map service that other clusters and registrars may share.
//
// Ownership is per instance: every instance crossfade registers carries the attribute
// AttrOwner with this controller's owner id, and crossfade never registers over,
// updates or deregisters an instance that does not carry it — another cluster's, or one
// another registrar wrote. When the id crossfade would give an endpoint is held by such an
// instance, it refuses and reports a conflict instead.
//
// The pure parts — which instances a Service and its EndpointSlices ask for (Desire), an
// endpoint's instance id (InstanceID), and what to write given what a service holds
// (Diff) — have no I/O. Publisher adds the Cloud Map calls: it caches namespaces,
// services and each service's instances between reconciles, so that it calls nothing
// while nothing changes, and reads an instance again right before every write so that a
// stale cache can delay a write but never make a wrong one.
package cloudmap
