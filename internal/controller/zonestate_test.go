package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// zoneSets is a zone as the sandbox stores it: every record set by key, rendered as JSON,
// so that "unchanged" means byte-identical (values, TTL, weight, role, alias target, health
// check). It is read from the store, not through the API: observing the zone must neither
// hit injected faults nor count as an API call.
type zoneSets map[endpoint.Key]string

// readZone returns every record set of the zone, SOA and NS included.
func readZone(tb testing.TB, sb *sandbox.Sandbox, zoneID string) zoneSets {
	tb.Helper()
	out := zoneSets{}
	name, typ, id := "", "", ""
	for {
		page, err := sb.Store().ListRecords(zoneID, name, typ, id, 1000)
		if err != nil {
			tb.Fatalf("zone %s: list records from the store: %v", zoneID, err)
		}
		for _, s := range page.Sets {
			b, err := json.Marshal(s)
			if err != nil {
				tb.Fatalf("zone %s: render %s %s: %v", zoneID, s.Name, s.Type, err)
			}
			out[endpoint.Key{Name: strings.TrimSuffix(s.Name, "."), Type: s.Type, SetIdentifier: s.SetIdentifier}] = string(b)
		}
		if page.Next == nil {
			return out
		}
		name, typ, id = page.Next.Name, page.Next.Type, page.Next.SetIdentifier
	}
}

// zoneDiff is what changed between two readings of a zone.
type zoneDiff struct {
	added, removed, modified []endpoint.Key
}

func diffZones(before, after zoneSets) zoneDiff {
	var d zoneDiff
	for k, b := range before {
		switch a, ok := after[k]; {
		case !ok:
			d.removed = append(d.removed, k)
		case a != b:
			d.modified = append(d.modified, k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			d.added = append(d.added, k)
		}
	}
	for _, l := range [][]endpoint.Key{d.added, d.removed, d.modified} {
		slices.SortFunc(l, compareKey)
	}
	return d
}

// changed returns every key the diff touches, sorted.
func (d zoneDiff) changed() []endpoint.Key {
	out := slices.Concat(d.added, d.removed, d.modified)
	slices.SortFunc(out, compareKey)
	return out
}

func compareKey(a, b endpoint.Key) int {
	return strings.Compare(a.Name+"\x00"+a.Type+"\x00"+a.SetIdentifier, b.Name+"\x00"+b.Type+"\x00"+b.SetIdentifier)
}

// render lists the zone one set per line, sorted, with zone ids replaced by ZONE so that
// zones of two sandboxes compare; apex SOA and NS (which name the zone's own servers) are
// left out.
func (z zoneSets) render(apex string, zoneIDs ...string) []string {
	var out []string
	for _, k := range slices.SortedFunc(maps.Keys(z), compareKey) {
		if k.Name == apex && (k.Type == "SOA" || k.Type == "NS") {
			continue
		}
		v := z[k]
		for _, id := range zoneIDs {
			v = strings.ReplaceAll(v, id, "ZONE")
		}
		out = append(out, k.String()+" "+v)
	}
	return out
}

// lineDiff renders the lines only one side has, for a failure message.
func lineDiff(got, want []string) string {
	var b strings.Builder
	for _, w := range want {
		if !slices.Contains(got, w) {
			fmt.Fprintf(&b, "  - %s\n", w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			fmt.Fprintf(&b, "  + %s\n", g)
		}
	}
	return b.String()
}

// plannedBatches counts the batches a report planned over every zone.
func plannedBatches(rep *Report) int {
	n := 0
	for _, z := range rep.Zones {
		if z.Changes != nil {
			n += len(z.Changes.Batches)
		}
	}
	return n
}

// renderBatches prints a report's batches, one change a line, for failure messages.
func renderBatches(rep *Report) string {
	var b strings.Builder
	for _, z := range rep.Zones {
		if z.Changes == nil {
			continue
		}
		for i, batch := range z.Changes.Batches {
			fmt.Fprintf(&b, "    batch %d:\n", i+1)
			for _, c := range batch {
				fmt.Fprintf(&b, "      %s %s\n", c.Action, describeEndpoint(c.Endpoint))
			}
		}
	}
	return b.String()
}

func describeEndpoint(e *endpoint.Endpoint) string {
	s := e.Key().String() + " " + e.Policy.String() + " " + strings.Join(e.Targets, ",")
	if e.IsAlias() {
		s += " (alias)"
	}
	if e.TTL != 0 {
		s += fmt.Sprintf(" ttl=%d", e.TTL)
	}
	return s
}

// syncCtx is the context of the tests' syncs.
var syncCtx = context.Background()

// dryRun returns a copy of s that plans without writing: a second sync that checks
// convergence must not change what it checks.
func dryRun(s *Syncer) *Syncer {
	c := *s
	c.DryRun = true
	return &c
}

// batchOf builds a batch of one action over eps.
func batchOf(action changes.Action, eps ...*endpoint.Endpoint) changes.Batch {
	b := make(changes.Batch, 0, len(eps))
	for _, e := range eps {
		b = append(b, changes.Change{Action: action, Endpoint: e})
	}
	return b
}

// startPropZone starts a sandbox holding the zone propZone; the caller closes it.
func startPropZone(tb testing.TB) (*sandbox.Sandbox, zones.Zone) {
	tb.Helper()
	sb, err := sandbox.Start(syncCtx, sandbox.Config{APIAddr: "127.0.0.1:0", DNSAddr: "127.0.0.1:0"})
	if err != nil {
		tb.Fatal(err)
	}
	z, _, err := sb.Store().CreateZone(propZone, "ref", "", false)
	if err != nil {
		sb.Close()
		tb.Fatal(err)
	}
	return sb, z
}
