// Package cloudmapstore is the sandbox's AWS Cloud Map (servicediscovery) model: HTTP, private
// DNS and public DNS namespaces, services, instances with custom attributes and custom
// health, and the asynchronous operations that Cloud Map reports through GetOperation,
// validated and refused with Cloud Map's own error codes.
//
// A DNS namespace owns a hosted zone in the sandbox's Route 53 store (Zones), and every
// instance of a service with a DnsConfig is written there as the A, AAAA, SRV or CNAME
// records Cloud Map creates, so the sandbox's DNS server answers them. The state lives in
// buckets of the sandbox's bbolt file; see bolt.go for the layout and dns.go for the order
// of the two stores' writes.
package cloudmapstore

import (
	"maps"
	"slices"
	"time"
)

// Namespace types, as NamespaceType names them.
const (
	NamespaceHTTP       = "HTTP"
	NamespaceDNSPrivate = "DNS_PRIVATE"
	NamespaceDNSPublic  = "DNS_PUBLIC"
)

// Service types, as ServiceType names them: an HTTP service is discovered only through
// DiscoverInstances, a DNS_HTTP one also by DNS.
const (
	ServiceHTTP    = "HTTP"
	ServiceDNSHTTP = "DNS_HTTP"
)

// Routing policies of a service's DNS records.
const (
	RoutingMultivalue = "MULTIVALUE"
	RoutingWeighted   = "WEIGHTED"
)

// Health statuses of an instance (HealthStatus) and the filters of DiscoverInstances.
const (
	HealthHealthy          = "HEALTHY"
	HealthUnhealthy        = "UNHEALTHY"
	HealthUnknown          = "UNKNOWN"
	FilterAll              = "ALL"
	FilterHealthyOrElseAll = "HEALTHY_OR_ELSE_ALL"
)

// Operation types, statuses and target kinds.
const (
	OpCreateNamespace    = "CREATE_NAMESPACE"
	OpDeleteNamespace    = "DELETE_NAMESPACE"
	OpRegisterInstance   = "REGISTER_INSTANCE"
	OpDeregisterInstance = "DEREGISTER_INSTANCE"

	StatusSubmitted = "SUBMITTED"
	StatusPending   = "PENDING"
	StatusSuccess   = "SUCCESS"
	StatusFail      = "FAIL"

	TargetNamespace = "NAMESPACE"
	TargetService   = "SERVICE"
	TargetInstance  = "INSTANCE"
)

// Reserved instance attributes: the ones Cloud Map reads to build DNS records and health.
const (
	AttrIPv4       = "AWS_INSTANCE_IPV4"
	AttrIPv6       = "AWS_INSTANCE_IPV6"
	AttrPort       = "AWS_INSTANCE_PORT"
	AttrCNAME      = "AWS_INSTANCE_CNAME"
	AttrAlias      = "AWS_ALIAS_DNS_NAME"
	AttrEC2        = "AWS_EC2_INSTANCE_ID"
	AttrInitHealth = "AWS_INIT_HEALTH_STATUS"
)

// Tag is a resource tag.
type Tag struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Namespace is a namespace as the store keeps it. Records are immutable once stored.
type Namespace struct {
	ID               string `json:"id"`
	ARN              string `json:"arn"`
	Name             string `json:"name"`
	Type             string `json:"type"`
	Description      string `json:"description,omitempty"`
	CreatorRequestID string `json:"creatorRequestId,omitempty"`
	// HTTPName is the name DiscoverInstances takes: Name, unless another namespace holds
	// that HTTP name already (a private DNS namespace of the same name in another VPC).
	HTTPName string `json:"httpName"`
	// VPC is the VPC a private DNS namespace was created for.
	VPC string `json:"vpc,omitempty"`
	// HostedZoneID is the sandbox zone a DNS namespace owns.
	HostedZoneID string `json:"hostedZoneId,omitempty"`
	// SOATTL is the TTL of the zone's SOA record (DnsProperties.SOA.TTL).
	SOATTL  *int64    `json:"soaTtl,omitempty"`
	Created time.Time `json:"created"`
	Tags    []Tag     `json:"tags,omitempty"`
	// ServiceCount is maintained by the store; it is not persisted.
	ServiceCount int `json:"-"`
}

// IsDNS reports whether the namespace is discovered by DNS too.
func (n *Namespace) IsDNS() bool { return n.Type != NamespaceHTTP }

// DNSRecord is one record a service's instances get (DnsRecord).
type DNSRecord struct {
	Type string `json:"type"`
	TTL  int64  `json:"ttl"`
}

// DNSConfig is a service's DNS configuration (DnsConfig).
type DNSConfig struct {
	RoutingPolicy string      `json:"routingPolicy"`
	Records       []DNSRecord `json:"records"`
}

// has reports whether the configuration asks for records of type t.
func (c *DNSConfig) has(t string) bool {
	return c != nil && slices.ContainsFunc(c.Records, func(r DNSRecord) bool { return r.Type == t })
}

// ttl is the TTL of the record of type t, or of the first record.
func (c *DNSConfig) ttl(t string) int64 {
	for _, r := range c.Records {
		if r.Type == t {
			return r.TTL
		}
	}
	return c.Records[0].TTL
}

// Service is a service as the store keeps it. Records are immutable once stored.
type Service struct {
	ID               string     `json:"id"`
	ARN              string     `json:"arn"`
	Name             string     `json:"name"`
	NamespaceID      string     `json:"namespaceId"`
	Description      string     `json:"description,omitempty"`
	CreatorRequestID string     `json:"creatorRequestId,omitempty"`
	Type             string     `json:"type"`
	DNS              *DNSConfig `json:"dns,omitempty"`
	// CustomHealth is true for a service created with HealthCheckCustomConfig: its instances
	// carry a status that UpdateInstanceCustomHealthStatus sets.
	CustomHealth bool      `json:"customHealth,omitempty"`
	Created      time.Time `json:"created"`
	Tags         []Tag     `json:"tags,omitempty"`
	// Revision is DiscoverInstances' InstancesRevision: it grows with every registration
	// and deregistration, not with health changes.
	Revision int64 `json:"revision"`
	// InstanceCount is maintained by the store; it is not persisted.
	InstanceCount int `json:"-"`
}

// Instance is a registered instance. Records are immutable once stored.
type Instance struct {
	ServiceID        string            `json:"serviceId"`
	ID               string            `json:"id"`
	CreatorRequestID string            `json:"creatorRequestId,omitempty"`
	Attributes       map[string]string `json:"attributes"`
	// Health is the custom health status in effect (services with CustomHealth only).
	Health string `json:"health,omitempty"`
	// PendingHealth takes effect at PendingAt: Cloud Map waits before it acts on an
	// UpdateInstanceCustomHealthStatus (Options.HealthDelay).
	PendingHealth string    `json:"pendingHealth,omitempty"`
	PendingAt     time.Time `json:"pendingAt,omitzero"`
	// HealthCheckID names the instance's health in the zones store: the weighted records
	// of a custom-health service carry it, so the DNS server leaves an unhealthy one out.
	HealthCheckID string    `json:"healthCheckId,omitempty"`
	Registered    time.Time `json:"registered"`
}

// clone returns a copy whose attribute map may be changed.
func (i *Instance) clone() *Instance {
	n := *i
	n.Attributes = maps.Clone(i.Attributes)
	return &n
}

// HealthStatus is the status an API call reports for the instance of svc: UNKNOWN when the
// service has no health check.
func (i *Instance) HealthStatus(svc *Service) string {
	if !svc.CustomHealth {
		return HealthUnknown
	}
	return i.Health
}

// Operation is an asynchronous operation. The sandbox performs the work when the call is
// made; Status reports it PENDING until Options.OperationDelay has passed.
type Operation struct {
	ID           string            `json:"id"`
	Type         string            `json:"type"`
	Result       string            `json:"result"` // SUCCESS or FAIL once the delay has passed
	ErrorCode    string            `json:"errorCode,omitempty"`
	ErrorMessage string            `json:"errorMessage,omitempty"`
	Targets      map[string]string `json:"targets"`
	// NamespaceID and ServiceID let ListOperations filter an instance operation by its
	// namespace or service.
	NamespaceID      string    `json:"namespaceId,omitempty"`
	ServiceID        string    `json:"serviceId,omitempty"`
	CreatorRequestID string    `json:"creatorRequestId,omitempty"`
	Created          time.Time `json:"created"`
	// Done is when the operation leaves PENDING: Created plus the delay.
	Done time.Time `json:"done"`
}

// Status is the operation's status at now.
func (o *Operation) Status(now time.Time) string {
	if now.Before(o.Done) {
		return StatusPending
	}
	return o.Result
}

// UpdateDate is when the status last changed, as of now.
func (o *Operation) UpdateDate(now time.Time) time.Time {
	if now.Before(o.Done) {
		return o.Created
	}
	return o.Done
}
