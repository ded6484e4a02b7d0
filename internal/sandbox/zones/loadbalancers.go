package zones

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/crossfade-io/crossfade/internal/elbzone"
)

// An alias may name an AWS load balancer: AliasTarget{HostedZoneId: the load balancer's
// canonical zone for its region and type, DNSName: its DNS name}. The sandbox cannot reach
// the real load balancer, so the DNS server answers such an alias from addresses the
// sandbox is given for it (SetLoadBalancer, PUT /_sandbox/loadbalancers/{dnsName}), and
// with NODATA while it has none. The table is kept in memory only: it stands in for the
// ELBv2 API a later issue adds to the sandbox, which will own these addresses.

// LoadBalancerTTL is the TTL Elastic Load Balancing gives the answers for its own names,
// which an alias to a load balancer passes on.
const LoadBalancerTTL = 60

// LoadBalancer is what the sandbox answers for one AWS load balancer.
type LoadBalancer struct {
	// DNSName is the load balancer's name, canonical and without a "dualstack." prefix.
	DNSName string `json:"dnsName"`
	// ZoneID is its canonical hosted zone, the HostedZoneId an alias to it names.
	ZoneID    string       `json:"zoneId"`
	Addresses []netip.Addr `json:"addresses"`
}

// loadBalancerKey is the table key of a canonical DNS name: "dualstack.<name>" is the same
// load balancer as <name> (AWS answers both with the addresses of both families).
func loadBalancerKey(canonical string) string {
	return strings.TrimPrefix(canonical, "dualstack.")
}

// SetLoadBalancer sets the addresses the DNS server answers for the load balancer dnsName,
// which must be an Elastic Load Balancing name of a region elbzone knows. An empty list
// keeps the load balancer known with no addresses: aliases to it answer NODATA.
func (s *Store) SetLoadBalancer(dnsName string, addrs []netip.Addr) (LoadBalancer, error) {
	name := loadBalancerKey(CanonicalName(dnsName))
	zoneID, ok := elbzone.ZoneFor(name)
	if !ok {
		return LoadBalancer{}, fmt.Errorf("load balancer %q: not an Elastic Load Balancing DNS name of a known region (name-123.<region>.elb.amazonaws.com or name-0123abcd.elb.<region>.amazonaws.com)", dnsName)
	}
	var v4, v6 []string
	for _, a := range addrs {
		switch {
		case !a.IsValid():
			return LoadBalancer{}, fmt.Errorf("load balancer %s: an address is empty", name)
		case a.Is4() || a.Is4In6():
			v4 = append(v4, a.Unmap().String())
		default:
			v6 = append(v6, a.String())
		}
	}
	var sets []*RRSet
	ttl := int64(LoadBalancerTTL)
	for _, set := range []*RRSet{{Name: name, Type: "A", TTL: &ttl, Records: v4}, {Name: name, Type: "AAAA", TTL: &ttl, Records: v6}} {
		if len(set.Records) == 0 {
			continue
		}
		rrs, why := parseRecords(set)
		if why != "" {
			return LoadBalancer{}, fmt.Errorf("load balancer %s: %s", name, why)
		}
		set.rrs = rrs
		sets = append(sets, set) // A before AAAA: the order Node.Sets keeps
	}
	node := newNode(sets)
	lb := LoadBalancer{DNSName: name, ZoneID: zoneID, Addresses: slices.Clone(addrs)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lbs == nil {
		s.lbs = map[string]loadBalancerState{}
	}
	s.lbs[name] = loadBalancerState{lb: lb, node: node}
	return lb, nil
}

// LoadBalancerInfo returns what the sandbox answers for the load balancer dnsName.
func (s *Store) LoadBalancerInfo(dnsName string) (LoadBalancer, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st, ok := s.lbs[loadBalancerKey(CanonicalName(dnsName))]
	return st.lb, ok
}

// DeleteLoadBalancer forgets the load balancer dnsName; it reports whether it was known.
func (s *Store) DeleteLoadBalancer(dnsName string) bool {
	key := loadBalancerKey(CanonicalName(dnsName))
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.lbs[key]
	delete(s.lbs, key)
	return ok
}

// loadBalancerState is a load balancer and its published node, immutable like a zone's.
type loadBalancerState struct {
	lb   LoadBalancer
	node *Node
}

// loadBalancerNode answers LookupIn for a load balancer's canonical zone; s.mu must be held.
func (s *Store) loadBalancerNode(zoneID, name string) *Node {
	if len(s.lbs) == 0 || !elbzone.IsCanonicalZone(zoneID) {
		return nil
	}
	return s.lbs[loadBalancerKey(name)].node
}

// isLoadBalancerAlias reports whether an alias names an AWS load balancer, by its zone or
// by its target's name.
func isLoadBalancerAlias(t *AliasTarget) bool {
	if elbzone.IsCanonicalZone(t.HostedZoneID) {
		return true
	}
	_, ok := elbzone.ZoneFor(t.DNSName)
	return ok
}

// awsServiceDomains hold the DNS names of AWS services other than Elastic Load Balancing
// that an alias can target (CloudFront, S3 website endpoints, API Gateway, Global
// Accelerator, Elastic Beanstalk, VPC endpoints, App Runner and Lambda URLs).
var awsServiceDomains = []string{"amazonaws.com.", "amazonaws.com.cn.", "cloudfront.net.", "awsglobalaccelerator.com.", "elasticbeanstalk.com.", "on.aws."}

// isAWSServiceName reports whether a canonical name lies in an AWS service's domain.
func isAWSServiceName(name string) bool {
	for _, d := range awsServiceDomains {
		if strings.HasSuffix(name, "."+d) {
			return true
		}
	}
	return false
}
