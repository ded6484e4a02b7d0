// Package ec2 is the sandbox's EC2 model: the VPCs, subnets, security groups (with their
// ingress rules), instances and network interfaces that exist, as tests and the demo
// declare them (Declare), read by the EC2 API (ec2api) the way the AWS Load Balancer
// Controller reads them to bind pods and nodes to target groups, and by the ELBv2 store to
// accept instance targets (InstanceIP). Nothing here launches anything: EC2 in the sandbox
// is a catalogue, and the only writes an API client can make are security group ingress
// rules. The state lives in the sandbox's bbolt file.
package ec2

import (
	"maps"
	"slices"
)

// DefaultAccountID is the owner every resource reports, the account the ELBv2 store's ARNs
// name.
const DefaultAccountID = "123456789012"

// DefaultAvailabilityZone is the zone of a subnet declared without one.
const DefaultAvailabilityZone = "us-east-1a"

// Instance states, as EC2 names them (InstanceState.Name) with their codes.
var instanceStateCodes = map[string]int{
	"pending": 0, "running": 16, "shutting-down": 32, "terminated": 48, "stopping": 64, "stopped": 80,
}

// StateRunning is the state of an instance that can be a target.
const StateRunning = "running"

// Document declares what exists in EC2, the body of PUT /_sandbox/ec2. Each object
// replaces the one of the same id, or adds it; objects the document does not name are
// kept. Declaring the same document twice changes nothing.
type Document struct {
	VPCs              []VPC              `json:"vpcs,omitempty"`
	Subnets           []Subnet           `json:"subnets,omitempty"`
	SecurityGroups    []SecurityGroup    `json:"securityGroups,omitempty"`
	Instances         []Instance         `json:"instances,omitempty"`
	NetworkInterfaces []NetworkInterface `json:"networkInterfaces,omitempty"`
}

// VPC is a virtual private cloud with one IPv4 CIDR block.
type VPC struct {
	ID        string            `json:"id"`
	CIDRBlock string            `json:"cidrBlock"`
	Tags      map[string]string `json:"tags,omitempty"`
}

// Subnet is a subnet of a VPC in one availability zone.
type Subnet struct {
	ID               string            `json:"id"`
	VPCID            string            `json:"vpcId"`
	CIDRBlock        string            `json:"cidrBlock"`
	AvailabilityZone string            `json:"availabilityZone,omitempty"`
	Tags             map[string]string `json:"tags,omitempty"`
}

// SecurityGroup is a VPC security group and its ingress rules. A declaration that leaves
// Ingress out keeps the rules the group has (those the controller authorized among them);
// one that gives it, even empty, sets them.
type SecurityGroup struct {
	ID          string            `json:"id"`
	Name        string            `json:"name,omitempty"`
	Description string            `json:"description,omitempty"`
	VPCID       string            `json:"vpcId"`
	Tags        map[string]string `json:"tags,omitempty"`
	Ingress     []Rule            `json:"ingress,omitempty"`
}

// Rule is one ingress rule: a protocol, a port range and one source (an IPv4 or IPv6 CIDR,
// a security group or a prefix list), as EC2 keeps rules (DescribeSecurityGroupRules);
// DescribeSecurityGroups groups them into IpPermissions by protocol and ports.
type Rule struct {
	// ID is the rule's sgr- id, assigned when the rule is added.
	ID string `json:"id,omitempty"`
	// Protocol is "tcp", "udp", "icmp", "icmpv6", "-1" (all) or another protocol number.
	Protocol string `json:"protocol"`
	// FromPort and ToPort bound the ports (tcp, udp) or are the ICMP type and code; -1
	// for protocols without ports.
	FromPort     int32  `json:"fromPort"`
	ToPort       int32  `json:"toPort"`
	CIDR         string `json:"cidr,omitempty"`
	CIDRv6       string `json:"cidrIpv6,omitempty"`
	GroupID      string `json:"groupId,omitempty"`
	PrefixListID string `json:"prefixListId,omitempty"`
	Description  string `json:"description,omitempty"`
}

// key identifies a rule as EC2 does when it refuses a duplicate or revokes: everything
// but the id and the description.
func (r Rule) key() Rule {
	r.ID, r.Description = "", ""
	return r
}

// source is the rule's peer as EC2's duplicate message names it.
func (r Rule) source() string {
	for _, s := range []string{r.CIDR, r.CIDRv6, r.GroupID, r.PrefixListID} {
		if s != "" {
			return s
		}
	}
	return ""
}

// Instance is an EC2 instance: a node of a cluster, the target of an instance-type target
// group.
type Instance struct {
	ID             string            `json:"id"`
	SubnetID       string            `json:"subnetId"`
	PrivateIP      string            `json:"privateIp"`
	SecurityGroups []string          `json:"securityGroups,omitempty"`
	State          string            `json:"state,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
}

// NetworkInterface is an elastic network interface: a pod's (its addresses are the pods'
// IPs, the first the primary one) or an instance's (InstanceID set).
type NetworkInterface struct {
	ID             string            `json:"id"`
	SubnetID       string            `json:"subnetId"`
	PrivateIPs     []string          `json:"privateIps"`
	SecurityGroups []string          `json:"securityGroups,omitempty"`
	InstanceID     string            `json:"instanceId,omitempty"`
	Description    string            `json:"description,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
}

// Snapshot is everything the store holds, sorted by id; the records are copies.
type Snapshot = Document

// Cloning: records are stored immutable and handed out as copies.

func (v VPC) clone() VPC { v.Tags = maps.Clone(v.Tags); return v }

func (s Subnet) clone() Subnet { s.Tags = maps.Clone(s.Tags); return s }

func (g SecurityGroup) clone() SecurityGroup {
	g.Tags, g.Ingress = maps.Clone(g.Tags), slices.Clone(g.Ingress)
	return g
}

func (i Instance) clone() Instance {
	i.Tags, i.SecurityGroups = maps.Clone(i.Tags), slices.Clone(i.SecurityGroups)
	return i
}

func (n NetworkInterface) clone() NetworkInterface {
	n.Tags, n.SecurityGroups, n.PrivateIPs = maps.Clone(n.Tags), slices.Clone(n.SecurityGroups), slices.Clone(n.PrivateIPs)
	return n
}
