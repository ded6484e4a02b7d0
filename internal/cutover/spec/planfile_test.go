package spec

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestPlanFileRules: spec.paused true is refused in a plan file, naming the field and
// saying how a CLI run is paused; false or left out is the plan as before. A Cutover
// object (ValidateCutover) may say true.
func TestPlanFileRules(t *testing.T) {
	for _, tc := range []struct {
		name   string
		paused string // the value written; "" leaves it out
		want   string // the rendered problem; "" for none
	}{
		{"left out", "", ""},
		{"false", "false", ""},
		{"true", "true", "spec.paused \"true\": " + wantUnpaused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := planYAML(nil, nil)
			if tc.paused != "" {
				doc = planYAML(nil, kv{"paused": tc.paused})
			}
			var c Cutover
			if err := yaml.UnmarshalStrict([]byte(doc), &c, yaml.DisallowUnknownFields); err != nil {
				t.Fatal(err)
			}
			ps := newProblems()
			planFileRules(&c, ps)
			var got []string
			for _, p := range fieldErrors(sorted(ps.errs)) {
				got = append(got, p.Error())
			}
			if strings.Join(got, "\n") != tc.want {
				t.Errorf("planFileRules:\n  %s\nwant\n  %s", strings.Join(got, "\n"), tc.want)
			}
			_, err := Parse([]byte(doc), "plan.yaml")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Parse: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "plan.yaml: "+tc.want)):
				t.Errorf("Parse: %v\nwant plan.yaml: %s", err, tc.want)
			}
			if errs, _ := ValidateCutover(&c); len(errs) > 0 {
				t.Errorf("ValidateCutover (an object may be paused) = %v", errs.ToAggregate())
			}
		})
	}
}
