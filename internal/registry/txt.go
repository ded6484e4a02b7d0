package registry

import (
	"errors"
	"slices"
	"strings"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// Config configures the TXT registry, as external-dns's --txt-* flags do.
type Config struct {
	// OwnerID is this publisher's --txt-owner-id.
	OwnerID string
	// Prefix and Suffix go on the first label of the TXT name; either may hold
	// %{record_type}. At most one may be set.
	Prefix, Suffix string
	// WildcardReplacement replaces a leading "*" in TXT names.
	WildcardReplacement string
	// WriteLegacy also writes the same-name TXT form older external-dns releases read,
	// for zones still shared with them.
	WriteLegacy bool
}

// TXT is the TXT ownership registry.
type TXT struct {
	cfg    Config
	mapper nameMapper
}

// New checks cfg and returns a registry.
func New(cfg Config) (*TXT, error) {
	if cfg.OwnerID == "" {
		return nil, errors.New("txt registry: owner id is empty: set --txt-owner-id")
	}
	if cfg.Prefix != "" && cfg.Suffix != "" {
		return nil, errors.New("txt registry: --txt-prefix and --txt-suffix are mutually exclusive")
	}
	return &TXT{cfg: cfg, mapper: newNameMapper(cfg.Prefix, cfg.Suffix, cfg.WildcardReplacement)}, nil
}

// OwnerID returns the owner this registry writes.
func (r *TXT) OwnerID() string { return r.cfg.OwnerID }

// Zone is a zone's records seen through the registry.
type Zone struct {
	// Records are every record that is not an ownership TXT, each labelled with the
	// owner and resource its TXT record names (no labels when no one owns it).
	Records []*endpoint.Endpoint
	// LegacyOnly holds the keys of records owned only through the legacy same-name form,
	// whose type-prefixed ownership record is still to be written.
	LegacyOnly map[endpoint.Key]bool
	// Other holds, by record key, the ownership record of an alias A read under the form
	// external-dns ≥ 0.22 writes ("a-"), beside or instead of the "cname-" one earlier
	// releases read: every form read goes when its record goes.
	Other map[endpoint.Key]*endpoint.Endpoint

	mapper nameMapper
	// entries are the ownership records in the order read. When the records they speak
	// for come in strictly increasing order (Route 53 lists a zone by name: so are the
	// ownership records of one type under one parent domain), entries are searched as
	// they are and owners is nil, which saves a large zone's planner most of the cost of
	// reading it; otherwise owners indexes them by the record each speaks for, the last
	// one read winning.
	entries []owned
	owners  map[ownerKey]int
	// unique is set when no two ownership records speak for one record: then the entry
	// after the one a record found is the next record's whenever the zone lists records
	// and their ownership records in the same order, and is checked first.
	unique bool
}

// find returns the index of the entry speaking for key.
func (z *Zone) find(key ownerKey) (int, bool) {
	if z.owners != nil {
		i, ok := z.owners[key]
		return i, ok
	}
	return slices.BinarySearchFunc(z.entries, key, func(o owned, k ownerKey) int { return compareOwnerKeys(o.key, k) })
}

// owner returns the ownership record entry speaking for key.
func (z *Zone) owner(key ownerKey) (owned, bool) {
	i, ok := z.find(key)
	if !ok {
		return owned{}, false
	}
	return z.entries[i], true
}

func compareOwnerKeys(a, b ownerKey) int {
	if c := strings.Compare(a.name, b.name); c != 0 {
		return c
	}
	if c := strings.Compare(a.typ, b.typ); c != 0 {
		return c
	}
	return strings.Compare(a.setID, b.setID)
}

// TXT returns the ownership record stored under key (a TXT record's own name, type and
// set identifier), or nil.
func (z *Zone) TXT(key endpoint.Key) *endpoint.Endpoint {
	name, typ, ok := z.mapper.recordName(key.Name)
	if !ok || key.Type != endpoint.TypeTXT {
		return nil
	}
	o, _ := z.owner(ownerKey{name, typ, key.SetIdentifier})
	if o.txt == nil || o.txt.Name != key.Name {
		return nil
	}
	return o.txt
}

// ownerKey is the record an ownership TXT record speaks for; typ is "" for the legacy form.
type ownerKey struct {
	name, typ, setID string
}

// owned is one ownership record read. Read's maps of labels live beside the entries
// (read's labels), not in them: Index, the planner's, builds none, and a large zone's
// entries are most of what reading it allocates.
type owned struct {
	key       ownerKey
	ownership endpoint.Ownership
	txt       *endpoint.Endpoint
}

// owner is the owner the ownership record names.
func (o owned) owner() string { return o.ownership.Owner() }

// Read separates ownership TXT records from the rest and labels each record with its
// owner: the type-prefixed TXT wins, the legacy same-name form is read when there is none
// (except for AAAA, as external-dns does). It sets the Labels of the records it is given
// (a provider lists fresh ones each time; copying 100,000 records costs more than the
// rest of a plan); the maps may be shared and must be treated as read-only.
func (r *TXT) Read(records []*endpoint.Endpoint) Zone { return r.read(records, false, nil) }

// Index is Read for the planner: it labels each record with its ownership record's value
// (endpoint.Endpoint.SetOwnership), read on demand, instead of a map of labels per
// record, which is most of the cost of planning a large zone. Labels, Owner, Resource
// and Clone of the records see the same labels as after Read.
func (r *TXT) Index(records []*endpoint.Endpoint) Zone { return r.read(records, true, nil) }

// IndexEach is Index that also calls each, when not nil, with every record in order
// (ownership records included) as its first pass reaches it, before any is labelled: a
// caller that must walk the zone too (the planner sorts it and indexes it by name) does
// so while each record is at hand, not in another pass over 200,000 records scattered
// in memory.
func (r *TXT) IndexEach(records []*endpoint.Endpoint, each func(*endpoint.Endpoint)) Zone {
	return r.read(records, true, each)
}

func (r *TXT) read(records []*endpoint.Endpoint, lazy bool, each func(*endpoint.Endpoint)) Zone {
	// Zones written by a registry hold about one TXT record per record: size for that.
	entries := make([]owned, 0, len(records)/2)
	// labels are Read's, one per entry; Index reads none.
	var labels []endpoint.Labels
	if !lazy {
		labels = make([]endpoint.Labels, 0, len(records)/2)
	}
	sorted := true
	// ours marks the ownership records, which Records leaves out: one pass indexes them,
	// the next labels the rest, with no list of the rest in between.
	ours := make([]bool, len(records))
	n := len(records)
	for i, rec := range records {
		if each != nil {
			each(rec)
		}
		if rec.Type != endpoint.TypeTXT || len(rec.Targets) == 0 {
			continue
		}
		// ReadOwnership and ParsePayload accept the same values.
		ownership, ok := endpoint.ReadOwnership(rec.Targets[0])
		if !ok {
			continue
		}
		name, typ, ok := r.mapper.recordName(rec.Name)
		if !ok {
			continue
		}
		if !lazy {
			l, err := ParsePayload(rec.Targets[0])
			if err != nil {
				continue
			}
			labels = append(labels, l)
		}
		key := ownerKey{name, typ, rec.SetIdentifier}
		if sorted && len(entries) > 0 && compareOwnerKeys(entries[len(entries)-1].key, key) >= 0 {
			sorted = false
		}
		entries = append(entries, owned{key: key, ownership: ownership, txt: rec})
		ours[i] = true
		n--
	}
	z := Zone{mapper: r.mapper, entries: entries, unique: true}
	if !sorted {
		z.owners = make(map[ownerKey]int, len(entries))
		for i, o := range entries {
			z.owners[o.key] = i
		}
		z.unique = len(z.owners) == len(entries)
	}
	z.Records = make([]*endpoint.Endpoint, 0, n)
	next := 0 // the entry after the last one found
	for i, rec := range records {
		if ours[i] {
			continue
		}
		oi := -1 // the entry speaking for rec
		disputed := false
		if k := r.ownerKey(rec, rec.Type); z.unique && next < len(entries) && entries[next].key == k {
			oi = next
			next++
		} else if j, found := z.find(k); found {
			oi = j
			next = j + 1
		}
		if rec.IsAlias() && rec.Type == endpoint.TypeA {
			// external-dns ≥ 0.22 writes an alias A's ownership under "a-", earlier releases
			// under "cname-", crossfade under both (For): either is read, so a zone written
			// by any of them is adopted without churn.
			k := r.ownerKey(rec, "")
			k.typ = endpoint.TypeA
			if ai, found := z.find(k); found {
				switch {
				case oi >= 0 && entries[ai].owner() != entries[oi].owner():
					// The two forms name two owners (one of them a leftover of a release
					// that deleted only its own form): the record is nobody's, so that no
					// one deletes it on a stale claim; writing it is a conflict.
					oi, disputed = -1, true
				case oi < 0:
					oi = ai
				}
				if !disputed {
					if z.Other == nil {
						z.Other = map[endpoint.Key]*endpoint.Endpoint{}
					}
					z.Other[rec.Key()] = entries[ai].txt
				}
			}
		}
		if oi < 0 && !disputed && rec.Type != endpoint.TypeAAAA {
			if j, found := z.find(r.ownerKey(rec, "")); found {
				oi = j
				if z.LegacyOnly == nil {
					z.LegacyOnly = map[endpoint.Key]bool{}
				}
				z.LegacyOnly[rec.Key()] = true
			}
		}
		switch {
		case oi >= 0 && lazy:
			rec.SetOwnership(entries[oi].ownership)
		case oi >= 0:
			rec.Labels = labels[oi]
		}
		z.Records = append(z.Records, rec)
	}
	return z
}

func (r *TXT) ownerKey(rec *endpoint.Endpoint, typ string) ownerKey {
	name := rec.Name
	if r.cfg.WildcardReplacement != "" && len(name) > 0 && name[0] == '*' && (len(name) == 1 || name[1] == '.') {
		name = r.cfg.WildcardReplacement + name[1:]
	}
	if typ != "" && rec.IsAlias() && typ == endpoint.TypeA {
		// external-dns encodes an alias A's ownership under "cname-".
		typ = endpoint.TypeCNAME
	}
	return ownerKey{name, typ, rec.SetIdentifier}
}

// For returns the ownership TXT records that accompany rec, whose labels must already
// carry the owner: first the TypedForms(rec) type-prefixed ones, then the legacy one when
// configured. Each carries rec's set identifier, routing policy and health check, as
// external-dns's do, so that it can live beside the record's other members.
//
// An alias A has two type-prefixed forms: "cname-", which external-dns ≤ 0.21 writes and
// alone reads, and "a-", which ≥ 0.22 writes and reads first (migrating a zone by writing
// it beside "cname-"). Writing both leaves the zone as that migration does, so that
// either release takes it over with no change.
func (r *TXT) For(rec *endpoint.Endpoint) []*endpoint.Endpoint {
	typed := TypedForms(rec)
	n := typed
	if r.cfg.WriteLegacy {
		n++
	}
	out := make([]*endpoint.Endpoint, 0, n)
	if typed == 2 {
		out = append(out, r.txt(r.mapper.txtName(rec.Name, endpoint.TypeCNAME), rec), r.txt(r.mapper.txtName(rec.Name, endpoint.TypeA), rec))
	} else {
		out = append(out, r.txt(r.mapper.txtName(rec.Name, rec.Type), rec))
	}
	if r.cfg.WriteLegacy {
		// A CNAME cannot share its name with a TXT record; without an affix the legacy
		// name is the record's own name.
		legacy := r.mapper.legacyName(rec.Name)
		if !(legacy == rec.Name && rec.Type == endpoint.TypeCNAME) {
			out = append(out, r.txt(legacy, rec))
		}
	}
	return out
}

// TypedForms is how many of the ownership records For returns for rec are type-prefixed
// (they come first, and each marks rec owned): two for an alias A ("cname-" and "a-"),
// one for any other record.
func TypedForms(rec *endpoint.Endpoint) int {
	if rec.IsAlias() && rec.Type == endpoint.TypeA {
		return 2
	}
	return 1
}

func (r *TXT) txt(name string, rec *endpoint.Endpoint) *endpoint.Endpoint {
	t := &endpoint.Endpoint{
		Name:          name,
		Type:          endpoint.TypeTXT,
		Targets:       endpoint.Targets{Payload(rec.AllLabels())},
		SetIdentifier: rec.SetIdentifier,
		Policy:        rec.Policy,
	}
	if hc, ok := rec.Prop(endpoint.PropHealthCheckID); ok {
		t.SetProp(endpoint.PropHealthCheckID, hc)
	}
	return t
}
