package elb

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// TargetInput is a TargetDescription as a request gives it.
type TargetInput struct {
	ID               string
	Port             *int
	AvailabilityZone string
}

// Target health states and reasons, as DescribeTargetHealth reports them.
const (
	StateInitial     = "initial"
	StateHealthy     = "healthy"
	StateUnhealthy   = "unhealthy"
	StateUnused      = "unused"
	StateDraining    = "draining"
	StateUnavailable = "unavailable"

	ReasonRegistrationInProgress   = "Elb.RegistrationInProgress"
	ReasonInitialHealthChecking    = "Elb.InitialHealthChecking"
	ReasonResponseCodeMismatch     = "Target.ResponseCodeMismatch"
	ReasonTimeout                  = "Target.Timeout"
	ReasonFailedHealthChecks       = "Target.FailedHealthChecks"
	ReasonNotRegistered            = "Target.NotRegistered"
	ReasonNotInUse                 = "Target.NotInUse"
	ReasonDeregistrationInProgress = "Target.DeregistrationInProgress"
	ReasonInternalError            = "Elb.InternalError"
	ReasonHealthCheckDisabled      = "Target.HealthCheckDisabled"
	// ReasonInvalidState is an instance target that is not running (stopped, terminated):
	// unused, and sent nothing.
	ReasonInvalidState = "Target.InvalidState"
)

// TargetHealth is one target's health: State, and for any state but healthy a Reason and
// Description.
type TargetHealth struct {
	State       string
	Reason      string
	Description string
}

// HealthSource reports what health checks have found: for a target group, the health of
// each target it has checked, by address ("10.0.0.1:8080", "[::1]:8080": Target.Address).
// The proxy's prober implements it; a target it has not yet checked is simply absent.
type HealthSource interface {
	TargetHealth(targetGroupARN string) map[string]TargetHealth
}

// Instances reports the EC2 instances that exist: the private IP of a running instance,
// by id. The sandbox's EC2 store implements it; RegisterTargets asks it about each
// instance id registered to a group of target type instance.
type Instances interface {
	InstanceIP(id string) (netip.Addr, bool)
}

// InstanceStates is what an Instances may also tell: an instance's state ("stopped",
// "terminated", …; ok false: no such instance), for DescribeTargetHealth's reason.
type InstanceStates interface {
	InstanceState(id string) (state string, ok bool)
}

// InstanceEvents is what an Instances may also do: call fn after every change to the
// instances, until cancelled. The store then hands its subscribers the current snapshot
// again (Reapply), so that an instance that stopped or moved is served as it now is.
type InstanceEvents interface {
	Subscribe(fn func()) (cancel func())
}

// healthHolder holds what the store consults outside itself: the health-check results
// (src) and the EC2 instances (inst). Each setter swaps in a copy with its own part
// changed, so neither can undo the other.
type healthHolder struct {
	src  HealthSource
	inst Instances
}

// swapSources replaces the holder with a copy changed by set.
func (s *Store) swapSources(set func(h *healthHolder)) {
	for {
		old := s.health.Load()
		var n healthHolder
		if old != nil {
			n = *old
		}
		set(&n)
		if s.health.CompareAndSwap(old, &n) {
			return
		}
	}
}

// SetInstances sets where RegisterTargets learns which instance ids exist and run; nil
// unsets it, and an instance id is then refused as a target the sandbox has no instance
// for.
//
// When inst also implements InstanceEvents, the store follows it: after every change to
// the instances its subscribers get the current snapshot again (Reapply).
func (s *Store) SetInstances(inst Instances) {
	s.instMu.Lock()
	defer s.instMu.Unlock()
	if s.instUnsub != nil {
		s.instUnsub()
		s.instUnsub = nil
	}
	s.swapSources(func(h *healthHolder) { h.inst = inst })
	if ev, ok := inst.(InstanceEvents); ok {
		s.instUnsub = ev.Subscribe(s.Reapply)
	}
}

// instances is what SetInstances set, or nil.
func (s *Store) instances() Instances {
	if h := s.health.Load(); h != nil {
		return h.inst
	}
	return nil
}

// SetHealthSource sets where DescribeTargetHealth gets health-check results; nil unsets it.
//
// Without a source nothing checks targets, and the store says so rather than guess: a
// target of a group in use stays "initial" (Elb.RegistrationInProgress), never healthy,
// so a gate that waits for healthy targets waits rather than passes on no evidence. The
// states ELBv2 derives from the configuration, not from checks (unused for a group no
// listener forwards to or a target not registered, draining after deregistration), are
// the store's own and hold whatever the source says.
func (s *Store) SetHealthSource(src HealthSource) {
	s.swapSources(func(h *healthHolder) { h.src = src })
}

// TargetHealthDescription is one entry of DescribeTargetHealth.
type TargetHealthDescription struct {
	Target          Target
	HealthCheckPort string
	Health          TargetHealth
}

// running reports whether the instance id runs (has a private IP to be served at).
func running(inst Instances, id string) bool {
	_, ok := inst.InstanceIP(id)
	return ok
}

// instanceState is the state of an instance that does not run, as DescribeTargetHealth
// names it: "terminated" for one EC2 no longer knows.
func instanceState(inst Instances, id string) string {
	if st, ok := inst.(InstanceStates); ok {
		if state, ok := st.InstanceState(id); ok {
			return state
		}
	}
	return "terminated"
}

// checkTargets validates the targets of a request against their group and fills in ports;
// inst (nil: none) tells the instances that exist from those that do not.
func checkTargets(tg *TargetGroup, in []TargetInput, register bool, inst Instances) ([]TargetKey, *Error) {
	if in == nil {
		return nil, notNull("targets")
	}
	var out []TargetKey
	for i, tr := range in {
		p := fmt.Sprintf("targets.%d.member", i+1)
		if tr.ID == "" {
			return nil, notNull(p + ".id")
		}
		port := tg.Port
		if tr.Port != nil {
			if err := rangeCheck(*tr.Port, p+".port", 1, 65535); err != nil {
				return nil, err
			}
			port = *tr.Port
		}
		if register {
			if err := checkTargetID(tg, tr.ID, inst); err != nil {
				return nil, err
			}
		}
		out = append(out, TargetKey{ID: tr.ID, Port: port})
	}
	return out, nil
}

// checkTargetID checks that a target id fits its group: an IP address in a group of type
// ip, or in a group of type instance the id of a running instance inst knows. ELBv2 refuses
// any other instance id with InvalidTarget, "The following targets are not in a running
// state and cannot be registered: 'i-…'" (as public reports of RegisterTargets quote it,
// e.g. kubernetes-sigs/cluster-api-provider-aws#5037), and an IP address in an instance
// group with ValidationError "Instance ID '…' is not valid". Without EC2 (inst nil) an
// instance group takes addresses, as the sandbox's instance groups did before it had EC2.
func checkTargetID(tg *TargetGroup, id string, inst Instances) *Error {
	addr, err := netip.ParseAddr(id)
	switch {
	case err == nil && tg.TargetType == "instance" && inst != nil:
		return validationf("Instance ID '%s' is not valid", id)
	case err == nil && (tg.IPAddressType == "ipv6") == addr.Is6() && !addr.Is4In6():
		return nil
	case err == nil:
		return validationf("The IP address '%s' is not a valid %s address", id, map[bool]string{true: "IPv6", false: "IPv4"}[tg.IPAddressType == "ipv6"])
	case tg.TargetType == "ip":
		return validationf("The IP address '%s' is not a valid IPv4 address", id)
	case strings.HasPrefix(id, "i-") && inst == nil:
		return errorf(CodeInvalidTarget, "The following targets are not supported by the crossfade sandbox, which has no EC2 instances: '%s'; register the instance's IP address as the target Id", id)
	case strings.HasPrefix(id, "i-"):
		if _, ok := inst.InstanceIP(id); !ok {
			return errorf(CodeInvalidTarget, "The following targets are not in a running state and cannot be registered: '%s'", id)
		}
		return nil
	}
	return validationf("Instance ID '%s' is not valid", id)
}

// editTargets begins a change to the targets of the group arn: the group as stored, a copy
// of it whose Targets (a copy too) the caller changes and stores, and the keys of targets
// checked against the group as register says.
func (t *txn) editTargets(region, arn string, targets []TargetInput, register bool) (*TargetGroup, *TargetGroup, []TargetKey, *Error) {
	tg, err := t.getTG(region, arn)
	if err != nil {
		return nil, nil, nil, err
	}
	keys, err := checkTargets(tg, targets, register, t.s.instances())
	if err != nil {
		return nil, nil, nil, err
	}
	n := *tg
	n.Targets = slices.Clone(tg.Targets)
	return tg, &n, keys, nil
}

// indexTarget is the index of the target k names (id and port) in ts, or -1.
func indexTarget(ts []Target, k TargetKey) int {
	return slices.IndexFunc(ts, func(tr Target) bool { return tr.Key() == k })
}

// RegisterTargets registers targets; registering a registered one changes nothing, and
// registering a draining one takes it back into service.
func (s *Store) RegisterTargets(region, arn string, targets []TargetInput) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	_, n, keys, err := t.editTargets(region, arn, targets, true)
	if err != nil {
		return err
	}
	now := s.now().UTC()
	for i, k := range keys {
		j := indexTarget(n.Targets, k)
		switch {
		case j < 0:
			n.Targets = append(n.Targets, Target{ID: k.ID, Port: k.Port, AvailabilityZone: targets[i].AvailabilityZone, RegisteredAt: now})
		case n.Targets[j].Draining():
			n.Targets[j].DrainUntil, n.Targets[j].RegisteredAt = time.Time{}, now
		}
	}
	if len(n.Targets) > maxTargetsPerTargetGroup {
		return errorf(CodeTooManyTargets, "You've reached the limit on the number of targets: a target group can have at most %d", maxTargetsPerTargetGroup)
	}
	t.tgs[arn] = n
	return s.commit(t)
}

// DeregisterTargets deregisters targets. A target of a group in use drains for the group's
// deregistration delay; one of a group nothing forwards to goes at once. Deregistering a
// target that is not registered (on that port) succeeds and changes nothing, as on ELBv2.
func (s *Store) DeregisterTargets(region, arn string, targets []TargetInput) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	tg, n, keys, err := t.editTargets(region, arn, targets, false)
	if err != nil {
		return err
	}
	inUse := len(t.targetGroupUsers()[arn]) > 0
	until := s.now().UTC().Add(tg.DeregistrationDelay())
	for _, k := range keys {
		j := indexTarget(n.Targets, k)
		switch {
		case j < 0 || n.Targets[j].Draining():
		case inUse && tg.DeregistrationDelay() > 0:
			n.Targets[j].DrainUntil = until
		default:
			n.Targets = slices.Delete(n.Targets, j, j+1)
		}
	}
	t.tgs[arn] = n
	return s.commit(t)
}

// DescribeTargetHealth reports the health of the given targets, or of every registered one.
func (s *Store) DescribeTargetHealth(region, arn string, targets []TargetInput) ([]TargetHealthDescription, error) {
	s.writeMu.Lock()
	t := s.begin()
	tg, err := t.getTG(region, arn)
	if err != nil {
		s.writeMu.Unlock()
		return nil, err
	}
	inUse := len(t.targetGroupUsers()[arn]) > 0
	s.writeMu.Unlock()

	want := tg.Targets
	if targets != nil {
		keys, err := checkTargets(tg, targets, false, nil)
		if err != nil {
			return nil, err
		}
		want = nil
		for i, k := range keys {
			j := indexTarget(tg.Targets, k)
			if j < 0 {
				want = append(want, Target{ID: k.ID, Port: k.Port, AvailabilityZone: targets[i].AvailabilityZone})
			} else {
				want = append(want, tg.Targets[j])
			}
		}
	}
	var checked map[string]TargetHealth
	inst := s.instances()
	h := s.health.Load()
	if h != nil && h.src == nil {
		h = nil // instances set, no health source
	}
	if h != nil && inUse {
		// Outside the store's locks: the source is the proxy, which may be busy.
		checked = h.src.TargetHealth(arn)
	}
	out := make([]TargetHealthDescription, 0, len(want))
	for _, tr := range want {
		d := TargetHealthDescription{Target: tr, HealthCheckPort: tg.HealthCheck.Port}
		if d.HealthCheckPort == "traffic-port" {
			d.HealthCheckPort = strconv.Itoa(tr.Port)
		}
		registered := slices.ContainsFunc(tg.Targets, func(x Target) bool { return x.Key() == tr.Key() })
		res, ok := checked[tr.Address()]
		switch {
		case !registered:
			d.Health = TargetHealth{StateUnused, ReasonNotRegistered, "Target is not registered to the target group"}
		case tr.Draining():
			d.Health = TargetHealth{StateDraining, ReasonDeregistrationInProgress, "Target deregistration is in progress"}
		case inst != nil && tg.TargetType == "instance" && strings.HasPrefix(tr.ID, "i-") && !running(inst, tr.ID):
			// As ELBv2 says of a stopped instance: no health check, no traffic.
			d.Health = TargetHealth{StateUnused, ReasonInvalidState, fmt.Sprintf("Target is in the %s state", instanceState(inst, tr.ID))}
		case !inUse:
			d.Health = TargetHealth{StateUnused, ReasonNotInUse, "Target group is not configured to receive traffic from the load balancer"}
		case ok && res.State != "":
			d.Health = res
		case h == nil:
			d.Health = TargetHealth{StateInitial, ReasonRegistrationInProgress, "Target registration is in progress"}
		default:
			d.Health = TargetHealth{StateInitial, ReasonInitialHealthChecking, "Initial health checks in progress"}
		}
		out = append(out, d)
	}
	return out, nil
}
