package zones

import (
	"fmt"
	"strings"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
)

// Route 53 error codes the store returns; the API layer maps them to HTTP statuses.
const (
	CodeInvalidChangeBatch      = "InvalidChangeBatch"
	CodeInvalidInput            = "InvalidInput"
	CodeNoSuchHostedZone        = "NoSuchHostedZone"
	CodeHostedZoneNotEmpty      = "HostedZoneNotEmpty"
	CodeHostedZoneAlreadyExists = "HostedZoneAlreadyExists"
	CodeInvalidDomainName       = "InvalidDomainName"
	CodeNoSuchChange            = "NoSuchChange"
)

// Error is a Route 53 API error: a code callers branch on and the message Route 53 prints
// (Messages holds every rule a change batch broke, for InvalidChangeBatch); the sandbox's
// one AWS error type.
type Error = awsapi.Error

func errorf(code, format string, args ...any) *Error { return awsapi.Errorf(code, format, args...) }

// schema words the front end's schema checks ("1 validation error detected: …") with
// Route 53's code.
var schema = awsapi.Schema{Code: CodeInvalidInput}

// batchError builds InvalidChangeBatch the way Route 53 prints it: every message, comma
// separated, inside one pair of brackets.
func batchError(msgs []string) *Error {
	return &Error{
		Code:     CodeInvalidChangeBatch,
		Message:  "[" + strings.Join(msgs, ", ") + "]",
		Messages: msgs,
	}
}

// describe names a set inside Route 53's "Tried to … resource record set [...]" messages.
func describe(s *RRSet) string {
	d := fmt.Sprintf("name='%s', type='%s'", PresentName(s.Name), s.Type)
	if s.SetIdentifier != "" {
		d += fmt.Sprintf(", set-identifier='%s'", s.SetIdentifier)
	}
	return "[" + d + "]"
}

// changeTag is how Route 53's InvalidInput messages quote the offending change.
func changeTag(c Change) string {
	id := "null"
	if c.Set.SetIdentifier != "" {
		id = c.Set.SetIdentifier
	}
	return fmt.Sprintf("[Action=%s, Name=%s, Type=%s, SetIdentifier=%s]", c.Action, PresentName(c.Set.Name), c.Set.Type, id)
}
