package ec2

import (
	"encoding/base64"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Query is what every Describe call shares: ids (GroupId.N, InstanceId.N, …), filters
// (Filter.N.Name, Filter.N.Value.M) and a page (MaxResults, NextToken).
type Query struct {
	IDs        []string
	Filters    []Filter
	MaxResults *int32
	NextToken  string
}

// Filter is one Filter.N: it matches a resource whose attribute Name has any of Values,
// which may hold the wildcards * and ?. Filters match all together.
type Filter struct {
	Name   string
	Values []string
}

// GroupRef is a security group as instances and interfaces name it.
type GroupRef struct{ ID, Name string }

// NetworkInterfaceView is a network interface with what EC2 reports beside it.
type NetworkInterfaceView struct {
	NetworkInterface
	VPCID            string
	AvailabilityZone string
	Groups           []GroupRef
	// DeviceIndex is the interface's place among its instance's, by id: 0 is the primary
	// one.
	DeviceIndex int
}

// InstanceView is an instance with what EC2 reports beside it: its VPC, zone, groups and
// the network interfaces attached to it.
type InstanceView struct {
	Instance
	VPCID             string
	AvailabilityZone  string
	Groups            []GroupRef
	NetworkInterfaces []NetworkInterfaceView
	StateCode         int
}

// attrs gives a resource's values of one filter attribute.
type attrs[T any] map[string]func(T) []string

func one(s string) []string { return []string{s} }

func tagFilter[T any](name string, tagsOf func(T) map[string]string) (func(T) []string, bool) {
	switch {
	case strings.HasPrefix(name, "tag:"):
		k := strings.TrimPrefix(name, "tag:")
		return func(r T) []string {
			if v, ok := tagsOf(r)[k]; ok {
				return one(v)
			}
			return nil
		}, true
	case name == "tag-key":
		return func(r T) []string { return slices.Sorted(maps.Keys(tagsOf(r))) }, true
	case name == "tag-value":
		return func(r T) []string { return slices.Collect(maps.Values(tagsOf(r))) }, true
	}
	return nil, false
}

// glob matches s against pattern with EC2's filter wildcards: * any run, ? any one
// character. Greedy with one backtrack point, so a pattern of many stars costs
// len(pattern)·len(s) at worst, never more: filter values come from clients.
func glob(pattern, s string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == s
	}
	p, r := []rune(pattern), []rune(s)
	i, j := 0, 0
	star, mark := -1, 0
	for j < len(r) {
		switch {
		case i < len(p) && (p[i] == '?' || p[i] == r[j]):
			i, j = i+1, j+1
		case i < len(p) && p[i] == '*':
			star, mark = i, j
			i++
		case star >= 0:
			mark++
			i, j = star+1, mark
		default:
			return false
		}
	}
	for i < len(p) && p[i] == '*' {
		i++
	}
	return i == len(p)
}

// compile turns filters into one predicate over T, or the error EC2 answers a filter it
// does not know with.
func compile[T any](filters []Filter, known attrs[T], tagsOf func(T) map[string]string) (func(T) bool, *Error) {
	type cf struct {
		get    func(T) []string
		values []string
	}
	var cfs []cf
	for _, f := range filters {
		get, ok := known[f.Name]
		if !ok {
			get, ok = tagFilter(f.Name, tagsOf)
		}
		if !ok {
			return nil, invalidValue("The filter '%s' is invalid", f.Name)
		}
		if len(f.Values) == 0 {
			return nil, invalidValue("The filter '%s' has no values", f.Name)
		}
		cfs = append(cfs, cf{get, f.Values})
	}
	return func(r T) bool {
		for _, c := range cfs {
			if !slices.ContainsFunc(c.get(r), func(v string) bool {
				return slices.ContainsFunc(c.values, func(p string) bool { return glob(p, v) })
			}) {
				return false
			}
		}
		return true
	}, nil
}

// page bounds the sorted ids to the page q asks for: those after NextToken, at most
// MaxResults (5 to 1000) of them, and the token of the next page.
func page(k kind, ids []string, q Query) ([]string, string, *Error) {
	if m := q.MaxResults; m != nil && (*m < 5 || *m > 1000) {
		if *m < 5 {
			return nil, "", invalidValue("Value ( %d ) for parameter maxResults is invalid. Expecting a value greater than 5.", *m)
		}
		return nil, "", invalidValue("Value ( %d ) for parameter maxResults is invalid. Expecting a value less than 1000.", *m)
	}
	if q.NextToken != "" {
		after, err := base64.RawURLEncoding.DecodeString(q.NextToken)
		if err != nil || !strings.HasPrefix(string(after), k.prefix) {
			return nil, "", errorf(CodeInvalidPaginationToken, "Invalid pagination token: %s", q.NextToken)
		}
		i, _ := slices.BinarySearch(ids, string(after)+"\x00")
		ids = ids[i:]
	}
	if q.MaxResults == nil || len(ids) <= int(*q.MaxResults) {
		return ids, "", nil
	}
	ids = ids[:*q.MaxResults]
	return ids, base64.RawURLEncoding.EncodeToString([]byte(ids[len(ids)-1])), nil
}

// describe is every Describe call: the ids asked for (each must exist), the filters, the
// page, in id order.
func describe[T any](k kind, all map[string]*T, q Query, known attrs[*T], tagsOf func(*T) map[string]string) ([]*T, string, *Error) {
	match, err := compile(q.Filters, known, tagsOf)
	if err != nil {
		return nil, "", err
	}
	var ids []string
	if len(q.IDs) > 0 {
		var missing []string
		seen := map[string]bool{}
		for _, id := range q.IDs {
			if !k.wellFormed(id) {
				return nil, "", k.malformedError(id)
			}
			if seen[id] {
				continue
			}
			seen[id] = true
			if all[id] == nil {
				missing = append(missing, id)
			}
			ids = append(ids, id)
		}
		if len(missing) > 0 {
			return nil, "", k.notFoundError(missing)
		}
		slices.Sort(ids)
	} else {
		ids = slices.Sorted(maps.Keys(all))
	}
	ids = slices.DeleteFunc(ids, func(id string) bool { return !match(all[id]) })
	ids, next, err := page(k, ids, q)
	if err != nil {
		return nil, "", err
	}
	out := make([]*T, 0, len(ids))
	for _, id := range ids {
		out = append(out, all[id])
	}
	return out, next, nil
}

func (s *Store) read() state {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.st
}

func vpcOf(st state, subnetID string) string {
	if sn := st.subnets[subnetID]; sn != nil {
		return sn.VPCID
	}
	return ""
}

func zoneOf(st state, subnetID string) string {
	if sn := st.subnets[subnetID]; sn != nil {
		return sn.AvailabilityZone
	}
	return ""
}

func groupRefs(st state, ids []string) []GroupRef {
	out := make([]GroupRef, 0, len(ids))
	for _, id := range ids {
		r := GroupRef{ID: id}
		if g := st.groups[id]; g != nil {
			r.Name = g.Name
		}
		out = append(out, r)
	}
	return out
}

// DescribeVpcs answers DescribeVpcs.
func (s *Store) DescribeVpcs(q Query) ([]VPC, string, error) {
	out, next, err := describe(kindVPC, s.read().vpcs, q, attrs[*VPC]{
		"vpc-id":                            func(v *VPC) []string { return one(v.ID) },
		"cidr":                              func(v *VPC) []string { return one(v.CIDRBlock) },
		"cidr-block-association.cidr-block": func(v *VPC) []string { return one(v.CIDRBlock) },
		"state":                             func(*VPC) []string { return one("available") },
		"owner-id":                          func(*VPC) []string { return one(DefaultAccountID) },
		"is-default":                        func(*VPC) []string { return one("false") },
	}, func(v *VPC) map[string]string { return v.Tags })
	if err != nil {
		return nil, "", err
	}
	return copies(out, VPC.clone), next, nil
}

// DescribeSubnets answers DescribeSubnets.
func (s *Store) DescribeSubnets(q Query) ([]Subnet, string, error) {
	out, next, err := describe(kindSubnet, s.read().subnets, q, attrs[*Subnet]{
		"subnet-id":         func(v *Subnet) []string { return one(v.ID) },
		"vpc-id":            func(v *Subnet) []string { return one(v.VPCID) },
		"cidr-block":        func(v *Subnet) []string { return one(v.CIDRBlock) },
		"cidr":              func(v *Subnet) []string { return one(v.CIDRBlock) },
		"availability-zone": func(v *Subnet) []string { return one(v.AvailabilityZone) },
		"state":             func(*Subnet) []string { return one("available") },
		"owner-id":          func(*Subnet) []string { return one(DefaultAccountID) },
		"default-for-az":    func(*Subnet) []string { return one("false") },
	}, func(v *Subnet) map[string]string { return v.Tags })
	if err != nil {
		return nil, "", err
	}
	return copies(out, Subnet.clone), next, nil
}

// DescribeSecurityGroups answers DescribeSecurityGroups; names (GroupName.N) must name
// groups that exist, as ids must.
func (s *Store) DescribeSecurityGroups(q Query, names []string) ([]SecurityGroup, string, error) {
	st := s.read()
	named := map[string]bool{}
	for _, g := range st.groups {
		named[g.Name] = true
	}
	for _, n := range names {
		if !named[n] {
			return nil, "", kindGroup.notFoundError([]string{n})
		}
	}
	if len(names) > 0 {
		q.Filters = append(slices.Clone(q.Filters), Filter{Name: "group-name", Values: names})
	}
	out, next, err := describe(kindGroup, st.groups, q, attrs[*SecurityGroup]{
		"group-id":    func(v *SecurityGroup) []string { return one(v.ID) },
		"group-name":  func(v *SecurityGroup) []string { return one(v.Name) },
		"vpc-id":      func(v *SecurityGroup) []string { return one(v.VPCID) },
		"description": func(v *SecurityGroup) []string { return one(v.Description) },
		"owner-id":    func(*SecurityGroup) []string { return one(DefaultAccountID) },
		"ip-permission.group-id": func(v *SecurityGroup) []string {
			return ruleValues(v, func(r Rule) string { return r.GroupID })
		},
		"ip-permission.cidr": func(v *SecurityGroup) []string {
			return ruleValues(v, func(r Rule) string { return r.CIDR })
		},
		"ip-permission.protocol": func(v *SecurityGroup) []string {
			return ruleValues(v, func(r Rule) string { return r.Protocol })
		},
	}, func(v *SecurityGroup) map[string]string { return v.Tags })
	if err != nil {
		return nil, "", err
	}
	return copies(out, SecurityGroup.clone), next, nil
}

func ruleValues(g *SecurityGroup, f func(Rule) string) []string {
	var out []string
	for _, r := range g.Ingress {
		if v := f(r); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func (st state) eniView(n *NetworkInterface) NetworkInterfaceView {
	v := NetworkInterfaceView{NetworkInterface: n.clone(), VPCID: vpcOf(st, n.SubnetID), AvailabilityZone: zoneOf(st, n.SubnetID),
		Groups: groupRefs(st, n.SecurityGroups)}
	if n.InstanceID != "" {
		v.DeviceIndex = slices.IndexFunc(st.attached(n.InstanceID), func(x *NetworkInterface) bool { return x.ID == n.ID })
	}
	return v
}

// DescribeNetworkInterfaces answers DescribeNetworkInterfaces. Both private-ip-address and
// addresses.private-ip-address match any of an interface's addresses, primary or
// secondary: the controller finds a pod's interface by the pod's IP with the latter.
func (s *Store) DescribeNetworkInterfaces(q Query) ([]NetworkInterfaceView, string, error) {
	st := s.read()
	out, next, err := describe(kindENI, st.enis, q, attrs[*NetworkInterface]{
		"network-interface-id":         func(v *NetworkInterface) []string { return one(v.ID) },
		"vpc-id":                       func(v *NetworkInterface) []string { return one(vpcOf(st, v.SubnetID)) },
		"subnet-id":                    func(v *NetworkInterface) []string { return one(v.SubnetID) },
		"availability-zone":            func(v *NetworkInterface) []string { return one(zoneOf(st, v.SubnetID)) },
		"private-ip-address":           func(v *NetworkInterface) []string { return v.PrivateIPs },
		"addresses.private-ip-address": func(v *NetworkInterface) []string { return v.PrivateIPs },
		"attachment.instance-id":       func(v *NetworkInterface) []string { return nonEmpty(v.InstanceID) },
		"group-id":                     func(v *NetworkInterface) []string { return v.SecurityGroups },
		"group-name": func(v *NetworkInterface) []string {
			return names(groupRefs(st, v.SecurityGroups))
		},
		"description": func(v *NetworkInterface) []string { return one(v.Description) },
		"owner-id":    func(*NetworkInterface) []string { return one(DefaultAccountID) },
		"status":      func(v *NetworkInterface) []string { return one(eniStatus(v)) },
	}, func(v *NetworkInterface) map[string]string { return v.Tags })
	if err != nil {
		return nil, "", err
	}
	views := make([]NetworkInterfaceView, 0, len(out))
	for _, n := range out {
		views = append(views, st.eniView(n))
	}
	return views, next, nil
}

func eniStatus(n *NetworkInterface) string {
	if n.InstanceID != "" {
		return "in-use"
	}
	return "available"
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return one(s)
}

func names(refs []GroupRef) []string {
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		out = append(out, r.Name)
	}
	return out
}

// attached are the interfaces attached to the instance id, by id.
func (st state) attached(id string) []*NetworkInterface {
	var out []*NetworkInterface
	for _, k := range slices.Sorted(maps.Keys(st.enis)) {
		if st.enis[k].InstanceID == id {
			out = append(out, st.enis[k])
		}
	}
	return out
}

// DescribeInstances answers DescribeInstances. EC2 refuses MaxResults beside InstanceId.N.
func (s *Store) DescribeInstances(q Query) ([]InstanceView, string, error) {
	if len(q.IDs) > 0 && q.MaxResults != nil {
		return nil, "", errorf(CodeInvalidParameterCombination, "The parameter instancesSet cannot be used with the parameter maxResults")
	}
	st := s.read()
	out, next, err := describe(kindInstance, st.instances, q, attrs[*Instance]{
		"instance-id":         func(v *Instance) []string { return one(v.ID) },
		"vpc-id":              func(v *Instance) []string { return one(vpcOf(st, v.SubnetID)) },
		"subnet-id":           func(v *Instance) []string { return one(v.SubnetID) },
		"availability-zone":   func(v *Instance) []string { return one(zoneOf(st, v.SubnetID)) },
		"private-ip-address":  func(v *Instance) []string { return one(v.PrivateIP) },
		"instance-state-name": func(v *Instance) []string { return one(v.State) },
		"instance-state-code": func(v *Instance) []string { return one(strconv.Itoa(instanceStateCodes[v.State])) },
		"instance.group-id":   func(v *Instance) []string { return v.SecurityGroups },
		"owner-id":            func(*Instance) []string { return one(DefaultAccountID) },
		"network-interface.addresses.private-ip-address": func(v *Instance) []string {
			var ips []string
			for _, n := range st.attached(v.ID) {
				ips = append(ips, n.PrivateIPs...)
			}
			return ips
		},
		"network-interface.network-interface-id": func(v *Instance) []string {
			var out []string
			for _, n := range st.attached(v.ID) {
				out = append(out, n.ID)
			}
			return out
		},
	}, func(v *Instance) map[string]string { return v.Tags })
	if err != nil {
		return nil, "", err
	}
	views := make([]InstanceView, 0, len(out))
	for _, in := range out {
		v := InstanceView{Instance: in.clone(), VPCID: vpcOf(st, in.SubnetID), AvailabilityZone: zoneOf(st, in.SubnetID),
			Groups: groupRefs(st, in.SecurityGroups), StateCode: instanceStateCodes[in.State]}
		for _, n := range st.attached(in.ID) {
			v.NetworkInterfaces = append(v.NetworkInterfaces, st.eniView(n))
		}
		views = append(views, v)
	}
	return views, next, nil
}

// InstanceIP is the private IP of the instance id when it exists and is running: where a
// target group's instance target is reached. The ELBv2 store asks it (elb.Instances).
func (s *Store) InstanceIP(id string) (netip.Addr, bool) {
	in := s.read().instances[id]
	if in == nil || in.State != StateRunning {
		return netip.Addr{}, false
	}
	ip, err := netip.ParseAddr(in.PrivateIP)
	return ip, err == nil
}

// InstanceState is the state of the instance id ("running", "stopped", …); ok is false
// when EC2 has no such instance. The ELBv2 store names it in a target's health.
func (s *Store) InstanceState(id string) (state string, ok bool) {
	if in := s.read().instances[id]; in != nil {
		return in.State, true
	}
	return "", false
}

// Snapshot is everything the store holds, each kind sorted by id.
func (s *Store) Snapshot() Snapshot {
	st := s.read()
	return Snapshot{
		VPCs:              copies(sortedValues(st.vpcs), VPC.clone),
		Subnets:           copies(sortedValues(st.subnets), Subnet.clone),
		SecurityGroups:    copies(sortedValues(st.groups), SecurityGroup.clone),
		Instances:         copies(sortedValues(st.instances), Instance.clone),
		NetworkInterfaces: copies(sortedValues(st.enis), NetworkInterface.clone),
	}
}

func sortedValues[T any](m map[string]*T) []*T {
	out := make([]*T, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

func copies[T any](in []*T, clone func(T) T) []T {
	if len(in) == 0 {
		return nil
	}
	out := make([]T, 0, len(in))
	for _, v := range in {
		out = append(out, clone(*v))
	}
	return out
}
