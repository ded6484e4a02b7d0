package registry

import (
	"slices"
	"strconv"
	"strings"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// authorityLabel starts the name of the TXT record by which a cutover holds the weights of
// one name's weighted record sets (DESIGN.md safety rule 3: each weight has one
// authority). The record lives in the zone, next to what it governs, so it survives a
// restart of the cutover runner and of every publisher, and every publisher sees it.
const authorityLabel = "_crossfade-weights"

// authorityHeritage marks the payload as crossfade's, so that no external-dns registry
// mistakes it for ownership.
const authorityHeritage = "heritage=crossfade"

// AuthorityName is the name of the authority record for name.
func AuthorityName(name string) string { return authorityLabel + "." + name }

// AuthorityRecord is the TXT record by which cutover holds the weights of name's record
// sets of the given types.
func AuthorityRecord(name string, types []string, cutover string) *endpoint.Endpoint {
	types = slices.Sorted(slices.Values(types))
	v := authorityHeritage + ",crossfade/cutover=" + cutover + ",crossfade/types=" + strings.Join(slices.Compact(types), ";")
	return &endpoint.Endpoint{Name: AuthorityName(name), Type: endpoint.TypeTXT, Targets: endpoint.Targets{strconv.Quote(v)}, TTL: 300}
}

// Authorities returns, for every (name, type) whose weights a cutover holds, that
// cutover's name, read from the authority records among records.
func Authorities(records []*endpoint.Endpoint) map[endpoint.Key]string {
	var out map[endpoint.Key]string
	for _, r := range records {
		if r.Type != endpoint.TypeTXT || !strings.HasPrefix(r.Name, authorityLabel+".") || len(r.Targets) != 1 {
			continue
		}
		v, err := strconv.Unquote(r.Targets[0])
		if err != nil || !strings.HasPrefix(v, authorityHeritage+",") {
			continue
		}
		var cutover string
		var types []string
		for _, kv := range strings.Split(v, ",") {
			k, val, _ := strings.Cut(kv, "=")
			switch k {
			case "crossfade/cutover":
				cutover = val
			case "crossfade/types":
				types = strings.Split(val, ";")
			}
		}
		if cutover == "" {
			continue
		}
		name := strings.TrimPrefix(r.Name, authorityLabel+".")
		for _, t := range types {
			if out == nil {
				out = map[endpoint.Key]string{}
			}
			out[endpoint.Key{Name: name, Type: t}] = cutover
		}
	}
	return out
}
