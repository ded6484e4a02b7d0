package ec2api

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
	"github.com/crossfade-io/crossfade/internal/sandbox/ec2"
)

// params reads an EC2 query-protocol request. EC2's dialect differs from the other query
// APIs': a list is flattened as Name.N (N from 1) with no ".member", and structures nest
// as Name.N.Member (Filter.1.Name, Filter.1.Value.1, IpPermissions.1.Groups.1.GroupId).
type params struct {
	v url.Values
	// next holds, for each dotted prefix of a key, the segments that follow it
	// ("Filter.1" → {"Name", "Value"}), so that reading a list costs its length, not a
	// scan of every key: a body of many keys must not cost their square.
	next map[string]map[string]bool
}

func newParams(v url.Values) params {
	p := params{v: v, next: map[string]map[string]bool{}}
	for k := range v {
		segs := strings.Split(k, ".")
		for i := 1; i < len(segs); i++ {
			pre := strings.Join(segs[:i], ".")
			if p.next[pre] == nil {
				p.next[pre] = map[string]bool{}
			}
			p.next[pre][segs[i]] = true
		}
	}
	return p
}

func (p params) str(key string) string { return p.v.Get(key) }

func badParam(key, why string) *awsapi.Error {
	return awsapi.Errorf(ec2.CodeInvalidParameterValue, "Invalid value for parameter %s: %s", key, why)
}

// indices are the N of every key prefix.N or prefix.N.…, ascending. An N that is not a
// positive decimal is an error naming the key.
func (p params) indices(prefix string) ([]int, error) {
	out := make([]int, 0, len(p.next[prefix]))
	for n := range p.next[prefix] {
		i, err := strconv.Atoi(n)
		if err != nil || i < 1 || strings.HasPrefix(n, "+") || strings.HasPrefix(n, "0") {
			return nil, badParam(prefix+"."+n, "a list index is a number from 1")
		}
		out = append(out, i)
	}
	slices.Sort(out)
	return out, nil
}

// list reads the list of strings prefix.N.
func (p params) list(prefix string) ([]string, error) {
	idx, err := p.indices(prefix)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(idx))
	for _, i := range idx {
		k := prefix + "." + strconv.Itoa(i)
		if _, ok := p.v[k]; !ok {
			return nil, badParam(k, "a list member is a value")
		}
		out = append(out, p.v.Get(k))
	}
	return out, nil
}

// int32 reads an optional integer.
func (p params) int32(key string) (*int32, error) {
	if _, ok := p.v[key]; !ok {
		return nil, nil
	}
	n, err := strconv.ParseInt(p.str(key), 10, 32)
	if err != nil {
		return nil, badParam(key, "not an integer")
	}
	v := int32(n)
	return &v, nil
}

// filters reads Filter.N.Name and Filter.N.Value.M.
func (p params) filters() ([]ec2.Filter, error) {
	idx, err := p.indices("Filter")
	if err != nil {
		return nil, err
	}
	var out []ec2.Filter
	for _, i := range idx {
		k := "Filter." + strconv.Itoa(i)
		name := p.str(k + ".Name")
		if name == "" {
			return nil, awsapi.Errorf(ec2.CodeMissingParameter, "The request must contain the parameter %s.Name", k)
		}
		vals, err := p.list(k + ".Value")
		if err != nil {
			return nil, err
		}
		out = append(out, ec2.Filter{Name: name, Values: vals})
	}
	return out, nil
}

// query reads what every Describe call shares; idKey names its id list (GroupId).
func (p params) query(idKey string) (ec2.Query, error) {
	var q ec2.Query
	var err error
	if q.IDs, err = p.list(idKey); err != nil {
		return q, err
	}
	if q.Filters, err = p.filters(); err != nil {
		return q, err
	}
	if q.MaxResults, err = p.int32("MaxResults"); err != nil {
		return q, err
	}
	q.NextToken = p.str("NextToken")
	return q, nil
}

// sources reads the list prefix.N.<valueKey> with its Description.
func (p params) sources(prefix, valueKey string) ([]ec2.Source, error) {
	idx, err := p.indices(prefix)
	if err != nil {
		return nil, err
	}
	var out []ec2.Source
	for _, i := range idx {
		k := prefix + "." + strconv.Itoa(i)
		out = append(out, ec2.Source{Value: p.str(k + "." + valueKey), Description: p.str(k + ".Description")})
	}
	return out, nil
}

// permissions reads IpPermissions.N of the ingress rule calls. The legacy top-level
// CidrIp / IpProtocol / FromPort / ToPort / SourceSecurityGroupName form is refused by
// name: the controller does not send it.
func (p params) permissions() ([]ec2.Permission, error) {
	for _, k := range []string{"CidrIp", "IpProtocol", "FromPort", "ToPort", "SourceSecurityGroupName", "SourceSecurityGroupOwnerId", "SecurityGroupRuleId"} {
		if _, ok := p.v[k]; ok {
			return nil, awsapi.Errorf(ec2.CodeInvalidParameterValue, "The parameter %s is not supported by the crossfade sandbox: give the rules as IpPermissions", k)
		}
	}
	if len(p.next["SecurityGroupRuleId"]) > 0 {
		return nil, awsapi.Errorf(ec2.CodeInvalidParameterValue, "The parameter SecurityGroupRuleId is not supported by the crossfade sandbox: give the rules as IpPermissions")
	}
	idx, err := p.indices("IpPermissions")
	if err != nil {
		return nil, err
	}
	var out []ec2.Permission
	for _, i := range idx {
		k := "IpPermissions." + strconv.Itoa(i)
		perm := ec2.Permission{Protocol: p.str(k + ".IpProtocol")}
		if perm.FromPort, err = p.int32(k + ".FromPort"); err != nil {
			return nil, err
		}
		if perm.ToPort, err = p.int32(k + ".ToPort"); err != nil {
			return nil, err
		}
		if perm.IPRanges, err = p.sources(k+".IpRanges", "CidrIp"); err != nil {
			return nil, err
		}
		if perm.IPv6Ranges, err = p.sources(k+".Ipv6Ranges", "CidrIpv6"); err != nil {
			return nil, err
		}
		if perm.Groups, err = p.sources(k+".Groups", "GroupId"); err != nil {
			return nil, err
		}
		if perm.PrefixLists, err = p.sources(k+".PrefixListIds", "PrefixListId"); err != nil {
			return nil, err
		}
		out = append(out, perm)
	}
	return out, nil
}

func sortStrings(s []string) []string { slices.Sort(s); return s }
