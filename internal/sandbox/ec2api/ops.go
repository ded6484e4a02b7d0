package ec2api

import (
	"github.com/crossfade-io/crossfade/internal/sandbox/ec2"
)

// operations are the actions the API serves.
func (a *API) operations() map[string]handler {
	s := a.cfg.Store
	return map[string]handler{
		"DescribeVpcs": func(p params) (any, error) {
			q, err := p.query("VpcId")
			if err != nil {
				return nil, err
			}
			out, next, err := s.DescribeVpcs(q)
			if err != nil {
				return nil, err
			}
			return struct {
				VpcSet    items[xVpc] `xml:"vpcSet"`
				NextToken string      `xml:"nextToken,omitempty"`
			}{list(out, toVpc), next}, nil
		},
		"DescribeSubnets": func(p params) (any, error) {
			q, err := p.query("SubnetId")
			if err != nil {
				return nil, err
			}
			out, next, err := s.DescribeSubnets(q)
			if err != nil {
				return nil, err
			}
			return struct {
				SubnetSet items[xSubnet] `xml:"subnetSet"`
				NextToken string         `xml:"nextToken,omitempty"`
			}{list(out, toSubnet), next}, nil
		},
		"DescribeSecurityGroups": func(p params) (any, error) {
			q, err := p.query("GroupId")
			if err != nil {
				return nil, err
			}
			names, err := p.list("GroupName")
			if err != nil {
				return nil, err
			}
			out, next, err := s.DescribeSecurityGroups(q, names)
			if err != nil {
				return nil, err
			}
			return struct {
				SecurityGroupInfo items[xSecurityGroup] `xml:"securityGroupInfo"`
				NextToken         string                `xml:"nextToken,omitempty"`
			}{list(out, toSecurityGroup), next}, nil
		},
		"DescribeNetworkInterfaces": func(p params) (any, error) {
			q, err := p.query("NetworkInterfaceId")
			if err != nil {
				return nil, err
			}
			out, next, err := s.DescribeNetworkInterfaces(q)
			if err != nil {
				return nil, err
			}
			return struct {
				NetworkInterfaceSet items[xNetworkInterface] `xml:"networkInterfaceSet"`
				NextToken           string                   `xml:"nextToken,omitempty"`
			}{list(out, func(n ec2.NetworkInterfaceView) xNetworkInterface { return toNetworkInterface(n, false) }), next}, nil
		},
		"DescribeInstances": func(p params) (any, error) {
			q, err := p.query("InstanceId")
			if err != nil {
				return nil, err
			}
			out, next, err := s.DescribeInstances(q)
			if err != nil {
				return nil, err
			}
			return struct {
				ReservationSet items[xReservation] `xml:"reservationSet"`
				NextToken      string              `xml:"nextToken,omitempty"`
			}{list(out, toReservation), next}, nil
		},
		"AuthorizeSecurityGroupIngress": func(p params) (any, error) {
			perms, err := p.permissions()
			if err != nil {
				return nil, err
			}
			group := p.str("GroupId")
			rules, err := s.AuthorizeIngress(group, perms)
			if err != nil {
				return nil, err
			}
			return struct {
				Return               bool                      `xml:"return"`
				SecurityGroupRuleSet items[xSecurityGroupRule] `xml:"securityGroupRuleSet"`
			}{true, list(rules, toRule(group))}, nil
		},
		"RevokeSecurityGroupIngress": func(p params) (any, error) {
			perms, err := p.permissions()
			if err != nil {
				return nil, err
			}
			group := p.str("GroupId")
			rules, err := s.RevokeIngress(group, perms)
			if err != nil {
				return nil, err
			}
			return struct {
				Return                      bool                `xml:"return"`
				RevokedSecurityGroupRuleSet items[xRevokedRule] `xml:"revokedSecurityGroupRuleSet"`
			}{Return: true, RevokedSecurityGroupRuleSet: list(rules, toRevoked(group))}, nil
		},
	}
}
