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
	"github.com/crossfade-io/crossfade/internal/deepcopytest"
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
	deepcopytest.Fill(reflect.ValueOf(&c).Elem())
	got := c.DeepCopy()
	if !reflect.DeepEqual(*got, c) {
		t.Fatalf("DeepCopy differs:\n got %+v\nwant %+v", *got, c)
	}
	deepcopytest.Shared(t, "Cutover", reflect.ValueOf(c), reflect.ValueOf(*got))
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
	deepcopytest.Fill(reflect.ValueOf(&e).Elem())
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
