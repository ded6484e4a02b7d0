package cloudmap

import (
	"maps"
	"slices"
)

// Action is a write Diff asks for.
type Action string

// The writes.
const (
	Register   Action = "register"
	Deregister Action = "deregister"
)

// Op is one write to one instance.
type Op struct {
	Action Action
	ID     string
	// Resource is the object the instance belongs to.
	Resource string
	// Attributes are, for a registration, the attributes to register; for a
	// deregistration, the instance's as last listed.
	Attributes map[string]string
	// Update is true for a registration over an instance of this owner whose attributes
	// differ (Cloud Map registers again under the same id).
	Update bool
}

// Conflict is a wanted instance whose id an instance of another owner holds: it is not
// written.
type Conflict struct {
	ID, Resource string
	// Owner is the holder's AttrOwner, "" when it has none (another registrar's).
	Owner string
}

// Keep says which of this owner's instances a plan keeps although nothing wants them now.
type Keep struct {
	// All keeps every one: some objects are not known yet, so an instance nothing asks
	// for may only be unread.
	All bool
	// Held are resources whose input is invalid now: their instances stay as they are.
	Held map[string]bool
}

// Owned reports whether attrs, an instance's attributes, say that owner registered it.
func Owned(attrs map[string]string, owner string) bool {
	v, ok := attrs[AttrOwner]
	return ok && v == owner
}

// Diff decides the writes that bring one Cloud Map service from have (every instance it
// holds, by id, with its attributes) to holding want for owner. It registers what is
// missing, registers again an instance of owner's whose attributes differ, and
// deregisters owner's instances nothing wants, except those keep keeps. An instance of
// any other owner is never written: when a wanted id is one, Diff reports a conflict.
// Registrations come first (by id), then deregistrations (by id), so that a replaced
// endpoint's successor is registered before it goes. It has no I/O.
func Diff(want map[string]Instance, have map[string]map[string]string, owner string, keep Keep) ([]Op, []Conflict) {
	var regs, deregs []Op
	var conflicts []Conflict
	for _, id := range slices.Sorted(maps.Keys(want)) {
		in := want[id]
		cur, ok := have[id]
		switch {
		case !ok:
			regs = append(regs, Op{Action: Register, ID: id, Resource: in.Resource, Attributes: in.Attributes})
		case !Owned(cur, owner):
			conflicts = append(conflicts, Conflict{ID: id, Resource: in.Resource, Owner: cur[AttrOwner]})
		case !maps.Equal(cur, in.Attributes):
			regs = append(regs, Op{Action: Register, ID: id, Resource: in.Resource, Attributes: in.Attributes, Update: true})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(have)) {
		cur := have[id]
		if _, wanted := want[id]; wanted || !Owned(cur, owner) || keep.All || keep.Held[cur[AttrResource]] {
			continue
		}
		deregs = append(deregs, Op{Action: Deregister, ID: id, Resource: cur[AttrResource], Attributes: cur})
	}
	return append(regs, deregs...), conflicts
}
