package elb

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crossfade-io/crossfade/internal/elbzone"
)

// CreateLoadBalancerInput is CreateLoadBalancer's request.
type CreateLoadBalancerInput struct {
	Region         string
	Name           string
	Subnets        []string
	SubnetMappings []string // the SubnetId of each SubnetMapping
	SecurityGroups []string
	Scheme         string // "" means internet-facing
	Type           string // "" means application
	IPAddressType  string // "" means ipv4
	Tags           []Tag
}

// CreateLoadBalancer creates an Application or a Network Load Balancer, active at once. Creating one
// that exists with the same settings returns it, as ELBv2 does.
func (s *Store) CreateLoadBalancer(in CreateLoadBalancerInput) (LoadBalancer, error) {
	if err := checkName("Load balancer", in.Name); err != nil {
		return LoadBalancer{}, err
	}
	if strings.HasPrefix(in.Name, "internal-") {
		return LoadBalancer{}, validationf("Load balancer name '%s' cannot begin with 'internal-'", in.Name)
	}
	in.Type = cmpOr(in.Type, "application")
	in.Scheme = cmpOr(in.Scheme, "internet-facing")
	in.IPAddressType = cmpOr(in.IPAddressType, "ipv4")
	if err := enumCheck(in.Type, "type", "application", "network", "gateway"); err != nil {
		return LoadBalancer{}, err
	}
	if in.Type != TypeApplication && in.Type != TypeNetwork {
		return LoadBalancer{}, unsupported("load balancer type '%s': the sandbox serves Application and Network Load Balancers only", in.Type)
	}
	if err := enumCheck(in.Scheme, "scheme", "internet-facing", "internal"); err != nil {
		return LoadBalancer{}, err
	}
	if err := enumCheck(in.IPAddressType, "ipAddressType", "ipv4", "dualstack", "dualstack-without-public-ipv4"); err != nil {
		return LoadBalancer{}, err
	}
	subnets := in.Subnets
	if len(in.Subnets) > 0 && len(in.SubnetMappings) > 0 {
		return LoadBalancer{}, validationf("You can specify subnets or subnet mappings, not both")
	}
	if len(in.SubnetMappings) > 0 {
		subnets = in.SubnetMappings
	}
	for i, sn := range subnets {
		if sn == "" || slices.Contains(subnets[:i], sn) {
			return LoadBalancer{}, validationf("Subnet '%s' is not valid or is specified more than once", sn)
		}
	}
	switch {
	case in.Type == TypeNetwork && len(subnets) < 1:
		// An NLB may live in a single zone; an ALB needs two.
		return LoadBalancer{}, validationf("At least one subnet must be specified")
	case in.Type == TypeApplication && len(subnets) < 2:
		return LoadBalancer{}, validationf("At least two subnets in two different Availability Zones must be specified")
	}
	if err := checkTags(in.Tags, "tags"); err != nil {
		return LoadBalancer{}, err
	}
	region := cmpOr(in.Region, DefaultRegion)
	dns := dnsName(in.Name, region, in.Scheme == "internal")
	if in.Type == TypeNetwork {
		dns = nlbDNSName(in.Name, region)
	}
	zoneID, ok := elbzone.ZoneFor(dns)
	if !ok {
		return LoadBalancer{}, unsupported("region '%s': the sandbox knows the load balancer hosted zones of AWS's published regions only", region)
	}
	lb := LoadBalancer{
		Name: in.Name, Region: region, DNSName: dns, CanonicalHostedZoneID: zoneID,
		Scheme: in.Scheme, Type: in.Type, IPAddressType: in.IPAddressType, VPCID: SandboxVPCID,
		State: "active", SecurityGroups: slices.Clone(in.SecurityGroups), Tags: slices.Clone(in.Tags),
		CreatedTime: s.now().UTC(),
	}
	for i, sn := range subnets {
		lb.AvailabilityZones = append(lb.AvailabilityZones, AvailabilityZone{ZoneName: fmt.Sprintf("%s%c", region, 'a'+i%26), SubnetID: sn})
	}

	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	for _, have := range t.allLBs() {
		if have.Region != region || have.Name != in.Name {
			continue
		}
		if sameLoadBalancer(*have, lb) {
			return *have, nil
		}
		return LoadBalancer{}, errorf(CodeDuplicateLoadBalancerName, "A load balancer with the same name '%s' exists, but with different settings", in.Name)
	}
	lb.ARN = s.arnPrefix(region) + "loadbalancer/" + arnTypePart(in.Type) + "/" + in.Name + "/" + newHexID()
	lb.Seq = t.nextSeq()
	t.lbs[lb.ARN] = &lb
	if err := s.commit(t); err != nil {
		return LoadBalancer{}, err
	}
	s.log.Info("elbv2: load balancer created", "name", lb.Name, "dns_name", lb.DNSName)
	return lb, nil
}

func sameLoadBalancer(a, b LoadBalancer) bool {
	return a.Scheme == b.Scheme && a.Type == b.Type && a.IPAddressType == b.IPAddressType &&
		slices.Equal(a.AvailabilityZones, b.AvailabilityZones) && slices.Equal(a.SecurityGroups, b.SecurityGroups)
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// DescribeLoadBalancersInput is DescribeLoadBalancers' request.
type DescribeLoadBalancersInput struct {
	Region   string
	ARNs     []string
	Names    []string
	Marker   string
	PageSize int
}

// DescribeLoadBalancers lists the region's load balancers, or the named ones, a page at a
// time.
func (s *Store) DescribeLoadBalancers(in DescribeLoadBalancersInput) ([]LoadBalancer, string, error) {
	if len(in.ARNs) > 0 && len(in.Names) > 0 {
		return nil, "", validationf("Load balancer names and load balancer ARNs cannot be specified at the same time")
	}
	for _, arn := range in.ARNs {
		if err := checkARN(arn, kindLoadBalancer); err != nil {
			return nil, "", err
		}
	}
	region := cmpOr(in.Region, DefaultRegion)
	s.mu.RLock()
	var out []LoadBalancer
	for _, lb := range s.snap.LoadBalancers {
		if lb.Region == region && (len(in.ARNs) == 0 && len(in.Names) == 0 || slices.Contains(in.ARNs, lb.ARN) || slices.Contains(in.Names, lb.Name)) {
			out = append(out, lb)
		}
	}
	s.mu.RUnlock()
	if len(in.ARNs) > 0 && len(out) < len(dedupe(in.ARNs)) {
		return nil, "", lbNotFound()
	}
	if len(in.Names) > 0 {
		var missing []string
		for _, n := range dedupe(in.Names) {
			if !slices.ContainsFunc(out, func(lb LoadBalancer) bool { return lb.Name == n }) {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			return nil, "", errorf(CodeLoadBalancerNotFound, "Load balancers '[%s]' not found", strings.Join(missing, ", "))
		}
	}
	page, next, err := paginate(out, in.Marker, in.PageSize)
	if err != nil {
		return nil, "", err
	}
	return page, next, nil
}

func dedupe(v []string) []string {
	out := slices.Clone(v)
	slices.Sort(out)
	return slices.Compact(out)
}

// DeleteLoadBalancer deletes a load balancer with its listeners and their rules; its target
// groups and their targets stay. Deleting one that does not exist succeeds, as on ELBv2.
func (s *Store) DeleteLoadBalancer(region, arn string) error {
	if err := checkARN(arn, kindLoadBalancer); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	lb := t.lb(arn)
	if lb == nil || lb.Region != cmpOr(region, DefaultRegion) {
		return nil
	}
	t.lbs[arn] = nil
	for _, l := range t.lbListeners(arn) {
		t.deleteListener(l)
	}
	if err := s.commit(t); err != nil {
		return err
	}
	s.log.Info("elbv2: load balancer deleted", "name", lb.Name)
	return nil
}

// getLB returns a load balancer of the region by ARN, or LoadBalancerNotFound.
func (t *txn) getLB(region, arn string) (*LoadBalancer, *Error) {
	if err := checkARN(arn, kindLoadBalancer); err != nil {
		return nil, err
	}
	lb := t.lb(arn)
	if lb == nil || lb.Region != cmpOr(region, DefaultRegion) {
		return nil, lbNotFound()
	}
	return lb, nil
}
