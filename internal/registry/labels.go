package registry

import (
	"errors"
	"slices"
	"strings"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

const heritage = "external-dns"

// errNotOurs marks a TXT value that is not an ownership record (no or another heritage).
var errNotOurs = errors.New("not an external-dns ownership record")

// Payload renders labels as external-dns writes them, quotes included:
// "heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app".
// Keys are sorted, as external-dns sorts them, so the bytes are stable.
func Payload(l endpoint.Labels) string {
	// One allocation, the string itself: a plan writes one per ownership record it
	// compares or writes, thousands in a large zone.
	var buf [8]string
	keys := buf[:0]
	n := len(`"heritage=`+heritage) + 1
	for k, v := range l {
		keys = append(keys, k)
		n += len(","+heritage+"/=") + len(k) + len(v)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.Grow(n)
	b.WriteString(`"heritage=` + heritage)
	for _, k := range keys {
		b.WriteString("," + heritage + "/")
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(l[k])
	}
	b.WriteByte('"')
	return b.String()
}

// ParsePayload reads an ownership TXT value (quoted or not) into labels. Tokens that are
// not key=value are ignored, as external-dns ignores them; a value without
// heritage=external-dns is not an ownership record.
func ParsePayload(v string) (endpoint.Labels, error) {
	labels, ok := endpoint.ParseOwnership(v)
	if !ok {
		return nil, errNotOurs
	}
	return labels, nil
}
