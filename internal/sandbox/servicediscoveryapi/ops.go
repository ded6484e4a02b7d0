package servicediscoveryapi

import (
	"fmt"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
	"github.com/crossfade-io/crossfade/internal/sandbox/cloudmapstore"
)

// operations maps each served operation to its handler.
func (a *API) operations() map[string]handler {
	s := a.cfg.Store
	return map[string]handler{
		"CreateHttpNamespace":              func(r *request) (any, error) { return createNamespace(s, r, cloudmapstore.NamespaceHTTP) },
		"CreatePrivateDnsNamespace":        func(r *request) (any, error) { return createNamespace(s, r, cloudmapstore.NamespaceDNSPrivate) },
		"CreatePublicDnsNamespace":         func(r *request) (any, error) { return createNamespace(s, r, cloudmapstore.NamespaceDNSPublic) },
		"GetNamespace":                     func(r *request) (any, error) { return getNamespace(s, r) },
		"ListNamespaces":                   func(r *request) (any, error) { return listNamespaces(s, r) },
		"DeleteNamespace":                  func(r *request) (any, error) { return deleteNamespace(s, r) },
		"CreateService":                    func(r *request) (any, error) { return createService(s, r) },
		"GetService":                       func(r *request) (any, error) { return getService(s, r) },
		"ListServices":                     func(r *request) (any, error) { return listServices(s, r) },
		"DeleteService":                    func(r *request) (any, error) { return deleteService(s, r) },
		"RegisterInstance":                 func(r *request) (any, error) { return registerInstance(s, r) },
		"DeregisterInstance":               func(r *request) (any, error) { return deregisterInstance(s, r) },
		"GetInstance":                      func(r *request) (any, error) { return getInstance(s, r) },
		"ListInstances":                    func(r *request) (any, error) { return listInstances(s, r) },
		"GetInstancesHealthStatus":         func(r *request) (any, error) { return getInstancesHealthStatus(s, r) },
		"UpdateInstanceCustomHealthStatus": func(r *request) (any, error) { return updateInstanceCustomHealthStatus(s, r) },
		"DiscoverInstances":                func(r *request) (any, error) { return discoverInstances(s, r) },
		"DiscoverInstancesRevision":        func(r *request) (any, error) { return discoverInstancesRevision(s, r) },
		"GetOperation":                     func(r *request) (any, error) { return getOperation(s, r) },
		"ListOperations":                   func(r *request) (any, error) { return listOperations(s, r) },
		"TagResource":                      func(r *request) (any, error) { return tagResource(s, r) },
		"UntagResource":                    func(r *request) (any, error) { return untagResource(s, r) },
		"ListTagsForResource":              func(r *request) (any, error) { return listTagsForResource(s, r) },
	}
}

func notNull(member string) error {
	return awsapi.Schema{Code: cloudmapstore.CodeInvalidInput}.NotNull(member)
}

// checkTagValues refuses a tag without a Value: the model requires it (it may be empty).
func checkTagValues(tags []wireTag, member string) error {
	for i, t := range tags {
		if t.Value == nil {
			return notNull(fmt.Sprintf("%s.%d.member.value", member, i+1))
		}
	}
	return nil
}

func createNamespace(s *cloudmapstore.Store, r *request, typ string) (any, error) {
	var in createNamespaceIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	if err := checkTagValues(in.Tags, "tags"); err != nil {
		return nil, err
	}
	c := cloudmapstore.CreateNamespaceInput{Region: r.region, Type: typ, Name: in.Name, CreatorRequestID: in.CreatorRequestID,
		Description: in.Description, Tags: tagsOf(in.Tags)}
	switch typ {
	case cloudmapstore.NamespaceDNSPrivate:
		if in.Vpc == nil {
			return nil, notNull("vpc")
		}
		c.VPC = *in.Vpc
	}
	if typ != cloudmapstore.NamespaceHTTP && in.Properties != nil {
		p := in.Properties.DNSProperties
		switch {
		case p == nil:
			return nil, notNull("properties.dnsProperties")
		case p.SOA == nil:
			return nil, notNull("properties.dnsProperties.SOA")
		case p.SOA.TTL == nil:
			return nil, notNull("properties.dnsProperties.SOA.TTL")
		}
		c.SOATTL = p.SOA.TTL
	}
	id, err := s.CreateNamespace(c)
	if err != nil {
		return nil, err
	}
	return operationIDOut{id}, nil
}

func getNamespace(s *cloudmapstore.Store, r *request) (any, error) {
	var in idIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	n, err := s.GetNamespace(in.ID)
	if err != nil {
		return nil, err
	}
	return struct {
		Namespace namespaceOut `json:"Namespace"`
	}{toNamespace(n, s.Account(), false)}, nil
}

func listNamespaces(s *cloudmapstore.Store, r *request) (any, error) {
	var in listIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	got, next, err := s.ListNamespaces(cloudmapstore.ListInput{Filters: filtersOf(in.Filters), MaxResults: in.MaxResults, NextToken: in.NextToken})
	if err != nil {
		return nil, err
	}
	out := struct {
		Namespaces []namespaceOut `json:"Namespaces"`
		NextToken  string         `json:"NextToken,omitempty"`
	}{Namespaces: []namespaceOut{}, NextToken: next}
	for _, n := range got {
		out.Namespaces = append(out.Namespaces, toNamespace(n, s.Account(), true))
	}
	return out, nil
}

func deleteNamespace(s *cloudmapstore.Store, r *request) (any, error) {
	var in idIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	id, err := s.DeleteNamespace(in.ID)
	if err != nil {
		return nil, err
	}
	return operationIDOut{id}, nil
}

func createService(s *cloudmapstore.Store, r *request) (any, error) {
	var in createServiceIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	if err := checkTagValues(in.Tags, "tags"); err != nil {
		return nil, err
	}
	c := cloudmapstore.CreateServiceInput{Region: r.region, Name: in.Name, NamespaceID: in.NamespaceID,
		CreatorRequestID: in.CreatorRequestID, Description: in.Description, Type: in.Type, Tags: tagsOf(in.Tags),
		HealthCheckConfig: len(in.HealthCheckConfig) > 0 && string(in.HealthCheckConfig) != "null"}
	if d := in.DNSConfig; d != nil {
		if d.DNSRecords == nil {
			return nil, notNull("dnsConfig.dnsRecords")
		}
		cfg := &cloudmapstore.DNSConfig{RoutingPolicy: d.RoutingPolicy, Records: []cloudmapstore.DNSRecord{}}
		for i, rec := range d.DNSRecords {
			if rec.TTL == nil {
				return nil, notNull(fmt.Sprintf("dnsConfig.dnsRecords.%d.member.TTL", i+1))
			}
			cfg.Records = append(cfg.Records, cloudmapstore.DNSRecord{Type: rec.Type, TTL: *rec.TTL})
		}
		c.DNS, c.DNSNamespaceID = cfg, d.NamespaceID
	}
	if h := in.HealthCheckCustomConfig; h != nil {
		c.CustomHealth, c.FailureThreshold = true, h.FailureThreshold
	}
	v, err := s.CreateService(c)
	if err != nil {
		return nil, err
	}
	return struct {
		Service serviceOut `json:"Service"`
	}{toService(v, s.Account(), false)}, nil
}

func getService(s *cloudmapstore.Store, r *request) (any, error) {
	var in idIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	v, err := s.GetService(in.ID)
	if err != nil {
		return nil, err
	}
	return struct {
		Service serviceOut `json:"Service"`
	}{toService(v, s.Account(), false)}, nil
}

func listServices(s *cloudmapstore.Store, r *request) (any, error) {
	var in listIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	got, next, err := s.ListServices(cloudmapstore.ListInput{Filters: filtersOf(in.Filters), MaxResults: in.MaxResults, NextToken: in.NextToken})
	if err != nil {
		return nil, err
	}
	out := struct {
		Services  []serviceOut `json:"Services"`
		NextToken string       `json:"NextToken,omitempty"`
	}{Services: []serviceOut{}, NextToken: next}
	for _, v := range got {
		out.Services = append(out.Services, toService(v, s.Account(), true))
	}
	return out, nil
}

func deleteService(s *cloudmapstore.Store, r *request) (any, error) {
	var in idIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	return empty{}, s.DeleteService(in.ID)
}

func registerInstance(s *cloudmapstore.Store, r *request) (any, error) {
	var in registerInstanceIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	id, err := s.RegisterInstance(cloudmapstore.RegisterInstanceInput{ServiceID: in.ServiceID, InstanceID: in.InstanceID,
		CreatorRequestID: in.CreatorRequestID, Attributes: in.Attributes})
	if err != nil {
		return nil, err
	}
	return operationIDOut{id}, nil
}

func deregisterInstance(s *cloudmapstore.Store, r *request) (any, error) {
	var in instanceRefIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	id, err := s.DeregisterInstance(in.ServiceID, in.InstanceID)
	if err != nil {
		return nil, err
	}
	return operationIDOut{id}, nil
}

func getInstance(s *cloudmapstore.Store, r *request) (any, error) {
	var in instanceRefIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	inst, err := s.GetInstance(in.ServiceID, in.InstanceID)
	if err != nil {
		return nil, err
	}
	return struct {
		Instance      instanceOut `json:"Instance"`
		ResourceOwner string      `json:"ResourceOwner"`
	}{instanceOut{ID: inst.ID, CreatorRequestID: inst.CreatorRequestID, Attributes: inst.Attributes, CreatedByAccount: s.Account()}, s.Account()}, nil
}

func listInstances(s *cloudmapstore.Store, r *request) (any, error) {
	var in listInstancesIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	got, next, err := s.ListInstances(in.ServiceID, in.MaxResults, in.NextToken)
	if err != nil {
		return nil, err
	}
	out := struct {
		Instances []instanceOut `json:"Instances"`
		NextToken string        `json:"NextToken,omitempty"`
	}{Instances: []instanceOut{}, NextToken: next}
	for _, inst := range got {
		out.Instances = append(out.Instances, instanceOut{ID: inst.ID, Attributes: inst.Attributes, CreatedByAccount: s.Account()})
	}
	return out, nil
}

func getInstancesHealthStatus(s *cloudmapstore.Store, r *request) (any, error) {
	var in healthStatusIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	got, next, err := s.GetInstancesHealthStatus(in.ServiceID, in.Instances, in.MaxResults, in.NextToken)
	if err != nil {
		return nil, err
	}
	out := struct {
		Status    map[string]string `json:"Status"`
		NextToken string            `json:"NextToken,omitempty"`
	}{Status: map[string]string{}, NextToken: next}
	for _, h := range got {
		out.Status[h.InstanceID] = h.Status
	}
	return out, nil
}

func updateInstanceCustomHealthStatus(s *cloudmapstore.Store, r *request) (any, error) {
	var in updateHealthIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	return empty{}, s.UpdateInstanceCustomHealthStatus(in.ServiceID, in.InstanceID, in.Status)
}

func discoverInstances(s *cloudmapstore.Store, r *request) (any, error) {
	var in discoverIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	if in.OwnerAccount != "" && in.OwnerAccount != s.Account() {
		return nil, &cloudmapstore.Error{Code: cloudmapstore.CodeNamespaceNotFound,
			Message: fmt.Sprintf("No namespace %s is shared by account %s with this account", in.NamespaceName, in.OwnerAccount)}
	}
	got, rev, err := s.DiscoverInstances(cloudmapstore.DiscoverInput{NamespaceName: in.NamespaceName, ServiceName: in.ServiceName,
		HealthStatus: in.HealthStatus, QueryParameters: in.QueryParameters, OptionalParameters: in.OptionalParameters, MaxResults: in.MaxResults})
	if err != nil {
		return nil, err
	}
	out := struct {
		Instances         []discoveredOut `json:"Instances"`
		InstancesRevision int64           `json:"InstancesRevision"`
	}{Instances: []discoveredOut{}, InstancesRevision: rev}
	for _, d := range got {
		out.Instances = append(out.Instances, discoveredOut(d))
	}
	return out, nil
}

func discoverInstancesRevision(s *cloudmapstore.Store, r *request) (any, error) {
	var in discoverIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	rev, err := s.DiscoverInstancesRevision(in.NamespaceName, in.ServiceName)
	if err != nil {
		return nil, err
	}
	return struct {
		InstancesRevision int64 `json:"InstancesRevision"`
	}{rev}, nil
}

func toOperation(o cloudmapstore.OperationView, owner string) operationOut {
	return operationOut{ID: o.ID, Type: o.Type, Status: o.Status, ErrorMessage: o.ErrorMessage, ErrorCode: o.ErrorCode,
		CreateDate: epoch(o.Created), UpdateDate: epoch(o.UpdateDate), Targets: o.Targets, OwnerAccount: owner}
}

func getOperation(s *cloudmapstore.Store, r *request) (any, error) {
	var in operationIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	o, err := s.GetOperation(in.OperationID)
	if err != nil {
		return nil, err
	}
	return struct {
		Operation operationOut `json:"Operation"`
	}{toOperation(o, s.Account())}, nil
}

func listOperations(s *cloudmapstore.Store, r *request) (any, error) {
	var in listIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	got, next, err := s.ListOperations(cloudmapstore.ListInput{Filters: filtersOf(in.Filters), MaxResults: in.MaxResults, NextToken: in.NextToken})
	if err != nil {
		return nil, err
	}
	out := struct {
		Operations []operationSummaryOut `json:"Operations"`
		NextToken  string                `json:"NextToken,omitempty"`
	}{Operations: []operationSummaryOut{}, NextToken: next}
	for _, o := range got {
		out.Operations = append(out.Operations, operationSummaryOut{ID: o.ID, Status: o.Status})
	}
	return out, nil
}

func tagResource(s *cloudmapstore.Store, r *request) (any, error) {
	var in tagsIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	if err := checkTagValues(in.Tags, "tags"); err != nil {
		return nil, err
	}
	return empty{}, s.TagResource(in.ResourceARN, tagsOf(in.Tags))
}

func untagResource(s *cloudmapstore.Store, r *request) (any, error) {
	var in tagsIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	return empty{}, s.UntagResource(in.ResourceARN, in.TagKeys)
}

func listTagsForResource(s *cloudmapstore.Store, r *request) (any, error) {
	var in tagsIn
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	tags, err := s.ListTagsForResource(in.ResourceARN)
	if err != nil {
		return nil, err
	}
	out := struct {
		Tags []outTag `json:"Tags"`
	}{Tags: []outTag{}}
	for _, t := range tags {
		out.Tags = append(out.Tags, outTag(t))
	}
	return out, nil
}
