package registry

import (
	"slices"
	"strconv"
	"strings"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// authorityLabel starts the name of the TXT record by which a cutover holds the weights of
// one name's weighted record sets (docs/architecture.md, safety rule 3: each weight has one
// authority). The record lives in the zone, next to what it governs, so it survives a
// restart of the cutover runner and of every publisher, and every publisher sees it.
const authorityLabel = "_crossfade-weights"

// authorityHeritage marks the payload as crossfade's, so that no external-dns registry
// mistakes it for ownership.
const authorityHeritage = "heritage=crossfade"

// AuthorityName is the name of the authority record for name.
func AuthorityName(name string) string { return authorityLabel + "." + name }

// Runner identifies one run of a cutover: the holder of its authority records. The token
// is made when the run starts and kept in its journal, so a resume, even on another
// process after a crash, is the same runner; host and pid say where it runs now, for
// people. Route 53 has no conditional write, so the record is the lock: a runner creates
// it (which fails when any runner created it first), later replaces it only by deleting
// it exactly as it read it, and refuses a record of its cutover with another token.
type Runner struct {
	// Token is random per run; "" in records and journals written before runners were
	// recorded, and an absent token is compatible only with itself.
	Token string
	// Host is the machine the runner last wrote from.
	Host string
	// PID is the runner's process id; 0 when unknown.
	PID int
}

// String renders "token@host:pid" (":pid" left out when unknown), as the record carries it.
func (r Runner) String() string {
	if r == (Runner{}) {
		return ""
	}
	s := r.Token + "@" + r.Host
	if r.PID > 0 {
		s += ":" + strconv.Itoa(r.PID)
	}
	return s
}

// ParseRunner reads what Runner.String wrote. A value without "@" is a bare token.
func ParseRunner(s string) Runner {
	token, where, ok := strings.Cut(s, "@")
	if !ok {
		return Runner{Token: s}
	}
	r := Runner{Token: token, Host: where}
	if i := strings.LastIndexByte(where, ':'); i >= 0 {
		if pid, err := strconv.Atoi(where[i+1:]); err == nil && pid > 0 {
			r.Host, r.PID = where[:i], pid
		}
	}
	return r
}

// payloadSafe replaces what would break the payload's "k=v,k=v" form (and the record's
// quoting) in a value taken from the environment, such as a host name.
func payloadSafe(s string) string {
	return strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '_':
			return c
		}
		return '-'
	}, s)
}

// Authority is what one authority record says: which cutover holds the weights of which
// of a name's types, and which runner of it wrote the record.
type Authority struct {
	// Name is the name whose weighted record sets are held (not the record's own name).
	Name string
	// Cutover is the name of the cutover holding them.
	Cutover string
	// Types are the record types held, sorted.
	Types []string
	// Runner is the run of the cutover that wrote the record; zero in records written
	// before runners were recorded.
	Runner Runner
}

// Record is the TXT record that says a: "heritage=crossfade,crossfade/cutover=NAME,
// crossfade/types=A;AAAA,crossfade/runner=TOKEN@HOST:PID". The runner comes last and is
// left out when unknown, so that readers from before it parse the rest as they did.
func (a Authority) Record() *endpoint.Endpoint {
	types := slices.Compact(slices.Sorted(slices.Values(a.Types)))
	v := authorityHeritage + ",crossfade/cutover=" + a.Cutover + ",crossfade/types=" + strings.Join(types, ";")
	if a.Runner != (Runner{}) {
		r := a.Runner
		r.Token, r.Host = payloadSafe(r.Token), payloadSafe(r.Host)
		v += ",crossfade/runner=" + r.String()
	}
	return &endpoint.Endpoint{Name: AuthorityName(a.Name), Type: endpoint.TypeTXT, Targets: endpoint.Targets{strconv.Quote(v)}, TTL: 300}
}

// AuthorityRecord is the TXT record by which cutover holds the weights of name's record
// sets of the given types, naming no runner.
func AuthorityRecord(name string, types []string, cutover string) *endpoint.Endpoint {
	return Authority{Name: name, Cutover: cutover, Types: types}.Record()
}

// IsAuthorityName reports whether a record of this name would be an authority record.
func IsAuthorityName(name string) bool { return strings.HasPrefix(name, authorityLabel+".") }

// ParseAuthority reads an authority record; ok is false for anything else (another TXT
// record at such a name included).
func ParseAuthority(r *endpoint.Endpoint) (a Authority, ok bool) {
	if r == nil || r.Type != endpoint.TypeTXT || !IsAuthorityName(r.Name) || len(r.Targets) != 1 {
		return Authority{}, false
	}
	v, err := strconv.Unquote(r.Targets[0])
	if err != nil || !strings.HasPrefix(v, authorityHeritage+",") {
		return Authority{}, false
	}
	a.Name = strings.TrimPrefix(r.Name, authorityLabel+".")
	for _, kv := range strings.Split(v, ",") {
		k, val, _ := strings.Cut(kv, "=")
		switch k {
		case "crossfade/cutover":
			a.Cutover = val
		case "crossfade/types":
			a.Types = strings.Split(val, ";")
		case "crossfade/runner":
			a.Runner = ParseRunner(val)
		}
	}
	if a.Cutover == "" {
		return Authority{}, false
	}
	return a, true
}

// HoldID names this hold for the publishers' confirmations (endpoint.ConfirmsHoldLabel):
// the runner's token, random per run of a cutover, so a confirmation names the hold it was
// written under and no earlier one; the cutover's name for a record written before
// runners were recorded. The token is read from the record, where it is already safe for
// an ownership record's payload.
func (a Authority) HoldID() string {
	if a.Runner.Token != "" {
		return payloadSafe(a.Runner.Token)
	}
	return payloadSafe(a.Cutover)
}

// State is what a publisher confirms of a hold: its id (HoldID) and the types it holds,
// "ID A;AAAA". A change of either is a hold to confirm anew: a new run, or a type whose
// members have not confirmed it yet.
func (a Authority) State() string {
	return a.HoldID() + " " + strings.Join(slices.Sorted(slices.Values(a.Types)), ";")
}

// Holds returns, for every (name, type) whose weights a cutover holds, the authority
// record's content, read from the authority records among records. It is the one reader
// of holds: the planner keeps held weights by it, a controller watches what it states
// (Authority.State), and a release looks up the hold each member must confirm
// (Authority.HoldID).
func Holds(records []*endpoint.Endpoint) map[endpoint.Key]Authority {
	var out map[endpoint.Key]Authority
	for _, r := range records {
		a, ok := ParseAuthority(r)
		if !ok {
			continue
		}
		for _, t := range a.Types {
			if out == nil {
				out = map[endpoint.Key]Authority{}
			}
			out[endpoint.Key{Name: a.Name, Type: t}] = a
		}
	}
	return out
}
