package zones

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crossfade-io/crossfade/internal/elbzone"
)

// Apply validates a change batch against the zone and, only if every change is valid,
// applies all of it atomically: persisted in one transaction, then published to readers in
// one step. Changes are checked in order against the state the earlier ones leave, so a
// DELETE followed by a CREATE of the same name (a routing-policy transition) is one batch.
func (s *Store) Apply(zoneID, comment string, changes []Change) (ChangeInfo, error) {
	if len(changes) == 0 {
		return ChangeInfo{}, errorf(CodeInvalidInput, "1 validation error detected: Value '[]' at 'changeBatch.changes' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	for i := range changes {
		c := &changes[i]
		c.Set.Name = CanonicalName(c.Set.Name)
		c.Set.Type = strings.ToUpper(c.Set.Type)
		if err := checkInput(i+1, *c); err != nil {
			return ChangeInfo{}, err
		}
	}
	if n, chars := batchSize(changes); n > MaxRecordsPerBatch || chars > MaxValueCharsPerBatch {
		var msgs []string
		if n > MaxRecordsPerBatch {
			msgs = append(msgs, fmt.Sprintf("Number of records limit of %d exceeded (%d records, UPSERT counted twice).", MaxRecordsPerBatch, n))
		}
		if chars > MaxValueCharsPerBatch {
			msgs = append(msgs, fmt.Sprintf("Number of characters limit of %d exceeded (%d characters, UPSERT counted twice).", MaxValueCharsPerBatch, chars))
		}
		return ChangeInfo{}, batchError(msgs)
	}

	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	zs, err := s.zoneForWrite(zoneID)
	if err != nil {
		return ChangeInfo{}, err
	}

	// Writers are serialised by writeMu, so the zone's maps cannot change under us here and
	// validation reads them without the reader lock.
	b := &batch{zs: zs, store: s, overlay: map[setKey]*RRSet{}, byName: map[string][]setKey{}}
	for i := range changes {
		b.check(&changes[i])
	}
	b.checkAliases()
	if len(b.msgs) > 0 {
		return ChangeInfo{}, batchError(b.msgs)
	}

	change := ChangeInfo{ID: newID("C"), SubmittedAt: s.now().UTC(), Comment: comment}
	puts, dels := b.result()
	if s.db != nil {
		if err := s.db.applyBatch(zoneID, puts, dels, change); err != nil {
			return ChangeInfo{}, fmt.Errorf("zone %s: persist %d changes: %w", zs.Name, len(changes), err)
		}
	}
	s.mu.Lock()
	for _, k := range dels {
		zs.remove(k)
	}
	for _, set := range puts {
		zs.put(set)
	}
	s.changes[change.ID] = change
	s.mu.Unlock()
	return change, nil
}

// batch is the zone as the changes checked so far would leave it.
type batch struct {
	zs      *zoneState
	store   *Store
	overlay map[setKey]*RRSet   // nil value: deleted by the batch
	byName  map[string][]setKey // overlay keys by owner name
	msgs    []string
	aliases []*RRSet
}

func (b *batch) get(k setKey) *RRSet {
	if s, ok := b.overlay[k]; ok {
		return s
	}
	return b.zs.sets[k]
}

func (b *batch) set(k setKey, s *RRSet) {
	if _, ok := b.overlay[k]; !ok {
		b.byName[k.name] = append(b.byName[k.name], k)
	}
	b.overlay[k] = s
}

// atName returns every set at name as the batch has left it so far.
func (b *batch) atName(name string) []*RRSet {
	var out []*RRSet
	if n := b.zs.nodes[name]; n != nil {
		for _, s := range n.Sets {
			if _, over := b.overlay[keyOf(s)]; !over {
				out = append(out, s)
			}
		}
	}
	for _, k := range b.byName[name] {
		if s := b.overlay[k]; s != nil {
			out = append(out, s)
		}
	}
	return out
}

func (b *batch) fail(format string, args ...any) {
	b.msgs = append(b.msgs, fmt.Sprintf(format, args...))
}

func (b *batch) check(c *Change) {
	set := &c.Set
	apex := b.zs.Name
	if !inZone(set.Name, apex) {
		b.fail("RRSet with DNS name %s is not permitted in zone %s", PresentName(set.Name), apex)
		return
	}
	if set.Alias != nil {
		set.Alias.DNSName = CanonicalName(set.Alias.DNSName)
		set.Alias.HostedZoneID = strings.TrimPrefix(set.Alias.HostedZoneID, "/hostedzone/")
	}
	rrs, why := parseRecords(set)
	if why != "" {
		b.fail("%s", why)
		return
	}
	set.rrs = rrs
	k := keyOf(set)
	cur := b.get(k)
	switch c.Action {
	case Delete:
		switch {
		case cur == nil:
			b.fail("Tried to delete resource record set %s but it was not found", describe(set))
		case !sameSet(cur, set):
			b.fail("Tried to delete resource record set %s but the values provided do not match the current values", describe(set))
		case set.Name == apex && set.Type == "SOA":
			b.fail("A HostedZone must contain exactly one SOA record.")
		case set.Name == apex && set.Type == "NS":
			b.fail("A HostedZone must contain at least one NS record for the zone itself.")
		default:
			b.set(k, nil)
		}
		return
	case Create:
		if cur != nil {
			b.fail("Tried to create resource record set %s but it already exists", describe(set))
			return
		}
	}
	if !b.fitsBeside(set, apex) {
		return
	}
	stored := *set
	stored.Records = slices.Clone(set.Records)
	b.set(k, &stored)
	if set.Alias != nil {
		b.aliases = append(b.aliases, &stored)
	}
}

// fitsBeside applies the rules about what may share a name: CNAME stands alone, one
// routing policy per name and type, unique failover roles, at most 100 weighted sets.
func (b *batch) fitsBeside(set *RRSet, apex string) bool {
	name := PresentName(set.Name)
	switch {
	case set.Type == "CNAME" && set.Name == apex:
		b.fail("RRSet of type CNAME with DNS name %s is not permitted at apex in zone %s", name, apex)
		return false
	case set.Type == "SOA" && set.Name != apex:
		b.fail("RRSet of type SOA with DNS name %s is not permitted because it is not at the apex of zone %s", name, apex)
		return false
	}
	weighted := 0
	for _, o := range b.atName(set.Name) {
		if keyOf(o) == keyOf(set) {
			continue
		}
		switch {
		case set.Type == "CNAME" && o.Type != "CNAME":
			b.fail("RRSet of type CNAME with DNS name %s is not permitted as it conflicts with other records with the same DNS name in zone %s", name, apex)
			return false
		case set.Type != "CNAME" && o.Type == "CNAME":
			b.fail("RRSet of type %s with DNS name %s is not permitted because a conflicting RRSet of type CNAME with the same DNS name already exists in zone %s", set.Type, name, apex)
			return false
		case o.Type != set.Type:
			continue
		case set.SetIdentifier == "":
			b.fail("RRSet with DNS name %s, type %s cannot be created as other RRSets exist with the same name and type.", name, set.Type)
			return false
		case o.Policy() != set.Policy():
			b.fail("RRSet with DNS name %s, type %s, SetIdentifier %s cannot be created as a non-%s set exists with the same name and type.", name, set.Type, set.SetIdentifier, set.Policy())
			return false
		case set.Failover != "" && o.Failover == set.Failover:
			b.fail("RRSet with DNS name %s, type %s, SetIdentifier %s cannot be created as a %s failover set exists with the same name and type.", name, set.Type, set.SetIdentifier, set.Failover)
			return false
		case set.Weight != nil:
			weighted++
			if !sameWeightedTTL(set, o) {
				b.fail("RRSet with DNS name %s, type %s, SetIdentifier %s cannot be created as weighted sets must contain the same TTL.", name, set.Type, set.SetIdentifier)
				return false
			}
		}
	}
	if weighted >= MaxWeightedSets {
		b.fail("RRSet with DNS name %s, type %s, SetIdentifier %s cannot be created as %d weighted sets exist with the same name and type.", name, set.Type, set.SetIdentifier, MaxWeightedSets)
		return false
	}
	return true
}

// sameWeightedTTL reports whether two weighted sets of one group may stand side by side:
// Route 53 gives every weighted set of a name and type one TTL. An alias has no TTL of its
// own (its target's answers with theirs), so it neither breaks the rule nor sets it. The
// rule is checked against the state the batch has reached, so changing a group's TTL takes
// DELETE of every member, then CREATE of every member, in one batch.
func sameWeightedTTL(a, b *RRSet) bool {
	return a.Alias != nil || b.Alias != nil || eqPtr(a.TTL, b.TTL)
}

// checkAliases requires every alias written by the batch to point at a record set that
// exists once the batch is applied, in a zone of this sandbox, or at an AWS load balancer
// through the load balancer's canonical hosted zone.
func (b *batch) checkAliases() {
	for _, a := range b.aliases {
		if b.overlay[keyOf(a)] != a {
			continue // replaced or deleted later in the batch
		}
		t := a.Alias
		target, ok := b.store.zones[t.HostedZoneID]
		switch {
		case ok:
			b.checkSandboxAlias(a, target)
		case isLoadBalancerAlias(t):
			b.checkLoadBalancerAlias(a)
		case isAWSServiceName(t.DNSName):
			b.fail("Alias %s, type %s targets %s in zone %s: alias targets in AWS services other than Elastic Load Balancing are not supported by the crossfade sandbox; alias a record in a sandbox zone or a load balancer", PresentName(a.Name), a.Type, PresentName(t.DNSName), t.HostedZoneID)
		default:
			b.fail("Tried to create an alias that targets %s, type %s in zone %s, but the alias target zone was not found", PresentName(t.DNSName), a.Type, t.HostedZoneID)
		}
	}
}

// checkSandboxAlias checks an alias whose target zone is one of the sandbox's.
func (b *batch) checkSandboxAlias(a *RRSet, target *zoneState) {
	t := a.Alias
	if !inZone(t.DNSName, target.Name) {
		b.aliasNotInZone(a)
		return
	}
	var sets []*RRSet
	if target == b.zs {
		sets = b.atName(t.DNSName)
	} else if n := target.nodes[t.DNSName]; n != nil {
		sets = n.Sets
	}
	for _, s := range sets {
		if s.Type == a.Type || s.Type == "CNAME" {
			return
		}
	}
	b.fail("Tried to create an alias that targets %s, type %s in zone %s, but that target was not found", PresentName(t.DNSName), a.Type, t.HostedZoneID)
}

// checkLoadBalancerAlias accepts an alias to an AWS load balancer when its HostedZoneId is
// the canonical zone elbzone gives for its DNS name. The sandbox cannot tell whether the
// load balancer exists (Route 53 can), so it takes any load balancer name of a known region.
func (b *batch) checkLoadBalancerAlias(a *RRSet) {
	t := a.Alias
	if want, ok := elbzone.ZoneFor(t.DNSName); ok && want == t.HostedZoneID {
		return
	}
	b.aliasNotInZone(a)
}

// aliasNotInZone is Route 53's refusal of an alias whose DNSName is not in the zone its
// HostedZoneId names: a load balancer with another region's or type's zone, or a record
// with the wrong zone. Route 53 reports it with both messages (real AWS output for a load
// balancer named with the wrong zone is quoted in github.com/harmony-one/harmony-ops#491).
func (b *batch) aliasNotInZone(a *RRSet) {
	t := a.Alias
	b.fail("Tried to create an alias that targets %s, type %s in zone %s, but the alias target name does not lie within the target zone", PresentName(t.DNSName), a.Type, t.HostedZoneID)
	b.fail("Tried to create an alias that targets %s, type %s in zone %s, but that target was not found", PresentName(t.DNSName), a.Type, t.HostedZoneID)
}

// result splits the overlay into sets to write and keys to delete, in a stable order.
func (b *batch) result() (puts []*RRSet, dels []setKey) {
	for k, s := range b.overlay {
		if s == nil {
			if b.zs.sets[k] != nil {
				dels = append(dels, k)
			}
			continue
		}
		puts = append(puts, s)
	}
	slices.SortFunc(puts, func(x, y *RRSet) int { return compareKeys(keyOf(x), keyOf(y)) })
	slices.SortFunc(dels, compareKeys)
	return puts, dels
}

func compareKeys(a, b setKey) int {
	if c := strings.Compare(a.name, b.name); c != 0 {
		return c
	}
	if c := strings.Compare(a.typ, b.typ); c != 0 {
		return c
	}
	return strings.Compare(a.id, b.id)
}
