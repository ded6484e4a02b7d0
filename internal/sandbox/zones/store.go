package zones

import (
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Options configures a Store.
type Options struct {
	// Path is the bbolt file that keeps the state; empty keeps it in memory only.
	Path string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Store is every hosted zone of the sandbox. Writers are serialised; DNS readers only take
// a read lock for a few map look-ups and get immutable nodes back.
type Store struct {
	now func() time.Time
	db  *boltState

	writeMu sync.Mutex // serialises writers; held across validation and persistence

	mu      sync.RWMutex // guards the maps below; write-locked only to publish a change
	zones   map[string]*zoneState
	byName  map[string][]*zoneState // canonical apex → zones, oldest first
	order   []string                // zone ids in creation order
	changes map[string]ChangeInfo
	health  map[string]bool
	lbs     map[string]loadBalancerState // by canonical DNS name; see loadbalancers.go
}

type zoneState struct {
	Zone
	sets  map[setKey]*RRSet
	nodes map[string]*Node
	// ents counts, for every name strictly between a record's owner and the apex, the owner
	// names below it: such an empty non-terminal answers NODATA, not NXDOMAIN.
	ents map[string]int
	// cuts counts the NS sets strictly below the apex, so that a zone without delegations
	// (nearly every zone) skips the zone-cut check on every query.
	cuts int
	// soa is the apex SOA set, kept so that a look-up needs no second one for it.
	soa *RRSet

	sortMu sync.Mutex
	sorted []*RRSet // listing order; nil when a change made it stale
}

// Open returns a store, loading any state kept at opts.Path.
func Open(opts Options) (*Store, error) {
	s := &Store{
		now:     opts.Now,
		zones:   map[string]*zoneState{},
		byName:  map[string][]*zoneState{},
		changes: map[string]ChangeInfo{},
		health:  map[string]bool{},
	}
	if s.now == nil {
		s.now = time.Now
	}
	if opts.Path == "" {
		return s, nil
	}
	db, err := openBolt(opts.Path)
	if err != nil {
		return nil, err
	}
	s.db = db
	if err := db.load(s); err != nil {
		db.close()
		return nil, fmt.Errorf("state %s: %w", opts.Path, err)
	}
	return s, nil
}

// Close releases the state file.
func (s *Store) Close() error {
	if s.db == nil {
		return nil
	}
	return s.db.close()
}

func newID(prefix string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + string(b)
}

func newZoneState(z Zone) *zoneState {
	return &zoneState{Zone: z, sets: map[setKey]*RRSet{}, nodes: map[string]*Node{}, ents: map[string]int{}}
}

// addZoneLocked indexes a zone; s.mu must be write-locked (or the store unpublished).
func (s *Store) addZoneLocked(zs *zoneState) {
	s.zones[zs.ID] = zs
	s.byName[zs.Name] = append(s.byName[zs.Name], zs)
	s.order = append(s.order, zs.ID)
}

// CreateZone creates a hosted zone with Route 53's SOA and NS records.
func (s *Store) CreateZone(name, callerRef, comment string, private bool) (Zone, ChangeInfo, error) {
	if callerRef == "" {
		return Zone{}, ChangeInfo{}, schema.NotNull("callerReference")
	}
	apex := CanonicalName(name)
	if _, ok := dns.IsDomainName(apex); !ok || apex == "." || strings.Contains(apex, "*") {
		return Zone{}, ChangeInfo{}, errorf(CodeInvalidDomainName, "%s is reserved by AWS or is not a valid domain name", name)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	for _, zs := range s.zones {
		if zs.CallerReference == callerRef {
			return Zone{}, ChangeInfo{}, errorf(CodeHostedZoneAlreadyExists, "A hosted zone has already been created with the specified caller reference.")
		}
	}
	now := s.now().UTC()
	z := Zone{ID: newID("Z"), Name: apex, CallerReference: callerRef, Comment: comment, Private: private, Created: now}
	z.NameServers = delegationSet(z.ID)
	zs := newZoneState(z)
	soaTTL, nsTTL := int64(900), int64(172800)
	soa := &RRSet{Name: apex, Type: "SOA", TTL: &soaTTL,
		Records: []string{z.NameServers[0] + " awsdns-hostmaster.amazon.com. 1 7200 900 1209600 86400"}}
	ns := &RRSet{Name: apex, Type: "NS", TTL: &nsTTL, Records: slices.Clone(z.NameServers)}
	for _, set := range []*RRSet{soa, ns} {
		rrs, why := parseRecords(set)
		if why != "" {
			return Zone{}, ChangeInfo{}, fmt.Errorf("zone %s: default %s: %s", apex, set.Type, why)
		}
		set.rrs = rrs
	}
	change := ChangeInfo{ID: newID("C"), SubmittedAt: now}
	if s.db != nil {
		if err := s.db.createZone(z, []*RRSet{soa, ns}, change); err != nil {
			return Zone{}, ChangeInfo{}, fmt.Errorf("zone %s: persist: %w", apex, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	zs.put(soa)
	zs.put(ns)
	s.addZoneLocked(zs)
	s.changes[change.ID] = change
	return zs.snapshot(), change, nil
}

// delegationSet names four Route 53-style name servers, stable for a zone id.
func delegationSet(id string) []string {
	h := 0
	for _, c := range id {
		h = h*31 + int(c)
	}
	if h < 0 {
		h = -h
	}
	tlds := []string{"com", "net", "org", "co.uk"}
	out := make([]string, 4)
	for i, tld := range tlds {
		n := (h>>(i*4) + i*512) % 2048
		out[i] = fmt.Sprintf("ns-%d.awsdns-%02d.%s.", n, n%64, tld)
	}
	return out
}

func (zs *zoneState) snapshot() Zone {
	z := zs.Zone
	z.Tags = make(map[string]string, len(zs.Tags))
	for k, v := range zs.Tags {
		z.Tags[k] = v
	}
	z.NameServers = slices.Clone(zs.NameServers)
	z.RecordCount = len(zs.sets)
	return z
}

// Zone returns a zone by id.
func (s *Store) Zone(id string) (Zone, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	zs, ok := s.zones[id]
	if !ok {
		return Zone{}, noSuchZone(id)
	}
	return zs.snapshot(), nil
}

func noSuchZone(id string) *Error {
	return errorf(CodeNoSuchHostedZone, "No hosted zone found with ID: %s", id)
}

// Zones returns every zone in creation order.
func (s *Store) Zones() []Zone {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Zone, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.zones[id].snapshot())
	}
	return out
}

// DeleteZone deletes a zone that holds nothing but its apex SOA and NS.
func (s *Store) DeleteZone(id string) (ChangeInfo, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	zs, err := s.zoneForWrite(id)
	if err != nil {
		return ChangeInfo{}, err
	}
	for k := range zs.sets {
		if k.name != zs.Name || (k.typ != "SOA" && k.typ != "NS") || k.id != "" {
			return ChangeInfo{}, errorf(CodeHostedZoneNotEmpty, "The specified hosted zone contains non-required resource record sets and so cannot be deleted.")
		}
	}
	change := ChangeInfo{ID: newID("C"), SubmittedAt: s.now().UTC()}
	if s.db != nil {
		if err := s.db.deleteZone(id, change); err != nil {
			return ChangeInfo{}, fmt.Errorf("zone %s: persist delete: %w", zs.Name, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.zones, id)
	s.byName[zs.Name] = slices.DeleteFunc(s.byName[zs.Name], func(o *zoneState) bool { return o.ID == id })
	if len(s.byName[zs.Name]) == 0 {
		delete(s.byName, zs.Name)
	}
	s.order = slices.DeleteFunc(s.order, func(o string) bool { return o == id })
	s.changes[change.ID] = change
	return change, nil
}

// zoneForWrite finds a zone for a writer, which must hold writeMu: no other writer can
// change the zone's maps until it is released.
func (s *Store) zoneForWrite(id string) (*zoneState, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	zs, ok := s.zones[id]
	if !ok {
		return nil, noSuchZone(id)
	}
	return zs, nil
}

// Change returns an applied batch's record.
func (s *Store) Change(id string) (ChangeInfo, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.changes[id]
	if !ok {
		return ChangeInfo{}, errorf(CodeNoSuchChange, "A change with the specified change ID does not exist.")
	}
	return c, nil
}

// ChangeTags adds and removes zone tags.
func (s *Store) ChangeTags(id string, add map[string]string, remove []string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	zs, err := s.zoneForWrite(id)
	if err != nil {
		return err
	}
	z := zs.snapshot()
	for _, k := range remove {
		delete(z.Tags, k)
	}
	for k, v := range add {
		z.Tags[k] = v
	}
	if len(z.Tags) > 50 {
		return errorf("ThrottlingException", "Number of tags exceeds the limit of 50 for the resource")
	}
	if s.db != nil {
		if err := s.db.putZone(z); err != nil {
			return fmt.Errorf("zone %s: persist tags: %w", zs.Name, err)
		}
	}
	s.mu.Lock()
	zs.Tags = z.Tags
	s.mu.Unlock()
	return nil
}

// SetHealth sets the status the DNS server uses for a health check id.
func (s *Store) SetHealth(id string, healthy bool) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.db != nil {
		if err := s.db.putHealth(id, healthy); err != nil {
			return fmt.Errorf("health check %s: persist: %w", id, err)
		}
	}
	s.mu.Lock()
	s.health[id] = healthy
	s.mu.Unlock()
	return nil
}

// Healthy reports a health check's status; an unknown or empty id is healthy, as a record
// set without a health check is in Route 53.
func (s *Store) Healthy(id string) bool {
	if id == "" {
		return true
	}
	s.mu.RLock()
	h, ok := s.health[id]
	s.mu.RUnlock()
	return !ok || h
}

// put stores a set and republishes its node. The caller holds the write lock. The set is not
// yet visible to readers, so its type is interned here.
func (zs *zoneState) put(set *RRSet) {
	set.Type = internType(set.Type)
	k := keyOf(set)
	if _, ok := zs.sets[k]; !ok && zs.isCut(k) {
		zs.cuts++
	}
	zs.sets[k] = set
	old := zs.nodes[set.Name]
	sets := make([]*RRSet, 0, 4)
	if old != nil {
		for _, o := range old.Sets {
			if keyOf(o) != k {
				sets = append(sets, o)
			}
		}
	}
	sets = append(sets, set)
	slices.SortFunc(sets, compareInNode)
	zs.publish(set.Name, old, sets)
}

// remove deletes a set and republishes its node. The caller holds the write lock.
func (zs *zoneState) remove(k setKey) {
	if _, ok := zs.sets[k]; ok && zs.isCut(k) {
		zs.cuts--
	}
	delete(zs.sets, k)
	old := zs.nodes[k.name]
	if old == nil {
		return
	}
	sets := make([]*RRSet, 0, len(old.Sets))
	for _, o := range old.Sets {
		if keyOf(o) != k {
			sets = append(sets, o)
		}
	}
	zs.publish(k.name, old, sets)
}

func compareInNode(a, b *RRSet) int {
	if c := strings.Compare(a.Type, b.Type); c != 0 {
		return c
	}
	return strings.Compare(a.SetIdentifier, b.SetIdentifier)
}

// publish swaps in a new immutable node (readers holding the old one keep a consistent
// view) and keeps the empty non-terminal counts right.
func (zs *zoneState) publish(name string, old *Node, sets []*RRSet) {
	zs.sortMu.Lock()
	zs.sorted = nil
	zs.sortMu.Unlock()
	switch {
	case len(sets) == 0:
		delete(zs.nodes, name)
		if old != nil {
			zs.adjustENTs(name, -1)
		}
	default:
		zs.nodes[name] = newNode(sets)
		if old == nil {
			zs.adjustENTs(name, +1)
		}
	}
	if name == zs.Name {
		zs.soa = nil
		for _, set := range sets {
			if set.Type == "SOA" {
				zs.soa = set
			}
		}
	}
}

// adjustENTs counts name under each of its ancestors strictly below the apex.
func (zs *zoneState) adjustENTs(name string, delta int) {
	for off, end := dns.NextLabel(name, 0); !end; off, end = dns.NextLabel(name, off) {
		anc := name[off:]
		if anc == zs.Name || len(anc) <= len(zs.Name) {
			return
		}
		if zs.ents[anc] += delta; zs.ents[anc] <= 0 {
			delete(zs.ents, anc)
		}
	}
}
