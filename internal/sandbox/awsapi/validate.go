package awsapi

import (
	"fmt"
	"strings"
)

// Schema words the front end's schema checks as AWS words them for every API ("1
// validation error detected: Value '0' at 'priority' failed to satisfy constraint: …"),
// under the error code of one service (ELBv2's ValidationError, Cloud Map's InvalidInput):
// the wording is AWS's front end, shared by every service, while the code is the service's.
type Schema struct {
	// Code is the error code the service answers a schema violation with.
	Code string
}

// Constraint is the answer to value at member breaking rule.
func (s Schema) Constraint(value any, member, rule string) *Error {
	return Errorf(s.Code, "1 validation error detected: Value '%v' at '%s' failed to satisfy constraint: %s", value, member, rule)
}

// NotNull is the answer to a missing required member.
func (s Schema) NotNull(member string) *Error {
	return Errorf(s.Code, "1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", member)
}

// Range applies a model min/max constraint to v at member: nil when lo <= v <= hi.
func (s Schema) Range(v int64, member string, lo, hi int64) *Error {
	switch {
	case v < lo:
		return s.Constraint(v, member, fmt.Sprintf("Member must have value greater than or equal to %d", lo))
	case v > hi:
		return s.Constraint(v, member, fmt.Sprintf("Member must have value less than or equal to %d", hi))
	}
	return nil
}

// Enum applies a model enum constraint to v at member: nil when v is one of allowed.
func (s Schema) Enum(v, member string, allowed ...string) *Error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return s.Constraint(v, member, "Member must satisfy enum value set: ["+strings.Join(allowed, ", ")+"]")
}

// Partition is the ARN partition of a region: "aws-cn" for China, "aws-us-gov" for
// GovCloud, "aws" for every other region.
func Partition(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	}
	return "aws"
}
