package cloudmapstore

import (
	"slices"
	"strings"
)

// CreateServiceInput is CreateService.
type CreateServiceInput struct {
	Region           string
	Name             string
	NamespaceID      string
	CreatorRequestID string
	Description      string
	// Type is "" or HTTP: an HTTP service is discovered by DiscoverInstances only.
	Type string
	// DNS is DnsConfig; DNSNamespaceID is its deprecated NamespaceId, used when NamespaceID
	// is empty.
	DNS            *DNSConfig
	DNSNamespaceID string
	// HealthCheckConfig is true when the request has a Route 53 health check, which the
	// sandbox does not run.
	HealthCheckConfig bool
	// CustomHealth is HealthCheckCustomConfig; FailureThreshold is its deprecated member.
	CustomHealth     bool
	FailureThreshold *int32
	Tags             []Tag
}

// CreateService creates a service in a namespace. A retry with the CreatorRequestId and
// name of a service created already returns that service.
func (s *Store) CreateService(in CreateServiceInput) (Service, error) {
	if err := checkServiceName(in.Name, "name"); err != nil {
		return Service{}, err
	}
	nsID := in.NamespaceID
	if nsID == "" {
		nsID = in.DNSNamespaceID
	}
	if nsID == "" {
		return Service{}, invalidf("The namespace ID must be specified, in NamespaceId or in DnsConfig")
	}
	for _, c := range []struct{ v, member string }{{nsID, "namespaceId"}, {in.CreatorRequestID, "creatorRequestId"}} {
		if err := maxLen(c.v, c.member, maxResourceARNLen); err != nil {
			return Service{}, err
		}
	}
	if err := maxLen(in.Description, "description", maxDescriptionLen); err != nil {
		return Service{}, err
	}
	if in.Type != "" {
		if err := enumCheck(in.Type, "type", ServiceHTTP); err != nil {
			return Service{}, err
		}
	}
	if in.FailureThreshold != nil {
		if err := rangeCheck(int64(*in.FailureThreshold), "healthCheckCustomConfig.failureThreshold", 1, maxFailureThreshold); err != nil {
			return Service{}, err
		}
	}
	if in.HealthCheckConfig && in.CustomHealth {
		return Service{}, invalidf("You can specify either HealthCheckCustomConfig or HealthCheckConfig but not both")
	}
	if in.DNS != nil {
		cfg := *in.DNS
		cfg.Records = slices.Clone(in.DNS.Records)
		if err := checkDNSConfig(&cfg); err != nil {
			return Service{}, err
		}
		in.DNS = &cfg
	}
	if err := checkTags(in.Tags, "tags"); err != nil {
		return Service{}, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ns, nerr := s.namespaceFor(nsID)
	if nerr != nil {
		return Service{}, nerr
	}
	typ := ServiceHTTP
	switch {
	case !ns.IsDNS() && in.DNS != nil:
		return Service{}, invalidf("The namespace %s is an HTTP namespace: its services can't have a DnsConfig", ns.ID)
	case ns.IsDNS() && in.Type == ServiceHTTP && in.DNS != nil:
		return Service{}, invalidf("A service of type HTTP can't have a DnsConfig")
	case ns.IsDNS() && in.DNS != nil:
		typ = ServiceDNSHTTP
	}
	if in.HealthCheckConfig {
		if ns.Type == NamespaceDNSPrivate {
			return Service{}, invalidf("HealthCheckConfig is not supported for services in a private DNS namespace; use HealthCheckCustomConfig")
		}
		return Service{}, unsupported("HealthCheckConfig (Route 53 health checks); use HealthCheckCustomConfig and UpdateInstanceCustomHealthStatus")
	}
	for _, v := range s.services {
		if v.NamespaceID != ns.ID {
			continue
		}
		same := v.Name == in.Name || ns.IsDNS() && strings.EqualFold(v.Name, in.Name)
		if !same {
			continue
		}
		if in.CreatorRequestID != "" && v.CreatorRequestID == in.CreatorRequestID {
			return s.serviceView(v), nil
		}
		return Service{}, errorf(CodeServiceAlreadyExists, "The service can't be created because a service with the same name already exists: %s (%s)", v.Name, v.ID).
			With("ServiceId", v.ID).With("CreatorRequestId", v.CreatorRequestID)
	}
	if s.serviceCount(ns.ID) >= maxServicesPerNS {
		return Service{}, errorf(CodeResourceLimitExceeded, "The service can't be created because the namespace has reached the quota of %d services", maxServicesPerNS)
	}
	id := newServiceID()
	svc := &Service{ID: id, ARN: s.arn(in.Region, "service", id), Name: in.Name, NamespaceID: ns.ID,
		Description: in.Description, CreatorRequestID: in.CreatorRequestID, Type: typ, DNS: in.DNS,
		CustomHealth: in.CustomHealth, Created: s.now().UTC(), Tags: mergeTags(nil, in.Tags)}
	c := newChange()
	c.services[id] = svc
	if err := s.commit(c); err != nil {
		return Service{}, err
	}
	s.log.Info("cloudmap: service created", "service", id, "name", svc.Name, "namespace", ns.ID, "type", typ)
	return s.serviceView(svc), nil
}

// GetService returns a service by id (or ARN).
func (s *Store) GetService(id string) (Service, error) {
	if err := checkID(id, "id"); err != nil {
		return Service{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, err := s.serviceFor(id)
	if err != nil {
		return Service{}, err
	}
	return s.serviceView(v), nil
}

// ListServices lists services in creation order, a page of MaxResults then filtered, as
// ListNamespaces does.
func (s *Store) ListServices(in ListInput) ([]Service, string, error) {
	size, err := pageSize(in.MaxResults, maxPageSize)
	if err != nil {
		return nil, "", err
	}
	for i := range in.Filters {
		if err := checkFilter(i, &in.Filters[i], "filters", map[string][]string{"NAMESPACE_ID": {filterEQ}}); err != nil {
			return nil, "", err
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	all := make([]*Service, 0, len(s.services))
	for _, v := range s.services {
		all = append(all, v)
	}
	key := func(v *Service) string { return sortKey(v.Created, v.ID) }
	slices.SortFunc(all, func(a, b *Service) int { return strings.Compare(key(a), key(b)) })
	got, next, perr := page(all, key, in.NextToken, size)
	if perr != nil {
		return nil, "", perr
	}
	var out []Service
	for _, v := range got {
		keep := true
		for _, f := range in.Filters {
			keep = keep && f.matches(v.NamespaceID)
		}
		if keep {
			out = append(out, s.serviceView(v))
		}
	}
	return out, next, nil
}

// DeleteService deletes a service that has no instances.
func (s *Store) DeleteService(id string) error {
	if err := checkID(id, "id"); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	v, verr := s.serviceFor(id)
	if verr != nil {
		return verr
	}
	if len(s.instances[v.ID]) > 0 {
		return serviceInUse()
	}
	c := newChange()
	c.services[v.ID] = nil
	if err := s.commit(c); err != nil {
		return err
	}
	s.log.Info("cloudmap: service deleted", "service", v.ID, "name", v.Name)
	return nil
}
