package changes

import "github.com/crossfade-io/crossfade/internal/endpoint"

// Action is what a change does to one record set, in Route 53's words.
type Action string

// Actions a change batch can hold.
const (
	Create Action = "CREATE"
	Delete Action = "DELETE"
	Upsert Action = "UPSERT"
)

// Change is one action on one record set (a record or its TXT ownership record).
type Change struct {
	Action   Action
	Endpoint *endpoint.Endpoint
}

// Batch is an ordered list of changes for one zone that must be applied atomically, in
// order: Route 53 checks each change against the state the earlier ones leave.
type Batch []Change

// Changes returns the changes of units in order, as one batch.
func Changes(units []Unit) Batch {
	var b Batch
	for _, u := range units {
		b = append(b, u.Changes...)
	}
	return b
}
