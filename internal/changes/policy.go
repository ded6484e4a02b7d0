package changes

import "fmt"

// Policy says which kinds of change a sync may make, as external-dns's --policy does.
type Policy string

// Policies.
const (
	// Sync creates, updates and deletes owned records.
	Sync Policy = "sync"
	// UpsertOnly creates and updates but never deletes a record outright; replacing an
	// owned record by another routing policy for the same name is an update and allowed.
	UpsertOnly Policy = "upsert-only"
	// CreateOnly only creates records that do not exist.
	CreateOnly Policy = "create-only"
)

// ParsePolicy reads a --policy value.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case Sync, UpsertOnly, CreateOnly:
		return p, nil
	}
	return "", fmt.Errorf("policy %q: want sync, upsert-only or create-only", s)
}
