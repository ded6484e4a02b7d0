package registry

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// Handover says whose ownership records a handover moves, and to whom.
type Handover struct {
	// From is the owner whose records move; only ownership records naming it are changed.
	From string
	// To is the owner they move to.
	To string
	// Names is a shell glob (path.Match syntax) on record names, without the trailing
	// dot; "" selects every name. It selects whole names: a name's records move together
	// or not at all.
	Names string
	// Zone is the zone's apex, lower case without the trailing dot. Its SOA and NS sets
	// are Route 53's and are never listed as moved, even where a legacy same-name
	// ownership record at the apex reads as theirs too.
	Zone string
}

// HandoverMove is one record whose ownership moves.
type HandoverMove struct {
	// Key is the record's name, type and set identifier. For an ownership record that
	// speaks for no record in the zone (NoRecord), it is the name, type and set identifier
	// the ownership record speaks for; its type is "" for a legacy same-name one.
	Key endpoint.Key
	// Resource is the object that published the record ("service/default/app"), "" when
	// its ownership record does not say.
	Resource string
	// From and To are the owners before and after.
	From, To string
	// NoRecord is true for an ownership record whose record is not in the zone: From's
	// claim on the name moves all the same, so that To can publish the record later.
	NoRecord bool
	// TXT are the names of the ownership records rewritten for it.
	TXT []string
}

// String renders "app.example.com A [blue] (service/default/app): blue -> green".
func (m HandoverMove) String() string {
	what := m.Key.String()
	if m.NoRecord {
		typ := m.Key.Type
		if typ == "" {
			typ = "(any type)"
		}
		what = endpoint.Key{Name: m.Key.Name, Type: typ, SetIdentifier: m.Key.SetIdentifier}.String() + " (ownership record only, no record)"
	}
	if m.Resource != "" {
		what += " (" + m.Resource + ")"
	}
	return what + ": " + m.From + " -> " + m.To
}

// HandoverUnit is every ownership change at one name. Its changes must be applied in one
// atomic batch, deletes first: each ownership record is deleted exactly as it was read
// and created again naming the new owner, so that at no moment does nobody, or both
// owners, hold a record, and the batch fails as a whole if another writer changed any of
// them since they were read.
type HandoverUnit struct {
	// Name is the record name the unit's ownership records speak for.
	Name string
	// Moves are the records whose ownership moves, sorted by key.
	Moves []HandoverMove
	// Delete are the ownership records as they were read, sorted by key.
	Delete []*endpoint.Endpoint
	// Create are the same records naming the new owner, in the order of Delete: every
	// other byte of their values, and every other field, is kept.
	Create []*endpoint.Endpoint
}

// HandoverRefusal is a record of From's that does not move, with why.
type HandoverRefusal struct {
	// Name is the name whose changes were held back: a name moves whole or not at all.
	Name string
	// Key is the record refused, as HandoverMove.Key.
	Key endpoint.Key
	// Reason says why.
	Reason string
}

// String renders "app.example.com A: reason".
func (r HandoverRefusal) String() string {
	k := r.Key
	if k.Type == "" {
		k.Type = "(any type)"
	}
	return k.String() + ": " + r.Reason
}

// HandoverPlan is what a handover changes in one zone.
type HandoverPlan struct {
	// Units are the names that move, sorted by name.
	Units []HandoverUnit
	// Refused are the records of From's that stay as they are, sorted by name and key.
	Refused []HandoverRefusal
}

// Moves counts the records whose ownership moves.
func (p *HandoverPlan) Moves() int {
	n := 0
	for _, u := range p.Units {
		n += len(u.Moves)
	}
	return n
}

// claim is one ownership record, read.
type claim struct {
	key    ownerKey
	owner  string
	labels endpoint.Labels
	txt    *endpoint.Endpoint
	// used is true when some record of the zone reads its ownership from it.
	used bool
}

// handoverGroup gathers everything at one name: records and the ownership records that
// speak for them.
type handoverGroup struct {
	name    string // the record name, as listed (a wildcard stays "*")
	records []*endpoint.Endpoint
	claims  []*claim
}

// PlanHandover computes the changes that hand the records of h.From in records (a zone
// as the provider lists it, ownership records included) over to h.To. r's own owner id
// plays no part; its prefix, suffix and wildcard replacement say where ownership records
// live.
//
// A record moves when its ownership, as Read reads it, is From's: every ownership record
// that speaks for it and exists (the type-prefixed one; for an alias A both the "cname-"
// form and the "a-" form of external-dns ≥ 0.22; the legacy same-name one, except for
// AAAA) is rewritten. Records of other owners, records without an ownership record, and
// TXT records that are not external-dns ownership records are never touched. A record
// whose ownership records disagree (From in one form, another owner, To included, in
// another) is refused, and with it its whole name. An ownership record of From's that
// speaks for no record moves too: after a handover that refuses nothing, no ownership
// record of the selected names names From. The input is not modified.
func (r *TXT) PlanHandover(records []*endpoint.Endpoint, h Handover) (*HandoverPlan, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	groups := map[string]*handoverGroup{}
	group := func(key, name string) *handoverGroup {
		g, ok := groups[key]
		if !ok {
			g = &handoverGroup{name: name}
			groups[key] = g
		}
		return g
	}
	claims := map[ownerKey][]*claim{}
	var rest []*endpoint.Endpoint
	for _, rec := range records {
		c, ok := r.readClaim(rec)
		if !ok {
			rest = append(rest, rec)
			continue
		}
		claims[c.key] = append(claims[c.key], c)
		g := group(c.key.name, c.key.name)
		g.claims = append(g.claims, c)
	}
	apex := endpoint.NormalizeName(h.Zone)
	for _, rec := range rest {
		if rec.Type == "SOA" || (rec.Type == endpoint.TypeNS && rec.Name == apex) {
			continue
		}
		k := r.ownerKey(rec, rec.Type)
		g := group(k.name, rec.Name)
		// A record's name wins over the replaced wildcard a claim was filed under.
		g.name = rec.Name
		g.records = append(g.records, rec)
	}

	p := &HandoverPlan{}
	for _, key := range slices.Sorted(maps.Keys(groups)) {
		g := groups[key]
		if !h.selects(g, key) {
			continue
		}
		u, refused := r.handoverGroup(g, claims, h)
		p.Refused = append(p.Refused, refused...)
		if len(refused) == 0 && len(u.Moves) > 0 {
			p.Units = append(p.Units, u)
		}
	}
	slices.SortStableFunc(p.Units, func(a, b HandoverUnit) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortStableFunc(p.Refused, func(a, b HandoverRefusal) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), compareKeys(a.Key, b.Key))
	})
	return p, nil
}

// handoverGroup plans one name: the unit that moves it, or why it does not.
func (r *TXT) handoverGroup(g *handoverGroup, claims map[ownerKey][]*claim, h Handover) (HandoverUnit, []HandoverRefusal) {
	u := HandoverUnit{Name: g.name}
	var refused []HandoverRefusal
	var moving []*claim
	move := func(m HandoverMove, cs []*claim) {
		for _, c := range cs {
			m.TXT = append(m.TXT, c.txt.Name)
			if !slices.Contains(moving, c) {
				moving = append(moving, c)
			}
		}
		slices.Sort(m.TXT)
		m.TXT = slices.Compact(m.TXT)
		u.Moves = append(u.Moves, m)
	}
	for _, rec := range g.records {
		// The forms Read consults for rec, the one it reads first.
		var present []*claim
		effective := ""
		found := false
		for _, k := range r.claimKeys(rec) {
			cs := claims[k]
			for _, c := range cs {
				c.used = true
			}
			present = append(present, cs...)
			if !found && len(cs) > 0 {
				// As Read: the last record filed under a key is the one it keeps.
				effective, found = cs[len(cs)-1].owner, true
			}
		}
		var from, others []*claim
		for _, c := range present {
			if c.owner == h.From {
				from = append(from, c)
			} else {
				others = append(others, c)
			}
		}
		switch {
		case len(from) == 0:
			// Not From's, in any form: never touched.
		case effective != h.From:
			refused = append(refused, HandoverRefusal{Name: g.name, Key: rec.Key(),
				Reason: fmt.Sprintf("its ownership is disputed: it is read as owned by %s (%s), but %s names %s; nothing at this name was changed: remove the ownership record that is wrong, then hand over again",
					ownerText(effective), txtNames(others), txtNames(from), h.From)})
		case len(others) > 0:
			refused = append(refused, HandoverRefusal{Name: g.name, Key: rec.Key(),
				Reason: fmt.Sprintf("its ownership is disputed: %s names %s, but %s names %s; nothing at this name was changed: remove the ownership record that is wrong, then hand over again",
					txtNames(from), h.From, txtNames(others), ownersText(others))})
		default:
			move(HandoverMove{Key: rec.Key(), Resource: from[0].labels[endpoint.ResourceLabel], From: h.From, To: h.To}, from)
		}
	}
	for _, c := range g.claims {
		if c.used || c.owner != h.From {
			continue
		}
		move(HandoverMove{Key: endpoint.Key{Name: c.key.name, Type: c.key.typ, SetIdentifier: c.key.setID},
			Resource: c.labels[endpoint.ResourceLabel], From: h.From, To: h.To, NoRecord: true}, []*claim{c})
	}
	if len(refused) > 0 {
		// A name moves whole or not at all: say what else stays with it.
		for _, m := range u.Moves {
			refused = append(refused, HandoverRefusal{Name: g.name, Key: m.Key,
				Reason: "not moved: another record at this name is refused (listed with it), and a name moves whole or not at all"})
		}
		return HandoverUnit{}, refused
	}
	slices.SortStableFunc(u.Moves, func(a, b HandoverMove) int { return compareKeys(a.Key, b.Key) })
	slices.SortStableFunc(moving, func(a, b *claim) int { return compareKeys(a.txt.Key(), b.txt.Key()) })
	for _, c := range moving {
		u.Delete = append(u.Delete, c.txt)
		u.Create = append(u.Create, reowned(c.txt, h.From, h.To))
	}
	return u, nil
}

// readClaim reads rec as an ownership record, as Read does.
func (r *TXT) readClaim(rec *endpoint.Endpoint) (*claim, bool) {
	if rec.Type != endpoint.TypeTXT || len(rec.Targets) == 0 {
		return nil, false
	}
	labels, err := ParsePayload(rec.Targets[0])
	if err != nil {
		return nil, false
	}
	name, typ, ok := r.mapper.recordName(rec.Name)
	if !ok {
		return nil, false
	}
	return &claim{key: ownerKey{name, typ, rec.SetIdentifier}, owner: labels[endpoint.OwnerLabel], labels: labels, txt: rec}, true
}

// claimKeys are the ownership records Read consults for rec, in the order it prefers
// them: the type-prefixed form ("cname-" for an alias A), an alias A's "a-" form, and
// the legacy same-name form (never for AAAA).
func (r *TXT) claimKeys(rec *endpoint.Endpoint) []ownerKey {
	keys := []ownerKey{r.ownerKey(rec, rec.Type)}
	if rec.IsAlias() && rec.Type == endpoint.TypeA {
		k := r.ownerKey(rec, "")
		k.typ = endpoint.TypeA
		keys = append(keys, k)
	}
	if rec.Type != endpoint.TypeAAAA {
		keys = append(keys, r.ownerKey(rec, ""))
	}
	return keys
}

// Validate refuses owners and a name glob that a handover cannot use, naming the flag.
func (h Handover) Validate() error {
	for _, o := range []struct{ flag, v string }{{"from", h.From}, {"to", h.To}} {
		if o.v == "" {
			return fmt.Errorf("handover: --%s is empty: name an owner id (--txt-owner-id)", o.flag)
		}
		if c, ok := OwnerIDBreaks(o.v); ok {
			return fmt.Errorf("handover: --%s %q: an owner id cannot hold %q", o.flag, o.v, c)
		}
	}
	if h.From == h.To {
		return fmt.Errorf("handover: --from and --to are both %q", h.From)
	}
	if _, err := path.Match(h.Names, ""); err != nil {
		return fmt.Errorf("handover: --name %q: %w", h.Names, err)
	}
	return nil
}

// OwnerIDBreaks returns the first character of id that an owner id cannot hold, as text,
// and true: one that would break the ownership payload's "k=v,k=v" form or its quoting.
func OwnerIDBreaks(id string) (string, bool) {
	i := strings.IndexFunc(id, func(c rune) bool {
		return c == ',' || c == '=' || c == '"' || c == '\\' || unicode.IsSpace(c) || unicode.IsControl(c)
	})
	if i < 0 {
		return "", false
	}
	_, n := utf8.DecodeRuneInString(id[i:])
	return id[i : i+n], true
}

// selects reports whether the glob selects a group: its name, or the replaced wildcard
// its ownership records are filed under.
func (h Handover) selects(g *handoverGroup, key string) bool {
	glob := strings.ToLower(strings.TrimSuffix(h.Names, "."))
	if glob == "" {
		return true
	}
	for _, n := range []string{g.name, key} {
		if ok, _ := path.Match(glob, n); ok {
			return true
		}
	}
	for _, rec := range g.records {
		if ok, _ := path.Match(glob, rec.Name); ok {
			return true
		}
	}
	return false
}

// reowned returns a copy of the ownership record t whose values naming owner from name
// owner to instead, every other byte and field kept.
func reowned(t *endpoint.Endpoint, from, to string) *endpoint.Endpoint {
	c := t.Clone()
	for i, v := range c.Targets {
		if l, err := ParsePayload(v); err == nil && l[endpoint.OwnerLabel] == from {
			c.Targets[i] = replaceOwner(v, to)
		}
	}
	return c
}

// replaceOwner rewrites the owner token of a payload in place, quotes and the order and
// spelling of every other token kept, as ParsePayload reads them.
func replaceOwner(v, to string) string {
	start := len(v) - len(strings.TrimLeft(v, `"`))
	end := max(len(strings.TrimRight(v, `"`)), start)
	toks := strings.Split(v[start:end], ",")
	for i, tok := range toks {
		key, val, ok := strings.Cut(tok, "=")
		if ok && key == heritage+"/"+endpoint.OwnerLabel && !strings.Contains(val, "=") {
			toks[i] = key + "=" + to
		}
	}
	return v[:start] + strings.Join(toks, ",") + v[end:]
}

func txtNames(cs []*claim) string {
	names := make([]string, 0, len(cs))
	for _, c := range cs {
		s := "TXT " + c.txt.Name
		if c.txt.SetIdentifier != "" {
			s += " [" + c.txt.SetIdentifier + "]"
		}
		names = append(names, s)
	}
	return strings.Join(names, " and ")
}

func ownerText(o string) string {
	if o == "" {
		return "no owner"
	}
	return fmt.Sprintf("%q", o)
}

func ownersText(cs []*claim) string {
	var out []string
	for _, c := range cs {
		if s := ownerText(c.owner); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, " and ")
}

func compareKeys(a, b endpoint.Key) int {
	return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Type, b.Type), cmp.Compare(a.SetIdentifier, b.SetIdentifier))
}
