package spec

import (
	"cmp"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is every problem found in one plan file, so that one run of `crossfade cutover
// plan` shows them all instead of one per edit.
type Error struct {
	// File is the plan file's path as given; empty when the plan did not come from a file.
	File string
	// Problems are in the order of the plan's fields (the order of testdata/example.yaml),
	// list items by index.
	Problems []*FieldError
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

// segKind tells apart the three ways to step into a value.
type segKind uint8

const (
	segField segKind = iota // a mapping key that is a field of the schema
	segIndex                // a list item
	segKey                  // a key of a free-form mapping (http.clusters)
)

type seg struct {
	kind  segKind
	name  string
	index int
}

// path is where a value sits in the document. Its segments (rather than a rendered
// string) let problems be sorted in the order of the schema's fields.
type path []seg

func (p path) with(s seg) path {
	out := make(path, len(p), len(p)+1)
	copy(out, p)
	return append(out, s)
}

func (p path) field(name string) path { return p.with(seg{kind: segField, name: name}) }
func (p path) index(i int) path       { return p.with(seg{kind: segIndex, index: i}) }
func (p path) key(k string) path      { return p.with(seg{kind: segKey, name: k}) }

// String renders spec.steps[1].weights.from; names that are not plain identifiers (an
// unknown key with a space, a cluster id with a bracket) are quoted so that a message
// stays on one line and unambiguous.
func (p path) String() string {
	var b strings.Builder
	for i, s := range p {
		switch s.kind {
		case segIndex:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		case segKey:
			b.WriteByte('[')
			if plain(s.name, "._:/-") {
				b.WriteString(s.name)
			} else {
				b.WriteString(strconv.Quote(s.name))
			}
			b.WriteByte(']')
		default:
			if !plain(s.name, "_-") {
				b.WriteByte('[')
				b.WriteString(strconv.Quote(s.name))
				b.WriteByte(']')
				continue
			}
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.name)
		}
	}
	if b.Len() == 0 {
		return docPath
	}
	return b.String()
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

// order is a sort key: the index of each field in its struct (the documented order),
// list indices, map keys by name. Unknown fields come after the known ones of their
// mapping. Problems without a field path come first, by line.
func (p path) order() []rank {
	out := make([]rank, 0, len(p)+1)
	out = append(out, rank{n: 1})
	t := reflect.TypeFor[Cutover]()
	for _, s := range p {
		r := rank{s: s.name, n: s.index}
		var next reflect.Type
		if t != nil {
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			switch {
			case s.kind == segField && t.Kind() == reflect.Struct:
				if f, ok := fieldByJSON(t, s.name); ok {
					r = rank{n: f.Index[0]}
					next = f.Type
				} else if f, ok := fieldByJSON(t, suggest(t, s.name)); ok {
					r.n = f.Index[0] // a misspelt key sorts right after the field it means
				} else {
					r.n = t.NumField()
				}
			case s.kind != segField && (t.Kind() == reflect.Slice || t.Kind() == reflect.Map):
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

// problem is a FieldError with its sort key.
type problem struct {
	*FieldError
	key []rank
}

// problems collects what is wrong (and what is merely suspicious) with a plan.
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
func (ps *problems) present(p path) bool {
	_, ok := ps.written[p.String()]
	return ok
}

// value is what was written at p, else fallback (a value computed from the decoded plan).
func (ps *problems) value(p path, fallback string) string {
	if v, ok := ps.written[p.String()]; ok && v != "" {
		return v
	}
	return fallback
}

// isBad reports whether p or a path above it failed to decode.
func (ps *problems) isBad(p path) bool {
	for i := len(p); i >= 0; i-- {
		if ps.bad[p[:i].String()] {
			return true
		}
	}
	return false
}

// decodeError records a value that could not be decoded and marks its path bad.
func (ps *problems) decodeError(p path, value, reason string) {
	ps.bad[p.String()] = true
	ps.errs = append(ps.errs, problem{&FieldError{Path: p.String(), Value: value, Reason: reason}, p.order()})
}

// add records a validation problem; value is used when nothing was written at p.
func (ps *problems) add(p path, value, reason string) {
	if ps.isBad(p) {
		return
	}
	ps.errs = append(ps.errs, problem{&FieldError{Path: p.String(), Value: ps.value(p, value), Reason: reason}, p.order()})
}

// addExact records a validation problem with exactly this value, for a problem with the
// key rather than with what was written under it.
func (ps *problems) addExact(p path, value, reason string) {
	if ps.isBad(p) {
		return
	}
	ps.errs = append(ps.errs, problem{&FieldError{Path: p.String(), Value: value, Reason: reason}, p.order()})
}

// warn records a legal but probably unintended setting.
func (ps *problems) warn(p path, value, reason string) {
	if ps.isBad(p) {
		return
	}
	ps.warnings = append(ps.warnings, problem{&FieldError{Path: p.String(), Value: ps.value(p, value), Reason: reason}, p.order()})
}

// line records a problem that the YAML parser placed on a line (or nowhere, line 0).
func (ps *problems) line(n int, reason string) {
	where := docPath
	if n > 0 {
		where = "line " + strconv.Itoa(n)
	}
	ps.errs = append(ps.errs, problem{&FieldError{Path: where, Reason: reason}, []rank{{n: 0}, {n: n}}})
}

// sorted returns the problems in document order, without duplicates.
func sorted(in []problem) []*FieldError {
	slices.SortStableFunc(in, func(a, b problem) int {
		return cmp.Or(compareOrder(a.key, b.key), strings.Compare(a.Path, b.Path))
	})
	if len(in) == 0 {
		return nil
	}
	out := make([]*FieldError, 0, len(in))
	for i, p := range in {
		if i > 0 && *p.FieldError == *in[i-1].FieldError {
			continue
		}
		out = append(out, p.FieldError)
	}
	return out
}
