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
	"State":      "### Top level",
	"Current":    "### `current`",
	"Series":     "### `series`",
	"Stage":      "### `timeline[]`",
	"GateResult": "### `gates[]`",
	"Problem":    "### `errors[]`",
}

// TestAPIDocumented: API.md names every field of the document (a struct's fields in its
// own table), and its example decodes into State with no unknown field, so the
// documentation cannot drift from the code.
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

	_, example, ok := strings.Cut(doc, "## Example")
	_, example, _ = strings.Cut(example, "```json\n")
	example, _, _ = strings.Cut(example, "```")
	if !ok || example == "" {
		t.Fatal("API.md has no JSON example under ## Example")
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(example)))
	dec.DisallowUnknownFields()
	var s State
	if err := dec.Decode(&s); err != nil {
		t.Errorf("API.md's example does not decode into State: %v", err)
	}
	if s.Version != APIVersion || len(s.Timeline) == 0 || len(s.Series.Requests) == 0 {
		t.Errorf("API.md's example is thin: %+v", s)
	}
}
