package ec2api

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/crossfade-io/crossfade/internal/sandbox/ec2"
)

// The XML shapes of EC2's responses, element for element as the EC2 model names them
// (lower camel case; lists as <name><item>…</item></name>). Lists are always written,
// empty ones too.

type items[T any] struct {
	Item []T `xml:"item"`
}

func list[T, W any](in []T, conv func(T) W) items[W] {
	out := items[W]{Item: make([]W, 0, len(in))}
	for _, v := range in {
		out.Item = append(out.Item, conv(v))
	}
	return out
}

type xTag struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

func tagSet(m map[string]string) items[xTag] {
	return list(slices.Sorted(maps.Keys(m)), func(k string) xTag { return xTag{k, m[k]} })
}

// derivedID is a stable id for something EC2 reports but the sandbox does not keep (a
// reservation, an attachment, a CIDR association): prefix and hex digits from a hash of
// what it belongs to.
func derivedID(prefix, of string) string {
	h := sha256.Sum256([]byte(of))
	return prefix + hex.EncodeToString(h[:])[:17]
}

func arn(resource string) string {
	return "arn:aws:ec2:us-east-1:" + ec2.DefaultAccountID + ":" + resource
}

type xVpc struct {
	VpcID                       string                       `xml:"vpcId"`
	OwnerID                     string                       `xml:"ownerId"`
	State                       string                       `xml:"state"`
	CidrBlock                   string                       `xml:"cidrBlock"`
	CidrBlockAssociationSet     items[xCidrBlockAssociation] `xml:"cidrBlockAssociationSet"`
	Ipv6CidrBlockAssociationSet items[struct{}]              `xml:"ipv6CidrBlockAssociationSet"`
	InstanceTenancy             string                       `xml:"instanceTenancy"`
	IsDefault                   bool                         `xml:"isDefault"`
	TagSet                      items[xTag]                  `xml:"tagSet"`
}

type xCidrBlockAssociation struct {
	AssociationID  string `xml:"associationId"`
	CidrBlock      string `xml:"cidrBlock"`
	CidrBlockState struct {
		State string `xml:"state"`
	} `xml:"cidrBlockState"`
}

func toVpc(v ec2.VPC) xVpc {
	a := xCidrBlockAssociation{AssociationID: derivedID("vpc-cidr-assoc-", v.ID+v.CIDRBlock), CidrBlock: v.CIDRBlock}
	a.CidrBlockState.State = "associated"
	return xVpc{VpcID: v.ID, OwnerID: ec2.DefaultAccountID, State: "available", CidrBlock: v.CIDRBlock,
		CidrBlockAssociationSet: items[xCidrBlockAssociation]{Item: []xCidrBlockAssociation{a}},
		InstanceTenancy:         "default", TagSet: tagSet(v.Tags)}
}

type xSubnet struct {
	SubnetID                    string          `xml:"subnetId"`
	SubnetArn                   string          `xml:"subnetArn"`
	VpcID                       string          `xml:"vpcId"`
	OwnerID                     string          `xml:"ownerId"`
	State                       string          `xml:"state"`
	CidrBlock                   string          `xml:"cidrBlock"`
	AvailabilityZone            string          `xml:"availabilityZone"`
	AvailableIPAddressCount     int             `xml:"availableIpAddressCount"`
	DefaultForAz                bool            `xml:"defaultForAz"`
	MapPublicIPOnLaunch         bool            `xml:"mapPublicIpOnLaunch"`
	AssignIpv6AddressOnCreation bool            `xml:"assignIpv6AddressOnCreation"`
	Ipv6CidrBlockAssociationSet items[struct{}] `xml:"ipv6CidrBlockAssociationSet"`
	TagSet                      items[xTag]     `xml:"tagSet"`
}

func toSubnet(s ec2.Subnet) xSubnet {
	// A subnet's addresses less the five AWS reserves in each.
	count := 0
	if p, err := netip.ParsePrefix(s.CIDRBlock); err == nil && p.Addr().Is4() {
		count = 1<<(32-p.Bits()) - 5
	}
	return xSubnet{SubnetID: s.ID, SubnetArn: arn("subnet/" + s.ID), VpcID: s.VPCID, OwnerID: ec2.DefaultAccountID,
		State: "available", CidrBlock: s.CIDRBlock, AvailabilityZone: s.AvailabilityZone, AvailableIPAddressCount: max(count, 0),
		TagSet: tagSet(s.Tags)}
}

type xIPPermission struct {
	IPProtocol    string               `xml:"ipProtocol"`
	FromPort      *int32               `xml:"fromPort,omitempty"`
	ToPort        *int32               `xml:"toPort,omitempty"`
	Groups        items[xGroupPair]    `xml:"groups"`
	IPRanges      items[xIPRange]      `xml:"ipRanges"`
	Ipv6Ranges    items[xIpv6Range]    `xml:"ipv6Ranges"`
	PrefixListIDs items[xPrefixListID] `xml:"prefixListIds"`
}

type xGroupPair struct {
	UserID      string `xml:"userId"`
	GroupID     string `xml:"groupId"`
	Description string `xml:"description,omitempty"`
}

type xIPRange struct {
	CidrIP      string `xml:"cidrIp"`
	Description string `xml:"description,omitempty"`
}

type xIpv6Range struct {
	CidrIpv6    string `xml:"cidrIpv6"`
	Description string `xml:"description,omitempty"`
}

type xPrefixListID struct {
	PrefixListID string `xml:"prefixListId"`
	Description  string `xml:"description,omitempty"`
}

func ports(r ec2.Rule) (*int32, *int32) {
	if r.Protocol == "tcp" || r.Protocol == "udp" || r.Protocol == "icmp" || r.Protocol == "icmpv6" {
		f, t := r.FromPort, r.ToPort
		return &f, &t
	}
	return nil, nil
}

// permissions groups rules as DescribeSecurityGroups reports them: one IpPermission per
// protocol and port range, with every source of those.
func permissions(rules []ec2.Rule) items[xIPPermission] {
	out := items[xIPPermission]{Item: []xIPPermission{}}
	type key struct {
		proto    string
		from, to int32
	}
	at := map[key]int{}
	for _, r := range rules {
		k := key{r.Protocol, r.FromPort, r.ToPort}
		i, ok := at[k]
		if !ok {
			p := xIPPermission{IPProtocol: r.Protocol}
			p.FromPort, p.ToPort = ports(r)
			p.Groups.Item, p.IPRanges.Item, p.Ipv6Ranges.Item, p.PrefixListIDs.Item = []xGroupPair{}, []xIPRange{}, []xIpv6Range{}, []xPrefixListID{}
			out.Item = append(out.Item, p)
			i = len(out.Item) - 1
			at[k] = i
		}
		p := &out.Item[i]
		switch {
		case r.CIDR != "":
			p.IPRanges.Item = append(p.IPRanges.Item, xIPRange{r.CIDR, r.Description})
		case r.CIDRv6 != "":
			p.Ipv6Ranges.Item = append(p.Ipv6Ranges.Item, xIpv6Range{r.CIDRv6, r.Description})
		case r.GroupID != "":
			p.Groups.Item = append(p.Groups.Item, xGroupPair{ec2.DefaultAccountID, r.GroupID, r.Description})
		default:
			p.PrefixListIDs.Item = append(p.PrefixListIDs.Item, xPrefixListID{r.PrefixListID, r.Description})
		}
	}
	return out
}

type xSecurityGroup struct {
	OwnerID             string               `xml:"ownerId"`
	GroupID             string               `xml:"groupId"`
	GroupName           string               `xml:"groupName"`
	GroupDescription    string               `xml:"groupDescription"`
	VpcID               string               `xml:"vpcId"`
	SecurityGroupArn    string               `xml:"securityGroupArn"`
	IPPermissions       items[xIPPermission] `xml:"ipPermissions"`
	IPPermissionsEgress items[xIPPermission] `xml:"ipPermissionsEgress"`
	TagSet              items[xTag]          `xml:"tagSet"`
}

func toSecurityGroup(g ec2.SecurityGroup) xSecurityGroup {
	return xSecurityGroup{OwnerID: ec2.DefaultAccountID, GroupID: g.ID, GroupName: g.Name, GroupDescription: g.Description,
		VpcID: g.VPCID, SecurityGroupArn: arn("security-group/" + g.ID), IPPermissions: permissions(g.Ingress),
		// Every VPC security group is made with this egress rule; the sandbox models no egress.
		IPPermissionsEgress: permissions([]ec2.Rule{{Protocol: "-1", FromPort: -1, ToPort: -1, CIDR: "0.0.0.0/0"}}),
		TagSet:              tagSet(g.Tags)}
}

type xGroupIdentifier struct {
	GroupID   string `xml:"groupId"`
	GroupName string `xml:"groupName"`
}

func groupSet(refs []ec2.GroupRef) items[xGroupIdentifier] {
	return list(refs, func(r ec2.GroupRef) xGroupIdentifier { return xGroupIdentifier{r.ID, r.Name} })
}

type xPrivateIP struct {
	PrivateIPAddress string `xml:"privateIpAddress"`
	PrivateDNSName   string `xml:"privateDnsName"`
	Primary          bool   `xml:"primary"`
}

func privateIPs(ips []string) items[xPrivateIP] {
	out := items[xPrivateIP]{Item: []xPrivateIP{}}
	for i, ip := range ips {
		out.Item = append(out.Item, xPrivateIP{ip, dnsName(ip), i == 0})
	}
	return out
}

// dnsName is the private DNS name EC2 gives an address in us-east-1.
func dnsName(ip string) string { return "ip-" + strings.ReplaceAll(ip, ".", "-") + ".ec2.internal" }

type xAttachment struct {
	AttachmentID        string `xml:"attachmentId"`
	InstanceID          string `xml:"instanceId,omitempty"`
	InstanceOwnerID     string `xml:"instanceOwnerId,omitempty"`
	DeviceIndex         int    `xml:"deviceIndex"`
	Status              string `xml:"status"`
	DeleteOnTermination bool   `xml:"deleteOnTermination"`
}

type xNetworkInterface struct {
	NetworkInterfaceID    string                  `xml:"networkInterfaceId"`
	SubnetID              string                  `xml:"subnetId"`
	VpcID                 string                  `xml:"vpcId"`
	AvailabilityZone      string                  `xml:"availabilityZone,omitempty"`
	Description           string                  `xml:"description"`
	OwnerID               string                  `xml:"ownerId"`
	RequesterManaged      bool                    `xml:"requesterManaged"`
	Status                string                  `xml:"status"`
	PrivateIPAddress      string                  `xml:"privateIpAddress"`
	PrivateDNSName        string                  `xml:"privateDnsName"`
	SourceDestCheck       bool                    `xml:"sourceDestCheck"`
	GroupSet              items[xGroupIdentifier] `xml:"groupSet"`
	Attachment            *xAttachment            `xml:"attachment,omitempty"`
	PrivateIPAddressesSet items[xPrivateIP]       `xml:"privateIpAddressesSet"`
	Ipv6AddressesSet      items[struct{}]         `xml:"ipv6AddressesSet"`
	InterfaceType         string                  `xml:"interfaceType,omitempty"`
	TagSet                *items[xTag]            `xml:"tagSet,omitempty"`
}

func toNetworkInterface(n ec2.NetworkInterfaceView, inInstance bool) xNetworkInterface {
	x := xNetworkInterface{NetworkInterfaceID: n.ID, SubnetID: n.SubnetID, VpcID: n.VPCID, Description: n.Description,
		OwnerID: ec2.DefaultAccountID, Status: "available", PrivateIPAddress: n.PrivateIPs[0], PrivateDNSName: dnsName(n.PrivateIPs[0]),
		SourceDestCheck: true, GroupSet: groupSet(n.Groups), PrivateIPAddressesSet: privateIPs(n.PrivateIPs)}
	if n.InstanceID != "" {
		x.Status = "in-use"
		x.Attachment = &xAttachment{AttachmentID: derivedID("eni-attach-", n.ID), InstanceID: n.InstanceID,
			InstanceOwnerID: ec2.DefaultAccountID, DeviceIndex: n.DeviceIndex, Status: "attached", DeleteOnTermination: n.DeviceIndex == 0}
	}
	// Inside an instance (InstanceNetworkInterface) EC2 reports neither the zone, nor the
	// type, nor tags, and the attachment leaves out the instance.
	if inInstance {
		if x.Attachment != nil {
			x.Attachment.InstanceID, x.Attachment.InstanceOwnerID = "", ""
		}
		return x
	}
	x.AvailabilityZone, x.InterfaceType = n.AvailabilityZone, "interface"
	t := tagSet(n.Tags)
	x.TagSet = &t
	return x
}

type xInstance struct {
	InstanceID    string `xml:"instanceId"`
	InstanceState struct {
		Code int    `xml:"code"`
		Name string `xml:"name"`
	} `xml:"instanceState"`
	PrivateDNSName   string `xml:"privateDnsName"`
	PrivateIPAddress string `xml:"privateIpAddress"`
	SubnetID         string `xml:"subnetId"`
	VpcID            string `xml:"vpcId"`
	Placement        struct {
		AvailabilityZone string `xml:"availabilityZone"`
		Tenancy          string `xml:"tenancy"`
	} `xml:"placement"`
	GroupSet            items[xGroupIdentifier]  `xml:"groupSet"`
	NetworkInterfaceSet items[xNetworkInterface] `xml:"networkInterfaceSet"`
	TagSet              items[xTag]              `xml:"tagSet"`
}

type xReservation struct {
	ReservationID string           `xml:"reservationId"`
	OwnerID       string           `xml:"ownerId"`
	GroupSet      items[struct{}]  `xml:"groupSet"`
	InstancesSet  items[xInstance] `xml:"instancesSet"`
}

// toReservation reports an instance as DescribeInstances does, in a reservation: one per
// instance, as each was launched on its own.
func toReservation(in ec2.InstanceView) xReservation {
	x := xInstance{InstanceID: in.ID, PrivateDNSName: dnsName(in.PrivateIP), PrivateIPAddress: in.PrivateIP,
		SubnetID: in.SubnetID, VpcID: in.VPCID, GroupSet: groupSet(in.Groups), TagSet: tagSet(in.Tags),
		NetworkInterfaceSet: list(in.NetworkInterfaces, func(n ec2.NetworkInterfaceView) xNetworkInterface { return toNetworkInterface(n, true) })}
	x.InstanceState.Code, x.InstanceState.Name = in.StateCode, in.State
	x.Placement.AvailabilityZone, x.Placement.Tenancy = in.AvailabilityZone, "default"
	return xReservation{ReservationID: derivedID("r-", in.ID), OwnerID: ec2.DefaultAccountID,
		InstancesSet: items[xInstance]{Item: []xInstance{x}}}
}

type xReferencedGroup struct {
	GroupID string `xml:"groupId"`
	UserID  string `xml:"userId"`
}

type xSecurityGroupRule struct {
	SecurityGroupRuleID  string            `xml:"securityGroupRuleId"`
	SecurityGroupRuleArn string            `xml:"securityGroupRuleArn"`
	GroupID              string            `xml:"groupId"`
	GroupOwnerID         string            `xml:"groupOwnerId"`
	IsEgress             bool              `xml:"isEgress"`
	IPProtocol           string            `xml:"ipProtocol"`
	FromPort             int32             `xml:"fromPort"`
	ToPort               int32             `xml:"toPort"`
	CidrIpv4             string            `xml:"cidrIpv4,omitempty"`
	CidrIpv6             string            `xml:"cidrIpv6,omitempty"`
	PrefixListID         string            `xml:"prefixListId,omitempty"`
	ReferencedGroupInfo  *xReferencedGroup `xml:"referencedGroupInfo,omitempty"`
	Description          string            `xml:"description,omitempty"`
}

func toRule(groupID string) func(ec2.Rule) xSecurityGroupRule {
	return func(r ec2.Rule) xSecurityGroupRule {
		x := xSecurityGroupRule{SecurityGroupRuleID: r.ID, SecurityGroupRuleArn: arn("security-group-rule/" + r.ID), GroupID: groupID,
			GroupOwnerID: ec2.DefaultAccountID, IPProtocol: r.Protocol, FromPort: r.FromPort, ToPort: r.ToPort,
			CidrIpv4: r.CIDR, CidrIpv6: r.CIDRv6, PrefixListID: r.PrefixListID, Description: r.Description}
		if r.GroupID != "" {
			x.ReferencedGroupInfo = &xReferencedGroup{GroupID: r.GroupID, UserID: ec2.DefaultAccountID}
		}
		return x
	}
}

type xRevokedRule struct {
	SecurityGroupRuleID string `xml:"securityGroupRuleId"`
	GroupID             string `xml:"groupId"`
	IsEgress            bool   `xml:"isEgress"`
	IPProtocol          string `xml:"ipProtocol"`
	FromPort            int32  `xml:"fromPort"`
	ToPort              int32  `xml:"toPort"`
	CidrIpv4            string `xml:"cidrIpv4,omitempty"`
	CidrIpv6            string `xml:"cidrIpv6,omitempty"`
	PrefixListID        string `xml:"prefixListId,omitempty"`
	ReferencedGroupID   string `xml:"referencedGroupId,omitempty"`
	Description         string `xml:"description,omitempty"`
}

func toRevoked(groupID string) func(ec2.Rule) xRevokedRule {
	return func(r ec2.Rule) xRevokedRule {
		return xRevokedRule{SecurityGroupRuleID: r.ID, GroupID: groupID, IPProtocol: r.Protocol, FromPort: r.FromPort, ToPort: r.ToPort,
			CidrIpv4: r.CIDR, CidrIpv6: r.CIDRv6, PrefixListID: r.PrefixListID, ReferencedGroupID: r.GroupID, Description: r.Description}
	}
}
