package v1alpha1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// crdSchema is the openAPIV3Schema of the checked-in CRD (gencrd's TestCRDFresh keeps it
// what the types make).
func crdSchema(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "deploy", "crds", "cutovers.crossfade.io.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &crd); err != nil || len(crd.Spec.Versions) != 1 {
		t.Fatalf("CRD: %v (%d versions, want 1)", err, len(crd.Spec.Versions))
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema
}

// TestImmutableRuleCoversSpec: the rule that freezes a started cutover's spec compares
// every field of spec.Spec but paused, on both sides, in one order; a field added to the
// plan and not to the rule would stay editable mid-run.
func TestImmutableRuleCoversSpec(t *testing.T) {
	rules, _ := crdSchema(t)["x-kubernetes-validations"].([]any)
	if len(rules) != 1 {
		t.Fatalf("root x-kubernetes-validations = %v, want the one immutability rule", rules)
	}
	rule, _ := rules[0].(map[string]any)["rule"].(string)
	var want []string
	for _, name := range jsonNames(reflect.TypeFor[spec.Spec]()) {
		if name != "paused" {
			want = append(want, name)
		}
	}
	for _, side := range []string{"self", "oldSelf"} {
		var got []string
		for _, m := range regexp.MustCompile(`dyn\(`+side+`\.spec\)\.\?(\w+)`).FindAllStringSubmatch(rule, -1) {
			got = append(got, m[1])
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("the rule compares %s.spec's %v, want every field but paused: %v\nrule: %s", side, got, want, rule)
		}
	}
}

// TestDurationPattern: the schema's pattern for a duration accepts what the plan's
// decoder accepts, but for a signed zero with a unit, which no one writes.
func TestDurationPattern(t *testing.T) {
	props := crdSchema(t)["properties"].(map[string]any)["spec"].(map[string]any)["properties"].(map[string]any)
	pattern, _ := props["pause"].(map[string]any)["pattern"].(string)
	re, err := regexp.Compile(pattern)
	if err != nil {
		t.Fatalf("spec.pause pattern %q: %v", pattern, err)
	}
	for _, tc := range []struct {
		in      string
		decoder bool // spec.Duration reads it
		schema  bool // the pattern matches it
	}{
		{"0", true, true}, {"0s", true, true}, {"90s", true, true}, {"5m", true, true},
		{"1h30m", true, true}, {"1.5h", true, true}, {".5s", true, true}, {"1.s", true, true},
		{"500ms", true, true}, {"1us", true, true}, {"1µs", true, true}, {"1μs", true, true},
		{"2ns", true, true}, {"+5m", true, true}, {"-0", true, true},
		{"-0s", true, false}, // a negative zero: the decoder's ≥ 0 holds, the pattern has no sign
		{"-1m", false, false}, {"5", false, false}, {"1d", false, false}, {"", false, false},
		{"m", false, false}, {".s", false, false}, {"5 m", false, false}, {"1m-1s", false, false},
	} {
		var d spec.Duration
		decoded := json.Unmarshal([]byte(`"`+tc.in+`"`), &d) == nil
		if decoded != tc.decoder || re.MatchString(tc.in) != tc.schema {
			t.Errorf("%q: decoder reads it %v (want %v), pattern matches %v (want %v)", tc.in, decoded, tc.decoder, re.MatchString(tc.in), tc.schema)
		}
	}
}
