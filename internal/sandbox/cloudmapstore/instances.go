package cloudmapstore

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// RegisterInstanceInput is RegisterInstance.
type RegisterInstanceInput struct {
	ServiceID        string
	InstanceID       string
	CreatorRequestID string
	Attributes       map[string]string
}

// RegisterInstance registers an instance, or updates the one of that id, and returns the
// id of the REGISTER_INSTANCE operation. The instance's DNS records (a DNS service) are
// written before the call returns; if the zone refuses them the operation fails and the
// registration is undone. A registration resets the custom health status to
// AWS_INIT_HEALTH_STATUS (HEALTHY when absent): Cloud Map replaces an existing instance's
// health check when it is registered again. A retry with the CreatorRequestId of an
// earlier registration in the service returns that registration's operation and changes
// nothing.
func (s *Store) RegisterInstance(in RegisterInstanceInput) (string, error) {
	if err := checkID(in.ServiceID, "serviceId"); err != nil {
		return "", err
	}
	if in.InstanceID == "" {
		return "", notNull("instanceId")
	}
	if err := maxLen(in.InstanceID, "instanceId", maxResourceIDLen); err != nil {
		return "", err
	}
	if err := checkPattern(in.InstanceID, "instanceId", instanceIDPattern, instanceIDPattern.String()); err != nil {
		return "", err
	}
	if err := maxLen(in.CreatorRequestID, "creatorRequestId", maxResourceIDLen); err != nil {
		return "", err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	svc, verr := s.serviceFor(in.ServiceID)
	if verr != nil {
		return "", verr
	}
	if err := checkInstanceAttributes(in.Attributes, svc); err != nil {
		return "", err
	}
	if in.CreatorRequestID != "" {
		for _, o := range s.operations {
			if o.Type == OpRegisterInstance && o.ServiceID == svc.ID && o.CreatorRequestID == in.CreatorRequestID {
				return o.ID, nil
			}
		}
	}
	if err := s.checkInProgress(svc.ID, in.InstanceID); err != nil {
		return "", err
	}
	old := s.instances[svc.ID][in.InstanceID]
	if old == nil && len(s.instances[svc.ID]) >= maxInstancesPerSvc {
		return "", errorf(CodeResourceLimitExceeded, "The instance can't be registered because the service has reached the quota of %d instances", maxInstancesPerSvc)
	}
	now := s.now().UTC()
	inst := &Instance{ServiceID: svc.ID, ID: in.InstanceID, CreatorRequestID: in.CreatorRequestID,
		Attributes: maps.Clone(in.Attributes), Registered: now}
	if svc.CustomHealth {
		inst.Health = HealthHealthy
		if v := in.Attributes[AttrInitHealth]; v != "" {
			inst.Health = v
		}
		inst.HealthCheckID = newHealthCheckID()
	}
	op := s.newOperation(OpRegisterInstance, map[string]string{TargetInstance: inst.ID, TargetService: svc.ID}, in.CreatorRequestID)
	op.NamespaceID, op.ServiceID = svc.NamespaceID, svc.ID
	nsvc := *svc
	nsvc.Revision++
	c := newChange()
	c.putInstance(inst)
	c.services[svc.ID] = &nsvc
	c.operations[op.ID] = op
	if err := s.commit(c); err != nil {
		return "", err
	}
	if err := s.syncServiceLocked(&nsvc, nil); err != nil {
		// The zone refused the records: undo the registration; the operation says why.
		code, msg := opFailure(err)
		op.fail(code, msg)
		undo := newChange()
		if old != nil {
			undo.putInstance(old)
		} else {
			undo.deleteInstance(svc.ID, inst.ID)
		}
		undo.services[svc.ID] = svc
		undo.operations[op.ID] = op
		if cerr := s.commit(undo); cerr != nil {
			return "", cerr
		}
		s.log.Warn("cloudmap: instance registration failed", "service", svc.ID, "instance", inst.ID, "code", code, "err", msg)
		return op.ID, nil
	}
	s.log.Info("cloudmap: instance registered", "service", svc.ID, "instance", inst.ID, "update", old != nil, "health", inst.Health)
	return op.ID, nil
}

// checkInProgress refuses a second registration or deregistration of an instance while an
// earlier one is still PENDING, as Cloud Map does (DuplicateRequest).
func (s *Store) checkInProgress(serviceID, instanceID string) *Error {
	now := s.now()
	for _, o := range s.operations {
		if o.ServiceID == serviceID && o.Targets[TargetInstance] == instanceID &&
			(o.Type == OpRegisterInstance || o.Type == OpDeregisterInstance) && o.Status(now) == StatusPending {
			return errorf(CodeDuplicateRequest, "The operation is already in progress: %s", o.ID).With("DuplicateOperationId", o.ID)
		}
	}
	return nil
}

// DeregisterInstance removes an instance and its DNS records and returns the id of the
// DEREGISTER_INSTANCE operation. The records go first: if the zone refuses the change the
// operation fails and the instance stays registered.
func (s *Store) DeregisterInstance(serviceID, instanceID string) (string, error) {
	if err := checkID(serviceID, "serviceId"); err != nil {
		return "", err
	}
	if err := checkID(instanceID, "instanceId"); err != nil {
		return "", err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	svc, verr := s.serviceFor(serviceID)
	if verr != nil {
		return "", verr
	}
	inst := s.instances[svc.ID][instanceID]
	if inst == nil {
		return "", instanceNotFound(svc.ID, instanceID)
	}
	if err := s.checkInProgress(svc.ID, instanceID); err != nil {
		return "", err
	}
	op := s.newOperation(OpDeregisterInstance, map[string]string{TargetInstance: inst.ID, TargetService: svc.ID}, "")
	op.NamespaceID, op.ServiceID = svc.NamespaceID, svc.ID
	c := newChange()
	c.operations[op.ID] = op
	if err := s.syncServiceLocked(svc, []*Instance{inst}); err != nil {
		code, msg := opFailure(err)
		op.fail(code, msg)
		s.log.Warn("cloudmap: instance deregistration failed", "service", svc.ID, "instance", inst.ID, "code", code, "err", msg)
		return op.ID, s.commit(c)
	}
	nsvc := *svc
	nsvc.Revision++
	c.services[svc.ID] = &nsvc
	c.deleteInstance(svc.ID, inst.ID)
	if err := s.commit(c); err != nil {
		return "", err
	}
	s.log.Info("cloudmap: instance deregistered", "service", svc.ID, "instance", inst.ID)
	return op.ID, nil
}

// GetInstance returns an instance of a service.
func (s *Store) GetInstance(serviceID, instanceID string) (Instance, error) {
	if err := checkID(serviceID, "serviceId"); err != nil {
		return Instance{}, err
	}
	if err := checkID(instanceID, "instanceId"); err != nil {
		return Instance{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	svc, verr := s.serviceFor(serviceID)
	if verr != nil {
		return Instance{}, verr
	}
	inst := s.instances[svc.ID][instanceID]
	if inst == nil {
		return Instance{}, instanceNotFound(svc.ID, instanceID)
	}
	return *inst.clone(), nil
}

// ListInstances lists a service's instances by id.
func (s *Store) ListInstances(serviceID string, maxResults *int32, nextToken string) ([]Instance, string, error) {
	if err := checkID(serviceID, "serviceId"); err != nil {
		return nil, "", err
	}
	size, err := pageSize(maxResults, maxPageSize)
	if err != nil {
		return nil, "", err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	svc, verr := s.serviceFor(serviceID)
	if verr != nil {
		return nil, "", verr
	}
	got, next, perr := page(s.instancesOf(svc.ID), func(i *Instance) string { return i.ID }, nextToken, size)
	if perr != nil {
		return nil, "", perr
	}
	out := make([]Instance, len(got))
	for i, inst := range got {
		out[i] = *inst.clone()
	}
	return out, next, nil
}

// InstanceHealth is one entry of GetInstancesHealthStatus.
type InstanceHealth struct {
	InstanceID string
	Status     string
}

// GetInstancesHealthStatus reports the health of the instances asked for (all when ids is
// empty), by id: HEALTHY or UNHEALTHY for a service with custom health, UNKNOWN otherwise.
func (s *Store) GetInstancesHealthStatus(serviceID string, ids []string, maxResults *int32, nextToken string) ([]InstanceHealth, string, error) {
	if err := checkID(serviceID, "serviceId"); err != nil {
		return nil, "", err
	}
	if ids != nil && len(ids) == 0 {
		return nil, "", constraint("[]", "instances", "Member must have length greater than or equal to 1")
	}
	size, err := pageSize(maxResults, maxPageSize)
	if err != nil {
		return nil, "", err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	svc, verr := s.serviceFor(serviceID)
	if verr != nil {
		return nil, "", verr
	}
	insts := s.instancesOf(svc.ID)
	if len(ids) > 0 {
		var picked []*Instance
		for _, id := range slices.Compact(slices.Sorted(slices.Values(ids))) {
			inst := s.instances[svc.ID][id]
			if inst == nil {
				return nil, "", instanceNotFound(svc.ID, id)
			}
			picked = append(picked, inst)
		}
		insts = picked
	}
	got, next, perr := page(insts, func(i *Instance) string { return i.ID }, nextToken, size)
	if perr != nil {
		return nil, "", perr
	}
	out := make([]InstanceHealth, len(got))
	for i, inst := range got {
		out[i] = InstanceHealth{InstanceID: inst.ID, Status: inst.HealthStatus(svc)}
	}
	return out, next, nil
}

// UpdateInstanceCustomHealthStatus sets the custom health status of an instance of a
// service created with HealthCheckCustomConfig. The status takes effect after
// Options.HealthDelay (Cloud Map waits about 30 seconds); asking again for the status
// already on its way does not hasten it, asking for the status in effect cancels it.
func (s *Store) UpdateInstanceCustomHealthStatus(serviceID, instanceID, status string) error {
	if err := checkID(serviceID, "serviceId"); err != nil {
		return err
	}
	if err := checkID(instanceID, "instanceId"); err != nil {
		return err
	}
	if status == "" {
		return notNull("status")
	}
	if err := enumCheck(status, "status", HealthHealthy, HealthUnhealthy); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	svc, verr := s.serviceFor(serviceID)
	if verr != nil {
		return verr
	}
	inst := s.instances[svc.ID][instanceID]
	if inst == nil {
		return instanceNotFound(svc.ID, instanceID)
	}
	if !svc.CustomHealth {
		return errorf(CodeCustomHealthNotFound, "The health check for the instance that's specified by ServiceId and InstanceId isn't a custom health check.")
	}
	n := inst.clone()
	switch {
	case status == inst.Health:
		n.PendingHealth, n.PendingAt = "", time.Time{}
	case status == inst.PendingHealth:
		return nil
	case s.healthDelay <= 0:
		n.Health, n.PendingHealth, n.PendingAt = status, "", time.Time{}
	default:
		n.PendingHealth, n.PendingAt = status, s.now().UTC().Add(s.healthDelay)
	}
	if n.Health == inst.Health && n.PendingHealth == inst.PendingHealth && n.PendingAt.Equal(inst.PendingAt) {
		return nil
	}
	c := newChange()
	c.putInstance(n)
	if err := s.commit(c); err != nil {
		return err
	}
	s.log.Info("cloudmap: custom health status", "service", svc.ID, "instance", inst.ID, "status", n.Health, "pending", n.PendingHealth)
	if n.Health != inst.Health {
		s.syncHealthLocked(svc)
	}
	s.scheduleHealthLocked()
	return nil
}

// syncHealthLocked rewrites a service's records after a health change; a failure is
// logged: the status is Cloud Map's record whatever the zone says, and the next change or
// restart writes the records again.
func (s *Store) syncHealthLocked(svc *Service) {
	if err := s.syncServiceLocked(svc, nil); err != nil {
		s.log.Warn("cloudmap: DNS records after a health change", "service", svc.ID, "err", err)
	}
}

// scheduleHealthLocked sets the timer for the earliest pending health status; s.writeMu
// must be held.
func (s *Store) scheduleHealthLocked() {
	if s.closed {
		return
	}
	var next time.Time
	for _, m := range s.instances {
		for _, inst := range m {
			if inst.PendingHealth != "" && (next.IsZero() || inst.PendingAt.Before(next)) {
				next = inst.PendingAt
			}
		}
	}
	if next.Equal(s.healthAt) && s.healthTimer != nil {
		return
	}
	if s.healthTimer != nil {
		s.healthTimer.Stop()
		s.healthTimer = nil
	}
	s.healthAt = next
	if next.IsZero() {
		return
	}
	s.healthTimer = time.AfterFunc(max(0, next.Sub(s.now())), func() {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
		if s.closed {
			return
		}
		s.healthTimer, s.healthAt = nil, time.Time{}
		if err := s.applyDueHealthLocked(); err != nil {
			s.log.Error("cloudmap: applying custom health statuses", "err", err)
		}
		s.scheduleHealthLocked()
	})
}

// applyDueHealthLocked puts into effect every pending health status whose time has come
// and rewrites the DNS records of the services concerned; s.writeMu must be held.
func (s *Store) applyDueHealthLocked() error {
	now := s.now()
	c := newChange()
	touched := map[string]bool{}
	for svcID, m := range s.instances {
		for _, inst := range m {
			if inst.PendingHealth == "" || inst.PendingAt.After(now) {
				continue
			}
			n := inst.clone()
			n.Health, n.PendingHealth, n.PendingAt = inst.PendingHealth, "", time.Time{}
			c.putInstance(n)
			touched[svcID] = true
		}
	}
	if len(touched) == 0 {
		return nil
	}
	if err := s.commit(c); err != nil {
		return err
	}
	for id := range touched {
		if svc := s.services[id]; svc != nil {
			s.syncHealthLocked(svc)
		}
	}
	return nil
}

// DiscoverInput is DiscoverInstances.
type DiscoverInput struct {
	NamespaceName string
	ServiceName   string
	// HealthStatus is HEALTHY (the default), UNHEALTHY, ALL or HEALTHY_OR_ELSE_ALL; it is
	// ignored for a service without a health check.
	HealthStatus       string
	QueryParameters    map[string]string
	OptionalParameters map[string]string
	MaxResults         *int32
}

// Discovered is one instance DiscoverInstances returns.
type Discovered struct {
	InstanceID    string
	NamespaceName string
	ServiceName   string
	HealthStatus  string
	Attributes    map[string]string
}

// DiscoverInstances returns a service's instances that have every QueryParameters
// attribute, narrowed by health, then by OptionalParameters when some instances have them
// all (otherwise they are ignored), in random order, at most MaxResults; and the
// service's InstancesRevision.
func (s *Store) DiscoverInstances(in DiscoverInput) ([]Discovered, int64, error) {
	if in.NamespaceName == "" {
		return nil, 0, notNull("namespaceName")
	}
	if err := maxLen(in.NamespaceName, "namespaceName", 1024); err != nil {
		return nil, 0, err
	}
	if err := checkServiceName(in.ServiceName, "serviceName"); err != nil {
		return nil, 0, err
	}
	size := defaultPageSize
	if in.MaxResults != nil {
		if err := rangeCheck(int64(*in.MaxResults), "maxResults", 1, maxDiscoverResults); err != nil {
			return nil, 0, err
		}
		size = int(*in.MaxResults)
	}
	filter := in.HealthStatus
	if filter == "" {
		filter = HealthHealthy
	}
	if err := enumCheck(filter, "healthStatus", HealthHealthy, HealthUnhealthy, FilterAll, FilterHealthyOrElseAll); err != nil {
		return nil, 0, err
	}
	if err := checkAttributeMap(in.QueryParameters, "queryParameters"); err != nil {
		return nil, 0, err
	}
	if err := checkAttributeMap(in.OptionalParameters, "optionalParameters"); err != nil {
		return nil, 0, err
	}
	s.mu.RLock()
	ns, svc, err := s.lookupByName(in.NamespaceName, in.ServiceName)
	if err != nil {
		s.mu.RUnlock()
		return nil, 0, err
	}
	insts := s.instancesOf(svc.ID)
	s.mu.RUnlock()

	hasAll := func(inst *Instance, want map[string]string) bool {
		for k, v := range want {
			if got, ok := inst.Attributes[k]; !ok || got != v {
				return false
			}
		}
		return true
	}
	insts = slices.DeleteFunc(insts, func(i *Instance) bool { return !hasAll(i, in.QueryParameters) })
	if svc.CustomHealth {
		healthy := func(i *Instance) bool { return i.Health != HealthUnhealthy }
		switch filter {
		case HealthHealthy:
			insts = slices.DeleteFunc(insts, func(i *Instance) bool { return !healthy(i) })
		case HealthUnhealthy:
			insts = slices.DeleteFunc(insts, healthy)
		case FilterHealthyOrElseAll:
			if slices.ContainsFunc(insts, healthy) {
				insts = slices.DeleteFunc(insts, func(i *Instance) bool { return !healthy(i) })
			}
		}
	}
	if len(in.OptionalParameters) > 0 {
		opt := slices.DeleteFunc(slices.Clone(insts), func(i *Instance) bool { return !hasAll(i, in.OptionalParameters) })
		if len(opt) > 0 {
			insts = opt
		}
	}
	rand.Shuffle(len(insts), func(i, j int) { insts[i], insts[j] = insts[j], insts[i] })
	insts = insts[:min(size, len(insts))]
	out := make([]Discovered, len(insts))
	for i, inst := range insts {
		out[i] = Discovered{InstanceID: inst.ID, NamespaceName: ns.HTTPName, ServiceName: svc.Name,
			HealthStatus: inst.HealthStatus(svc), Attributes: maps.Clone(inst.Attributes)}
	}
	return out, svc.Revision, nil
}

// DiscoverInstancesRevision returns a service's InstancesRevision.
func (s *Store) DiscoverInstancesRevision(namespaceName, serviceName string) (int64, error) {
	if namespaceName == "" {
		return 0, notNull("namespaceName")
	}
	if err := checkServiceName(serviceName, "serviceName"); err != nil {
		return 0, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, svc, err := s.lookupByName(namespaceName, serviceName)
	if err != nil {
		return 0, err
	}
	return svc.Revision, nil
}

// lookupByName finds a namespace by HTTP name and one of its services by name (any case
// in a DNS namespace, where names that differ only by case are one DNS name); s.mu held.
func (s *Store) lookupByName(namespaceName, serviceName string) (*Namespace, *Service, *Error) {
	var ns *Namespace
	for _, n := range s.namespaces {
		if n.HTTPName == namespaceName {
			ns = n
			break
		}
	}
	if ns == nil {
		return nil, nil, namespaceNameNotFound(namespaceName)
	}
	for _, v := range s.services {
		if v.NamespaceID == ns.ID && (v.Name == serviceName || ns.IsDNS() && strings.EqualFold(v.Name, serviceName)) {
			return ns, v, nil
		}
	}
	return nil, nil, serviceNameNotFound(serviceName)
}
