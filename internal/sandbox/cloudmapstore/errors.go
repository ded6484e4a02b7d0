package cloudmapstore

import (
	"fmt"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
)

// Error codes the store returns: Cloud Map's own exception names (the __type of its JSON
// error). Cloud Map answers every one of them with HTTP 400 (the API reference's Errors
// section of each operation).
const (
	CodeInvalidInput           = "InvalidInput"
	CodeNamespaceNotFound      = "NamespaceNotFound"
	CodeServiceNotFound        = "ServiceNotFound"
	CodeInstanceNotFound       = "InstanceNotFound"
	CodeOperationNotFound      = "OperationNotFound"
	CodeNamespaceAlreadyExists = "NamespaceAlreadyExists"
	CodeServiceAlreadyExists   = "ServiceAlreadyExists"
	CodeResourceInUse          = "ResourceInUse"
	CodeDuplicateRequest       = "DuplicateRequest"
	CodeResourceLimitExceeded  = "ResourceLimitExceeded"
	CodeCustomHealthNotFound   = "CustomHealthNotFound"
	CodeResourceNotFound       = "ResourceNotFoundException"
	CodeTooManyTags            = "TooManyTagsException"
)

// Error codes of a failed operation (Operation.ErrorCode), as the model lists them.
const (
	OpErrHostedZoneNotFound     = "HOSTED_ZONE_NOT_FOUND"
	OpErrCannotCreateHostedZone = "CANNOT_CREATE_HOSTED_ZONE"
	OpErrInvalidChangeBatch     = "INVALID_CHANGE_BATCH"
	OpErrInternalFailure        = "INTERNAL_FAILURE"
)

// Error is a Cloud Map API error: the code clients branch on, the message, and the extra
// members some exceptions carry (NamespaceAlreadyExists's NamespaceId, DuplicateRequest's
// DuplicateOperationId …), which the SDKs decode into the typed error.
//
// It is the sandbox's one AWS error type; Fields holds the members, With adds one.
type Error = awsapi.Error

func errorf(code, format string, args ...any) *Error { return awsapi.Errorf(code, format, args...) }

// The front end's schema checks, worded as AWS words them for every JSON API
// ("1 validation error detected: Value null at 'id' failed to satisfy constraint: Member
// must not be null" is Cloud Map's answer to a GetService without Id, quoted in
// github.com/aws/aws-sdk-java#1973), under Cloud Map's code.
var schema = awsapi.Schema{Code: CodeInvalidInput}

// The checks by the names the operations call them.
var (
	constraint = schema.Constraint
	notNull    = schema.NotNull
	enumCheck  = schema.Enum
	rangeCheck = schema.Range
)

func maxLen(value, member string, n int) *Error {
	if len(value) <= n {
		return nil
	}
	return constraint(value, member, fmt.Sprintf("Member must have length less than or equal to %d", n))
}

func invalidf(format string, args ...any) *Error { return errorf(CodeInvalidInput, format, args...) }

// unsupported refuses what Cloud Map accepts but the sandbox deliberately does not serve,
// in the sandbox's own words so that nobody hunts for a mistake in a valid request; the
// code stays InvalidInput, a 400 that no client retries.
func unsupported(format string, args ...any) *Error {
	return invalidf("not supported by the crossfade sandbox: "+format, args...)
}

// The not-found and in-use messages. Two are Cloud Map's words as users pasted them from
// real AWS ("Namespace has associated services; …" in github.com/anomalyco/sst#5931,
// "Service contains registered instances; …" in github.com/hashicorp/terraform#18264);
// the others follow the exceptions' documentation in the service model.

func namespaceNotFound(id string) *Error {
	return errorf(CodeNamespaceNotFound, "No namespace exists with the specified ID: %s", id)
}

func namespaceNameNotFound(name string) *Error {
	return errorf(CodeNamespaceNotFound, "No namespace exists with the specified name: %s", name)
}

func serviceNotFound(id string) *Error {
	return errorf(CodeServiceNotFound, "No service exists with the specified ID: %s", id)
}

func serviceNameNotFound(name string) *Error {
	return errorf(CodeServiceNotFound, "No service exists with the specified name: %s", name)
}

func instanceNotFound(serviceID, id string) *Error {
	return errorf(CodeInstanceNotFound, "No instance exists with the specified ID %s in service %s", id, serviceID)
}

func operationNotFound(id string) *Error {
	return errorf(CodeOperationNotFound, "No operation exists with the specified ID: %s", id)
}

func namespaceInUse() *Error {
	return errorf(CodeResourceInUse, "Namespace has associated services; delete the services before deleting the namespace")
}

func serviceInUse() *Error {
	return errorf(CodeResourceInUse, "Service contains registered instances; delete the instances before deleting the service")
}
