package elb

import (
	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
)

// Error codes the store returns: ELBv2's own (the Code of its ErrorResponse). ELBv2 answers
// every one of them with HTTP 400 (botocore's elbv2 model, httpStatusCode of each exception).
const (
	CodeValidation                  = "ValidationError"
	CodeLoadBalancerNotFound        = "LoadBalancerNotFound"
	CodeTargetGroupNotFound         = "TargetGroupNotFound"
	CodeListenerNotFound            = "ListenerNotFound"
	CodeRuleNotFound                = "RuleNotFound"
	CodeDuplicateLoadBalancerName   = "DuplicateLoadBalancerName"
	CodeDuplicateTargetGroupName    = "DuplicateTargetGroupName"
	CodeDuplicateListener           = "DuplicateListener"
	CodeDuplicateTagKeys            = "DuplicateTagKeys"
	CodePriorityInUse               = "PriorityInUse"
	CodeTooManyTargetGroups         = "TooManyTargetGroups"
	CodeTooManyRules                = "TooManyRules"
	CodeTooManyListeners            = "TooManyListeners"
	CodeTooManyTargets              = "TooManyTargets"
	CodeTooManyTags                 = "TooManyTags"
	CodeInvalidTarget               = "InvalidTarget"
	CodeResourceInUse               = "ResourceInUse"
	CodeInvalidConfigurationRequest = "InvalidConfigurationRequest"
	CodeOperationNotPermitted       = "OperationNotPermitted"
	CodeTargetGroupAssociationLimit = "TargetGroupAssociationLimit"
	CodeInvalidLoadBalancerAction   = "InvalidLoadBalancerAction"
)

// Error is an ELBv2 API error: the code clients branch on (the SDK turns it into a typed
// exception) and the message ELBv2 prints; the sandbox's one AWS error type.
type Error = awsapi.Error

func errorf(code, format string, args ...any) *Error { return awsapi.Errorf(code, format, args...) }

// The messages below are ELBv2's where public error reports show them (see the report of
// the change that added this package); the others follow the model's documentation.

func validationf(format string, args ...any) *Error {
	return errorf(CodeValidation, format, args...)
}

// schema words the front end's schema checks ("1 validation error detected: Value '0' at
// 'priority' failed to satisfy constraint: ...") with ELBv2's code.
var schema = awsapi.Schema{Code: CodeValidation}

// The checks by the names the operations call them.
var (
	constraint = schema.Constraint
	notNull    = schema.NotNull
	enumCheck  = schema.Enum
)

// rangeCheck applies a model min/max constraint to v at path.
func rangeCheck(v int, path string, lo, hi int) *Error {
	return schema.Range(int64(v), path, int64(lo), int64(hi))
}

// unsupported refuses what ELBv2 accepts but the sandbox deliberately does not implement. The
// message says so in the sandbox's own words, so that nobody hunts for a mistake in a valid
// request; the code stays ValidationError, a 400 that no client retries.
func unsupported(format string, args ...any) *Error {
	return validationf("not supported by the crossfade sandbox: "+format, args...)
}

func lbNotFound() *Error {
	return errorf(CodeLoadBalancerNotFound, "One or more load balancers not found")
}
func tgNotFound() *Error {
	return errorf(CodeTargetGroupNotFound, "One or more target groups not found")
}
func listenerNotFound() *Error {
	return errorf(CodeListenerNotFound, "One or more listeners not found")
}
func ruleNotFound() *Error { return errorf(CodeRuleNotFound, "One or more rules not found") }
