package spec

import (
	"cmp"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Error is every problem found in one plan file, so that one run of `crossfade cutover
// plan` shows them all instead of one per edit.
type Error struct {
	// File is the plan file's path as given; empty when the plan did not come from a file.
	File string
	// Problems are in the order of the plan's fields (the order of testdata/example.yaml),
	// list items by index.
	Problems []*FieldError
	// Errors are the same problems, in the same order, as apimachinery field errors: for
	// a Kubernetes caller (an admission response, a Cutover resource's status). One that
	// the YAML parser placed on a line has Field "line N", or "(document)".
	Errors field.ErrorList
}

// Error renders one problem per line as `FILE: PATH "VALUE": REASON`.
func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		if e.File != "" {
			b.WriteString(e.File)
			b.WriteString(": ")
		}
		b.WriteString(p.Error())
	}
	return b.String()
}

// Unwrap exposes the problems to errors.As, for callers that want the first *FieldError.
func (e *Error) Unwrap() []error {
	out := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p
	}
	return out
}

// maxValueRunes bounds a value in a rendered message: the whole of a pasted certificate
// or query helps nobody find the line.
const maxValueRunes = 80

// Error renders `PATH "VALUE": REASON`, or `PATH: REASON` when the value is empty.
func (e *FieldError) Error() string {
	if e.Value == "" {
		return e.Path + ": " + e.Reason
	}
	return e.Path + " " + quoteValue(e.Value) + ": " + e.Reason
}

// quoteValue quotes v on one line (control characters escaped), shortened to
// maxValueRunes.
func quoteValue(v string) string {
	if utf8.RuneCountInString(v) > maxValueRunes {
		r := []rune(v)
		return strconv.Quote(string(r[:maxValueRunes])) + "…"
	}
	return strconv.Quote(v)
}

// Paths are apimachinery's field.Path, rendered as Kubernetes renders them
// (spec.steps[1].weights.from). A name that is not a plain identifier (an unknown key
// with a space, a cluster id with a bracket) is written as a quoted subscript,
// spec["a b"], so that a message stays on one line and unambiguous.

// child is the path of key under p, where p holds a value of type t (nil when unknown):
// a struct's field, a free-form map's key, or a quoted subscript for an odd name.
func child(p *field.Path, t reflect.Type, key string) *field.Path {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && t.Kind() == reflect.Map {
		if plain(key, "._:/-") {
			return p.Key(key)
		}
		return p.Key(strconv.Quote(key))
	}
	if !plain(key, "_-") {
		return p.Key(strconv.Quote(key))
	}
	return p.Child(key)
}

// mapKey is the path of key k in a free-form mapping at p (http.clusters).
func mapKey(p *field.Path, k string) *field.Path {
	return child(p, reflect.TypeFor[map[string]string](), k)
}

// pathString renders p; the document itself (nil) as docPath.
func pathString(p *field.Path) string {
	if p == nil {
		return docPath
	}
	return p.String()
}

// docPath names the document as a whole, for problems that belong to no field.
const docPath = "(document)"

func plain(s, extra string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(extra, c)) {
			return false
		}
	}
	return true
}

// rank is one component of a problem's sort key.
type rank struct {
	n int
	s string
}

// pathSegments splits a rendered path into its names and subscripts (unquoted); sub
// tells which were subscripts. It reads what field.Path.String and child write.
func pathSegments(s string) (names []string, sub []bool) {
	for s != "" {
		switch s[0] {
		case '.':
			s = s[1:]
		case '[':
			s = s[1:]
			if strings.HasPrefix(s, `"`) {
				if q, err := strconv.QuotedPrefix(s); err == nil {
					u, _ := strconv.Unquote(q)
					names, sub = append(names, u), append(sub, true)
					s = strings.TrimPrefix(s[len(q):], "]")
					continue
				}
			}
			i := strings.IndexByte(s, ']')
			if i < 0 {
				i = len(s)
			}
			names, sub = append(names, s[:i]), append(sub, true)
			s = strings.TrimPrefix(s[i:], "]")
		default:
			i := strings.IndexAny(s, ".[")
			if i < 0 {
				i = len(s)
			}
			names, sub = append(names, s[:i]), append(sub, false)
			s = s[i:]
		}
	}
	return names, sub
}

// order is a sort key: the index of each field in its struct (the documented order),
// list indices, map keys by name. Unknown fields come after the known ones of their
// mapping, a misspelt one right after the field it means. Problems without a field
// path come first, by line.
func order(path string) []rank {
	out := []rank{{n: 1}}
	if path == docPath {
		return out
	}
	names, sub := pathSegments(path)
	t := reflect.TypeFor[Cutover]()
	for i, name := range names {
		r := rank{s: name}
		var next reflect.Type
		if t != nil {
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			switch t.Kind() {
			case reflect.Struct:
				if f, ok := fieldByJSON(t, name); ok {
					r = rank{n: f.Index[0]}
					next = f.Type
				} else if f, ok := fieldByJSON(t, suggest(t, name)); ok {
					r.n = f.Index[0]
				} else {
					r.n = t.NumField()
				}
			case reflect.Slice:
				if n, err := strconv.Atoi(name); err == nil && sub[i] {
					r = rank{n: n}
				}
				next = t.Elem()
			case reflect.Map:
				next = t.Elem()
			}
		}
		out = append(out, r)
		t = next
	}
	return out
}

func compareOrder(a, b []rank) int {
	return slices.CompareFunc(a, b, func(x, y rank) int {
		return cmp.Or(cmp.Compare(x.n, y.n), cmp.Compare(x.s, y.s))
	})
}

// problem is one field.Error with its sort key.
type problem struct {
	*field.Error
	key []rank
}

// problems collects what is wrong (and what is merely suspicious) with a plan, as
// apimachinery field errors.
type problems struct {
	errs, warnings []problem
	// written holds each scalar as written, by rendered path; a path present with any
	// value (mappings and lists too, as "") was in the file and not null.
	written map[string]string
	// bad are the paths that failed to decode: checks on them or below them would only
	// repeat the same problem in other words.
	bad map[string]bool
}

func newProblems() *problems {
	return &problems{written: map[string]string{}, bad: map[string]bool{}}
}

// present reports whether the field was in the file with a non-null value.
func (ps *problems) present(p *field.Path) bool {
	_, ok := ps.written[pathString(p)]
	return ok
}

// value is what was written at p, else fallback (a value computed from the decoded plan).
func (ps *problems) value(p *field.Path, fallback string) string {
	if v, ok := ps.written[pathString(p)]; ok && v != "" {
		return v
	}
	return fallback
}

// isBad reports whether the path s or a path above it failed to decode.
func (ps *problems) isBad(s string) bool {
	for b := range ps.bad {
		if s == b || strings.HasPrefix(s, b) && (s[len(b)] == '.' || s[len(b)] == '[') {
			return true
		}
	}
	return false
}

// keep adds the rules' errors to the problems, but for those at or below a path that
// failed to decode: they would only repeat its problem in other words.
func (ps *problems) keep(errs field.ErrorList) {
	for _, e := range errs {
		if !ps.isBad(e.Field) {
			ps.errs = append(ps.errs, problem{e, order(e.Field)})
		}
	}
}

// decodeError records a value of the wrong type (field.TypeInvalid) and marks its path
// bad.
func (ps *problems) decodeError(p *field.Path, value, reason string) {
	e := field.TypeInvalid(p, value, reason)
	e.Field = pathString(p)
	ps.errs = append(ps.errs, problem{e, order(e.Field)})
	ps.bad[pathString(p)] = true
}

// unknownField records a key the schema does not have (field.Forbidden: strict decoding
// refuses it) and marks its path bad.
func (ps *problems) unknownField(p *field.Path, reason string) {
	e := field.Forbidden(p, reason)
	e.Field = pathString(p)
	ps.errs = append(ps.errs, problem{e, order(e.Field)})
	ps.bad[pathString(p)] = true
}

// duplicateField records a key given twice in one mapping.
func (ps *problems) duplicateField(p *field.Path, reason string) {
	ps.errs = append(ps.errs, problem{&field.Error{Type: field.ErrorTypeDuplicate, Field: pathString(p), BadValue: "", Detail: reason}, order(pathString(p))})
}

// required is field.Required at p; detail says what is wanted.
func (ps *problems) required(p *field.Path, detail string) *field.Error {
	return named(field.Required(p, detail), p)
}

// invalid is field.Invalid at p with the value as written; value is used when nothing
// was written at p.
func (ps *problems) invalid(p *field.Path, value, detail string) *field.Error {
	return named(field.Invalid(p, ps.value(p, value), detail), p)
}

// invalidExact is invalid with exactly this value, for a problem with the key rather
// than with what was written under it.
func (ps *problems) invalidExact(p *field.Path, value, detail string) *field.Error {
	return named(field.Invalid(p, value, detail), p)
}

// forbidden is field.Forbidden at p, e.g. a field beside another lever, with the value
// as written.
func (ps *problems) forbidden(p *field.Path, value, detail string) *field.Error {
	e := field.Forbidden(p, detail)
	e.BadValue = ps.value(p, value)
	return named(e, p)
}

// duplicate is field.Duplicate at p: a value that repeats an earlier one.
func (ps *problems) duplicate(p *field.Path, value, detail string) *field.Error {
	e := field.Duplicate(p, ps.value(p, value))
	e.Detail = detail
	return named(e, p)
}

// named sets e's Field the way this package renders p (the document for nil).
func named(e *field.Error, p *field.Path) *field.Error {
	e.Field = pathString(p)
	return e
}

// warn records a legal but probably unintended setting, beside the errors the rules
// return (as a webhook returns warnings beside its field.ErrorList).
func (ps *problems) warn(p *field.Path, value, reason string) {
	if !ps.isBad(pathString(p)) {
		ps.warnings = append(ps.warnings, problem{named(field.Invalid(p, ps.value(p, value), reason), p), order(pathString(p))})
	}
}

// line records a problem that the YAML parser placed on a line (or nowhere, line 0):
// there is no field path to name, so Field says where it is.
func (ps *problems) line(n int, reason string) {
	where := docPath
	if n > 0 {
		where = "line " + strconv.Itoa(n)
	}
	ps.errs = append(ps.errs, problem{&field.Error{Type: field.ErrorTypeInvalid, Field: where, BadValue: "", Detail: reason}, []rank{{n: 0}, {n: n}}})
}

// sorted returns the problems in document order, without duplicates.
func sorted(in []problem) field.ErrorList {
	slices.SortStableFunc(in, func(a, b problem) int {
		return cmp.Or(compareOrder(a.key, b.key), strings.Compare(a.Field, b.Field))
	})
	var out field.ErrorList
	for i, p := range in {
		if i > 0 && *p.Error == *in[i-1].Error {
			continue
		}
		out = append(out, p.Error)
	}
	return out
}

// fieldErrors renders a list the plan file's way.
func fieldErrors(list field.ErrorList) []*FieldError {
	if len(list) == 0 {
		return nil
	}
	out := make([]*FieldError, len(list))
	for i, e := range list {
		out[i] = newFieldError(e)
	}
	return out
}

// newFieldError renders e: its value as written, and a reason that starts with
// "required" for a missing field.
func newFieldError(e *field.Error) *FieldError {
	v, _ := e.BadValue.(string)
	reason := e.Detail
	if e.Type == field.ErrorTypeRequired && !strings.HasPrefix(reason, "required") {
		reason = "required: " + reason
	}
	return &FieldError{Path: e.Field, Value: v, Reason: reason, Type: e.Type}
}
