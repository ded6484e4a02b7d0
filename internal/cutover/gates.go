package cutover

import (
	"errors"
	"fmt"
	"slices"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// NewGate builds the gate a spec describes. DNS gates without servers ask dnsServers (the
// zone's authoritative servers, as the caller knows them).
func NewGate(g spec.Gate, dnsServers []string) (Gate, error) {
	switch {
	case g.HTTP != nil:
		return gate.NewHTTP(g.Name, *g.HTTP)
	case g.Prometheus != nil:
		return gate.NewPrometheus(g.Name, *g.Prometheus)
	case g.DNS != nil:
		d := *g.DNS
		if len(d.Servers) == 0 {
			if len(dnsServers) == 0 {
				return nil, errors.New("dns gate without servers: list them in the plan (servers) or give --dns-server")
			}
			d.Servers = slices.Clone(dnsServers)
		}
		return gate.NewDNS(g.Name, d)
	}
	return nil, fmt.Errorf("gate %s: no kind set", g.Name)
}
