package spec

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/deepcopytest"
)

// cutoverObject is how a Cutover custom resource would embed the plan's spec.
type cutoverObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec `json:"spec"`
}

// TestRoundTrip: a plan written back by sigs.k8s.io/yaml (as a Kubernetes object is
// stored and read again) parses to the same plan, with no new problem: an unset pause
// or timeout must not come back as an explicit, and refused, 0s.
func TestRoundTrip(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	docs := map[string][]byte{}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		docs[name] = data
	}
	// Every optional duration left unset.
	docs["minimal with gates"] = []byte(planYAML(nil, kv{
		"gates": `[{http: {url: "http://shop.example.com/", latency: {max: 1s}}}, {dns: {}}]`,
		"steps": `[10, {percent: 100, gates: [{prometheus: {url: "http://p:9090", query: up, min: 1}}]}]`,
	}))
	for name, data := range docs {
		t.Run(name, func(t *testing.T) {
			want, err := Parse(data, name)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			var c Cutover
			if err := yaml.UnmarshalStrict(data, &c, yaml.DisallowUnknownFields); err != nil {
				t.Fatalf("UnmarshalStrict: %v", err)
			}
			out, err := yaml.Marshal(&c)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if errs, _ := ValidateCutover(&c); len(errs) > 0 {
				t.Errorf("ValidateCutover: %v", errs)
			}
			got, err := Parse(out, name)
			if err != nil {
				t.Fatalf("Parse(Marshal(plan)):\n%s\n%v", out, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Parse(Marshal(plan)) =\n%s\nwant\n%s", dump(got), dump(want))
			}

			// Embedded as a custom resource's spec, the plan survives the same way.
			obj := cutoverObject{
				TypeMeta:   metav1.TypeMeta{APIVersion: c.APIVersion, Kind: c.Kind},
				ObjectMeta: metav1.ObjectMeta{Name: c.Metadata.Name, Namespace: "default"},
				Spec:       c.Spec,
			}
			js, err := yaml.Marshal(obj)
			if err != nil {
				t.Fatalf("Marshal(object): %v", err)
			}
			var back cutoverObject
			if err := yaml.UnmarshalStrict(js, &back, yaml.DisallowUnknownFields); err != nil {
				t.Fatalf("UnmarshalStrict(object):\n%s\n%v", js, err)
			}
			if !reflect.DeepEqual(back.Spec, c.Spec) {
				t.Errorf("object spec after a round trip =\n%s\nwant\n%s", dump(back.Spec), dump(c.Spec))
			}
		})
	}
}

// TestErrorList: the problems are apimachinery field errors too, each of the type
// Kubernetes gives it, with the path and value the rendered line names.
func TestErrorList(t *testing.T) {
	doc := planYAML(kv{"status": "{}"}, kv{
		"zone":    del,
		"from":    "on",
		"records": "[{name: shop.example.com}, {name: shop.example.com}]",
		"steps":   "[10, {percent: 50, pase: 5m}]",
		"gates":   `[{targetHealth: {}}]`,
		"onDrift": "stop",
	})
	_, err := Parse([]byte(doc), "plan.yaml")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Parse = %v, want an *Error", err)
	}
	type row struct {
		typ          field.ErrorType
		path, value  string
		detailPrefix string
	}
	want := []row{
		{field.ErrorTypeRequired, "spec.zone", "", "want the hosted zone's name"},
		{field.ErrorTypeDuplicate, "spec.records[1].name", "shop.example.com", "duplicate of spec.records[0]"},
		{field.ErrorTypeTypeInvalid, "spec.from", "true", "want a string (YAML reads unquoted yes"},
		{field.ErrorTypeForbidden, "spec.steps[1].pase", "", `unknown field; did you mean "pause"?`},
		{field.ErrorTypeForbidden, "spec.gates[0].targetHealth", "", "only with spec.alb"},
		{field.ErrorTypeInvalid, "spec.onDrift", "stop", `want "pause" or "rollback"`},
		{field.ErrorTypeForbidden, "status", "", "unknown field; want one of apiVersion, kind, metadata, spec"},
	}
	var got []row
	for _, fe := range e.Errors {
		v, _ := fe.BadValue.(string)
		got = append(got, row{fe.Type, fe.Field, v, fe.Detail})
	}
	if len(got) != len(want) || len(e.Problems) != len(e.Errors) {
		t.Fatalf("Errors (%d problems):\n%v\nwant\n%v", len(e.Problems), got, want)
	}
	for i, w := range want {
		g := got[i]
		if g.typ != w.typ || g.path != w.path || g.value != w.value || !strings.HasPrefix(g.detailPrefix, w.detailPrefix) {
			t.Errorf("Errors[%d] = %+v, want %+v", i, g, w)
		}
		if p := e.Problems[i]; p.Path != g.path || p.Type != g.typ || p.Value != g.value {
			t.Errorf("Problems[%d] = %+v, does not render Errors[%d] %+v", i, p, i, g)
		}
	}
	// The Kubernetes rendering names each field as well, for an object's status.
	if agg := e.Errors.ToAggregate().Error(); !strings.Contains(agg, `spec.steps[1].pase: Forbidden: unknown field; did you mean "pause"?`) {
		t.Errorf("ToAggregate() = %s", agg)
	}
}

// TestDeepCopy fills every field of a Cutover (every pointer set, every list and mapping
// with an item), so that a field added later without its copy fails here: the copy must
// equal the original and share no pointer, list or mapping with it.
func TestDeepCopy(t *testing.T) {
	var c Cutover
	deepcopytest.Fill(reflect.ValueOf(&c).Elem())
	got := c.DeepCopy()
	if !reflect.DeepEqual(*got, c) {
		t.Fatalf("DeepCopy =\n%s\nwant\n%s", dump(got), dump(c))
	}
	deepcopytest.Shared(t, "Cutover", reflect.ValueOf(c), reflect.ValueOf(*got))
	if (*Cutover)(nil).DeepCopy() != nil || (*Spec)(nil).DeepCopy() != nil || (*ALB)(nil).DeepCopy() != nil {
		t.Error("DeepCopy of nil is not nil")
	}
}

// TestValidateCutover: a decoded Cutover (a resource's) is checked by the same rules as
// the file, and a valid plan's object passes with the file's warnings.
func TestValidateCutover(t *testing.T) {
	decoded := func(t *testing.T, doc string) *Cutover {
		t.Helper()
		var c Cutover
		if err := yaml.UnmarshalStrict([]byte(doc), &c, yaml.DisallowUnknownFields); err != nil {
			t.Fatalf("UnmarshalStrict: %v", err)
		}
		return &c
	}
	for _, tc := range []struct {
		name string
		spec kv
		edit func(*Cutover)
		want []string // rendered problems; none for a valid plan
	}{
		{"valid", kv{"steps": "[{weights: {from: 0, to: 0}}, 100]", "gates": `[{http: {url: "http://x/"}}]`}, nil, nil},
		{"to equals from", nil, func(c *Cutover) { c.Spec.To = "blue" },
			[]string{`spec.to "blue": same as spec.from: want the set identifier of another cluster`}},
		{"negative pause", nil, func(c *Cutover) { c.Spec.Steps[0].Pause = &Duration{-time.Minute} },
			[]string{`spec.steps[0].pause "-1m0s": want a duration ≥ 0 such as "90s" or "5m"`}},
		{"weight out of range", nil, func(c *Cutover) { c.Spec.Steps[1] = Step{Weights: &Weights{From: 0, To: 256}} },
			[]string{`spec.steps[1].weights.to "256": want an integer 0..255`}},
		{"zone missing", nil, func(c *Cutover) { c.Spec.Zone = "" },
			[]string{`spec.zone: required: want the hosted zone's name (e.g. example.com), or spec.zoneID`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := planYAML(nil, tc.spec)
			c := decoded(t, doc)
			if tc.edit != nil {
				tc.edit(c)
			}
			errs, warnings := ValidateCutover(c)
			var got []string
			for _, p := range fieldErrors(errs) {
				got = append(got, p.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("ValidateCutover errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if tc.edit != nil {
				return
			}
			p, err := Parse([]byte(doc), "")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fieldErrors(warnings), p.Warnings) {
				t.Errorf("ValidateCutover warnings %v, want the file's %v", fieldErrors(warnings), p.Warnings)
			}
		})
	}
}
