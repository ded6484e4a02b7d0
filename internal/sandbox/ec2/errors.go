package ec2

import (
	"fmt"
	"strings"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
)

// Error codes the store returns, EC2's own. EC2 answers every client error with HTTP 400
// ("Error codes for the Amazon EC2 API", docs.aws.amazon.com/AWSEC2/latest/APIReference/
// errors-overview.html: client errors carry a 400-series status). The messages follow
// those public error reports show: "The security group 'sg-…' does not exist", "The
// instance ID 'i-…' does not exist".
const (
	CodeInvalidParameterValue       = "InvalidParameterValue"
	CodeInvalidParameterCombination = "InvalidParameterCombination"
	CodeMissingParameter            = "MissingParameter"
	CodeInvalidPaginationToken      = "InvalidPaginationToken"
	CodeGroupNotFound               = "InvalidGroup.NotFound"
	CodeGroupIDMalformed            = "InvalidGroupId.Malformed"
	CodeInstanceNotFound            = "InvalidInstanceID.NotFound"
	CodeInstanceIDMalformed         = "InvalidInstanceID.Malformed"
	CodeNetworkInterfaceNotFound    = "InvalidNetworkInterfaceID.NotFound"
	CodeNetworkInterfaceIDMalformed = "InvalidNetworkInterfaceID.Malformed"
	CodeVpcNotFound                 = "InvalidVpcID.NotFound"
	CodeVpcIDMalformed              = "InvalidVpcID.Malformed"
	CodeSubnetNotFound              = "InvalidSubnetID.NotFound"
	CodeSubnetIDMalformed           = "InvalidSubnetID.Malformed"
	CodePermissionDuplicate         = "InvalidPermission.Duplicate"
	CodePermissionNotFound          = "InvalidPermission.NotFound"
	CodePermissionMalformed         = "InvalidPermission.Malformed"
)

// Error is an EC2 API error, the sandbox's one AWS error type.
type Error = awsapi.Error

func errorf(code, format string, args ...any) *Error { return awsapi.Errorf(code, format, args...) }

// kind describes one kind of EC2 resource: its id prefix and how EC2 words a missing or
// malformed id of it.
type kind struct {
	prefix        string
	notFound      string // error code
	malformed     string // error code
	one, many     string // "The vpc ID '%s' does not exist" / "The vpc IDs '%s' do not exist"
	malformedWord string // what the Malformed message says it expected
}

var (
	kindVPC = kind{prefix: "vpc-", notFound: CodeVpcNotFound, malformed: CodeVpcIDMalformed,
		one: "The vpc ID '%s' does not exist", many: "The vpc IDs '%s' do not exist", malformedWord: "vpc-..."}
	kindSubnet = kind{prefix: "subnet-", notFound: CodeSubnetNotFound, malformed: CodeSubnetIDMalformed,
		one: "The subnet ID '%s' does not exist", many: "The subnet IDs '%s' do not exist", malformedWord: "subnet-..."}
	kindGroup = kind{prefix: "sg-", notFound: CodeGroupNotFound, malformed: CodeGroupIDMalformed,
		one: "The security group '%s' does not exist", many: "The security groups '%s' do not exist", malformedWord: "sg-..."}
	kindInstance = kind{prefix: "i-", notFound: CodeInstanceNotFound, malformed: CodeInstanceIDMalformed,
		one: "The instance ID '%s' does not exist", many: "The instance IDs '%s' do not exist", malformedWord: "i-..."}
	kindENI = kind{prefix: "eni-", notFound: CodeNetworkInterfaceNotFound, malformed: CodeNetworkInterfaceIDMalformed,
		one: "The networkInterface ID '%s' does not exist", many: "The networkInterface IDs '%s' do not exist", malformedWord: "eni-..."}
)

// wellFormed reports whether id is the prefix and then lower-case letters and digits, as
// EC2's ids are (vpc-0a1b2c…).
func (k kind) wellFormed(id string) bool {
	rest, ok := strings.CutPrefix(id, k.prefix)
	if !ok || rest == "" {
		return false
	}
	for _, r := range rest {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// malformedError is EC2's answer to an id that is not of the kind.
func (k kind) malformedError(id string) *Error {
	return errorf(k.malformed, "Invalid id: %q (expecting %q)", id, k.malformedWord)
}

// notFoundError is EC2's answer to ids of the kind that do not exist.
func (k kind) notFoundError(ids []string) *Error {
	if len(ids) == 1 {
		return errorf(k.notFound, k.one, ids[0])
	}
	return errorf(k.notFound, k.many, strings.Join(ids, ", "))
}

func invalidValue(format string, args ...any) *Error {
	return errorf(CodeInvalidParameterValue, format, args...)
}

// DeclareError is a declaration the store refused: Field names the member of the document
// ("subnets[1].cidrBlock").
type DeclareError struct {
	Field string
	Msg   string
}

func (e *DeclareError) Error() string { return "ec2 declaration: " + e.Field + ": " + e.Msg }

func declErr(field, format string, args ...any) *DeclareError {
	return &DeclareError{Field: field, Msg: fmt.Sprintf(format, args...)}
}
