package provider

import (
	"fmt"
	"strings"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// ZoneLookupError is a zone reference that selects no zone, or more than one: callers
// name the flag or field it came from and what to do.
type ZoneLookupError struct {
	// Name and ID are the reference as given ("" where not given).
	Name, ID string
	// Matches are the zones it selected: none, or more than one.
	Matches []Zone
	// Of is how many zones the provider manages.
	Of int
}

// Error says which zones matched.
func (e *ZoneLookupError) Error() string {
	ref := e.Name + e.ID
	if e.Name != "" && e.ID != "" {
		ref = e.Name + " (" + e.ID + ")" // as Zone.String renders a zone
	}
	if len(e.Matches) == 0 {
		return fmt.Sprintf("zone %s: not found among the %d zones the provider manages", ref, e.Of)
	}
	return fmt.Sprintf("zone %s: %d zones match (%s)", ref, len(e.Matches), strings.Join(e.IDs(), ", "))
}

// IDs are the ids of the zones that matched.
func (e *ZoneLookupError) IDs() []string {
	ids := make([]string, len(e.Matches))
	for i, z := range e.Matches {
		ids[i] = z.ID
	}
	return ids
}

// FindZone returns the one zone of zones that name and id both select; "" selects every
// zone. A name matches in any case, with or without its trailing dot; an id with or
// without its "/hostedzone/" prefix. Anything but exactly one match is a *ZoneLookupError.
func FindZone(zones []Zone, name, id string) (Zone, error) {
	id = strings.TrimPrefix(strings.TrimPrefix(id, "/"), "hostedzone/")
	norm := endpoint.NormalizeName(name)
	var found []Zone
	for _, z := range zones {
		if (id == "" || z.ID == id) && (name == "" || z.Name == norm) {
			found = append(found, z)
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	return Zone{}, &ZoneLookupError{Name: name, ID: id, Matches: found, Of: len(zones)}
}
