package spec

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestPlanOf: a Cutover object's spec becomes the Plan Parse makes of the same document
// (spec.paused aside, which an object may set); an invalid one is refused with an *Error
// naming the object and each field, and the object is not written through.
func TestPlanOf(t *testing.T) {
	tests := []struct {
		name string
		top  kv
		spec kv
		// wants are what the error must say; nil for a valid spec.
		wants []string
	}{
		{name: "minimal"},
		{name: "gates and pauses", spec: kv{"pause": "30s", "gates": "[{name: ok, http: {url: 'http://127.0.0.1:1/healthz'}}]", "steps": "[0, {percent: 50, pause: 1m}, 100]"}},
		{name: "paused object", spec: kv{"paused": "true"}},
		{name: "no from", spec: kv{"from": del}, wants: []string{"cutover/shop: spec.from", "required"}},
		{name: "weight over 100", spec: kv{"steps": "[10, 150]"}, wants: []string{"cutover/shop: spec.steps[1]"}},
		{name: "two problems", spec: kv{"zone": del, "to": "blue"}, wants: []string{"cutover/shop: spec.zone", "cutover/shop: spec.to"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := planYAML(tt.top, tt.spec)
			var c Cutover
			if err := yaml.UnmarshalStrict([]byte(doc), &c); err != nil {
				t.Fatalf("decode %s: %v", doc, err)
			}
			before := c.DeepCopy()
			p, err := PlanOf(&c)
			if !reflect.DeepEqual(&c, before) {
				t.Errorf("PlanOf changed the object it was given:\n got %+v\nwant %+v", c, *before)
			}
			if tt.wants != nil {
				wantErrs(t, err, tt.wants)
				var se *Error
				if !errors.As(err, &se) || se.File != "cutover/shop" || len(se.Errors) == 0 {
					t.Errorf("error %v: want an *Error for cutover/shop with field errors", err)
				}
				if p != nil {
					t.Errorf("PlanOf returned a plan with its error: %+v", p)
				}
				return
			}
			if err != nil {
				t.Fatalf("PlanOf: %v", err)
			}
			// The plan file equivalent: Parse refuses spec.paused, so it reads the
			// document without it.
			fileDoc := strings.Replace(doc, "  paused: true\n", "", 1)
			want, err := Parse([]byte(fileDoc), "plan.yaml")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(p, want) {
				t.Errorf("PlanOf differs from Parse of the same document:\n got %+v\nwant %+v", p, want)
			}
			if p.Name != "shop" {
				t.Errorf("plan name %q, want the object's, shop", p.Name)
			}
		})
	}
}
