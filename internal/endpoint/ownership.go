package endpoint

import (
	"math"
	"strings"
)

// ownershipHeritage is the heritage every external-dns ownership record carries; its
// labels are written as "external-dns/KEY=VALUE".
const ownershipHeritage = "external-dns"

// ParseOwnership reads an ownership TXT value (quoted or not) into labels. Tokens that are
// not key=value are ignored, as external-dns ignores them; ok is false for a value without
// heritage=external-dns, or with another heritage, which is not an ownership record.
func ParseOwnership(v string) (Labels, bool) {
	if !IsOwnership(v) {
		return nil, false
	}
	labels := make(Labels, 2)
	walkOwnership(v, func(k, val string) { labels[k] = val })
	return labels, true
}

// IsOwnership reports whether v is an ownership TXT value, as ParseOwnership reads it,
// without building its labels.
func IsOwnership(v string) bool { return walkOwnership(v, nil) }

// OwnershipLabel returns the label key of the ownership TXT value v, as ParseOwnership
// would read it (the last of repeated keys), without building the labels; ok is false
// when v is not an ownership value or has no such label.
func OwnershipLabel(v, key string) (string, bool) {
	if !strings.Contains(v, key) {
		// Most lookups are of labels a record does not carry: one scan says so.
		return "", false
	}
	if !IsOwnership(v) {
		return "", false
	}
	return labelOf(v, key)
}

// labelOf is OwnershipLabel of a value known to be an ownership value (IsOwnership): one
// pass over its tokens, with no closure and nothing allocated. The owner of each of a
// zone's 100,000 records is read this way.
func labelOf(v, key string) (string, bool) {
	if strings.IndexByte(key, '=') >= 0 {
		// Not a key walkOwnership could yield (it cuts at the first "="): none.
		return "", false
	}
	v = strings.Trim(v, `"`)
	const prefix = ownershipHeritage + "/"
	var out string
	found := false
	for rest := v; rest != ""; {
		tok := rest
		if i := strings.IndexByte(rest, ','); i >= 0 {
			tok, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		// "external-dns/KEY=VALUE", VALUE without "=" (walkOwnership skips the token else).
		if len(tok) > len(prefix)+len(key) && tok[:len(prefix)] == prefix && tok[len(prefix):len(prefix)+len(key)] == key &&
			tok[len(prefix)+len(key)] == '=' {
			if val := tok[len(prefix)+len(key)+1:]; strings.IndexByte(val, '=') < 0 {
				out, found = val, true
			}
		}
	}
	return out, found
}

// walkOwnership calls label (when not nil) with each label of the ownership value v in
// order, and reports whether v is one: it carries heritage=external-dns and no other
// heritage. It allocates nothing.
func walkOwnership(v string, label func(k, val string)) bool {
	v = strings.Trim(v, `"`)
	found := false
	for rest := v; rest != ""; {
		var tok string
		tok, rest, _ = strings.Cut(rest, ",")
		key, val, ok := strings.Cut(tok, "=")
		if !ok || strings.IndexByte(val, '=') >= 0 {
			continue
		}
		if key == "heritage" {
			if val != ownershipHeritage {
				return false
			}
			found = true
			continue
		}
		if len(key) > len(ownershipHeritage) && key[len(ownershipHeritage)] == '/' && key[:len(ownershipHeritage)] == ownershipHeritage {
			if label != nil {
				label(key[len(ownershipHeritage)+1:], val)
			}
		}
	}
	return found
}

// Ownership is an ownership TXT value that ReadOwnership checked, with its owner read:
// what SetOwnership labels a record with.
type Ownership struct {
	value string
	// ownerAt and ownerLen place the owner's value in value (ownerLen -1: no owner label):
	// offsets rather than a string keep the registry's index of a large zone small.
	ownerAt, ownerLen int32
	// more is set when value holds a token besides its heritage, owner and resource (most
	// values hold no more): MayCarryLabel answers for the others without a scan.
	more bool
}

// Owner is the owner label's value, "" when there is none.
func (o Ownership) Owner() string {
	owner, _ := o.owner()
	return owner
}

// owner returns the owner label and whether there is one.
func (o Ownership) owner() (string, bool) {
	if o.ownerLen < 0 {
		return "", false
	}
	return o.value[o.ownerAt : o.ownerAt+o.ownerLen], true
}

// ReadOwnership checks that v is an ownership TXT value (IsOwnership) and reads its
// owner, in one pass; ok is false when it is not one. It reads the tokens as
// walkOwnership does, without a call per label: the registry reads every ownership record
// of a zone with it.
func ReadOwnership(v string) (o Ownership, ok bool) {
	if len(v) > math.MaxInt32 {
		return Ownership{}, false
	}
	start, end := 0, len(v)
	for start < end && v[start] == '"' {
		start++
	}
	for end > start && v[end-1] == '"' {
		end--
	}
	const ownerKey = ownershipHeritage + "/" + OwnerLabel
	const resourceKey = ownershipHeritage + "/" + ResourceLabel
	o = Ownership{value: v, ownerLen: -1}
	found := false
	for i := start; i < end; {
		j := strings.IndexByte(v[i:end], ',')
		if j < 0 {
			j = end
		} else {
			j += i
		}
		tok := v[i:j]
		if eq := strings.IndexByte(tok, '='); eq >= 0 && strings.IndexByte(tok[eq+1:], '=') < 0 {
			switch key, val := tok[:eq], tok[eq+1:]; key {
			case "heritage":
				if val != ownershipHeritage {
					return Ownership{}, false
				}
				found = true
			case ownerKey:
				o.ownerAt, o.ownerLen = int32(i+eq+1), int32(len(val))
			case resourceKey:
			default:
				o.more = true
			}
		} else {
			// Not a label; counted all the same, so that more is never wrongly unset.
			o.more = true
		}
		i = j + 1
	}
	if !found {
		return Ownership{}, false
	}
	return o, true
}

// SetOwnership labels e with the ownership value o without building its labels: Label,
// LookupLabel, Owner, Resource and AllLabels read it on demand (the owner read already),
// Clone and FillLabels turn it into Labels. It replaces whatever Labels e had. A registry
// reading a zone for the planner labels its records this way: a map per record is most
// of the cost of planning a large zone, and the planner reads a few labels of each.
func (e *Endpoint) SetOwnership(o Ownership) {
	e.Labels, e.ownership = nil, o
}

// LookupLabel returns the label key: from Labels when set, else from the ownership value
// SetOwnership gave.
func (e *Endpoint) LookupLabel(key string) (string, bool) {
	if e.Labels != nil || e.ownership.value == "" {
		v, ok := e.Labels[key]
		return v, ok
	}
	if key == OwnerLabel {
		return e.ownership.owner()
	}
	if !strings.Contains(e.ownership.value, key) {
		return "", false
	}
	// SetOwnership's value is an ownership value: no need to check it again.
	return labelOf(e.ownership.value, key)
}

// Label returns the label key, "" when absent (LookupLabel).
func (e *Endpoint) Label(key string) string {
	v, _ := e.LookupLabel(key)
	return v
}

// AllLabels returns e's labels: Labels when set, else a new map read from the ownership
// value SetOwnership gave (nil when none). The caller must not change Labels through it.
func (e *Endpoint) AllLabels() Labels {
	if e.Labels != nil || e.ownership.value == "" {
		return e.Labels
	}
	l, _ := ParseOwnership(e.ownership.value)
	return l
}

// FillLabels sets Labels from the ownership value SetOwnership gave, when Labels is not
// set: for a record that leaves the planner (a change), whose readers expect Labels.
func (e *Endpoint) FillLabels() {
	if e.Labels == nil && e.ownership.value != "" {
		e.Labels = e.AllLabels()
	}
}

// MayCarryLabel reports whether e may carry a label whose key contains sub. False is
// certain: e carries none, and a caller about to read several such labels of each of
// many records can skip them for the price of one scan. True may be wrong for a record
// labelled by SetOwnership, whose values are searched too.
func (e *Endpoint) MayCarryLabel(sub string) bool {
	if e.Labels != nil || e.ownership.value == "" {
		for k := range e.Labels {
			if strings.Contains(k, sub) {
				return true
			}
		}
		return false
	}
	if !e.ownership.more {
		// Only the owner and resource labels: sub is in one of their keys or in none.
		return strings.Contains(OwnerLabel, sub) || strings.Contains(ResourceLabel, sub)
	}
	return strings.Contains(e.ownership.value, sub)
}
