package endpoint

import (
	"fmt"
	"strings"
)

// Model field names, used by FieldError.Field so that callers can map them back to the
// annotation or manifest field they came from.
const (
	FieldName          = "name"
	FieldType          = "type"
	FieldTargets       = "targets"
	FieldTTL           = "ttl"
	FieldSetIdentifier = "set-identifier"
	FieldWeight        = "weight"
	FieldFailover      = "failover"
	FieldHealthCheckID = "health-check-id"
)

// FieldError is one invalid field of an endpoint, named by the model field.
type FieldError struct {
	Field  string
	Value  string
	Reason string
}

// Error renders `field "value": reason`.
func (e *FieldError) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Reason
	}
	return fmt.Sprintf("%s %q: %s", e.Field, e.Value, e.Reason)
}

// ObjectRef names the Kubernetes object a record came from.
type ObjectRef struct {
	Kind      string
	Namespace string
	Name      string
}

// String renders "service default/nginx" (or "kind name" when cluster-scoped).
func (r ObjectRef) String() string {
	kind := strings.ToLower(r.Kind)
	if r.Namespace == "" {
		return kind + " " + r.Name
	}
	return kind + " " + r.Namespace + "/" + r.Name
}

// InvalidError reports an object whose input cannot become a record: which object, which
// annotation or field, the bad value and what was wanted. The object is skipped; nothing
// else is.
type InvalidError struct {
	Object ObjectRef
	// Field is where the value came from, e.g. "annotation external-dns.alpha.kubernetes.io/aws-weight"
	// or "spec.endpoints[0].recordTTL".
	Field  string
	Value  string
	Reason string
}

// Error renders `service default/nginx: annotation …/aws-weight "abc": want an integer 0..255`.
func (e *InvalidError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %s: %s", e.Object, e.Field, e.Reason)
	}
	return fmt.Sprintf("%s: %s %q: %s", e.Object, e.Field, e.Value, e.Reason)
}
