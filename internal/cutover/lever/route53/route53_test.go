package route53

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// set is a weighted A set of app.example.com as a zone holds it; owner "" is unowned.
func set(id, ip string, weight, ttl int64, owner string) *endpoint.Endpoint {
	e := &endpoint.Endpoint{Name: "app.example.com", Type: "A", SetIdentifier: id, Targets: endpoint.Targets{ip},
		TTL: endpoint.NewTTL(ttl), Policy: endpoint.WeightedPolicy(weight)}
	if owner != "" {
		e.Labels = endpoint.Labels{endpoint.OwnerLabel: owner}
	}
	return e
}

// ownTXT is the ownership record of a set, as the registry writes it.
func ownTXT(id string, weight int64) *endpoint.Endpoint {
	return &endpoint.Endpoint{Name: "a-app.example.com", Type: "TXT", SetIdentifier: id, TTL: 300,
		Targets: endpoint.Targets{`"heritage=external-dns,external-dns/owner=` + id + `"`}, Policy: endpoint.WeightedPolicy(weight)}
}

// render lists a batch as "ACTION key w=… ttl=…", one change per line.
func render(b changes.Batch) string {
	var lines []string
	for _, c := range b {
		line := fmt.Sprintf("%s %s", c.Action, c.Endpoint.Key())
		if c.Endpoint.Type != "TXT" || c.Endpoint.SetIdentifier != "" {
			line += fmt.Sprintf(" w=%d ttl=%d", c.Endpoint.Policy.Weight, c.Endpoint.TTL.Seconds())
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// TestBatchIsACompareAndSwap pins the shape of every batch a cutover sends: each set it
// changes is deleted exactly as read and created anew (a compare-and-swap: Route 53
// refuses the whole batch when a DELETE does not match), every DELETE before every
// CREATE (valid however Route 53 checks that a weighted group has one TTL), a TTL change
// moves every owned weighted set of the name and type, and the authority record is
// created when missing, else replaced as read.
func TestBatchIsACompareAndSwap(t *testing.T) {
	rec := spec.Record{Name: "app.example.com", Type: "A"}
	me := registry.Runner{Token: "t1", Host: "h", PID: 1}
	auth := registry.Authority{Name: "app.example.com", Cutover: "app", Types: []string{"A"}, Runner: me}.Record()
	alias := set("grey", "lb.example.net", 5, 0, "grey")
	alias.TTL = 0
	alias.SetProp(endpoint.PropAlias, "true")
	base := func(authorityThere bool) *live {
		l := &live{
			members: []member{
				{record: rec, setID: "blue", ep: set("blue", "127.0.0.10", 100, 60, "blue"), txt: []*endpoint.Endpoint{ownTXT("blue", 100)}},
				{record: rec, setID: "green", ep: set("green", "127.0.0.20", 0, 60, "green"), txt: []*endpoint.Endpoint{ownTXT("green", 0)}},
			},
			others: []member{
				{record: rec, setID: "purple", ep: set("purple", "127.0.0.30", 10, 60, "purple")},
				{record: rec, setID: "stray", ep: set("stray", "127.0.0.40", 1, 60, "")},
				{record: rec, setID: "grey", ep: alias},
			},
			authority: []*endpoint.Endpoint{auth},
			current:   []*endpoint.Endpoint{nil},
		}
		if authorityThere {
			l.current = []*endpoint.Endpoint{auth}
		}
		l.measure()
		return l
	}
	tests := []struct {
		name           string
		authorityThere bool
		w              map[string]int64
		ttls           map[spec.Record]int64
		want           string
	}{
		{"first write: the authority record is created", false, map[string]int64{"blue": 100, "green": 0}, nil,
			"CREATE _crossfade-weights.app.example.com TXT"},
		{"later writes replace it as read", true, map[string]int64{"blue": 100, "green": 0}, nil,
			"DELETE _crossfade-weights.app.example.com TXT\nCREATE _crossfade-weights.app.example.com TXT"},
		{"a weight step swaps the members and their ownership records, not the others", true, map[string]int64{"blue": 50, "green": 50}, nil, strings.Join([]string{
			"DELETE _crossfade-weights.app.example.com TXT",
			"DELETE app.example.com A [blue] w=100 ttl=60",
			"DELETE a-app.example.com TXT [blue] w=100 ttl=300",
			"DELETE app.example.com A [green] w=0 ttl=60",
			"DELETE a-app.example.com TXT [green] w=0 ttl=300",
			"CREATE _crossfade-weights.app.example.com TXT",
			"CREATE app.example.com A [blue] w=50 ttl=60",
			"CREATE a-app.example.com TXT [blue] w=50 ttl=300",
			"CREATE app.example.com A [green] w=50 ttl=60",
			"CREATE a-app.example.com TXT [green] w=50 ttl=300",
		}, "\n")},
		// The unowned set is left out here; untouchable refuses the write before it is sent.
		{"a TTL change moves every owned weighted set of the group, aliases aside", false, nil, map[spec.Record]int64{rec: 5}, strings.Join([]string{
			"DELETE app.example.com A [blue] w=100 ttl=60",
			"DELETE app.example.com A [green] w=0 ttl=60",
			"DELETE app.example.com A [purple] w=10 ttl=60",
			"CREATE _crossfade-weights.app.example.com TXT",
			"CREATE app.example.com A [blue] w=100 ttl=5",
			"CREATE app.example.com A [green] w=0 ttl=5",
			"CREATE app.example.com A [purple] w=10 ttl=5",
		}, "\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := base(tt.authorityThere)
			if got := render(l.batch(tt.w, tt.ttls)); got != tt.want {
				t.Errorf("batch:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}

	l := base(false)
	bad := l.untouchable(map[spec.Record]int64{rec: 5})
	if len(bad) != 1 || !strings.Contains(bad[0], "app.example.com A [stray]: has no ownership TXT record") {
		t.Errorf("untouchable: %q, want the unowned stray member named", bad)
	}
	if bad := l.untouchable(map[spec.Record]int64{rec: 60}); len(bad) != 0 {
		t.Errorf("untouchable at the TTL the group has: %q, want none", bad)
	}
	if l.groupTTL[rec] != 60 || l.maxTTL != 60 {
		t.Errorf("group TTL %d, max TTL %d, want 60 (the alias has none)", l.groupTTL[rec], l.maxTTL)
	}
	// after applies a batch to what is known: the next one replaces what this one wrote.
	l.others = slices.DeleteFunc(l.others, func(m member) bool { return m.setID == "stray" })
	next := l.after(l.batch(map[string]int64{"blue": 90, "green": 10}, map[spec.Record]int64{rec: 5}))
	if next.current[0] != auth || next.groupTTL[rec] != 5 || next.weights()["green"] != 10 {
		t.Errorf("after: current %v, group TTL %d, weights %v", next.current, next.groupTTL[rec], next.weights())
	}
	if moved := l.moved(next); len(moved) != 6 || !strings.Contains(strings.Join(moved, "\n"), "app.example.com A [purple]: 127.0.0.30 weight 10 TTL 60, now 127.0.0.30 weight 10 TTL 5") {
		t.Errorf("moved:\n%s", strings.Join(moved, "\n"))
	}
	if moved := l.moved(l); len(moved) != 0 {
		t.Errorf("moved against itself: %q", moved)
	}
}
