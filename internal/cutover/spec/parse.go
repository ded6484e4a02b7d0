package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// Load reads and parses the plan file at path.
func Load(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cutover plan: %w", err)
	}
	return Parse(data, path)
}

// Parse parses, validates and resolves a plan file (YAML or JSON); file names it in
// errors. Any problem is reported in an *Error that lists every problem found.
func Parse(data []byte, file string) (*Plan, error) {
	ps := newProblems()
	c := decode(data, ps)
	if c != nil {
		validate(c, ps)
		planFileRules(c, ps)
	}
	if len(ps.errs) > 0 {
		list := sorted(ps.errs)
		return nil, &Error{File: file, Problems: fieldErrors(list), Errors: list}
	}
	p := resolve(c)
	p.Warnings = fieldErrors(sorted(ps.warnings))
	return p, nil
}

// ValidateCutover checks a Cutover that is already decoded (a Cutover resource's, read
// by the API server) by the plan file's rules, and returns its problems and its
// warnings in the plan's field order. A field counts as set when its JSON form has it:
// a zero optional field is its default, as when the file leaves it out.
func ValidateCutover(c *Cutover) (errs, warnings field.ErrorList) {
	js, err := json.Marshal(c)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, fmt.Errorf("cutover %q: %w", c.Metadata.Name, err))}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return field.ErrorList{field.InternalError(nil, fmt.Errorf("cutover %q: %w", c.Metadata.Name, err))}, nil
	}
	ps := newProblems()
	// Typed values fit the schema but for what the types cannot refuse (a negative
	// duration); this records what is set, for the checks that tell "0" from "left out".
	explainer{ps: ps}.value(nil, tree, cutoverType, "")
	validate(c, ps)
	return sorted(ps.errs), sorted(ps.warnings)
}

// decode turns the document into a Cutover with sigs.k8s.io/yaml, strictly: a key given
// twice, a key the schema does not have, or a value of the wrong type is an error, each
// named by its path (explain). It returns nil when the document is not YAML or not a
// mapping; otherwise the Cutover holds every value that fits the schema, so that
// validation can report the rest of the plan's problems in the same pass.
func decode(data []byte, ps *problems) *Cutover {
	doc, ok := singleDocument(data, ps)
	if !ok {
		return nil
	}
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		if !strings.Contains(err.Error(), "already set in map") || !duplicateFields(doc, ps) {
			yamlError(err, ps)
		}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		ps.line(0, "not a plan: "+oneLine(err.Error()))
		return nil
	}
	if tree == nil {
		ps.line(0, "empty: want a Cutover plan with apiVersion, kind, metadata and spec")
		return nil
	}
	if _, ok := tree.(map[string]any); !ok {
		ps.decodeError(nil, "", "want a mapping with apiVersion, kind, metadata and spec, not "+describe(tree))
		return nil
	}
	kept, _ := explainer{ps: ps}.value(nil, tree, cutoverType, "")
	src := doc
	if len(ps.errs) > 0 {
		// Decode what fits (JSON is YAML), for validation to check the rest.
		if src, err = json.Marshal(kept); err != nil {
			ps.line(0, "not a plan: "+oneLine(err.Error()))
			return nil
		}
	}
	c := new(Cutover)
	if err := yaml.UnmarshalStrict(src, c, yaml.DisallowUnknownFields); err != nil {
		// explain passed what the decoder refuses: never run a plan the decoder did not
		// read; say what it said.
		ps.line(0, "not a plan: "+oneLine(err.Error()))
		return nil
	}
	return c
}

// duplicateFields reports every key given twice in one mapping, by its path and lines,
// and whether it found any. sigs.k8s.io/yaml's strict mode refuses them but names only
// a line; the YAML node tree has the path.
func duplicateFields(doc []byte, ps *problems) bool {
	var root yaml3.Node
	if err := yaml3.Unmarshal(doc, &root); err != nil {
		return false
	}
	found := false
	var walk func(n *yaml3.Node, p *field.Path, t reflect.Type)
	walk = func(n *yaml3.Node, p *field.Path, t reflect.Type) {
		switch n.Kind {
		case yaml3.DocumentNode:
			for _, c := range n.Content {
				walk(c, p, t)
			}
		case yaml3.SequenceNode:
			for i, c := range n.Content {
				walk(c, p.Index(i), elemType(t))
			}
		case yaml3.MappingNode:
			first := map[string]int{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				kp := child(p, t, k.Value)
				if line, dup := first[k.Value]; dup {
					where := fmt.Sprintf("on line %d (first set on line %d)", k.Line, line)
					if line == k.Line {
						where = fmt.Sprintf("set twice on line %d", line)
					}
					ps.duplicateField(kp, "duplicate field "+where+": want each key once")
					found = true
					continue
				}
				first[k.Value] = k.Line
				walk(v, kp, fieldType(t, k.Value))
			}
		}
	}
	walk(&root, nil, cutoverType)
	return found
}

// fieldType is the type of key's value in a value of type t; nil when unknown.
func fieldType(t reflect.Type, key string) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == nil:
		return nil
	case t.Kind() == reflect.Map:
		return t.Elem()
	case t.Kind() == reflect.Struct:
		if f, ok := fieldByJSON(t, key); ok {
			return f.Type
		}
	}
	return nil
}

// elemType is the type of a list item in a value of type t; nil when unknown.
func elemType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Slice {
		return nil
	}
	return t.Elem()
}

// singleDocument returns the one YAML document in data, with the lines of any empty
// documents around it blanked so that line numbers still match the file. The YAML
// parser would silently read only the first of several documents.
func singleDocument(data []byte, ps *problems) ([]byte, bool) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	type span struct{ from, to int } // lines [from, to)
	var docs []span
	start := 0
	for i, l := range lines {
		switch documentMarker(l) {
		case "---": // starts the next document, which may begin on this very line
			docs = append(docs, span{start, i})
			start = i
		case "...":
			docs = append(docs, span{start, i})
			start = i + 1
		}
	}
	docs = append(docs, span{start, len(lines)})
	if len(docs) == 1 {
		return data, true
	}
	var full []span
	for _, s := range docs {
		js, err := yaml.YAMLToJSON(bytes.Join(lines[s.from:s.to], nil))
		if err != nil || strings.TrimSpace(string(js)) != "null" {
			full = append(full, s)
		}
	}
	if len(full) > 1 {
		ps.line(full[1].from+1, "a second YAML document: want one Cutover per file")
		return nil, false
	}
	if len(full) == 0 {
		return data, true
	}
	var b bytes.Buffer
	for i, l := range lines {
		if i >= full[0].from && i < full[0].to {
			b.Write(l)
		} else if bytes.HasSuffix(l, []byte("\n")) {
			b.WriteByte('\n')
		}
	}
	return b.Bytes(), true
}

// documentMarker returns "---" or "..." when the line starts or ends a YAML document:
// the marker at the start of the line, followed by nothing or white space. YAML forbids
// both inside scalars, so a line-based split is exact.
func documentMarker(l []byte) string {
	l = bytes.TrimRight(l, "\r\n")
	for _, m := range []string{"---", "..."} {
		if rest, ok := bytes.CutPrefix(l, []byte(m)); ok && (len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t') {
			return m
		}
	}
	return ""
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// yamlError turns the YAML parser's error into problems on the lines it names.
func yamlError(err error, ps *problems) {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "unmarshal errors:\n"); ok {
		for l := range strings.SplitSeq(rest, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lineProblem(l, ps)
			}
		}
		return
	}
	lineProblem(msg, ps)
}

func lineProblem(msg string, ps *problems) {
	switch {
	case strings.Contains(msg, "map key"):
		// sigs.k8s.io/yaml's messages here print Go values; say what is wrong instead.
		ps.line(0, "invalid YAML: a mapping key is null, a list or a mapping: want a string")
		return
	case strings.HasPrefix(msg, "json: unsupported value"):
		ps.line(0, "invalid YAML: a number is infinite or not a number (.inf, .nan): want a finite number")
		return
	}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			ps.line(n, "invalid YAML: "+oneLine(m[2]))
			return
		}
	}
	ps.line(0, "invalid YAML: "+oneLine(msg))
}

// oneLine keeps a message on one line of the error output.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Types the decoder treats specially.
var (
	cutoverType  = reflect.TypeFor[Cutover]()
	durationType = reflect.TypeFor[Duration]()
	stepType     = reflect.TypeFor[Step]()
)

// explainer is the layer over sigs.k8s.io/yaml's strict decoding that says what is
// wrong where: it walks the generic tree against the schema (the types' json tags) and
// names every unknown key (with the key it probably means) and every value of the wrong
// type (with YAML 1.1's quoting surprises), with its path. The decoder stops at the
// first, names no list index, and reads an unquoted number into a string field.
type explainer struct {
	ps *problems
}

// value checks v against type t and returns what of it fits, to decode; ok is false
// when v as a whole does not. want is the field's own description of what it wants
// ("an integer 0..255"); empty for the type's generic one.
func (e explainer) value(p *field.Path, v any, t reflect.Type, want string) (kept any, ok bool) {
	if v == nil {
		return nil, true // null or empty: the field is unset
	}
	e.ps.written[pathString(p)] = scalarText(v)
	switch t {
	case durationType:
		s, isString := v.(string)
		if !isString {
			e.ps.decodeError(p, scalarText(v), wantDuration)
			return nil, false
		}
		if _, reason := parseDuration(s); reason != "" {
			e.ps.decodeError(p, s, reason)
			return nil, false
		}
		return v, true
	case stepType:
		if _, isMap := v.(map[string]any); !isMap {
			n, isNumber := v.(json.Number)
			if _, err := strconv.ParseInt(string(n), 10, 64); !isNumber || err != nil {
				e.ps.decodeError(p, scalarText(v), wantStep+notA(v))
				return nil, false
			}
			return v, true
		}
	}
	if want == "" {
		want = genericWant(t)
	}
	bad := func(reason string) (any, bool) {
		e.ps.decodeError(p, scalarText(v), reason)
		return nil, false
	}
	switch t.Kind() {
	case reflect.Pointer:
		return e.value(p, v, t.Elem(), want)
	case reflect.String:
		if _, ok := v.(string); !ok {
			return bad(want + quoteHint(v))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return bad(want + notA(v))
		}
	case reflect.Int, reflect.Int64:
		n, isNumber := v.(json.Number)
		i, err := strconv.ParseInt(string(n), 10, 64)
		if !isNumber || err != nil || reflect.New(t).Elem().OverflowInt(i) {
			return bad(want + notA(v))
		}
	case reflect.Float64:
		n, isNumber := v.(json.Number)
		if _, err := strconv.ParseFloat(string(n), 64); !isNumber || err != nil {
			return bad(want + notA(v))
		}
	case reflect.Slice:
		items, isList := v.([]any)
		if !isList {
			return bad("want a list" + notA(v))
		}
		out := make([]any, len(items))
		for i, item := range items {
			out[i], _ = e.value(p.Index(i), item, t.Elem(), want) // a bad item decodes as null
		}
		return out, true
	case reflect.Map:
		m, isMap := v.(map[string]any)
		if !isMap {
			return bad(want + notA(v))
		}
		out := make(map[string]any, len(m))
		for _, k := range sortedKeys(m) {
			out[k], _ = e.value(child(p, t, k), m[k], t.Elem(), "")
		}
		return out, true
	case reflect.Struct:
		m, isMap := v.(map[string]any)
		if !isMap {
			return bad(want + notA(v))
		}
		out := make(map[string]any, len(m))
		for _, k := range sortedKeys(m) {
			f, known := fieldByJSON(t, k)
			if !known {
				e.ps.unknownField(child(p, t, k), unknownField(t, k))
				continue
			}
			if kv, ok := e.value(child(p, t, k), m[k], f.Type, fieldWant(t, k)); ok {
				out[k] = kv
			}
		}
		return out, true
	default:
		// Every field of the schema is one of the kinds above; a new kind needs a case.
		return bad("unsupported field type " + t.String())
	}
	return v, true
}

// genericWant describes what a field of type t accepts, for fields with no wants entry.
func genericWant(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return genericWant(t.Elem())
	case reflect.String:
		return "want a string"
	case reflect.Bool:
		return "want true or false"
	case reflect.Int, reflect.Int64:
		return "want an integer"
	case reflect.Float64:
		return "want a number"
	case reflect.Slice:
		return genericWant(t.Elem())
	case reflect.Map, reflect.Struct:
		names := jsonNames(t)
		if len(names) == 0 {
			return "want a mapping"
		}
		return "want a mapping with " + strings.Join(names, ", ")
	}
	return "want a " + t.String()
}

// scalarText is a scalar as written (numbers keep their digits); "" for lists and
// mappings, which are not quoted in messages.
func scalarText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return string(v)
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// notA says what was found instead, when the value is not shown in the message.
func notA(v any) string {
	switch v.(type) {
	case []any:
		return ", not a list"
	case map[string]any:
		return ", not a mapping"
	}
	return ""
}

// describe names a value's kind for a message about the whole document.
func describe(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// quoteHint explains why a string field got a number or a boolean: YAML 1.1 reads
// unquoted yes, no, on, off and digits as such, which surprises in a set identifier.
func quoteHint(v any) string {
	switch v.(type) {
	case bool:
		return " (YAML reads unquoted yes, no, on, off, true and false as booleans: quote the value)"
	case json.Number:
		return " (YAML reads this unquoted value as a number: quote it)"
	}
	return notA(v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// fieldByJSON finds the field that a key names: exactly, unlike encoding/json, because
// a key in the wrong case is a typo to report, not a guess to make.
func fieldByJSON(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// jsonNames lists a struct's keys in declaration order.
func jsonNames(t reflect.Type) []string {
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// unknownField says what the key might have meant, or which keys the mapping takes.
func unknownField(t reflect.Type, key string) string {
	if s := suggest(t, key); s != "" {
		return "unknown field; did you mean " + strconv.Quote(s) + "?"
	}
	return "unknown field; want one of " + strings.Join(jsonNames(t), ", ")
}

// suggest returns the key of t that key is probably a misspelling of: the same but for
// case, or one edit away (two for keys longer than four letters); "" when none is close.
//
// A key with a character no field name has (a space, a quote) is not taken for a
// misspelling: listing the keys helps more than a guess at one.
func suggest(t reflect.Type, key string) string {
	if strings.ContainsFunc(key, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.')
	}) {
		return ""
	}
	best, bestDist := "", 0
	for _, n := range jsonNames(t) {
		if strings.EqualFold(n, key) {
			return n
		}
		limit := 2 // a short key two edits away is another word: tcp is not http
		if len(n) <= 4 {
			limit = 1
		}
		if d := editDistance(strings.ToLower(n), strings.ToLower(key)); d <= limit && (best == "" || d < bestDist) {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance, capped in cost by the short keys compared.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
