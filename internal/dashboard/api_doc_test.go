package dashboard

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// sections are the headings of API.md under which each type's fields are tabled; a type
// not listed (Point) is described in the conventions.
var sections = map[string]string{
	"State":       "### Top level",
	"Current":     "### `current`",
	"Series":      "### `series`",
	"Stage":       "### `timeline[]`",
	"GateResult":  "### `gates[]`",
	"Problem":     "### `errors[]`",
	"GroupHealth": "### `targetHealth[]`",
}

// TestAPIDocumented: API.md names every field of the document (a struct's fields in its
// own table), and its examples (a Route 53 cutover's, an ALB cutover's) decode into State
// with no unknown field, so the documentation cannot drift from the code.
func TestAPIDocumented(t *testing.T) {
	b, err := os.ReadFile("API.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	// section is the part of API.md that describes typ's fields.
	section := func(typ reflect.Type) string {
		heading, ok := sections[typ.Name()]
		if !ok {
			return doc
		}
		_, rest, found := strings.Cut(doc, "\n"+heading)
		if !found {
			t.Errorf("API.md has no section %q for %s", heading, typ.Name())
			return doc
		}
		rest, _, _ = strings.Cut(rest, "\n#")
		return rest
	}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map || typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ.PkgPath() != reflect.TypeFor[State]().PkgPath() || seen[typ] {
			return
		}
		seen[typ] = true
		text := section(typ)
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !strings.Contains(text, "`"+name+"`") {
				t.Errorf("API.md does not describe %s.%s (`%s`) where it describes %s", typ.Name(), f.Name, name, typ.Name())
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[State]())

	// Every example decodes, and each shows what its lever's view needs.
	examples := map[string]func(State) string{
		"## Example\n": func(s State) string {
			if s.Lever != "route53" || len(s.Series.DNSShares) == 0 || len(s.Series.ClientShares) == 0 {
				return "a Route 53 cutover with DNS and client shares"
			}
			return ""
		},
		"## Example: an ALB cutover\n": func(s State) string {
			if s.Lever != "alb" || len(s.Series.ALBShares) == 0 || len(s.Series.ClientShares) == 0 || len(s.TargetHealth) != 2 {
				return "an ALB cutover with CloudWatch and client shares and two groups' health"
			}
			return ""
		},
	}
	for heading, thin := range examples {
		_, example, ok := strings.Cut(doc, "\n"+heading)
		_, example, _ = strings.Cut(example, "```json\n")
		example, _, _ = strings.Cut(example, "```")
		name := strings.TrimSpace(heading)
		if !ok || example == "" {
			t.Errorf("API.md has no JSON example under %s", name)
			continue
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(example)))
		dec.DisallowUnknownFields()
		var s State
		if err := dec.Decode(&s); err != nil {
			t.Errorf("API.md's example under %s does not decode into State: %v", name, err)
			continue
		}
		if s.Version != APIVersion || len(s.Timeline) == 0 || len(s.Series.Requests) == 0 {
			t.Errorf("API.md's example under %s is thin: %+v", name, s)
		}
		if want := thin(s); want != "" {
			t.Errorf("API.md's example under %s does not show %s: %+v", name, want, s)
		}
	}
}
