package cloudmap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	"github.com/aws/aws-sdk-go-v2/service/servicediscovery/types"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// Defaults of a Publisher.
const (
	// DefaultResync is how often a cached namespace, service list or instance list is
	// read again although nothing failed: what another registrar changed shows up within
	// it. The DNS side's zone cache uses the same default.
	DefaultResync = time.Hour
	// DefaultOperationTimeout bounds the wait for one registration or deregistration to
	// leave PENDING. Cloud Map usually finishes within seconds; a DNS namespace's record
	// changes can take longer.
	DefaultOperationTimeout = time.Minute
	// lookupRetry is how soon a namespace or service that was not found is looked up
	// again (someone may be creating it), at most.
	lookupRetry = time.Minute
	// inFlight bounds the writes of one service under way at once: a rollout of a
	// hundred pods is not a hundred sequential waits on GetOperation, nor a burst that
	// Cloud Map throttles.
	inFlight = 8
	// Backoff of an instance Cloud Map refused: resent after a minute, two, four, … an
	// hour, or at once when what it would write changes.
	minRefusalBackoff = time.Minute
	maxRefusalBackoff = time.Hour
)

// ProblemKind says what stands in an instance's way.
type ProblemKind string

// The problems a reconcile reports besides invalid objects.
const (
	// ProblemConflict: another owner's instance holds the id; crossfade does not touch it.
	ProblemConflict ProblemKind = "conflict"
	// ProblemRefused: Cloud Map refused the registration (the call, or its operation's
	// FAIL), or it is held back after a refusal.
	ProblemRefused ProblemKind = "refused"
)

// Problem is an instance not written, attributed to the object that wants it.
type Problem struct {
	Object  endpoint.ObjectRef
	Kind    ProblemKind
	Target  Target
	ID      string
	Message string
	// Until is, for a refusal, when the op is sent again: nothing new can be said of it
	// before then.
	Until time.Time
}

// Report is what one reconcile did.
type Report struct {
	// Invalid are objects whose annotations cannot be published, including names of
	// namespaces and services Cloud Map does not have.
	Invalid []*endpoint.InvalidError
	// Problems are instances not written: conflicts and refusals.
	Problems []Problem
	// Instances counts the wanted instances per target.
	Instances map[Target]int
	// Written counts the writes Cloud Map accepted (in a dry run: would send), by action.
	Written map[Action]int
	// Err joins the failures (an unreachable API, a timed-out operation); the next
	// reconcile tries again, from a fresh list of what failed.
	Err error
}

// Config configures a Publisher.
type Config struct {
	// API is the Cloud Map client.
	API API
	// Identity is who this controller is in Cloud Map.
	Identity Identity
	// Resync and OperationTimeout default to DefaultResync and DefaultOperationTimeout.
	Resync, OperationTimeout time.Duration
	// DryRun reads but writes nothing: each write is logged as it would be sent.
	DryRun bool
	// Metrics receives the numbers; nil records none.
	Metrics *Metrics
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Publisher keeps Cloud Map services holding the instances the cluster's Services ask
// for. One reconcile runs at a time (Reconcile is not safe for concurrent use).
type Publisher struct {
	cfg Config
	log *slog.Logger

	// namespaces are the managed namespaces by name: those Identity.Namespaces names,
	// and every one an annotation named since the start, so that instances left in a
	// namespace no Service names any more are still found and deregistered.
	namespaces map[string]*namespaceState
	refusals   map[string]*refusal
	// problems are the last problems reported per target: a target that cannot be read
	// this time (its namespace or service lookup, or its list, failed) reports them
	// again rather than none, so that events are not sent again and gauges do not drop
	// to zero because of one throttled call.
	problems map[Target][]Problem
}

// namespaceState is what is cached of one namespace.
type namespaceState struct {
	name, id string
	// missing says why the namespace is not resolved ("" once it is).
	missing  string
	lookedUp time.Time
	// services maps each service of the namespace, by name, to its state.
	services       map[string]*serviceState
	servicesListed time.Time
}

// serviceState is what is cached of one Cloud Map service.
type serviceState struct {
	id, name string
	// have are its instances by id: this owner's with every attribute, others' with
	// only their AttrOwner (all that planning reads of them).
	have   map[string]map[string]string
	listed time.Time // zero: list again before planning
}

type refusal struct {
	fingerprint string
	until       time.Time
	delay       time.Duration
	reason      string
	touched     bool
}

// New returns a Publisher.
func New(cfg Config) (*Publisher, error) {
	if cfg.API == nil {
		return nil, errors.New("cloud map: no API client")
	}
	if err := cfg.Identity.Validate(); err != nil {
		return nil, err
	}
	if cfg.Resync <= 0 {
		cfg.Resync = DefaultResync
	}
	if cfg.OperationTimeout <= 0 {
		cfg.OperationTimeout = DefaultOperationTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Publisher{cfg: cfg, log: log.With("publisher", "cloudmap"), namespaces: map[string]*namespaceState{},
		refusals: map[string]*refusal{}, problems: map[Target][]Problem{}}
	for _, n := range cfg.Identity.Namespaces {
		p.namespaces[n] = &namespaceState{name: n}
	}
	return p, nil
}

// Reconcile brings every managed Cloud Map service to hold the instances services and
// their EndpointSlices ask for. complete false (some objects not known yet) deregisters
// nothing.
func (p *Publisher) Reconcile(ctx context.Context, services []*corev1.Service, eps []*discoveryv1.EndpointSlice, complete bool) *Report {
	d := Desire(services, eps, p.cfg.Identity)
	rep := &Report{Invalid: d.Invalid, Instances: map[Target]int{}, Written: map[Action]int{}}
	for t, insts := range d.Instances {
		rep.Instances[t] = len(insts)
		if p.namespaces[t.Namespace] == nil {
			p.namespaces[t.Namespace] = &namespaceState{name: t.Namespace}
		}
	}
	held := maps.Clone(d.Held)
	targets := slices.SortedFunc(maps.Keys(d.Wanted), func(a, b Target) int { return strings.Compare(a.String(), b.String()) })
	// hold keeps the instances of the objects naming a target in namespace (service ""
	// for any) wherever they are: they may only have moved there.
	hold := func(namespace, service string) {
		for _, t := range targets {
			if t.Namespace == namespace && (service == "" || t.Service == service) {
				for _, r := range d.Wanted[t] {
					held[r] = true
				}
			}
		}
	}
	var errs []error
	// unread are the targets not planned because reading them failed: whole namespaces
	// (Service "") or single services. Not planning one says nothing about its refused
	// ops or its problems, which are kept as they were.
	unread := map[Target]bool{}
	// Resolve every managed namespace and list what is stale first, so that every target
	// that cannot be resolved holds its objects' instances before anything is planned.
	var ready []*namespaceState
	for _, name := range slices.Sorted(maps.Keys(p.namespaces)) {
		ns := p.namespaces[name]
		if err := p.resolve(ctx, ns, d.Wanted); err != nil {
			errs = append(errs, err)
			hold(name, "")
			unread[Target{Namespace: name}] = true
			for _, s := range ns.services {
				p.keepRefusals(s.id)
			}
			continue
		}
		if ns.missing != "" {
			for _, t := range targets {
				if t.Namespace == name {
					rep.Invalid = append(rep.Invalid, notFound(d.Wanted[t], t, ns.missing)...)
				}
			}
			hold(name, "")
			continue
		}
		for _, t := range targets {
			if t.Namespace == name && ns.services[t.Service] == nil {
				rep.Invalid = append(rep.Invalid, notFound(d.Wanted[t], t, fmt.Sprintf("namespace %s (%s) has no service named %q", name, ns.id, t.Service))...)
				hold(name, t.Service)
			}
		}
		for _, s := range sortedServices(ns) {
			if err := p.list(ctx, s); err != nil {
				errs = append(errs, fmt.Errorf("cloud map service %s/%s (%s): list instances: %w", name, s.name, s.id, err))
				hold(name, s.name)
				unread[Target{Namespace: name, Service: s.name}] = true
				p.keepRefusals(s.id)
			}
		}
		ready = append(ready, ns)
	}
	keep := Keep{All: !complete, Held: held}
	for _, ns := range ready {
		for _, s := range sortedServices(ns) {
			if s.listed.IsZero() {
				continue // its list failed above
			}
			t := Target{Namespace: ns.name, Service: s.name}
			ops, conflicts := Diff(d.Instances[t], s.have, p.cfg.Identity.Owner, keep)
			for _, c := range conflicts {
				rep.Problems = append(rep.Problems, conflictProblem(t, c))
			}
			if err := p.apply(ctx, t, s, ops, rep); err != nil {
				errs = append(errs, err)
			}
		}
	}
	p.pruneRefusals()
	p.carryProblems(rep, unread)
	p.forget(d.Wanted)
	rep.Err = errors.Join(errs...)
	refused := 0
	for _, pr := range rep.Problems {
		if pr.Kind == ProblemRefused {
			refused++
		}
	}
	p.cfg.Metrics.set(rep.Instances, len(rep.Problems), refused)
	return rep
}

// forget drops the namespaces no Service names and no flag lists once none of their
// services holds an instance of this owner: nothing is left there to deregister, so they
// need no lookup and no list any more.
func (p *Publisher) forget(wanted map[Target][]string) {
	for name, ns := range p.namespaces {
		if slices.Contains(p.cfg.Identity.Namespaces, name) {
			continue
		}
		// Not resolved or not listed (a failed call): what it holds is unknown.
		keep := ns.missing == "" && (ns.lookedUp.IsZero() || ns.servicesListed.IsZero())
		for t := range wanted {
			keep = keep || t.Namespace == name
		}
		for _, s := range ns.services {
			if s.listed.IsZero() {
				keep = true
			}
			for _, attrs := range s.have {
				keep = keep || Owned(attrs, p.cfg.Identity.Owner)
			}
		}
		if !keep {
			delete(p.namespaces, name)
		}
	}
}

func sortedServices(ns *namespaceState) []*serviceState {
	var out []*serviceState
	for _, name := range slices.Sorted(maps.Keys(ns.services)) {
		out = append(out, ns.services[name])
	}
	return out
}

// notFound reports each resource naming t as invalid for why.
func notFound(resources []string, t Target, why string) []*endpoint.InvalidError {
	var out []*endpoint.InvalidError
	for _, r := range resources {
		out = append(out, &endpoint.InvalidError{Object: refOf(r), Field: "annotation " + AnnotationService, Value: t.String(),
			Reason: why + "; create it, or fix the annotation (its instances are kept as they are meanwhile)"})
	}
	return out
}

// refOf turns a resource label ("service/default/web") into the object it names.
func refOf(res string) endpoint.ObjectRef {
	parts := strings.SplitN(res, "/", 3)
	if len(parts) != 3 {
		return endpoint.ObjectRef{Kind: "Service", Name: res}
	}
	return endpoint.ObjectRef{Kind: "Service", Namespace: parts[1], Name: parts[2]}
}

func conflictProblem(t Target, c Conflict) Problem {
	holder := "another registrar (it has no " + AttrOwner + " attribute)"
	if c.Owner != "" {
		holder = fmt.Sprintf("owner %q (%s=%s)", c.Owner, AttrOwner, c.Owner)
	}
	return Problem{Object: refOf(c.Resource), Kind: ProblemConflict, Target: t, ID: c.ID,
		Message: fmt.Sprintf("Cloud Map service %s: instance %s is registered by %s; crossfade does not overwrite it and this endpoint is not registered: deregister or rename that instance",
			t, c.ID, holder)}
}

// resolve finds the namespace's id and its services, from the cache while fresh.
func (p *Publisher) resolve(ctx context.Context, ns *namespaceState, wanted map[Target][]string) error {
	now := p.cfg.Now()
	wantedHere := false
	for t := range wanted {
		wantedHere = wantedHere || t.Namespace == ns.name
	}
	// A missing namespace a Service names is looked for again soon (someone may be
	// creating it); one nothing names, at the resync.
	stale := now.Sub(ns.lookedUp) >= p.cfg.Resync || (ns.missing != "" && wantedHere && now.Sub(ns.lookedUp) >= min(lookupRetry, p.cfg.Resync))
	if ns.lookedUp.IsZero() || stale {
		id, missing, err := p.lookupNamespace(ctx, ns.name)
		if err != nil {
			return fmt.Errorf("cloud map namespace %s: %w", ns.name, err)
		}
		if id != ns.id {
			ns.services, ns.servicesListed = nil, time.Time{}
		}
		ns.id, ns.missing, ns.lookedUp = id, missing, now
	}
	if ns.missing != "" {
		return nil
	}
	missingService := false
	for t := range wanted {
		if t.Namespace == ns.name && ns.services[t.Service] == nil {
			missingService = true
		}
	}
	age := now.Sub(ns.servicesListed)
	if !ns.servicesListed.IsZero() && age < p.cfg.Resync && !(missingService && age >= min(lookupRetry, p.cfg.Resync)) {
		return nil
	}
	byName, err := p.listServices(ctx, ns.id)
	if err != nil {
		return fmt.Errorf("cloud map namespace %s (%s): list services: %w", ns.name, ns.id, err)
	}
	services := map[string]*serviceState{}
	for name, id := range byName {
		if s := ns.services[name]; s != nil && s.id == id {
			services[name] = s // keep its instances cache
			continue
		}
		services[name] = &serviceState{id: id, name: name}
	}
	ns.services, ns.servicesListed = services, now
	return nil
}

// lookupNamespace finds a namespace's id by name; missing says why there is none.
func (p *Publisher) lookupNamespace(ctx context.Context, name string) (id, missing string, err error) {
	var ids []string
	in := &sd.ListNamespacesInput{Filters: []types.NamespaceFilter{{Name: types.NamespaceFilterNameName, Values: []string{name}, Condition: types.FilterConditionEq}}}
	for pages := sd.NewListNamespacesPaginator(p.cfg.API, in); pages.HasMorePages(); {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return "", "", fmt.Errorf("list namespaces: %w", err)
		}
		for _, n := range out.Namespaces {
			if aws.ToString(n.Name) == name {
				ids = append(ids, aws.ToString(n.Id))
			}
		}
	}
	switch len(ids) {
	case 0:
		return "", fmt.Sprintf("Cloud Map has no namespace named %q", name), nil
	case 1:
		return ids[0], "", nil
	}
	return "", fmt.Sprintf("%d Cloud Map namespaces are named %q (%s); crossfade cannot tell which is meant", len(ids), name, strings.Join(ids, ", ")), nil
}

// listServices lists a namespace's services, name to id.
func (p *Publisher) listServices(ctx context.Context, nsID string) (map[string]string, error) {
	out := map[string]string{}
	in := &sd.ListServicesInput{Filters: []types.ServiceFilter{{Name: types.ServiceFilterNameNamespaceId, Values: []string{nsID}, Condition: types.FilterConditionEq}}}
	for pages := sd.NewListServicesPaginator(p.cfg.API, in); pages.HasMorePages(); {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, s := range page.Services {
			out[aws.ToString(s.Name)] = aws.ToString(s.Id)
		}
	}
	return out, nil
}

// list reads a service's instances when its cache is stale.
func (p *Publisher) list(ctx context.Context, s *serviceState) error {
	now := p.cfg.Now()
	if !s.listed.IsZero() && now.Sub(s.listed) < p.cfg.Resync {
		return nil
	}
	s.listed = time.Time{}
	have := map[string]map[string]string{}
	for pages := sd.NewListInstancesPaginator(p.cfg.API, &sd.ListInstancesInput{ServiceId: aws.String(s.id)}); pages.HasMorePages(); {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, in := range page.Instances {
			have[aws.ToString(in.Id)] = p.cached(in.Attributes)
		}
	}
	s.have, s.listed = have, now
	p.log.Debug("listed instances", "service", s.name, "service_id", s.id, "instances", len(have))
	return nil
}

// cached is what the cache keeps of an instance's attributes: all of them when this owner
// registered it, else only its AttrOwner.
func (p *Publisher) cached(attrs map[string]string) map[string]string {
	if Owned(attrs, p.cfg.Identity.Owner) {
		return maps.Clone(attrs)
	}
	out := map[string]string{}
	if v, ok := attrs[AttrOwner]; ok {
		out[AttrOwner] = v
	}
	return out
}

// outcome is what became of one Op.
type outcome struct {
	op     Op
	result string // ResultSuccess, … ; "" when nothing was sent
	// read says current holds the instance as read right before the write (nil: absent).
	read    bool
	current map[string]string
	// conflict is set when a registration found another owner's instance under its id.
	conflict *Conflict
	// refused is Cloud Map's reason, when it refused.
	refused string
	err     error
}

// apply runs a service's ops: registrations, then deregistrations, each group at most
// inFlight at a time, and records what became of them.
func (p *Publisher) apply(ctx context.Context, t Target, s *serviceState, ops []Op, rep *Report) error {
	var send []Op
	for _, op := range ops {
		if held, reason, until := p.held(s.id, op); held {
			rep.Problems = append(rep.Problems, refusedProblem(t, op, reason, until))
			continue
		}
		send = append(send, op)
	}
	if len(send) == 0 {
		return nil
	}
	if p.cfg.DryRun {
		for _, op := range send {
			p.log.Info("dry run: would "+string(op.Action)+" instance", "namespace", t.Namespace, "service", t.Service,
				"instance", op.ID, "resource", op.Resource, "attributes", op.Attributes)
			rep.Written[op.Action]++
		}
		return nil
	}
	var errs []error
	for _, group := range [][]Op{filter(send, Register), filter(send, Deregister)} {
		outs := make([]outcome, len(group))
		sem := make(chan struct{}, inFlight)
		var wg sync.WaitGroup
		for i, op := range group {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				outs[i] = p.write(ctx, s.id, op)
			}()
		}
		wg.Wait()
		for _, o := range outs {
			if err := p.record(t, s, o, rep); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func filter(ops []Op, a Action) []Op {
	var out []Op
	for _, op := range ops {
		if op.Action == a {
			out = append(out, op)
		}
	}
	return out
}

// write sends one op, after reading the instance again: the cache may be as old as the
// last list, and Cloud Map has no compare-and-swap, so this read is what keeps a stale
// cache from overwriting or deregistering an instance someone else registered since.
func (p *Publisher) write(ctx context.Context, serviceID string, op Op) outcome {
	o := outcome{op: op}
	cur, err := p.get(ctx, serviceID, op.ID)
	if err != nil {
		o.err = fmt.Errorf("read instance %s before %s: %w", op.ID, op.Action, err)
		return o
	}
	o.read, o.current = true, cur
	switch {
	case cur != nil && !Owned(cur, p.cfg.Identity.Owner):
		if op.Action == Register {
			o.conflict = &Conflict{ID: op.ID, Resource: op.Resource, Owner: cur[AttrOwner]}
		}
		return o // never written: not ours
	case op.Action == Register && cur != nil && maps.Equal(cur, op.Attributes):
		return o // already as wanted
	case op.Action == Deregister && cur == nil:
		return o // already gone
	}
	var opID *string
	switch op.Action {
	case Register:
		// A fresh input per call: the SDK writes the CreatorRequestId it generates into
		// the input, and Cloud Map takes a second call with the same one as a retry of
		// the first and does nothing.
		out, err := p.cfg.API.RegisterInstance(ctx, &sd.RegisterInstanceInput{ServiceId: aws.String(serviceID),
			InstanceId: aws.String(op.ID), Attributes: maps.Clone(op.Attributes)})
		if err == nil {
			opID = out.OperationId
		}
		o.err = err
	case Deregister:
		out, err := p.cfg.API.DeregisterInstance(ctx, &sd.DeregisterInstanceInput{ServiceId: aws.String(serviceID), InstanceId: aws.String(op.ID)})
		if err == nil {
			opID = out.OperationId
		}
		var nf *types.InstanceNotFound
		if errors.As(err, &nf) {
			o.current, o.result = nil, ResultSuccess
			return o
		}
		o.err = err
	}
	if o.err != nil {
		var inv *types.InvalidInput
		var limit *types.ResourceLimitExceeded
		switch {
		case errors.As(o.err, &inv), errors.As(o.err, &limit):
			o.result, o.refused, o.err = ResultFail, o.err.Error(), nil
		default:
			o.result, o.err = ResultError, fmt.Errorf("%s instance %s: %w", op.Action, op.ID, o.err)
		}
		return o
	}
	o.result, o.refused, o.err = p.wait(ctx, aws.ToString(opID))
	if o.err != nil {
		o.err = fmt.Errorf("%s instance %s: %w", op.Action, op.ID, o.err)
	}
	return o
}

// get reads an instance; nil when it does not exist.
func (p *Publisher) get(ctx context.Context, serviceID, id string) (map[string]string, error) {
	out, err := p.cfg.API.GetInstance(ctx, &sd.GetInstanceInput{ServiceId: aws.String(serviceID), InstanceId: aws.String(id)})
	var nf *types.InstanceNotFound
	if errors.As(err, &nf) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if out.Instance == nil {
		return nil, nil
	}
	attrs := out.Instance.Attributes
	if attrs == nil {
		attrs = map[string]string{}
	}
	return attrs, nil
}

// wait polls an operation until it leaves PENDING, at most OperationTimeout: 50 ms
// first (the sandbox and a quick Cloud Map answer at once), doubling to 2 s.
func (p *Publisher) wait(ctx context.Context, opID string) (result, refused string, err error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.OperationTimeout)
	defer cancel()
	delay := 50 * time.Millisecond
	for {
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ResultTimeout, "", fmt.Errorf("operation %s still pending after %s: %w", opID, p.cfg.OperationTimeout, context.Cause(ctx))
		case <-t.C:
		}
		out, err := p.cfg.API.GetOperation(ctx, &sd.GetOperationInput{OperationId: aws.String(opID)})
		if err != nil {
			if ctx.Err() != nil {
				return ResultTimeout, "", fmt.Errorf("operation %s: %w", opID, err)
			}
			return ResultError, "", fmt.Errorf("operation %s: %w", opID, err)
		}
		if op := out.Operation; op != nil {
			switch op.Status {
			case types.OperationStatusSuccess:
				return ResultSuccess, "", nil
			case types.OperationStatusFail:
				return ResultFail, fmt.Sprintf("operation %s failed: %s: %s", opID, aws.ToString(op.ErrorCode), aws.ToString(op.ErrorMessage)), nil
			}
		}
		delay = min(2*delay, 2*time.Second)
	}
}

// record applies one outcome to the cache, the report and the metrics.
func (p *Publisher) record(t Target, s *serviceState, o outcome, rep *Report) error {
	op := o.op
	log := p.log.With("namespace", t.Namespace, "service", t.Service, "service_id", s.id, "instance", op.ID, "resource", op.Resource)
	// What was read right before the write is the freshest view there is.
	switch {
	case o.read && o.current == nil:
		delete(s.have, op.ID)
	case o.read:
		s.have[op.ID] = p.cached(o.current)
	}
	if o.conflict != nil {
		rep.Problems = append(rep.Problems, conflictProblem(t, *o.conflict))
		return nil
	}
	if o.result == "" {
		if o.err != nil { // the read failed: nothing was sent
			s.listed = time.Time{}
			log.Error("cloud map: "+string(op.Action)+" not sent", "err", o.err)
			return fmt.Errorf("cloud map service %s: %w", t, o.err)
		}
		return nil
	}
	p.cfg.Metrics.operation(op.Action, o.result)
	switch o.result {
	case ResultSuccess:
		if op.Action == Register {
			s.have[op.ID] = maps.Clone(op.Attributes)
		} else {
			delete(s.have, op.ID)
		}
		rep.Written[op.Action]++
		log.Info("cloud map: "+string(op.Action)+"ed instance", "update", op.Update, "address", address(op.Attributes), "port", op.Attributes[AttrPort])
		return nil
	case ResultFail:
		until := p.refused(s.id, op, o.refused)
		rep.Problems = append(rep.Problems, refusedProblem(t, op, o.refused, until))
		s.listed = time.Time{} // read what is there before planning again
		return nil
	}
	// An error or a timeout: whether it took effect is unknown; list again next time.
	s.listed = time.Time{}
	log.Error("cloud map: "+string(op.Action)+" failed", "err", o.err)
	return fmt.Errorf("cloud map service %s: %w", t, o.err)
}

// refusedProblem reports an op Cloud Map refused; the message stays the same while the op
// is held back, so that its event is sent once per refusal.
func refusedProblem(t Target, op Op, reason string, until time.Time) Problem {
	return Problem{Object: refOf(op.Resource), Kind: ProblemRefused, Target: t, ID: op.ID, Until: until,
		Message: fmt.Sprintf("Cloud Map service %s refused the %s of instance %s (%s port %s): %s; it is sent again after %s, or at once when the Service changes",
			t, op.Action, op.ID, address(op.Attributes), op.Attributes[AttrPort], reason, until.UTC().Format(time.RFC3339))}
}

func address(attrs map[string]string) string {
	if v := attrs[AttrIPv4]; v != "" {
		return v
	}
	return attrs[AttrIPv6]
}

// fingerprint identifies an op by what it would write where.
func fingerprint(serviceID string, op Op) string {
	var b strings.Builder
	b.WriteString(serviceID + "\x00" + string(op.Action) + "\x00" + op.ID)
	for _, k := range slices.Sorted(maps.Keys(op.Attributes)) {
		b.WriteString("\x00" + k + "=" + op.Attributes[k])
	}
	return b.String()
}

// held reports whether op was refused recently and is not to be sent yet.
func (p *Publisher) held(serviceID string, op Op) (bool, string, time.Time) {
	r := p.refusals[serviceID+"\x00"+op.ID]
	if r == nil {
		return false, "", time.Time{}
	}
	r.touched = true
	if r.fingerprint != fingerprint(serviceID, op) || !p.cfg.Now().Before(r.until) {
		return false, "", time.Time{}
	}
	return true, r.reason, r.until
}

// refused records a refusal of op and returns when it may be sent again.
func (p *Publisher) refused(serviceID string, op Op, reason string) time.Time {
	key := serviceID + "\x00" + op.ID
	r := p.refusals[key]
	fp := fingerprint(serviceID, op)
	if r == nil || r.fingerprint != fp {
		r = &refusal{fingerprint: fp}
		p.refusals[key] = r
	}
	r.delay = min(max(2*r.delay, minRefusalBackoff), maxRefusalBackoff)
	r.until, r.reason, r.touched = p.cfg.Now().Add(r.delay), reason, true
	return r.until
}

// keepRefusals keeps the refusals of a service this reconcile could not read: forgetting
// them would send each refused op again at once, its backoff restarted.
func (p *Publisher) keepRefusals(serviceID string) {
	for k, r := range p.refusals {
		if strings.HasPrefix(k, serviceID+"\x00") {
			r.touched = true
		}
	}
}

// carryProblems adds to rep the last problems of the targets in unread (a namespace's
// when its Service is "") and remembers rep's problems per target for next time.
func (p *Publisher) carryProblems(rep *Report, unread map[Target]bool) {
	for t, probs := range p.problems {
		if unread[t] || unread[Target{Namespace: t.Namespace}] {
			rep.Problems = append(rep.Problems, probs...)
		}
	}
	clear(p.problems)
	for _, pr := range rep.Problems {
		p.problems[pr.Target] = append(p.problems[pr.Target], pr)
	}
}

// pruneRefusals forgets refusals of ops no longer planned.
func (p *Publisher) pruneRefusals() {
	for k, r := range p.refusals {
		if !r.touched {
			delete(p.refusals, k)
			continue
		}
		r.touched = false
	}
}
