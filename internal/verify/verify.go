// Package verify checks what the authoritative DNS servers answer for a weighted name
// against the weights the zone holds: the Route 53 console's "Test record", done
// statistically. It reuses the cutover's DNS gate, which samples and classifies answers.
// For a Cloud Map service, RunCloudMap asks DiscoverInstances what the clients are
// answered, judged by the cutover's cloudMapDiscovery gate.
package verify

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// Zones is what verify needs of a DNS provider: read the zones and their records.
type Zones interface {
	Zones(ctx context.Context) ([]provider.Zone, error)
	Records(ctx context.Context, zone provider.Zone) ([]*endpoint.Endpoint, error)
}

// Config says which name to verify, where and how hard.
type Config struct {
	// Name and Type are the weighted record set to verify (Type default A).
	Name, Type string
	// Servers are the authoritative servers (host:port) asked, in turn.
	Servers []string
	// Queries is the number of queries; Tolerance the largest allowed difference between
	// a member's measured and written share.
	Queries   int
	Tolerance float64
}

// Member is one weighted member with its written and measured share.
type Member struct {
	SetID   string
	Weight  int64
	Targets []string
	// Alias marks an alias: Targets is its target's name, and its answers are attributed
	// by the Addresses that name resolved to when sampled.
	Alias     bool
	Addresses int
	Expected  float64
	Measured  float64
	Count     int
}

// Result is the verification of one name.
type Result struct {
	Zone    provider.Zone
	Name    string
	Type    string
	Members []Member
	// Queries were sent; Empty answered with no record of the type; Other matched no member.
	Queries, Empty, Other int
	// Pass is true when every share is within the tolerance and every answer a member's,
	// and when the record is NotApplicable.
	Pass bool
	// NotApplicable says that no member's target has an address of the type (an AAAA alias
	// to load balancers with IPv4 addresses only) and every answer was empty (NODATA): the
	// record carries no traffic, so there is no share to compare. Detail says so.
	NotApplicable bool
	Detail        string
}

// Run reads the name's weighted members from the zone that holds it and samples the
// servers' answers.
func Run(ctx context.Context, z Zones, cfg Config) (*Result, error) {
	name := endpoint.NormalizeName(cfg.Name)
	typ := strings.ToUpper(cfg.Type)
	if typ == "" {
		typ = endpoint.TypeA
	}
	if len(cfg.Servers) == 0 {
		return nil, fmt.Errorf("verify %s: no DNS servers to ask: set --dns-server", name)
	}
	zone, err := zoneOf(ctx, z, name)
	if err != nil {
		return nil, err
	}
	recs, err := z.Records(ctx, zone)
	if err != nil {
		return nil, fmt.Errorf("verify %s: zone %s: %w", name, zone, err)
	}
	weights := map[string]int64{}
	targets := map[string][]string{}
	aliases := map[string]bool{}
	for _, r := range recs {
		if r.Name != name || r.Type != typ {
			continue
		}
		if r.Policy.Kind != endpoint.Weighted {
			return nil, fmt.Errorf("verify %s %s: the record set is %s, not weighted: nothing to compare", name, typ, r.Policy)
		}
		weights[r.SetIdentifier] = r.Policy.Weight
		// An alias's value is its target's name: the gate resolves it at the servers (or,
		// when they refuse it, as a load balancer's, the system resolver) and attributes
		// the answers by the addresses it resolves to.
		targets[r.SetIdentifier] = slices.Clone(r.Targets)
		aliases[r.SetIdentifier] = r.IsAlias()
	}
	if len(weights) == 0 {
		return nil, fmt.Errorf("verify %s %s: zone %s has no weighted record set of that name and type", name, typ, zone.Name)
	}
	tol := cfg.Tolerance
	g, err := gate.NewDNS("verify", spec.DNSGate{Servers: cfg.Servers, Samples: cfg.Queries, Tolerance: &tol})
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", name, err)
	}
	res := g.Check(ctx, gate.Step{Index: -1, Weights: weights, Records: []gate.Record{{Name: name, Type: typ, Members: targets}}})
	key := name + "/" + typ
	if res.Err != "" {
		// The gate names the record set (NAME/TYPE) in what it could not measure: name it once.
		if strings.HasPrefix(res.Err, key+": ") {
			return nil, fmt.Errorf("verify %s", res.Err)
		}
		return nil, fmt.Errorf("verify %s: %s", key, res.Err)
	}
	out := &Result{Zone: zone, Name: name, Type: typ, Pass: res.Pass, Detail: res.Detail,
		NotApplicable: res.Values[key+".notApplicable"] == 1,
		Queries:       int(res.Values[key+".samples"]), Empty: int(res.Values[key+".empty"]), Other: int(res.Values[key+".other"])}
	// A pass that judged nothing is one thing only here: the record not applicable.
	if res.Pending && !out.NotApplicable {
		return nil, fmt.Errorf("verify %s: nothing judged: %s", name, res.Detail)
	}
	for _, id := range slices.Sorted(maps.Keys(weights)) {
		out.Members = append(out.Members, Member{SetID: id, Weight: weights[id], Targets: targets[id],
			Alias: aliases[id], Addresses: int(res.Values[key+"."+id+".addresses"]),
			Expected: res.Values[key+"."+id+".expected"], Measured: res.Values[key+"."+id+".share"], Count: int(res.Values[key+"."+id+".count"])})
	}
	return out, nil
}

// zoneOf finds the most specific zone holding name.
func zoneOf(ctx context.Context, z Zones, name string) (provider.Zone, error) {
	zones, err := z.Zones(ctx)
	if err != nil {
		return provider.Zone{}, fmt.Errorf("verify %s: list zones: %w", name, err)
	}
	holding := provider.Holding(zones, name)
	if len(holding) == 0 {
		return provider.Zone{}, fmt.Errorf("verify %s: no zone among the %d the provider manages holds this name", name, len(zones))
	}
	return holding[0], nil
}

// WriteText prints the distribution as a table against the written weights.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s in zone %s: %d queries\n", r.Name, r.Type, r.Zone, r.Queries)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  MEMBER\tWEIGHT\tWRITTEN\tANSWERED\tCOUNT\tTARGETS")
	for _, m := range r.Members {
		targets := strings.Join(m.Targets, ",")
		if m.Alias {
			addrs := fmt.Sprintf("%d addresses", m.Addresses)
			switch m.Addresses {
			case 0:
				addrs = "no " + r.Type + " address"
			case 1:
				addrs = "1 address"
			}
			targets = fmt.Sprintf("alias to %s (%s)", targets, addrs)
		}
		answered, count := fmt.Sprintf("%.1f%%", 100*m.Measured), fmt.Sprint(m.Count)
		if r.NotApplicable {
			answered, count = "-", "-"
		}
		fmt.Fprintf(tw, "  %s\t%d\t%.1f%%\t%s\t%s\t%s\n", m.SetID, m.Weight, 100*m.Expected, answered, count, targets)
	}
	tw.Flush()
	if r.Empty > 0 || r.Other > 0 {
		fmt.Fprintf(&b, "  %d empty answers, %d answers matching no member\n", r.Empty, r.Other)
	}
	verdict := "ok: the answers follow the weights"
	switch {
	case !r.Pass:
		verdict = "MISMATCH: " + r.Detail
	case r.NotApplicable:
		verdict = "not applicable: " + r.Detail
	}
	fmt.Fprintf(&b, "%s\n", verdict)
	_, err := io.WriteString(w, b.String())
	return err
}
