package changes

import (
	"fmt"
	"strings"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// Conflict is a record crossfade wanted to write but did not, because writing it would
// delete or overwrite what it does not own, or because sources disagree.
type Conflict struct {
	// Key is the record set wanted.
	Key endpoint.Key
	// Reason says what stands in the way.
	Reason string
	// Advice says what an operator can do about it.
	Advice string
	// Resource is the object that published the record ("service/default/app"), set when
	// no source wants the record now (a member a cutover holds), so that reports can still
	// tell that object.
	Resource string
}

// String renders "name type [set-id]: reason; advice".
func (c Conflict) String() string {
	if c.Advice == "" {
		return c.Key.String() + ": " + c.Reason
	}
	return c.Key.String() + ": " + c.Reason + "; " + c.Advice
}

func ownerText(e *endpoint.Endpoint) string {
	if o := e.Owner(); o != "" {
		return "owner " + o
	}
	return "no owner (no ownership TXT record)"
}

func describe(e *endpoint.Endpoint) string {
	s := e.Policy.String()
	if e.SetIdentifier != "" {
		s += " [" + e.SetIdentifier + "]"
	}
	return fmt.Sprintf("%s %s record %s -> %s", s, e.Type, e.Name, strings.Join(e.Targets, ","))
}

func wantedBy(d *endpoint.Endpoint) string {
	if r := d.Resource(); r != "" {
		return " (wanted by " + r + ")"
	}
	return ""
}

// notOwned: the exact record set exists under someone else.
func notOwned(cur, want *endpoint.Endpoint, txtName, owner string) Conflict {
	return Conflict{
		Key:    want.Key(),
		Reason: fmt.Sprintf("exists as %s with %s; crossfade never overwrites a record it does not own%s", describe(cur), ownerText(cur), wantedBy(want)),
		Advice: fmt.Sprintf("if %s should own it, hand it over (its owner writes TXT %s with owner=%s) or remove it, then sync again; otherwise give this member its own set identifier", owner, txtName, owner),
	}
}

// blocked: another record set at the name keeps Route 53 from creating want.
func blocked(blocker, want *endpoint.Endpoint, owner string, txtName string) Conflict {
	return Conflict{
		Key: want.Key(),
		Reason: fmt.Sprintf("cannot be created beside the existing %s with %s, and crossfade never deletes a record it does not own%s",
			describe(blocker), ownerText(blocker), wantedBy(want)),
		Advice: fmt.Sprintf("to convert it, either let %s own it (write TXT %s with heritage=external-dns,external-dns/owner=%s) so the next sync replaces it atomically, or delete it and create the new record in one change batch yourself",
			owner, txtName, owner),
	}
}
