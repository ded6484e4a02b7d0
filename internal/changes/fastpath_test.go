package changes

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// TestFastPathsPlanAsGeneral plans random zones twice, once with the planner's shortcuts
// (fastPaths) and once through the general path alone, and wants the same plan, labels
// included, and the same labels on the zone's records after. Half the zones are listed in
// order of name, as Route 53 lists them, which the shortcuts of the registry's index and
// the planner's name index take; the other half shuffled.
func TestFastPathsPlanAsGeneral(t *testing.T) {
	regs := map[string]Registry{}
	for _, cfg := range []registry.Config{{OwnerID: "blue"}, {OwnerID: "blue", WriteLegacy: true}} {
		reg, err := registry.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		regs[map[bool]string{false: "typed", true: "legacy"}[cfg.WriteLegacy]] = reg
	}
	rng := rand.New(rand.NewPCG(32, 3))
	for i := range 4000 {
		current, desired := randomZone(rng)
		if i%2 == 0 {
			slices.SortStableFunc(current, func(a, b *endpoint.Endpoint) int { return compareKeys(a.Key(), b.Key()) })
		}
		policy := []Policy{Sync, Sync, UpsertOnly, CreateOnly}[rng.IntN(4)]
		var keep []string
		if rng.IntN(5) == 0 {
			keep = []string{"service/default/a"}
		}
		regName := []string{"typed", "legacy"}[rng.IntN(2)]
		plan := func(fast bool) (string, []*endpoint.Endpoint) {
			t.Helper()
			defer func(was bool) { fastPaths = was }(fastPaths)
			fastPaths = fast
			cur := cloneAll(current)
			p := Calculate(Input{Desired: cloneAll(desired), Current: cur, Registry: regs[regName], Policy: policy, Keep: keep, Zone: "example.com"})
			return renderAll(p), cur
		}
		fast, curFast := plan(true)
		general, curGeneral := plan(false)
		if fast != general {
			t.Fatalf("zone %d (%s, %s registry): the plan with the shortcuts differs from the general one:\nshortcuts:\n%s\ngeneral:\n%s\nzone:\n%s\ndesired:\n%s",
				i, policy, regName, fast, general, describeAll(current), describeAll(desired))
		}
		for j := range curFast {
			if la, lb := curFast[j].AllLabels(), curGeneral[j].AllLabels(); !maps.Equal(la, lb) {
				t.Fatalf("zone %d: record %s labelled %v with the shortcuts, %v without", i, curFast[j].Key(), la, lb)
			}
		}
	}
}
