package cloudmapstore

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// CreateNamespaceInput is CreateHttpNamespace, CreatePrivateDnsNamespace or
// CreatePublicDnsNamespace, by Type.
type CreateNamespaceInput struct {
	// Region is the region the request was signed for: the ARN's.
	Region           string
	Type             string
	Name             string
	CreatorRequestID string
	Description      string
	// VPC is required for a private DNS namespace.
	VPC string
	// SOATTL is Properties.DnsProperties.SOA.TTL of a DNS namespace.
	SOATTL *int64
	Tags   []Tag
}

func (in *CreateNamespaceInput) check() *Error {
	if err := checkNamespaceName(in.Type, in.Name); err != nil {
		return err
	}
	if err := maxLen(in.CreatorRequestID, "creatorRequestId", maxResourceIDLen); err != nil {
		return err
	}
	if err := maxLen(in.Description, "description", maxDescriptionLen); err != nil {
		return err
	}
	if in.Type == NamespaceDNSPrivate {
		if in.VPC == "" {
			return notNull("vpc")
		}
		if err := maxLen(in.VPC, "vpc", maxResourceIDLen); err != nil {
			return err
		}
	}
	if in.SOATTL != nil {
		if err := rangeCheck(*in.SOATTL, "properties.dnsProperties.SOA.TTL", 0, maxRecordTTL); err != nil {
			return err
		}
	}
	return checkTags(in.Tags, "tags")
}

// CreateNamespace creates a namespace and returns the id of the CREATE_NAMESPACE
// operation. A DNS namespace gets a hosted zone of its name in the zones store, private for
// a private one. A private DNS namespace whose name a private namespace of the same VPC
// has already is refused as Route 53 refuses the zone: the operation fails with
// CANNOT_CREATE_HOSTED_ZONE. A retry with the CreatorRequestId of a namespace created
// already returns that namespace's operation.
func (s *Store) CreateNamespace(in CreateNamespaceInput) (string, error) {
	if err := enumCheck(in.Type, "type", NamespaceHTTP, NamespaceDNSPrivate, NamespaceDNSPublic); err != nil {
		return "", err
	}
	if err := in.check(); err != nil {
		return "", err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if in.CreatorRequestID != "" {
		for _, o := range s.operations {
			if o.Type == OpCreateNamespace && o.CreatorRequestID == in.CreatorRequestID {
				if n := s.namespaces[o.Targets[TargetNamespace]]; n != nil && n.Name == in.Name && n.Type == in.Type {
					return o.ID, nil
				}
			}
		}
	}
	if len(s.namespaces) >= maxNamespaces {
		return "", errorf(CodeResourceLimitExceeded, "The namespace can't be created because you've reached the quota of %d namespaces", maxNamespaces)
	}
	id := newNamespaceID()
	ns := &Namespace{ID: id, ARN: s.arn(in.Region, "namespace", id), Name: in.Name, Type: in.Type,
		Description: in.Description, CreatorRequestID: in.CreatorRequestID, HTTPName: in.Name,
		VPC: in.VPC, Created: s.now().UTC(), Tags: mergeTags(nil, in.Tags)}
	op := s.newOperation(OpCreateNamespace, map[string]string{TargetNamespace: id}, in.CreatorRequestID)
	op.NamespaceID = id
	for _, o := range s.namespaces {
		switch {
		case in.Type == NamespaceHTTP && o.HTTPName == in.Name,
			in.Type == NamespaceDNSPublic && o.Type == NamespaceDNSPublic && strings.EqualFold(o.Name, in.Name):
			return "", errorf(CodeNamespaceAlreadyExists, "The namespace that you're trying to create already exists: %s (%s)", o.Name, o.ID).
				With("NamespaceId", o.ID).With("CreatorRequestId", o.CreatorRequestID)
		case in.Type == NamespaceDNSPrivate && o.Type == NamespaceDNSPrivate && o.VPC == in.VPC && strings.EqualFold(o.Name, in.Name):
			// Route 53 refuses a second private zone of one name in a VPC; Cloud Map reports
			// it in the operation (the words are Route 53's ConflictingDomainExists, as users
			// pasted it in github.com/docker-archive/ecs-plugin#186).
			op.fail(OpErrCannotCreateHostedZone, fmt.Sprintf("The VPC %s in region %s has already been associated with the hosted zone %s with the same domain name.",
				in.VPC, regionOr(in.Region), o.HostedZoneID))
			c := newChange()
			c.operations[op.ID] = op
			return op.ID, s.commit(c)
		case o.HTTPName == ns.HTTPName:
			// The name is taken as an HTTP name (a namespace of another type or VPC): Cloud
			// Map adds a generated suffix to the HTTP name of the new one.
			ns.HTTPName = in.Name + "-" + randomString(8)
		}
	}
	if ns.IsDNS() {
		z, _, err := s.zones.CreateZone(in.Name, "cloudmap:"+id, "", in.Type == NamespaceDNSPrivate)
		if err != nil {
			var ze *zones.Error
			if !errors.As(err, &ze) {
				return "", fmt.Errorf("namespace %s: hosted zone: %w", in.Name, err)
			}
			op.fail(OpErrCannotCreateHostedZone, ze.Message)
			c := newChange()
			c.operations[op.ID] = op
			return op.ID, s.commit(c)
		}
		ns.HostedZoneID = z.ID
		if in.SOATTL != nil {
			if soa, ok := soaWithTTL(s.zones, z.ID, z.Name, *in.SOATTL); ok {
				if _, err := s.zones.Apply(z.ID, "AWS Cloud Map namespace "+id, []zones.Change{{Action: zones.Upsert, Set: soa}}); err != nil {
					s.dropZone(z.ID)
					return "", fmt.Errorf("namespace %s: SOA TTL: %w", in.Name, err)
				}
			}
		}
		ns.SOATTL = soaTTL(s.zones, z.ID, z.Name)
	}
	c := newChange()
	c.namespaces[id] = ns
	c.operations[op.ID] = op
	if err := s.commit(c); err != nil {
		if ns.HostedZoneID != "" {
			s.dropZone(ns.HostedZoneID)
		}
		return "", err
	}
	s.log.Info("cloudmap: namespace created", "namespace", id, "name", ns.Name, "type", ns.Type, "hosted_zone", ns.HostedZoneID)
	return op.ID, nil
}

func regionOr(r string) string {
	if r == "" {
		return DefaultRegion
	}
	return r
}

// dropZone deletes a zone the store created and could not keep.
func (s *Store) dropZone(id string) {
	if _, err := s.zones.DeleteZone(id); err != nil {
		s.log.Warn("cloudmap: deleting a hosted zone after a failed create", "zone", id, "err", err)
	}
}

// GetNamespace returns a namespace by id (or ARN).
func (s *Store) GetNamespace(id string) (Namespace, error) {
	if err := checkID(id, "id"); err != nil {
		return Namespace{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	n, err := s.namespaceFor(id)
	if err != nil {
		return Namespace{}, err
	}
	return s.namespaceView(n), nil
}

// ListInput is the paging and filtering of a list operation.
type ListInput struct {
	Filters    []Filter
	MaxResults *int32
	NextToken  string
}

// ListNamespaces lists namespaces in creation order. As Cloud Map documents, it takes a
// page of MaxResults namespaces and then filters it: a page may be short, even empty, and
// still have a NextToken.
func (s *Store) ListNamespaces(in ListInput) ([]Namespace, string, error) {
	size, err := pageSize(in.MaxResults, maxPageSize)
	if err != nil {
		return nil, "", err
	}
	conditions := map[string][]string{
		"TYPE": {filterEQ, filterBeginsWith}, "NAME": {filterEQ, filterBeginsWith}, "HTTP_NAME": {filterEQ, filterBeginsWith},
	}
	for i := range in.Filters {
		if err := checkFilter(i, &in.Filters[i], "filters", conditions); err != nil {
			return nil, "", err
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	all := make([]*Namespace, 0, len(s.namespaces))
	for _, n := range s.namespaces {
		all = append(all, n)
	}
	key := func(n *Namespace) string { return sortKey(n.Created, n.ID) }
	slices.SortFunc(all, func(a, b *Namespace) int { return strings.Compare(key(a), key(b)) })
	got, next, perr := page(all, key, in.NextToken, size)
	if perr != nil {
		return nil, "", perr
	}
	var out []Namespace
	for _, n := range got {
		keep := true
		for _, f := range in.Filters {
			switch f.Name {
			case "TYPE":
				keep = keep && f.matches(n.Type)
			case "NAME":
				keep = keep && f.matches(n.Name)
			case "HTTP_NAME":
				keep = keep && f.matches(n.HTTPName)
			}
		}
		if keep {
			out = append(out, s.namespaceView(n))
		}
	}
	return out, next, nil
}

// DeleteNamespace deletes a namespace that has no services, and its hosted zone, and
// returns the id of the DELETE_NAMESPACE operation. A zone that holds records besides its
// SOA and NS (someone added them through Route 53) cannot be deleted: the operation fails
// and the namespace stays.
func (s *Store) DeleteNamespace(id string) (string, error) {
	if err := checkID(id, "id"); err != nil {
		return "", err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ns, nerr := s.namespaceFor(id)
	if nerr != nil {
		return "", nerr
	}
	if s.serviceCount(ns.ID) > 0 {
		return "", namespaceInUse()
	}
	op := s.newOperation(OpDeleteNamespace, map[string]string{TargetNamespace: ns.ID}, "")
	op.NamespaceID = ns.ID
	c := newChange()
	c.operations[op.ID] = op
	if ns.HostedZoneID != "" {
		if _, err := s.zones.DeleteZone(ns.HostedZoneID); err != nil {
			var ze *zones.Error
			switch {
			case errors.As(err, &ze) && ze.Code == zones.CodeNoSuchHostedZone:
				// gone already (a crash after an earlier delete, or Route 53's DeleteHostedZone)
			case errors.As(err, &ze):
				op.fail(OpErrInternalFailure, "Deleting the hosted zone "+ns.HostedZoneID+": "+ze.Message)
				return op.ID, s.commit(c)
			default:
				return "", fmt.Errorf("namespace %s: delete hosted zone %s: %w", ns.ID, ns.HostedZoneID, err)
			}
		}
	}
	c.namespaces[ns.ID] = nil
	if err := s.commit(c); err != nil {
		return "", err
	}
	s.log.Info("cloudmap: namespace deleted", "namespace", ns.ID, "name", ns.Name)
	return op.ID, nil
}
