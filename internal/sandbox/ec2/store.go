package ec2

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"reflect"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// Options configures a store.
type Options struct {
	// DB keeps the state in buckets of an open bbolt file (the sandbox shares the zones'
	// file); nil keeps it in memory. The store does not close it.
	DB     *bolt.DB
	Logger *slog.Logger
}

// Store is the EC2 state. Writers are serialised; each write is validated in full, then
// persisted in one bbolt transaction, then published: it happens wholly or not at all.
type Store struct {
	log     *slog.Logger
	db      *boltState
	writeMu sync.Mutex // serialises writers
	mu      sync.RWMutex
	st      state // published records are immutable
	closed  bool

	subMu   sync.Mutex
	subs    map[int]func()
	nextSub int
}

// state is every record by id.
type state struct {
	vpcs      map[string]*VPC
	subnets   map[string]*Subnet
	groups    map[string]*SecurityGroup
	instances map[string]*Instance
	enis      map[string]*NetworkInterface
}

func newState() state {
	return state{vpcs: map[string]*VPC{}, subnets: map[string]*Subnet{}, groups: map[string]*SecurityGroup{},
		instances: map[string]*Instance{}, enis: map[string]*NetworkInterface{}}
}

// Open returns a store, loading any state kept in opts.DB.
func Open(opts Options) (*Store, error) {
	s := &Store{log: opts.Logger, st: newState()}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if opts.DB != nil {
		b, err := openBolt(opts.DB)
		if err != nil {
			return nil, err
		}
		if err := b.load(&s.st); err != nil {
			return nil, fmt.Errorf("ec2 state: %w", err)
		}
		s.db = b
	}
	return s, nil
}

// Close ends writes; the state file is the sandbox's to close.
func (s *Store) Close() error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.closed = true
	return nil
}

// txn is one write: the records it changes, over the published state.
type txn struct {
	base      *state
	vpcs      map[string]*VPC
	subnets   map[string]*Subnet
	groups    map[string]*SecurityGroup
	instances map[string]*Instance
	enis      map[string]*NetworkInterface
}

// begin starts a write; s.writeMu must be held.
func (s *Store) begin() *txn {
	return &txn{base: &s.st, vpcs: map[string]*VPC{}, subnets: map[string]*Subnet{}, groups: map[string]*SecurityGroup{},
		instances: map[string]*Instance{}, enis: map[string]*NetworkInterface{}}
}

func lookup[T any](over, base map[string]*T, id string) *T {
	if v, ok := over[id]; ok {
		return v
	}
	return base[id]
}

// merged is every record of a kind as the write would leave it.
func merged[T any](over, base map[string]*T) map[string]*T {
	out := maps.Clone(base)
	maps.Copy(out, over)
	return out
}

func (t *txn) vpc(id string) *VPC              { return lookup(t.vpcs, t.base.vpcs, id) }
func (t *txn) subnet(id string) *Subnet        { return lookup(t.subnets, t.base.subnets, id) }
func (t *txn) group(id string) *SecurityGroup  { return lookup(t.groups, t.base.groups, id) }
func (t *txn) instance(id string) *Instance    { return lookup(t.instances, t.base.instances, id) }
func (t *txn) eni(id string) *NetworkInterface { return lookup(t.enis, t.base.enis, id) }
func (t *txn) empty() bool                     { return t.size() == 0 }
func (t *txn) size() int {
	return len(t.vpcs) + len(t.subnets) + len(t.groups) + len(t.instances) + len(t.enis)
}

// commit persists and publishes t; s.writeMu must be held.
func (s *Store) commit(t *txn) error {
	if s.closed {
		return errors.New("ec2 store: closed")
	}
	if t.empty() {
		return nil
	}
	if s.db != nil {
		if err := s.db.write(t); err != nil {
			return fmt.Errorf("ec2 state: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := state{vpcs: merged(t.vpcs, s.st.vpcs), subnets: merged(t.subnets, s.st.subnets), groups: merged(t.groups, s.st.groups),
		instances: merged(t.instances, s.st.instances), enis: merged(t.enis, s.st.enis)}
	s.st = next
	return nil
}

// newRuleID returns a fresh security group rule id, sgr- and 17 hex digits as EC2's.
func newRuleID() string {
	b := make([]byte, 9)
	_, _ = rand.Read(b)
	return "sgr-" + hex.EncodeToString(b)[:17]
}

// Subscribe calls fn after every declaration that changed something, once the change is
// published and before Declare returns, until cancel is called. fn runs outside the
// store's locks (it may read the store), on the declaring goroutine; the ELBv2 store
// uses it to serve an instance that stopped, started or moved as it now is.
func (s *Store) Subscribe(fn func()) (cancel func()) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if s.subs == nil {
		s.subs = map[int]func(){}
	}
	s.nextSub++
	id := s.nextSub
	s.subs[id] = fn
	return func() {
		s.subMu.Lock()
		defer s.subMu.Unlock()
		delete(s.subs, id)
	}
}

// notify calls the subscribers, in the order they subscribed.
func (s *Store) notify() {
	s.subMu.Lock()
	ids := slices.Sorted(maps.Keys(s.subs))
	fns := make([]func(), 0, len(ids))
	for _, id := range ids {
		fns = append(fns, s.subs[id])
	}
	s.subMu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// Declare adds or replaces the objects of doc (see Document). The whole document is
// checked first, against itself and what exists; a refused one changes nothing and its
// *DeclareError names the field. Subscribers hear of a change before it returns.
func (s *Store) Declare(doc Document) error {
	changed, err := s.declare(doc)
	if changed {
		s.notify()
	}
	return err
}

// declare is Declare under the write lock: whether it changed anything.
func (s *Store) declare(doc Document) (bool, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	if err := t.declare(doc); err != nil {
		return false, err
	}
	t.dropUnchanged()
	if err := s.commit(t); err != nil {
		return false, err
	}
	n := t.size()
	if n > 0 {
		s.log.Info("ec2 declared", "vpcs", len(doc.VPCs), "subnets", len(doc.Subnets), "security_groups", len(doc.SecurityGroups),
			"instances", len(doc.Instances), "network_interfaces", len(doc.NetworkInterfaces), "changed", n)
	}
	return n > 0, nil
}

// dropUnchanged leaves out of the write the records equal to the stored ones, so that a
// declaration repeated writes nothing.
func (t *txn) dropUnchanged() {
	drop(t.vpcs, t.base.vpcs)
	drop(t.subnets, t.base.subnets)
	drop(t.groups, t.base.groups)
	drop(t.instances, t.base.instances)
	drop(t.enis, t.base.enis)
}

func drop[T any](over, base map[string]*T) {
	for id, v := range over {
		if b, ok := base[id]; ok && reflect.DeepEqual(b, v) {
			delete(over, id)
		}
	}
}

// checkID checks a declared id: its kind, and that the document declares it once.
func checkID(k kind, field, id string, seen map[string]bool) *DeclareError {
	if !k.wellFormed(id) {
		return declErr(field+".id", "%q is not an id of this kind: %s followed by lower-case letters and digits", id, k.prefix)
	}
	if seen[id] {
		return declErr(field+".id", "%q is declared twice", id)
	}
	seen[id] = true
	return nil
}

// tags normalises declared tags: no tags is nil, so that {} and leaving them out are one.
func tags(m map[string]string, field string) (map[string]string, *DeclareError) {
	for k := range m {
		if k == "" {
			return nil, declErr(field+".tags", "a tag key must not be empty")
		}
	}
	if len(m) == 0 {
		return nil, nil
	}
	return maps.Clone(m), nil
}

func ids(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	return slices.Clone(in)
}

func (t *txn) declare(doc Document) error {
	seen := map[string]bool{}
	for i, v := range doc.VPCs {
		f := fmt.Sprintf("vpcs[%d]", i)
		if err := checkID(kindVPC, f, v.ID, seen); err != nil {
			return err
		}
		p, err := netip.ParsePrefix(v.CIDRBlock)
		if err != nil || !p.Addr().Is4() || p.Masked() != p || p.Bits() < 16 || p.Bits() > 28 {
			return declErr(f+".cidrBlock", "%q is not an IPv4 CIDR block from /16 to /28 (10.0.0.0/16, 192.0.2.0/24)", v.CIDRBlock)
		}
		tg, derr := tags(v.Tags, f)
		if derr != nil {
			return derr
		}
		t.vpcs[v.ID] = &VPC{ID: v.ID, CIDRBlock: v.CIDRBlock, Tags: tg}
	}
	for i, sn := range doc.Subnets {
		f := fmt.Sprintf("subnets[%d]", i)
		if err := checkID(kindSubnet, f, sn.ID, seen); err != nil {
			return err
		}
		vpc := t.vpc(sn.VPCID)
		if vpc == nil {
			return declErr(f+".vpcId", "VPC %q is not declared", sn.VPCID)
		}
		p, err := netip.ParsePrefix(sn.CIDRBlock)
		vp := netip.MustParsePrefix(vpc.CIDRBlock)
		if err != nil || !p.Addr().Is4() || p.Masked() != p || p.Bits() < vp.Bits() || !vp.Contains(p.Addr()) {
			return declErr(f+".cidrBlock", "%q is not an IPv4 CIDR block inside VPC %s's %s", sn.CIDRBlock, vpc.ID, vpc.CIDRBlock)
		}
		tg, derr := tags(sn.Tags, f)
		if derr != nil {
			return derr
		}
		t.subnets[sn.ID] = &Subnet{ID: sn.ID, VPCID: sn.VPCID, CIDRBlock: sn.CIDRBlock,
			AvailabilityZone: cmpOr(sn.AvailabilityZone, DefaultAvailabilityZone), Tags: tg}
	}
	// Groups first without rules, so that a rule may name any group of the document.
	for i, g := range doc.SecurityGroups {
		f := fmt.Sprintf("securityGroups[%d]", i)
		if err := checkID(kindGroup, f, g.ID, seen); err != nil {
			return err
		}
		if t.vpc(g.VPCID) == nil {
			return declErr(f+".vpcId", "VPC %q is not declared", g.VPCID)
		}
		tg, derr := tags(g.Tags, f)
		if derr != nil {
			return derr
		}
		name := cmpOr(g.Name, g.ID)
		n := &SecurityGroup{ID: g.ID, Name: name, Description: cmpOr(g.Description, name), VPCID: g.VPCID, Tags: tg}
		if old := t.base.groups[g.ID]; old != nil {
			n.Ingress = old.Ingress
		}
		t.groups[g.ID] = n
	}
	all := merged(t.groups, t.base.groups)
	for i, g := range doc.SecurityGroups {
		f := fmt.Sprintf("securityGroups[%d]", i)
		for id, o := range all {
			if id != g.ID && o.VPCID == g.VPCID && o.Name == t.groups[g.ID].Name {
				return declErr(f+".name", "VPC %s already has a security group named %q (%s)", g.VPCID, o.Name, id)
			}
		}
		if g.Ingress == nil {
			continue
		}
		n := t.groups[g.ID]
		if len(g.Ingress) > maxIngressRules {
			return declErr(f+".ingress", "%d rules: a security group has at most %d inbound rules", len(g.Ingress), maxIngressRules)
		}
		var rules []Rule
		for j, r := range g.Ingress {
			rf := fmt.Sprintf("%s.ingress[%d]", f, j)
			nr, err := normalizeRule(r, t.group)
			if err != nil {
				return declErr(rf, "%s", err.Message)
			}
			if slices.ContainsFunc(rules, func(x Rule) bool { return x.key() == nr.key() }) {
				return declErr(rf, "the rule is declared twice")
			}
			// A rule the group has keeps its id: the same declaration twice is no change.
			if k := slices.IndexFunc(n.Ingress, func(x Rule) bool { return x.key() == nr.key() }); k >= 0 {
				nr.ID = n.Ingress[k].ID
			} else if nr.ID == "" {
				nr.ID = newRuleID()
			} else if !(kind{prefix: "sgr-"}).wellFormed(nr.ID) {
				return declErr(rf+".id", "%q is not a rule id: sgr- followed by lower-case letters and digits", nr.ID)
			}
			rules = append(rules, nr)
		}
		n.Ingress = rules
	}
	for i, in := range doc.Instances {
		f := fmt.Sprintf("instances[%d]", i)
		if err := checkID(kindInstance, f, in.ID, seen); err != nil {
			return err
		}
		sn, derr := t.placed(f, in.SubnetID, []string{in.PrivateIP}, "privateIp", in.SecurityGroups)
		if derr != nil {
			return derr
		}
		state := cmpOr(in.State, StateRunning)
		if _, ok := instanceStateCodes[state]; !ok {
			return declErr(f+".state", "%q is not an instance state (pending, running, shutting-down, terminated, stopping, stopped)", in.State)
		}
		tg, derr := tags(in.Tags, f)
		if derr != nil {
			return derr
		}
		t.instances[in.ID] = &Instance{ID: in.ID, SubnetID: sn.ID, PrivateIP: in.PrivateIP, SecurityGroups: ids(in.SecurityGroups), State: state, Tags: tg}
	}
	for i, n := range doc.NetworkInterfaces {
		f := fmt.Sprintf("networkInterfaces[%d]", i)
		if err := checkID(kindENI, f, n.ID, seen); err != nil {
			return err
		}
		if len(n.PrivateIPs) == 0 {
			return declErr(f+".privateIps", "a network interface has at least one private IP, the first its primary one")
		}
		sn, derr := t.placed(f, n.SubnetID, n.PrivateIPs, "privateIps", n.SecurityGroups)
		if derr != nil {
			return derr
		}
		if n.InstanceID != "" {
			in := t.instance(n.InstanceID)
			if in == nil {
				return declErr(f+".instanceId", "instance %q is not declared", n.InstanceID)
			}
			if t.subnet(in.SubnetID).VPCID != sn.VPCID {
				return declErr(f+".instanceId", "instance %q is in VPC %s, the interface in %s", n.InstanceID, t.subnet(in.SubnetID).VPCID, sn.VPCID)
			}
		}
		tg, derr := tags(n.Tags, f)
		if derr != nil {
			return derr
		}
		t.enis[n.ID] = &NetworkInterface{ID: n.ID, SubnetID: sn.ID, PrivateIPs: slices.Clone(n.PrivateIPs), SecurityGroups: ids(n.SecurityGroups),
			InstanceID: n.InstanceID, Description: n.Description, Tags: tg}
	}
	if err := t.stillConsistent(doc); err != nil {
		return err
	}
	// Two interfaces with one address would leave a pod's address to either: refused.
	owner := map[string]string{}
	for _, id := range slices.Sorted(maps.Keys(merged(t.enis, t.base.enis))) {
		for _, ip := range t.eni(id).PrivateIPs {
			if o, ok := owner[ip]; ok {
				field := "networkInterfaces"
				if i := slices.IndexFunc(doc.NetworkInterfaces, func(n NetworkInterface) bool { return n.ID == id }); i >= 0 {
					field = fmt.Sprintf("networkInterfaces[%d]", i)
				}
				return declErr(field+".privateIps", "%s is already an address of network interface %s", ip, o)
			}
			owner[ip] = id
		}
	}
	return nil
}

// stillConsistent checks that the records the document changes keep those it does not
// name consistent: a VPC still holds its subnets, a subnet its instances' and interfaces'
// addresses, and a group stays in the VPC of whatever uses it.
func (t *txn) stillConsistent(doc Document) *DeclareError {
	subnets, instances, enis := merged(t.subnets, t.base.subnets), merged(t.instances, t.base.instances), merged(t.enis, t.base.enis)
	type member struct {
		what, subnet string
		ips, groups  []string
	}
	var members []member
	for _, id := range slices.Sorted(maps.Keys(instances)) {
		in := instances[id]
		members = append(members, member{"instance " + id, in.SubnetID, []string{in.PrivateIP}, in.SecurityGroups})
	}
	for _, id := range slices.Sorted(maps.Keys(enis)) {
		n := enis[id]
		members = append(members, member{"network interface " + id, n.SubnetID, n.PrivateIPs, n.SecurityGroups})
	}
	for i, v := range doc.VPCs {
		vp := netip.MustParsePrefix(v.CIDRBlock)
		for _, id := range slices.Sorted(maps.Keys(subnets)) {
			sn := subnets[id]
			if sp := netip.MustParsePrefix(sn.CIDRBlock); sn.VPCID == v.ID && (sp.Bits() < vp.Bits() || !vp.Contains(sp.Addr())) {
				return declErr(fmt.Sprintf("vpcs[%d].cidrBlock", i), "%s would leave subnet %s (%s) outside the VPC", v.CIDRBlock, id, sn.CIDRBlock)
			}
		}
	}
	for i, sn := range doc.Subnets {
		sp := netip.MustParsePrefix(sn.CIDRBlock)
		for _, m := range members {
			if m.subnet != sn.ID {
				continue
			}
			for _, ip := range m.ips {
				if !sp.Contains(netip.MustParseAddr(ip)) {
					return declErr(fmt.Sprintf("subnets[%d].cidrBlock", i), "%s would leave %s's address %s outside the subnet", sn.CIDRBlock, m.what, ip)
				}
			}
			for _, g := range m.groups {
				if gv := t.group(g).VPCID; gv != sn.VPCID {
					return declErr(fmt.Sprintf("subnets[%d].vpcId", i), "%s would leave %s in a VPC other than its security group %s's (%s)", sn.VPCID, m.what, g, gv)
				}
			}
		}
	}
	for i, g := range doc.SecurityGroups {
		for _, m := range members {
			if slices.Contains(m.groups, g.ID) && subnets[m.subnet].VPCID != g.VPCID {
				return declErr(fmt.Sprintf("securityGroups[%d].vpcId", i), "%s would move the group out of the VPC of %s, a member", g.VPCID, m.what)
			}
		}
	}
	return nil
}

// placed checks what an instance or interface sits in: its subnet, its addresses (IPv4,
// distinct, inside the subnet) and its security groups (declared, in the subnet's VPC).
func (t *txn) placed(f, subnetID string, addrs []string, addrField string, groups []string) (*Subnet, *DeclareError) {
	sn := t.subnet(subnetID)
	if sn == nil {
		return nil, declErr(f+".subnetId", "subnet %q is not declared", subnetID)
	}
	sp := netip.MustParsePrefix(sn.CIDRBlock)
	seen := map[netip.Addr]bool{}
	for j, a := range addrs {
		af := f + "." + addrField
		if addrField == "privateIps" {
			af = fmt.Sprintf("%s[%d]", af, j)
		}
		ip, err := netip.ParseAddr(a)
		if err != nil || !ip.Is4() || !sp.Contains(ip) {
			return nil, declErr(af, "%q is not an IPv4 address inside subnet %s's %s", a, sn.ID, sn.CIDRBlock)
		}
		if seen[ip] {
			return nil, declErr(af, "%s is given twice", a)
		}
		seen[ip] = true
	}
	for j, g := range groups {
		gf := fmt.Sprintf("%s.securityGroups[%d]", f, j)
		sg := t.group(g)
		if sg == nil {
			return nil, declErr(gf, "security group %q is not declared", g)
		}
		if sg.VPCID != sn.VPCID {
			return nil, declErr(gf, "security group %s is in VPC %s, subnet %s in %s", g, sg.VPCID, sn.ID, sn.VPCID)
		}
	}
	return sn, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
