package cloudmapstore

import (
	"cmp"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// DefaultAccountID is the account the sandbox's ARNs name unless Options say otherwise:
// the example account of AWS's own documentation, as the sandbox's ELBv2 uses.
const DefaultAccountID = "123456789012"

// DefaultRegion is the region of a request that does not name one.
const DefaultRegion = "us-east-1"

// Quotas Cloud Map documents (Cloud Map quotas in the developer guide) that the sandbox
// enforces.
const (
	maxNamespaces         = 50
	maxServicesPerNS      = 2000
	maxInstancesPerSvc    = 1000
	maxCustomAttributes   = 30
	maxAttributesTotalLen = 5000
	maxTagsPerResource    = 50
	// DefaultMaxOperations is how many operations the store remembers for GetOperation and
	// ListOperations; older ones are forgotten.
	DefaultMaxOperations = 10000
)

// Zones is the Route 53 store a DNS namespace keeps its hosted zone and records in. The
// sandbox's *zones.Store is one.
type Zones interface {
	CreateZone(name, callerRef, comment string, private bool) (zones.Zone, zones.ChangeInfo, error)
	DeleteZone(id string) (zones.ChangeInfo, error)
	Zone(id string) (zones.Zone, error)
	Apply(zoneID, comment string, changes []zones.Change) (zones.ChangeInfo, error)
	LookupIn(zoneID, name string) *zones.Node
	Healthy(id string) bool
	SetHealth(id string, healthy bool) error
}

// Options configures a Store.
type Options struct {
	// DB keeps the state in buckets of an open bbolt file (the sandbox shares the zones'
	// file); nil keeps it in memory. The store does not close it.
	DB *bolt.DB
	// Zones receives the hosted zones and records of DNS namespaces. Required.
	Zones Zones
	// AccountID is the account ARNs name; empty means DefaultAccountID.
	AccountID string
	// OperationDelay is how long an operation reports PENDING before SUCCESS or FAIL. The
	// work itself is done, and visible, when the call returns.
	OperationDelay time.Duration
	// HealthDelay is how long UpdateInstanceCustomHealthStatus waits before the new status
	// takes effect; real Cloud Map waits about 30 seconds. 0 applies it at once.
	HealthDelay time.Duration
	// MaxOperations bounds the operations remembered; 0 means DefaultMaxOperations.
	MaxOperations int
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Store is the Cloud Map state. Writers are serialised; each write is validated in full,
// persisted in one bbolt transaction and then published to readers.
type Store struct {
	account     string
	now         func() time.Time
	log         *slog.Logger
	db          *boltState
	zones       Zones
	opDelay     time.Duration
	healthDelay time.Duration
	maxOps      int

	writeMu     sync.Mutex // serialises writers, DNS syncs and the health timer
	healthTimer *time.Timer
	healthAt    time.Time
	closed      bool

	mu         sync.RWMutex // guards the maps; write-locked only to publish a change
	namespaces map[string]*Namespace
	services   map[string]*Service
	instances  map[string]map[string]*Instance // service id → instance id → instance
	operations map[string]*Operation
}

// Open returns a store, loading any state kept in opts.DB, and brings the DNS records of
// every DNS service in line with its instances (a crash may have come between the two
// stores' writes).
func Open(opts Options) (*Store, error) {
	if opts.Zones == nil {
		return nil, errors.New("cloudmap: no zones store")
	}
	s := &Store{
		account: cmp.Or(opts.AccountID, DefaultAccountID), now: opts.Now, log: opts.Logger,
		zones: opts.Zones, opDelay: opts.OperationDelay, healthDelay: opts.HealthDelay,
		maxOps:     cmp.Or(opts.MaxOperations, DefaultMaxOperations),
		namespaces: map[string]*Namespace{}, services: map[string]*Service{},
		instances: map[string]map[string]*Instance{}, operations: map[string]*Operation{},
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if opts.DB != nil {
		b, err := openBolt(opts.DB)
		if err != nil {
			return nil, err
		}
		if err := b.load(s); err != nil {
			return nil, fmt.Errorf("servicediscovery state: %w", err)
		}
		s.db = b
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.applyDueHealthLocked(); err != nil {
		return nil, err
	}
	for _, svc := range s.services {
		if svc.DNS == nil {
			continue
		}
		if err := s.syncServiceLocked(svc, nil); err != nil {
			s.log.Warn("cloudmap: DNS records of a service do not match its instances", "service", svc.ID, "err", err)
		}
	}
	s.scheduleHealthLocked()
	return s, nil
}

// Close stops the health timer. It does not close Options.DB.
func (s *Store) Close() error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.closed = true
	if s.healthTimer != nil {
		s.healthTimer.Stop()
	}
	return nil
}

// change collects one write's records: a nil record deletes.
type change struct {
	namespaces map[string]*Namespace
	services   map[string]*Service
	instances  map[string]*Instance // by instanceKey
	operations map[string]*Operation
}

func newChange() *change {
	return &change{namespaces: map[string]*Namespace{}, services: map[string]*Service{},
		instances: map[string]*Instance{}, operations: map[string]*Operation{}}
}

func (c *change) putInstance(i *Instance)             { c.instances[instanceKey(i.ServiceID, i.ID)] = i }
func (c *change) deleteInstance(serviceID, id string) { c.instances[instanceKey(serviceID, id)] = nil }

// commit persists c in one bbolt transaction and publishes it; s.writeMu must be held.
// Nothing is published if persisting fails.
func (s *Store) commit(c *change) error {
	s.pruneOperations(c)
	if s.db != nil {
		if err := s.db.write(c); err != nil {
			return fmt.Errorf("servicediscovery state: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, n := range c.namespaces {
		if n == nil {
			delete(s.namespaces, id)
		} else {
			s.namespaces[id] = n
		}
	}
	for id, v := range c.services {
		if v == nil {
			delete(s.services, id)
			delete(s.instances, id)
		} else {
			s.services[id] = v
		}
	}
	for k, i := range c.instances {
		if i != nil {
			s.putInstanceLocked(i)
			continue
		}
		svc, id, _ := strings.Cut(k, "\x00")
		delete(s.instances[svc], id)
		if len(s.instances[svc]) == 0 {
			delete(s.instances, svc)
		}
	}
	for id, o := range c.operations {
		if o == nil {
			delete(s.operations, id)
		} else {
			s.operations[id] = o
		}
	}
	return nil
}

// putInstanceLocked indexes an instance; s.mu must be write-locked (or the store unpublished).
func (s *Store) putInstanceLocked(i *Instance) {
	m := s.instances[i.ServiceID]
	if m == nil {
		m = map[string]*Instance{}
		s.instances[i.ServiceID] = m
	}
	m[i.ID] = i
}

// pruneOperations adds to c the deletion of the oldest operations beyond the bound.
func (s *Store) pruneOperations(c *change) {
	added := 0
	for id, o := range c.operations {
		if o != nil && s.operations[id] == nil {
			added++
		}
	}
	over := len(s.operations) + added - s.maxOps
	if over <= 0 {
		return
	}
	ops := slices.SortedFunc(func(yield func(*Operation) bool) {
		for _, o := range s.operations {
			if !yield(o) {
				return
			}
		}
	}, func(a, b *Operation) int { return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID)) })
	for _, o := range ops[:min(over, len(ops))] {
		if _, touched := c.operations[o.ID]; !touched {
			c.operations[o.ID] = nil
		}
	}
}

// instancesOf lists a service's instances by id; the caller holds s.mu or s.writeMu.
func (s *Store) instancesOf(serviceID string) []*Instance {
	m := s.instances[serviceID]
	out := make([]*Instance, 0, len(m))
	for _, i := range m {
		out = append(out, i)
	}
	slices.SortFunc(out, func(a, b *Instance) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// serviceCount counts a namespace's services; the caller holds s.mu or s.writeMu.
func (s *Store) serviceCount(namespaceID string) int {
	n := 0
	for _, v := range s.services {
		if v.NamespaceID == namespaceID {
			n++
		}
	}
	return n
}

// namespaceView and serviceView return copies carrying the counts the API reports; the
// caller holds s.mu or s.writeMu.
func (s *Store) namespaceView(n *Namespace) Namespace {
	out := *n
	out.Tags = slices.Clone(n.Tags)
	out.ServiceCount = s.serviceCount(n.ID)
	return out
}

func (s *Store) serviceView(v *Service) Service {
	out := *v
	out.Tags = slices.Clone(v.Tags)
	if v.DNS != nil {
		d := *v.DNS
		d.Records = slices.Clone(v.DNS.Records)
		out.DNS = &d
	}
	out.InstanceCount = len(s.instances[v.ID])
	return out
}

// resolveID accepts an id or an ARN whose resource is kind/<id>, as the newer API allows
// for services and namespaces shared across accounts.
func resolveID(idOrARN, kind string) string {
	if !strings.HasPrefix(idOrARN, "arn:") {
		return idOrARN
	}
	f := strings.SplitN(idOrARN, ":", 6)
	if len(f) != 6 || f[2] != "servicediscovery" {
		return idOrARN
	}
	if id, ok := strings.CutPrefix(f[5], kind+"/"); ok {
		return id
	}
	return idOrARN
}

// namespaceFor finds a namespace for a writer (s.writeMu held) or a reader (s.mu held).
func (s *Store) namespaceFor(idOrARN string) (*Namespace, *Error) {
	if n := s.namespaces[resolveID(idOrARN, "namespace")]; n != nil {
		return n, nil
	}
	return nil, namespaceNotFound(idOrARN)
}

func (s *Store) serviceFor(idOrARN string) (*Service, *Error) {
	if v := s.services[resolveID(idOrARN, "service")]; v != nil {
		return v, nil
	}
	return nil, serviceNotFound(idOrARN)
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return string(b)
}

// newNamespaceID and newServiceID have the shape of Cloud Map's ids: ns-5cx5xzbaianyr25m,
// srv-tgsavq55ydrlsvbp.
func newNamespaceID() string { return "ns-" + randomString(16) }
func newServiceID() string   { return "srv-" + randomString(16) }

// newOperationID has the shape of Cloud Map's operation ids: 32 characters, a dash, 8.
func newOperationID() string { return randomString(32) + "-" + randomString(8) }

// newHealthCheckID is a Route 53 health check id: a UUID.
func newHealthCheckID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func (s *Store) arn(region, kind, id string) string {
	region = cmp.Or(region, DefaultRegion)
	return "arn:" + awsapi.Partition(region) + ":servicediscovery:" + region + ":" + s.account + ":" + kind + "/" + id
}

// Account is the account the store's ARNs name: the ResourceOwner of every resource.
func (s *Store) Account() string { return s.account }

// newOperation records an operation that ends in result at now plus the delay.
func (s *Store) newOperation(typ string, targets map[string]string, creatorRequestID string) *Operation {
	now := s.now().UTC()
	return &Operation{ID: newOperationID(), Type: typ, Result: StatusSuccess, Targets: targets,
		CreatorRequestID: creatorRequestID, Created: now, Done: now.Add(s.opDelay)}
}

// fail marks an operation failed with one of the model's operation error codes.
func (o *Operation) fail(code, msg string) {
	o.Result, o.ErrorCode, o.ErrorMessage = StatusFail, code, msg
}
