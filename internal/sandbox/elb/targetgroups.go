package elb

import (
	"slices"
)

// CreateTargetGroupInput is CreateTargetGroup's request.
type CreateTargetGroupInput struct {
	Region          string
	Name            string
	Protocol        string
	ProtocolVersion string
	Port            *int
	VPCID           string
	TargetType      string // "" means instance
	IPAddressType   string // "" means ipv4
	HealthCheck     HealthCheckInput
	Tags            []Tag
}

// TargetGroupDescription is a target group as DescribeTargetGroups answers it: with the
// load balancers whose listeners forward to it.
type TargetGroupDescription struct {
	TargetGroup
	LoadBalancerARNs []string
}

// CreateTargetGroup creates a target group with ELBv2's defaults for what is not given.
// Creating one that exists with the same settings returns it, as ELBv2 does.
func (s *Store) CreateTargetGroup(in CreateTargetGroupInput) (TargetGroupDescription, error) {
	if err := checkName("Target group", in.Name); err != nil {
		return TargetGroupDescription{}, err
	}
	in.TargetType = cmpOr(in.TargetType, "instance")
	in.IPAddressType = cmpOr(in.IPAddressType, "ipv4")
	if err := enumCheck(in.TargetType, "targetType", "instance", "ip", "lambda", "alb"); err != nil {
		return TargetGroupDescription{}, err
	}
	if in.TargetType != "instance" && in.TargetType != "ip" {
		return TargetGroupDescription{}, unsupported("target type '%s': the sandbox serves target groups of type ip and instance only", in.TargetType)
	}
	if in.Protocol == "" {
		return TargetGroupDescription{}, validationf("A protocol must be specified for target groups with the target type '%s'", in.TargetType)
	}
	if err := enumCheck(in.Protocol, "protocol", "HTTP", "HTTPS", "TCP", "TLS", "UDP", "TCP_UDP", "GENEVE"); err != nil {
		return TargetGroupDescription{}, err
	}
	if in.Protocol != "HTTP" && in.Protocol != "HTTPS" && in.Protocol != ProtocolTCP {
		return TargetGroupDescription{}, unsupported("target group protocol '%s': the sandbox serves HTTP and HTTPS target groups (Application Load Balancers) and TCP ones (Network Load Balancers)", in.Protocol)
	}
	if in.Port == nil {
		return TargetGroupDescription{}, validationf("A port must be specified for target groups with the target type '%s'", in.TargetType)
	}
	if err := rangeCheck(*in.Port, "port", 1, 65535); err != nil {
		return TargetGroupDescription{}, err
	}
	if in.VPCID == "" {
		return TargetGroupDescription{}, validationf("A VPC ID must be specified for target groups with the target type '%s'", in.TargetType)
	}
	if in.Protocol == ProtocolTCP {
		if in.ProtocolVersion != "" {
			return TargetGroupDescription{}, validationf("Protocol version '%s' can be specified only for target groups with the protocol 'HTTP' or 'HTTPS', not 'TCP'", in.ProtocolVersion)
		}
	} else {
		in.ProtocolVersion = cmpOr(in.ProtocolVersion, "HTTP1")
		if err := enumCheck(in.ProtocolVersion, "protocolVersion", "HTTP1", "HTTP2", "GRPC"); err != nil {
			return TargetGroupDescription{}, err
		}
	}
	if err := enumCheck(in.IPAddressType, "ipAddressType", "ipv4", "ipv6"); err != nil {
		return TargetGroupDescription{}, err
	}
	hc, err := applyHealthCheck(in.Protocol, defaultHealthCheck(in.Protocol), in.HealthCheck)
	if err != nil {
		return TargetGroupDescription{}, err
	}
	if err := checkTags(in.Tags, "tags"); err != nil {
		return TargetGroupDescription{}, err
	}
	region := cmpOr(in.Region, DefaultRegion)
	tg := TargetGroup{
		Name: in.Name, Region: region, Protocol: in.Protocol, ProtocolVersion: in.ProtocolVersion,
		Port: *in.Port, VPCID: in.VPCID, TargetType: in.TargetType, IPAddressType: in.IPAddressType,
		HealthCheck: hc, Attributes: defaultAttributes(in.Protocol), Tags: slices.Clone(in.Tags), CreatedTime: s.now().UTC(),
	}

	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	for _, have := range t.allTGs() {
		if have.Region != region || have.Name != in.Name {
			continue
		}
		if sameTargetGroup(*have, tg) {
			return t.describeTG(have), nil
		}
		return TargetGroupDescription{}, errorf(CodeDuplicateTargetGroupName, "A target group with the same name '%s' exists, but with different settings", in.Name)
	}
	tg.ARN = s.arnPrefix(region) + "targetgroup/" + in.Name + "/" + newHexID()
	tg.Seq = t.nextSeq()
	t.tgs[tg.ARN] = &tg
	if err := s.commit(t); err != nil {
		return TargetGroupDescription{}, err
	}
	s.log.Info("elbv2: target group created", "name", tg.Name, "port", tg.Port)
	return TargetGroupDescription{TargetGroup: tg}, nil
}

func sameTargetGroup(a, b TargetGroup) bool {
	return a.Protocol == b.Protocol && a.ProtocolVersion == b.ProtocolVersion && a.Port == b.Port &&
		a.VPCID == b.VPCID && a.TargetType == b.TargetType && a.IPAddressType == b.IPAddressType && a.HealthCheck == b.HealthCheck
}

func (t *txn) describeTG(tg *TargetGroup) TargetGroupDescription {
	return TargetGroupDescription{TargetGroup: *tg, LoadBalancerARNs: t.targetGroupUsers()[tg.ARN]}
}

// getTG returns a target group of the region by ARN, or TargetGroupNotFound.
func (t *txn) getTG(region, arn string) (*TargetGroup, *Error) {
	if err := checkARN(arn, kindTargetGroup); err != nil {
		return nil, err
	}
	tg := t.tg(arn)
	if tg == nil || tg.Region != cmpOr(region, DefaultRegion) {
		return nil, tgNotFound()
	}
	return tg, nil
}

// DescribeTargetGroupsInput is DescribeTargetGroups' request.
type DescribeTargetGroupsInput struct {
	Region          string
	LoadBalancerARN string
	ARNs            []string
	Names           []string
	Marker          string
	PageSize        int
}

// DescribeTargetGroups lists target groups: all of the region, those a load balancer
// forwards to, or the named ones.
func (s *Store) DescribeTargetGroups(in DescribeTargetGroupsInput) ([]TargetGroupDescription, string, error) {
	if len(in.ARNs) > maxDescribeTargetGroups || len(in.Names) > maxDescribeTargetGroups {
		return nil, "", validationf("You cannot describe more than '%d' target groups at a time", maxDescribeTargetGroups)
	}
	if len(in.ARNs) > 0 && len(in.Names) > 0 || in.LoadBalancerARN != "" && len(in.ARNs)+len(in.Names) > 0 {
		return nil, "", validationf("A load balancer ARN, target group ARNs and target group names cannot be specified together")
	}
	for _, arn := range in.ARNs {
		if err := checkARN(arn, kindTargetGroup); err != nil {
			return nil, "", err
		}
	}
	region := cmpOr(in.Region, DefaultRegion)
	// Readers take writeMu too: the load balancers of a group come from the listeners, and
	// this keeps the listing consistent without a second index.
	s.writeMu.Lock()
	t := s.begin()
	if in.LoadBalancerARN != "" {
		if _, err := t.getLB(region, in.LoadBalancerARN); err != nil {
			s.writeMu.Unlock()
			return nil, "", err
		}
	}
	users := t.targetGroupUsers()
	var out []TargetGroupDescription
	for _, tg := range s.Snapshot().TargetGroups {
		switch {
		case tg.Region != region:
		case in.LoadBalancerARN != "" && !slices.Contains(users[tg.ARN], in.LoadBalancerARN):
		case len(in.ARNs) > 0 && !slices.Contains(in.ARNs, tg.ARN):
		case len(in.Names) > 0 && !slices.Contains(in.Names, tg.Name):
		default:
			out = append(out, TargetGroupDescription{TargetGroup: tg, LoadBalancerARNs: users[tg.ARN]})
		}
	}
	s.writeMu.Unlock()
	if len(in.ARNs) > 0 && len(out) < len(dedupe(in.ARNs)) || len(in.Names) > 0 && len(out) < len(dedupe(in.Names)) {
		return nil, "", tgNotFound()
	}
	page, next, err := paginate(out, in.Marker, in.PageSize)
	if err != nil {
		return nil, "", err
	}
	return page, next, nil
}

// ModifyTargetGroup changes a target group's health-check settings.
func (s *Store) ModifyTargetGroup(region, arn string, hc HealthCheckInput) (TargetGroupDescription, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	tg, err := t.getTG(region, arn)
	if err != nil {
		return TargetGroupDescription{}, err
	}
	n := *tg
	if n.HealthCheck, err = applyHealthCheck(tg.Protocol, tg.HealthCheck, hc); err != nil {
		return TargetGroupDescription{}, err
	}
	t.tgs[arn] = &n
	if err := s.commit(t); err != nil {
		return TargetGroupDescription{}, err
	}
	return t.describeTG(&n), nil
}

// DeleteTargetGroup deletes a target group no action forwards to. Deleting one that does
// not exist succeeds: ELBv2 lists no TargetGroupNotFound for it.
func (s *Store) DeleteTargetGroup(region, arn string) error {
	if err := checkARN(arn, kindTargetGroup); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	tg := t.tg(arn)
	if tg == nil || tg.Region != cmpOr(region, DefaultRegion) {
		return nil
	}
	if len(t.targetGroupUsers()[arn]) > 0 {
		return errorf(CodeResourceInUse, "Target group '%s' is currently in use by a listener or a rule", arn)
	}
	t.tgs[arn] = nil
	if err := s.commit(t); err != nil {
		return err
	}
	s.log.Info("elbv2: target group deleted", "name", tg.Name)
	return nil
}

// TargetGroupAttributes returns every attribute of a target group.
func (s *Store) TargetGroupAttributes(region, arn string) ([]Attribute, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tg, err := s.begin().getTG(region, arn)
	if err != nil {
		return nil, err
	}
	return tg.Attributes, nil
}

// ModifyTargetGroupAttributes sets attributes and returns them all.
func (s *Store) ModifyTargetGroupAttributes(region, arn string, attrs []Attribute) ([]Attribute, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	tg, err := t.getTG(region, arn)
	if err != nil {
		return nil, err
	}
	n := *tg
	if n.Attributes, err = applyAttributes(tg.Protocol, tg.Attributes, attrs); err != nil {
		return nil, err
	}
	t.tgs[arn] = &n
	if err := s.commit(t); err != nil {
		return nil, err
	}
	return n.Attributes, nil
}
