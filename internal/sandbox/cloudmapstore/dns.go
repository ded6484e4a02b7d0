package cloudmapstore

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// The records a DNS service's instances get, as Cloud Map creates them (DnsRecord and
// DnsConfig in the service model; "AWS Cloud Map service DNS configuration" in the
// developer guide):
//
//   - the records are named <service>.<namespace>; an A record holds AWS_INSTANCE_IPV4, an
//     AAAA record AWS_INSTANCE_IPV6, a CNAME record AWS_INSTANCE_CNAME;
//   - an SRV record holds "1 1 <AWS_INSTANCE_PORT> <instance id>.<service>.<namespace>"
//     (priority and weight are always 1), and that host name gets A and AAAA records of
//     the instance's addresses;
//   - WEIGHTED: one weighted set per instance, the instance id as set identifier, every
//     weight equal (1), so the DNS server answers one instance picked at random, healthy
//     ones first;
//   - MULTIVALUE: Route 53 answers up to eight healthy instances, and up to eight unhealthy
//     ones when none is healthy. The sandbox's zones have no multivalue sets, so it keeps one
//     simple set at the service name holding the values of up to eight healthy instances
//     (of up to eight instances when none is healthy; the first eight by instance id) and
//     rewrites it when an instance or its health changes. The DNS answer has the size of
//     Route 53's; where Route 53 gives different resolvers different eight of more than
//     eight, the sandbox gives everyone the same eight until the instances change.
//     ListResourceRecordSets shows that one set where Route 53 would list one multivalue
//     set per instance. (A set of every instance would not fit: a 1,000-instance service
//     needs more than a change batch's 1,000 records.)
//   - custom health: an instance set UNHEALTHY is no longer answered (Cloud Map "stops
//     routing traffic to the resource"); the weighted sets carry the instance's health
//     check id, whose status the store sets in the zones store.
//
// Order of the two stores' writes, so that a crash between them leaves nothing the
// reconciliation in Open cannot repair (it rewrites every service's records from its
// instances, and can only find the records of instances it knows): a registration is
// committed to the Cloud Map state first and written to the zone second; a deregistration
// is removed from the zone first and from the state second.

// multivalueAnswers is how many records Route 53 answers for a multivalue name at most.
const multivalueAnswers = 8

// hostName is the SRV target of an instance: <instance id>.<service>.<namespace>.
func hostName(inst *Instance, svcName string) string {
	return zones.CanonicalName(inst.ID + "." + svcName)
}

// serviceName is the DNS name of a service's records.
func serviceName(ns *Namespace, svc *Service) string {
	return zones.CanonicalName(svc.Name + "." + ns.Name)
}

// answered reports which instances the DNS answers for a multivalue set: the healthy ones,
// or all when none is healthy.
func answered(svc *Service, insts []*Instance) []*Instance {
	if !svc.CustomHealth {
		return insts
	}
	healthy := slices.DeleteFunc(slices.Clone(insts), func(i *Instance) bool { return i.Health == HealthUnhealthy })
	if len(healthy) == 0 {
		return insts
	}
	return healthy
}

// recordValue is the value an instance gives a record of type t, "" for none.
func recordValue(t string, inst *Instance, svcName string) string {
	a := inst.Attributes
	switch t {
	case "A":
		return a[AttrIPv4]
	case "AAAA":
		return a[AttrIPv6]
	case "CNAME":
		return a[AttrCNAME]
	case "SRV":
		if a[AttrPort] == "" {
			return ""
		}
		return "1 1 " + a[AttrPort] + " " + hostName(inst, svcName)
	}
	return ""
}

// desiredSets are the record sets a service's instances ask for.
func desiredSets(ns *Namespace, svc *Service, insts []*Instance) []zones.RRSet {
	cfg := svc.DNS
	if cfg == nil || len(cfg.Records) == 0 {
		return nil
	}
	name := serviceName(ns, svc)
	weighted := cfg.RoutingPolicy == RoutingWeighted
	var out []zones.RRSet
	one := int64(1)
	set := func(name, typ, value string, ttl int64, inst *Instance) zones.RRSet {
		rs := zones.RRSet{Name: name, Type: typ, TTL: &ttl, Records: []string{value}}
		if weighted {
			rs.SetIdentifier, rs.Weight = inst.ID, &one
			if svc.CustomHealth {
				rs.HealthCheckID = inst.HealthCheckID
			}
		}
		return rs
	}
	for _, r := range cfg.Records {
		if weighted {
			for _, inst := range insts {
				if v := recordValue(r.Type, inst, name); v != "" {
					out = append(out, set(name, r.Type, v, r.TTL, inst))
				}
			}
			continue
		}
		var values []string
		for _, inst := range answered(svc, insts) { // by instance id
			if v := recordValue(r.Type, inst, name); v != "" && !slices.Contains(values, v) {
				values = append(values, v)
			}
			if len(values) == multivalueAnswers {
				break
			}
		}
		if len(values) > 0 {
			slices.Sort(values)
			ttl := r.TTL
			out = append(out, zones.RRSet{Name: name, Type: r.Type, TTL: &ttl, Records: values})
		}
	}
	if cfg.has("SRV") {
		for _, inst := range insts {
			host := hostName(inst, name)
			for _, t := range []string{"A", "AAAA"} {
				if v := recordValue(t, inst, name); v != "" {
					out = append(out, set(host, t, v, cfg.ttl(t), inst))
				}
			}
		}
	}
	return out
}

// ownedTypes are the types Cloud Map writes at a name: the service's record types at the
// service name, the address types at an instance's host name. Records of other types
// there are someone else's (a record added through Route 53) and are left alone.
func ownedTypes(cfg *DNSConfig, atServiceName bool) []string {
	if !atServiceName {
		return []string{"A", "AAAA"}
	}
	out := make([]string, len(cfg.Records))
	for i, r := range cfg.Records {
		out[i] = r.Type
	}
	return out
}

type setKey struct{ name, typ, id string }

func keyOf(s *zones.RRSet) setKey { return setKey{s.Name, s.Type, s.SetIdentifier} }

func sameSet(a, b *zones.RRSet) bool {
	eq := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	ra, rb := slices.Clone(a.Records), slices.Clone(b.Records)
	slices.Sort(ra)
	slices.Sort(rb)
	return keyOf(a) == keyOf(b) && eq(a.Weight, b.Weight) && eq(a.TTL, b.TTL) && a.Failover == b.Failover &&
		a.Alias == nil && b.Alias == nil && a.HealthCheckID == b.HealthCheckID && slices.Equal(ra, rb)
}

// dnsChanges is the change batch that turns what the zone holds at a service's names into
// what its instances ask for: deletions first, so that a set replaced by one of another
// routing policy is gone before its successor is written.
func dnsChanges(zs Zones, zoneID string, ns *Namespace, svc *Service, insts, removing []*Instance) []zones.Change {
	name := serviceName(ns, svc)
	names := []string{name}
	if svc.DNS.has("SRV") || len(removing) > 0 {
		for _, inst := range slices.Concat(insts, removing) {
			names = append(names, hostName(inst, name))
		}
	}
	want := map[setKey]zones.RRSet{}
	for _, rs := range desiredSets(ns, svc, insts) {
		want[keyOf(&rs)] = rs
	}
	var dels, ups []zones.Change
	have := map[setKey]bool{}
	for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
		node := zs.LookupIn(zoneID, n)
		if node == nil {
			continue
		}
		for _, cur := range node.Sets {
			if !slices.Contains(ownedTypes(svc.DNS, n == name), cur.Type) {
				continue
			}
			k := keyOf(cur)
			have[k] = true
			w, ok := want[k]
			switch {
			case !ok:
				dels = append(dels, zones.Change{Action: zones.Delete, Set: copySet(cur)})
			case !sameSet(cur, &w):
				ups = append(ups, zones.Change{Action: zones.Upsert, Set: w})
			}
		}
	}
	for k, w := range want {
		if !have[k] {
			ups = append(ups, zones.Change{Action: zones.Upsert, Set: w})
		}
	}
	byKey := func(a, b zones.Change) int {
		return cmp.Or(strings.Compare(a.Set.Name, b.Set.Name), strings.Compare(a.Set.Type, b.Set.Type), strings.Compare(a.Set.SetIdentifier, b.Set.SetIdentifier))
	}
	slices.SortFunc(dels, byKey)
	slices.SortFunc(ups, byKey)
	return append(dels, ups...)
}

// copySet is a stored set as a DELETE must name it: every value as stored.
func copySet(s *zones.RRSet) zones.RRSet {
	c := *s
	c.Records = slices.Clone(s.Records)
	return c
}

// opError is a failed DNS write, as the failed operation reports it.
type opError struct {
	code string
	msg  string
}

func (e *opError) Error() string { return e.code + ": " + e.msg }

// syncServiceLocked writes a DNS service's records for its current instances; removing
// names instances leaving the service, whose host names go too. s.writeMu must be held.
func (s *Store) syncServiceLocked(svc *Service, removing []*Instance) error {
	if svc.DNS == nil {
		return nil
	}
	ns := s.namespaces[svc.NamespaceID]
	if ns == nil || ns.HostedZoneID == "" {
		return nil
	}
	insts := s.instancesOf(svc.ID)
	if len(removing) > 0 {
		gone := map[string]bool{}
		for _, r := range removing {
			gone[r.ID] = true
		}
		insts = slices.DeleteFunc(insts, func(i *Instance) bool { return gone[i.ID] })
	}
	if svc.CustomHealth && svc.DNS.RoutingPolicy == RoutingWeighted {
		// Only the weighted sets carry health check ids; each status written is a write of
		// the state file, so only the ones that differ are.
		for _, inst := range insts {
			healthy := inst.Health != HealthUnhealthy
			if s.zones.Healthy(inst.HealthCheckID) == healthy {
				continue
			}
			if err := s.zones.SetHealth(inst.HealthCheckID, healthy); err != nil {
				return &opError{OpErrInternalFailure, fmt.Sprintf("health of instance %s: %v", inst.ID, err)}
			}
		}
	}
	return s.applyDNS(ns, svc, dnsChanges(s.zones, ns.HostedZoneID, ns, svc, insts, removing))
}

// applyDNS applies changes to a namespace's zone and words a refusal as the failed
// operation reports it. The changes of one API call are a few sets and go in one batch;
// rewriting a whole service (the reconciliation in Open) can exceed Route 53's batch limits
// and goes in as many batches as it takes, in order.
func (s *Store) applyDNS(ns *Namespace, svc *Service, changes []zones.Change) error {
	for _, batch := range splitBatches(changes) {
		if err := s.applyBatch(ns, svc, batch); err != nil {
			return err
		}
	}
	return nil
}

// splitBatches cuts changes into batches within Route 53's limits per request (1,000
// records and 32,000 characters of values, an UPSERT counting twice).
func splitBatches(changes []zones.Change) [][]zones.Change {
	var out [][]zones.Change
	var cur []zones.Change
	records, chars := 0, 0
	for _, c := range changes {
		n, ch := len(c.Set.Records), 0
		for _, v := range c.Set.Records {
			ch += len(v)
		}
		if c.Action == zones.Upsert {
			n, ch = 2*n, 2*ch
		}
		if len(cur) > 0 && (records+n > zones.MaxRecordsPerBatch || chars+ch > zones.MaxValueCharsPerBatch) {
			out, cur, records, chars = append(out, cur), nil, 0, 0
		}
		cur = append(cur, c)
		records, chars = records+n, chars+ch
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func (s *Store) applyBatch(ns *Namespace, svc *Service, changes []zones.Change) error {
	if _, err := s.zones.Apply(ns.HostedZoneID, "AWS Cloud Map service "+svc.ID, changes); err != nil {
		var ze *zones.Error
		switch {
		case errors.As(err, &ze) && ze.Code == zones.CodeNoSuchHostedZone:
			return &opError{OpErrHostedZoneNotFound, ze.Message}
		case errors.As(err, &ze):
			return &opError{OpErrInvalidChangeBatch, ze.Message}
		default:
			return &opError{OpErrInternalFailure, err.Error()}
		}
	}
	s.log.Debug("cloudmap: DNS records written", "service", svc.ID, "zone", ns.HostedZoneID, "changes", len(changes))
	return nil
}

// opFailure splits a DNS write error into an operation error code and message.
func opFailure(err error) (string, string) {
	var oe *opError
	if errors.As(err, &oe) {
		return oe.code, oe.msg
	}
	return OpErrInternalFailure, err.Error()
}

// soaWithTTL is the zone's SOA set with another TTL, for DnsProperties.SOA.TTL.
func soaWithTTL(zs Zones, zoneID, apex string, ttl int64) (zones.RRSet, bool) {
	node := zs.LookupIn(zoneID, apex)
	if node == nil {
		return zones.RRSet{}, false
	}
	for _, set := range node.Sets {
		if set.Type == "SOA" {
			c := copySet(set)
			c.TTL = &ttl
			return c, true
		}
	}
	return zones.RRSet{}, false
}

// soaTTL reads the TTL of a zone's SOA set.
func soaTTL(zs Zones, zoneID, apex string) *int64 {
	if node := zs.LookupIn(zoneID, apex); node != nil {
		for _, set := range node.Sets {
			if set.Type == "SOA" && set.TTL != nil {
				v := *set.TTL
				return &v
			}
		}
	}
	return nil
}

// portOf parses AWS_INSTANCE_PORT.
func portOf(v string) (int, bool) {
	p, err := strconv.Atoi(v)
	return p, err == nil && p >= 1 && p <= 65535
}
