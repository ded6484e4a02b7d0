package spec

import (
	"slices"
	"strings"
	"testing"
)

// TestZonesParse: spec.zones resolves normalised into the plan, with records in any of
// them, or a selection; zone and zoneID stay empty.
func TestZonesParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		over kv
		want []string
	}{
		{"records in two zones", kv{"zone": del, "zones": "[A.example.com., b.example.com]", "records": "[{name: shop.a.example.com}, {name: shop.b.example.com}]"},
			[]string{"a.example.com", "b.example.com"}},
		{"a zone and its parent", kv{"zone": del, "zones": "[example.com, a.example.com]", "records": "[{name: shop.a.example.com}, {name: shop.example.com}]"},
			[]string{"example.com", "a.example.com"}},
		{"select", kv{"zone": del, "zones": "[a.example.com, b.example.com]", "records": del, "select": "{allWeighted: true}"},
			[]string{"a.example.com", "b.example.com"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(planYAML(nil, tc.over)), "plan.yaml")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !slices.Equal(p.Zones, tc.want) || p.Zone != "" || p.ZoneID != "" {
				t.Errorf("zones %q, zone %q, zoneID %q; want zones %q", p.Zones, p.Zone, p.ZoneID, tc.want)
			}
		})
	}
}

// TestZonesProblems: each misuse of spec.zones is refused naming the field.
func TestZonesProblems(t *testing.T) {
	const albSpec = "{listenerRules: [" + testRule + "], from: shop-blue, to: shop-green}"
	for _, tc := range []struct {
		name string
		over kv
		want []string
	}{
		{"zones and zone", kv{"zones": "[a.example.com]"},
			[]string{`spec.zone "example.com": not with spec.zones`}},
		{"zones and zoneID", kv{"zone": del, "zoneID": "Z1", "zones": "[example.com]"},
			[]string{`spec.zoneID "Z1": not with spec.zones`}},
		{"record in no zone", kv{"zone": del, "zones": "[a.example.com, b.example.com]", "records": "[{name: shop.a.example.com}, {name: shop.example.com}]"},
			[]string{`spec.records[1].name "shop.example.com": want a name at or below one of spec.zones (a.example.com, b.example.com)`}},
		{"duplicate zone", kv{"zone": del, "zones": "[a.example.com, A.example.com.]", "records": "[{name: shop.a.example.com}]"},
			[]string{`spec.zones[1] "A.example.com.": duplicate of spec.zones[0]`}},
		{"zone not a name", kv{"zone": del, "zones": "[a.example.com, 'b..example.com']", "records": "[{name: shop.a.example.com}]"},
			[]string{`spec.zones[1] "b..example.com": want a hosted zone's name (empty label)`}},
		{"empty zone", kv{"zone": del, "zones": "[a.example.com, '']", "records": "[{name: shop.a.example.com}]"},
			[]string{`spec.zones[1]: required: ` + wantZones}},
		{"too many zones", kv{"zone": del, "zones": "[" + strings.TrimSuffix(strings.Repeat("a.example.com, ", maxZones+1), ", ") + "]", "records": "[{name: shop.a.example.com}]"},
			[]string{`spec.zones "101 zones": want at most 100 zones`}},
		{"zones with alb", kv{"zone": del, "records": del, "zones": "[a.example.com]", "alb": albSpec},
			[]string{"spec.zones: not with spec.alb"}},
		{"zones with cloudMap", kv{"zone": del, "records": del, "zones": "[a.example.com]", "cloudMap": "{namespace: shop.local, service: web}"},
			[]string{"spec.zones: not with spec.cloudMap"}},
		{"zones not a list", kv{"zone": del, "zones": "a.example.com", "records": "[{name: shop.a.example.com}]"},
			[]string{`spec.zones "a.example.com": want a list`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(planYAML(nil, tc.over)), "plan.yaml")
			wantErrs(t, err, tc.want)
			if err != nil && strings.Contains(err.Error(), "spec.zone: required") {
				t.Errorf("spec.zones is set: no zone is missing:\n%v", err)
			}
		})
	}
}

// TestZoneOf: a name is in the longest zone it is at or below, as Route 53 answers it.
func TestZoneOf(t *testing.T) {
	zones := []string{"example.com", "a.example.com", "b.example.com"}
	for name, want := range map[string]string{
		"shop.a.example.com": "a.example.com",
		"a.example.com":      "a.example.com",
		"shop.example.com":   "example.com",
		"xa.example.com":     "example.com",
		"example.org":        "",
	} {
		if got := ZoneOf(zones, name); got != want {
			t.Errorf("ZoneOf(%s) = %q, want %q", name, got, want)
		}
	}
}
