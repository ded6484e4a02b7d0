package ec2

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// maxIngressRules is EC2's default quota of inbound rules per security group.
const maxIngressRules = 60

// Permission is one IpPermission of AuthorizeSecurityGroupIngress or
// RevokeSecurityGroupIngress: a protocol and ports, and any number of sources, each of
// which is one rule.
type Permission struct {
	Protocol         string
	FromPort, ToPort *int32
	IPRanges         []Source // CidrIp
	IPv6Ranges       []Source // CidrIpv6
	Groups           []Source // UserIdGroupPairs' GroupId
	PrefixLists      []Source // PrefixListId
}

// Source is one source of a Permission with its description.
type Source struct {
	Value, Description string
}

// protocolName is EC2's name for a protocol given by name or number, and whether it is one.
func protocolName(p string) (string, bool) {
	switch strings.ToLower(p) {
	case "tcp", "6":
		return "tcp", true
	case "udp", "17":
		return "udp", true
	case "icmp", "1":
		return "icmp", true
	case "icmpv6", "58":
		return "icmpv6", true
	case "-1", "all":
		return "-1", true
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 255 {
		return "", false
	}
	return strconv.Itoa(n), true
}

// normalizeRule checks a rule and puts it in the form EC2 keeps: the protocol's name, ports
// -1 where the protocol has none, and one source, a security group that exists.
func normalizeRule(r Rule, group func(string) *SecurityGroup) (Rule, *Error) {
	p, ok := protocolName(r.Protocol)
	if !ok {
		return Rule{}, invalidValue("Invalid value '%s' for IP protocol. Unknown protocol.", r.Protocol)
	}
	r.Protocol = p
	switch p {
	case "tcp", "udp":
		if r.FromPort < 0 || r.ToPort > 65535 || r.FromPort > r.ToPort {
			return Rule{}, invalidValue("Invalid port range: from port %d, to port %d; %s ports are 0 to 65535, from not above to", r.FromPort, r.ToPort, strings.ToUpper(p))
		}
	case "icmp", "icmpv6":
		if r.FromPort < -1 || r.FromPort > 255 || r.ToPort < -1 || r.ToPort > 255 {
			return Rule{}, invalidValue("Invalid ICMP type %d or code %d: each is -1 (all) or 0 to 255", r.FromPort, r.ToPort)
		}
	default:
		r.FromPort, r.ToPort = -1, -1
	}
	n := 0
	for _, s := range []string{r.CIDR, r.CIDRv6, r.GroupID, r.PrefixListID} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return Rule{}, errorf(CodeInvalidParameterCombination, "A rule has exactly one source: a CIDR block (CidrIp, CidrIpv6), a security group (GroupId) or a prefix list (PrefixListId); this one has %d", n)
	}
	switch {
	case r.CIDR != "":
		if pf, err := netip.ParsePrefix(r.CIDR); err != nil || !pf.Addr().Is4() || pf.Masked() != pf {
			return Rule{}, invalidValue("CIDR block %s is malformed", r.CIDR)
		}
	case r.CIDRv6 != "":
		if pf, err := netip.ParsePrefix(r.CIDRv6); err != nil || !pf.Addr().Is6() || pf.Masked() != pf {
			return Rule{}, invalidValue("CIDR block %s is malformed", r.CIDRv6)
		}
	case r.GroupID != "":
		if !kindGroup.wellFormed(r.GroupID) {
			return Rule{}, kindGroup.malformedError(r.GroupID)
		}
		if group(r.GroupID) == nil {
			return Rule{}, kindGroup.notFoundError([]string{r.GroupID})
		}
	case !strings.HasPrefix(r.PrefixListID, "pl-"):
		return Rule{}, invalidValue("The prefix list ID '%s' is malformed", r.PrefixListID)
	}
	return r, nil
}

// rules expands permissions into the rules they name, checked and normalised.
func (p Permission) rules(group func(string) *SecurityGroup) ([]Rule, *Error) {
	proto, ok := protocolName(p.Protocol)
	if p.Protocol == "" {
		return nil, errorf(CodeMissingParameter, "The request must contain the parameter ipPermissions.ipProtocol")
	}
	if !ok {
		return nil, invalidValue("Invalid value '%s' for IP protocol. Unknown protocol.", p.Protocol)
	}
	from, to := int32(-1), int32(-1)
	switch proto {
	case "tcp", "udp":
		if p.FromPort == nil || p.ToPort == nil {
			return nil, invalidValue("Invalid value 'null' for portRange. Must specify both from and to ports with TCP/UDP.")
		}
		from, to = *p.FromPort, *p.ToPort
	case "icmp", "icmpv6":
		if p.FromPort != nil {
			from = *p.FromPort
		}
		if p.ToPort != nil {
			to = *p.ToPort
		}
	}
	var out []Rule
	add := func(srcs []Source, set func(*Rule, string)) *Error {
		for _, s := range srcs {
			r := Rule{Protocol: proto, FromPort: from, ToPort: to, Description: s.Description}
			set(&r, s.Value)
			if s.Value == "" {
				return errorf(CodeMissingParameter, "A source of the permission is empty")
			}
			nr, err := normalizeRule(r, group)
			if err != nil {
				return err
			}
			out = append(out, nr)
		}
		return nil
	}
	for _, e := range []*Error{
		add(p.IPRanges, func(r *Rule, v string) { r.CIDR = v }),
		add(p.IPv6Ranges, func(r *Rule, v string) { r.CIDRv6 = v }),
		add(p.Groups, func(r *Rule, v string) { r.GroupID = v }),
		add(p.PrefixLists, func(r *Rule, v string) { r.PrefixListID = v }),
	} {
		if e != nil {
			return nil, e
		}
	}
	if len(out) == 0 {
		return nil, errorf(CodeMissingParameter, "The permission for protocol %s has no source: give IpRanges, Ipv6Ranges, UserIdGroupPairs (Groups) or PrefixListIds", proto)
	}
	return out, nil
}

// ruleText is a rule as EC2's InvalidPermission.Duplicate message writes it.
func ruleText(r Rule) string {
	if r.Protocol == "-1" {
		return fmt.Sprintf("peer: %s, ALL, ALLOW", r.source())
	}
	return fmt.Sprintf("peer: %s, %s, from port: %d, to port: %d, ALLOW", r.source(), strings.ToUpper(r.Protocol), r.FromPort, r.ToPort)
}

// editGroup begins a rule change of the group id: the expanded rules of perms and a copy
// of the group to change.
func (t *txn) editGroup(groupID string, perms []Permission) (*SecurityGroup, []Rule, *Error) {
	if groupID == "" {
		return nil, nil, errorf(CodeMissingParameter, "The request must contain the parameter groupName or groupId")
	}
	if !kindGroup.wellFormed(groupID) {
		return nil, nil, kindGroup.malformedError(groupID)
	}
	g := t.group(groupID)
	if g == nil {
		return nil, nil, kindGroup.notFoundError([]string{groupID})
	}
	if len(perms) == 0 {
		return nil, nil, errorf(CodeMissingParameter, "The request must contain the parameter ipPermissions")
	}
	var rules []Rule
	for _, p := range perms {
		rs, err := p.rules(t.group)
		if err != nil {
			return nil, nil, err
		}
		rules = append(rules, rs...)
	}
	n := g.clone()
	return &n, rules, nil
}

// AuthorizeIngress adds the rules of perms to the group groupID and returns them with their
// ids. A rule the group has already, or one the request gives twice, refuses the whole
// request (InvalidPermission.Duplicate), as EC2 does.
func (s *Store) AuthorizeIngress(groupID string, perms []Permission) ([]Rule, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	n, rules, err := t.editGroup(groupID, perms)
	if err != nil {
		return nil, err
	}
	for i, r := range rules {
		if slices.ContainsFunc(n.Ingress, func(x Rule) bool { return x.key() == r.key() }) {
			return nil, errorf(CodePermissionDuplicate, "the specified rule %q already exists", ruleText(r))
		}
		rules[i].ID = newRuleID()
		n.Ingress = append(n.Ingress, rules[i])
		if len(n.Ingress) > maxIngressRules {
			return nil, errorf("RulesPerSecurityGroupLimitExceeded", "The maximum number of rules per security group has been reached.")
		}
	}
	t.groups[groupID] = n
	if err := s.commit(t); err != nil {
		return nil, err
	}
	s.log.Info("ec2 ingress authorized", "security_group", groupID, "rules", len(rules))
	return rules, nil
}

// RevokeIngress removes the rules of perms from the group groupID and returns them as they
// were. A rule the group does not have refuses the whole request
// (InvalidPermission.NotFound): EC2 answers so for a VPC that is not a default VPC, and the
// sandbox has no default VPC. The descriptions need not match.
func (s *Store) RevokeIngress(groupID string, perms []Permission) ([]Rule, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	n, rules, err := t.editGroup(groupID, perms)
	if err != nil {
		return nil, err
	}
	var revoked []Rule
	for _, r := range rules {
		k := slices.IndexFunc(n.Ingress, func(x Rule) bool { return x.key() == r.key() })
		if k < 0 {
			return nil, errorf(CodePermissionNotFound, "The specified rule does not exist in this security group.")
		}
		revoked = append(revoked, n.Ingress[k])
		n.Ingress = slices.Delete(n.Ingress, k, k+1)
	}
	if len(n.Ingress) == 0 {
		n.Ingress = nil
	}
	t.groups[groupID] = n
	if err := s.commit(t); err != nil {
		return nil, err
	}
	s.log.Info("ec2 ingress revoked", "security_group", groupID, "rules", len(revoked))
	return revoked, nil
}
