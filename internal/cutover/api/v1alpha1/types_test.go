package v1alpha1

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// TestScheme: the group version is the one plan files name, and a scheme built with
// AddToScheme knows Cutover and CutoverList under it.
func TestScheme(t *testing.T) {
	if GroupVersion.String() != spec.APIVersion {
		t.Errorf("GroupVersion = %s, want the plan file's %s", GroupVersion, spec.APIVersion)
	}
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for obj, kind := range map[runtime.Object]string{&Cutover{}: spec.Kind, &CutoverList{}: spec.Kind + "List"} {
		gvks, _, err := s.ObjectKinds(obj)
		if err != nil || len(gvks) != 1 || gvks[0] != GroupVersion.WithKind(kind) {
			t.Errorf("ObjectKinds(%T) = %v, %v; want %s", obj, gvks, err, GroupVersion.WithKind(kind))
		}
	}
	if !s.Recognizes(GroupVersion.WithKind("ListOptions")) {
		t.Error("the scheme does not know ListOptions in crossfade.io/v1alpha1: meta types not added")
	}
}

// TestDeepCopy fills every field of a Cutover, status included, so that a field added
// without its copy fails here: the copy equals the original and shares no pointer,
// list or map with it.
func TestDeepCopy(t *testing.T) {
	var c Cutover
	fill(reflect.ValueOf(&c).Elem())
	got := c.DeepCopy()
	if !reflect.DeepEqual(*got, c) {
		t.Fatalf("DeepCopy differs:\n got %+v\nwant %+v", *got, c)
	}
	shared(t, "Cutover", reflect.ValueOf(c), reflect.ValueOf(*got))
	list := CutoverList{Items: []Cutover{c}}
	if cp := list.DeepCopyObject().(*CutoverList); !reflect.DeepEqual(*cp, list) {
		t.Errorf("CutoverList.DeepCopyObject differs")
	}
}

// TestJournalEntryRoundTrip: every field of journal.Entry survives EntryFrom, a trip
// through JSON (as status is stored) and Entry, and JournalEntry names each as the
// journal file does; a field added to journal.Entry and not here fails.
func TestJournalEntryRoundTrip(t *testing.T) {
	var e journal.Entry
	fill(reflect.ValueOf(&e).Elem())
	e.Time = time.Date(2026, 11, 28, 3, 4, 5, 123456789, time.UTC)
	e.Data = json.RawMessage(`{"gates":[{"gate":"dns-1","pass":true}]}`)
	js, err := json.Marshal(EntryFrom(e))
	if err != nil {
		t.Fatal(err)
	}
	var back JournalEntry
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	want := e
	want.Time = e.Time.Truncate(time.Microsecond)
	if got := back.Entry(); !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
	if got, want := jsonNames(reflect.TypeFor[JournalEntry]()), jsonNames(reflect.TypeFor[journal.Entry]()); !reflect.DeepEqual(got, want) {
		t.Errorf("JournalEntry's fields %v, want journal.Entry's %v", got, want)
	}
}

// jsonNames are t's fields' JSON names, in order.
func jsonNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// fill sets every exported field below v to a non-zero value.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		v.SetMapIndex(k, e)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint8, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float64:
		v.SetFloat(1)
	}
}

// shared fails for every pointer, slice or map that a and b hold in common.
func shared(t *testing.T, at string, a, b reflect.Value) {
	t.Helper()
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: the copy shares the pointer", at)
		}
		shared(t, at, a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				shared(t, at+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))
			}
		}
	case reflect.Slice:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			t.Errorf("%s: the copy shares the list", at)
		}
		for i := range min(a.Len(), b.Len()) {
			shared(t, at+"[]", a.Index(i), b.Index(i))
		}
	case reflect.Map:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			t.Errorf("%s: the copy shares the map", at)
		}
	}
}
