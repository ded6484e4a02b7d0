package dashboard

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestAPIDocumented: API.md names every field of the document, and its example decodes
// into State with no unknown field, so the documentation cannot drift from the code.
func TestAPIDocumented(t *testing.T) {
	b, err := os.ReadFile("API.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
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
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("API.md does not describe %s.%s (`%s`)", typ.Name(), f.Name, name)
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
