package spec

//go:generate go run ../../../scripts/gen-plan-reference -docs explain_docs.go
//go:generate go run ../../../scripts/gen-plan-reference -reference ../../../docs/plan-reference.md

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// extraDocs are the meanings of the fields that types.go leaves without a comment of
// their own (and whose type's comment does not say what the field is). A field that gains
// a comment must leave this map: TestExplainEveryFieldDocumented says so.
var extraDocs = map[string]string{
	"Cutover.APIVersion": "APIVersion is " + APIVersion + ".",
	"Cutover.Kind":       "Kind is " + Kind + ".",
	"Cutover.Metadata":   "Metadata names the cutover; the name keys its journal and lock.",
	"Cutover.Spec":       "Spec is what to shift, how, and when to give up.",
	"Metadata.Name":      "Name is the cutover's name: its journal, lock and report are kept under it in the state directory.",
	"Record.Name":        "Name is the record set's DNS name (e.g. shop.example.com).",
	"RetireQuery.URL":    "URL is the Prometheus server (its HTTP API is at URL/api/v1/query).",
	"RetireQuery.Query":  "Query must yield a scalar or a single-sample vector: the from cluster's request rate.",
	"Weights.From":       "From is the from member's weight.",
	"Weights.To":         "To is the to member's weight.",
	"TTL.Lower":          "Lower is the TTL, in seconds, the records get before step 1.",
}

// explainField is one field of the plan file as Explain shows it.
type explainField struct {
	// path is the field's path without list indices, e.g. "spec.gates.http".
	path string
	name string
	typ  reflect.Type
	// owner.field keys the field's doc; "" for the top level.
	key     string
	dflt    string
	doc     string
	kids    []*explainField
	kidsTyp reflect.Type
}

// Explain describes the plan file's field at path (e.g. "spec.gates.http"; "" for the
// whole file): its type, default and meaning, and those of its fields, as the decoder
// reads them. List indices ("spec.steps[0].gates") are ignored. An unknown field is an
// error naming the field the path probably means.
func Explain(path string) (string, error) {
	f, err := lookupField(path)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if f.path == "" {
		fmt.Fprintf(&b, "KIND:     %s\nVERSION:  %s\n\n", Kind, APIVersion)
	} else {
		fmt.Fprintf(&b, "FIELD:    %s <%s>\n", f.path, typeName(f.typ))
		if f.dflt != "" {
			fmt.Fprintf(&b, "DEFAULT:  %s\n", f.dflt)
		}
		b.WriteString("\n")
	}
	b.WriteString("DESCRIPTION:\n")
	writeWrapped(&b, f.doc, "    ")
	if f.kidsTyp != nil && f.kidsTyp != f.typ {
		if d := typeDocs[f.kidsTyp.Name()]; d != "" && d != f.doc {
			b.WriteString("\n")
			writeWrapped(&b, d, "    ")
		}
	}
	if len(f.kids) > 0 {
		b.WriteString("\nFIELDS:\n")
		for _, k := range f.kids {
			fmt.Fprintf(&b, "  %s\t<%s>", k.name, typeName(k.typ))
			if k.dflt != "" {
				fmt.Fprintf(&b, "\t(default %s)", k.dflt)
			}
			b.WriteString("\n")
			writeWrapped(&b, k.doc, "    ")
			b.WriteString("\n")
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n", nil
}

// ExplainPaths lists the path of every field of the plan file, depth first, in the order
// the types declare them.
func ExplainPaths() []string {
	var out []string
	var walk func(*explainField)
	walk = func(f *explainField) {
		if f.path != "" {
			out = append(out, f.path)
		}
		for _, k := range f.kids {
			walk(k)
		}
	}
	walk(explainTree())
	return out
}

// lookupField finds path's field in the tree.
func lookupField(path string) (*explainField, error) {
	f := explainTree()
	clean := strings.Trim(stripIndices(path), ".")
	if clean == "" {
		return f, nil
	}
	for _, key := range strings.Split(clean, ".") {
		var next *explainField
		for _, k := range f.kids {
			if k.name == key {
				next = k
			}
		}
		if next == nil {
			where := "the plan file"
			if f.path != "" {
				where = f.path
			}
			if len(f.kids) == 0 {
				return nil, fmt.Errorf("unknown field %q: %s <%s> has no fields", path, where, typeName(f.typ))
			}
			msg := fmt.Sprintf("unknown field %q: %s has no field %q", path, where, key)
			if s := suggest(f.kidsTyp, key); s != "" {
				return nil, fmt.Errorf("%s; did you mean %q?", msg, strings.TrimPrefix(f.path+"."+s, "."))
			}
			return nil, fmt.Errorf("%s; want one of %s", msg, strings.Join(jsonNames(f.kidsTyp), ", "))
		}
		f = next
	}
	return f, nil
}

// stripIndices drops list indices: spec.steps[0].gates is spec.steps.gates.
func stripIndices(path string) string {
	var b strings.Builder
	depth := 0
	for _, r := range path {
		switch {
		case r == '[':
			depth++
		case r == ']' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// explainTree is the plan file's fields, from the Go types the decoder fills.
func explainTree() *explainField {
	defaults := resolvedDefaults()
	root := &explainField{typ: reflect.TypeFor[Cutover](), doc: typeDocs["Cutover"]}
	var build func(f *explainField, seen []reflect.Type)
	build = func(f *explainField, seen []reflect.Type) {
		t := elemStruct(f.typ)
		if t == nil {
			return
		}
		for _, s := range seen {
			if s == t {
				return // a type within itself: not in the plan file today, but never loop
			}
		}
		f.kidsTyp = t
		for i := range t.NumField() {
			sf := t.Field(i)
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if name == "" || name == "-" || !sf.IsExported() {
				continue
			}
			key := t.Name() + "." + sf.Name
			k := &explainField{path: strings.TrimPrefix(f.path+"."+name, "."), name: name, typ: sf.Type, key: key,
				dflt: defaults[key], doc: fieldDoc(key, sf.Type)}
			build(k, append(seen, t))
			f.kids = append(f.kids, k)
		}
	}
	build(root, nil)
	return root
}

// fieldDoc is a field's meaning: its own comment, else the comment of its struct type.
func fieldDoc(key string, t reflect.Type) string {
	if d := fieldDocs[key]; d != "" {
		return d
	}
	if d := extraDocs[key]; d != "" {
		return d
	}
	if st := elemStruct(t); st != nil {
		return typeDocs[st.Name()]
	}
	return ""
}

// elemStruct is the struct type a field holds (through pointers and lists) whose keys
// are the field's children; nil for a value with none (a Duration is a string).
func elemStruct(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == durationType {
		return nil
	}
	return t
}

// typeName is a field's type in the plan file's terms.
func typeName(t reflect.Type) string {
	switch {
	case t == durationType:
		return "duration"
	case t.Kind() == reflect.Pointer:
		return typeName(t.Elem())
	case t.Kind() == reflect.Slice:
		return "[]" + typeName(t.Elem())
	case t.Kind() == reflect.Map:
		return "map[" + typeName(t.Key()) + "]" + typeName(t.Elem())
	case t.Kind() == reflect.Struct:
		return t.Name()
	case t.Kind() == reflect.Bool:
		return "boolean"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "number"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "integer"
	}
	return t.Kind().String()
}

// resolvedDefaults are the defaults resolve applies, by TYPE.Field: a plan with every
// optional part present and empty is resolved, and every field that the resolver filled
// in is a default. So the defaults shown are the resolver's own, not a copy of them.
func resolvedDefaults() map[string]string {
	gates := []Gate{{HTTP: &HTTPGate{Latency: &Latency{}}}, {Prometheus: &PrometheusGate{}}, {DNS: &DNSGate{}},
		{TargetHealth: &TargetHealthGate{}}, {ALBTraffic: &ALBTrafficGate{}}, {CloudMapDiscovery: &CloudMapDiscoveryGate{}}}
	in := &Cutover{Spec: Spec{
		Records:  []Record{{}},
		ALB:      &ALB{CloudWatch: &ALBCloudWatch{}},
		CloudMap: &CloudMap{},
		Steps:    []Step{{Percent: new(int64(0))}},
		Gates:    gates,
		Retire:   &Retire{Prometheus: &RetireQuery{}, CloudWatch: &RetireCloudWatch{}},
	}}
	p := resolve(in)
	// The resolved plan's parts, put back in the plan file's shape.
	var g Gate
	for _, r := range p.Steps[0].Gates {
		g.HTTP, g.Prometheus, g.DNS = cmpOr(g.HTTP, r.HTTP), cmpOr(g.Prometheus, r.Prometheus), cmpOr(g.DNS, r.DNS)
		g.TargetHealth, g.ALBTraffic = cmpOr(g.TargetHealth, r.TargetHealth), cmpOr(g.ALBTraffic, r.ALBTraffic)
		g.CloudMapDiscovery = cmpOr(g.CloudMapDiscovery, r.CloudMapDiscovery)
	}
	delay := Duration{p.CloudWatchDelay}
	out := Spec{
		Records:  p.Records,
		ALB:      &ALB{CloudWatch: &ALBCloudWatch{Delay: &delay}},
		CloudMap: p.CloudMap,
		Gates:    []Gate{g},
		Retire:   p.Retire,
		Rollback: Rollback{Mode: p.Rollback.Mode},
		OnDrift:  p.OnDrift,
		Timeouts: Timeouts{InSync: Duration{p.InSyncTimeout}, Step: Duration{p.StepTimeout}, Total: Duration{p.TotalTimeout}},
	}
	defaults := map[string]string{}
	diffDefaults(reflect.ValueOf(in.Spec), reflect.ValueOf(out), defaults)
	return defaults
}

func cmpOr[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

// diffDefaults records, by TYPE.Field, every leaf that is unset in in and set in out.
func diffDefaults(in, out reflect.Value, defaults map[string]string) {
	for in.Kind() == reflect.Pointer || out.Kind() == reflect.Pointer {
		if out.Kind() == reflect.Pointer {
			if out.IsNil() {
				return
			}
			out = out.Elem()
		}
		if in.Kind() == reflect.Pointer {
			if in.IsNil() {
				in = reflect.Zero(in.Type().Elem())
			} else {
				in = in.Elem()
			}
		}
	}
	switch {
	case out.Kind() == reflect.Slice:
		if out.Len() > 0 && in.Len() > 0 && elemStruct(out.Type()) != nil {
			diffDefaults(in.Index(0), out.Index(0), defaults)
		}
	case out.Kind() == reflect.Struct && out.Type() != durationType:
		t := out.Type()
		for i := range t.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			iv, ov := in.Field(i), out.Field(i)
			if elemStruct(sf.Type) != nil {
				diffDefaults(iv, ov, defaults)
				continue
			}
			if isUnset(iv) && !isUnset(ov) {
				defaults[t.Name()+"."+sf.Name] = formatValue(ov)
			}
		}
	}
}

func isUnset(v reflect.Value) bool {
	if v.Kind() == reflect.Pointer {
		return v.IsNil()
	}
	return v.IsZero()
}

// formatValue writes a default as it would be written in the plan file.
func formatValue(v reflect.Value) string {
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	switch x := v.Interface().(type) {
	case Duration:
		return shortDuration(x.Duration)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v.Interface())
}

// shortDuration is d as a plan writes it: 5m, not 5m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// writeWrapped writes text wrapped at 80 columns, each line indented.
func writeWrapped(b *strings.Builder, text, indent string) {
	if text == "" {
		text = "(undocumented)"
	}
	line := indent
	for _, w := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(w) > 80 {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += w
	}
	b.WriteString(line + "\n")
}
