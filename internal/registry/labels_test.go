package registry

import (
	"fmt"
	"strings"
	"testing"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

func TestPayloadForms(t *testing.T) {
	many := endpoint.Labels{}
	want := `"heritage=external-dns`
	for i := range 10 {
		many[fmt.Sprintf("k%02d", i)] = fmt.Sprint(i)
		want += fmt.Sprintf(",external-dns/k%02d=%d", i, i)
	}
	want += `"`
	tests := []struct {
		name string
		l    endpoint.Labels
		want string
	}{
		{"none", nil, `"heritage=external-dns"`},
		{"sorted by key", endpoint.Labels{endpoint.ResourceLabel: "service/default/app", endpoint.OwnerLabel: "blue"},
			`"heritage=external-dns,external-dns/owner=blue,external-dns/resource=service/default/app"`},
		{"empty value", endpoint.Labels{endpoint.OwnerLabel: ""}, `"heritage=external-dns,external-dns/owner="`},
		{"more labels than the buffer", many, want},
	}
	for _, tt := range tests {
		if got := Payload(tt.l); got != tt.want {
			t.Errorf("%s: Payload(%v) = %s, want %s", tt.name, tt.l, got, tt.want)
		}
	}
}

// TestPayloadAllocatesOnce guards the cost of writing a plan's ownership records: the
// value is built in one allocation, not one per label.
func TestPayloadAllocatesOnce(t *testing.T) {
	l := endpoint.Labels{endpoint.OwnerLabel: "blue", endpoint.ResourceLabel: "service/default/app", endpoint.WantsWeightLabel: "10"}
	if allocs := testing.AllocsPerRun(100, func() { _ = Payload(l) }); allocs != 1 {
		t.Errorf("Payload allocates %v times, want 1", allocs)
	}
}

// TestTxtNameShortcut wants txtName's shortcut (no affix, no wildcard to replace) to
// name every ownership record as the general rule does.
func TestTxtNameShortcut(t *testing.T) {
	mappers := []nameMapper{
		newNameMapper("", "", ""),
		newNameMapper("", "", "any"),
		newNameMapper("txt.", "", ""),
		newNameMapper("%{record_type}-", "", ""),
		newNameMapper("", "-txt", "star"),
	}
	names := []string{"app.example.com", "example.com", "*.example.com", "*", "*x.example.com", "a.*.example.com", ""}
	types := []string{"A", "AAAA", "CNAME", "TXT", "a", "Cname", "CAA", ""}
	for _, m := range mappers {
		for _, n := range names {
			for _, typ := range types {
				if got, want := m.txtName(n, typ), m.affixedName(n, typ); got != want {
					t.Errorf("mapper %+v: txtName(%q, %q) = %q, the general rule %q", m, n, typ, got, want)
				}
			}
		}
	}
}

// TestLowerASCII wants lowerASCII, which spares recordName a strings.ToLower, true exactly
// when ToLower would return s as it is and s is ASCII.
func TestLowerASCII(t *testing.T) {
	check := func(s string) {
		t.Helper()
		ascii := true
		for i := range len(s) {
			ascii = ascii && s[i] < 0x80
		}
		if got, want := lowerASCII(s), ascii && strings.ToLower(s) == s; got != want {
			t.Errorf("lowerASCII(%q) = %v, want %v", s, got, want)
		}
	}
	for _, s := range []string{"", "a", "a-app.example.com", "A-app.example.com", "a-app.example.coM", "a-app.exAmple.com",
		"@[`{", "0123456789abcdefZ", "é-app.example.com", "a-app.example.c\u00e9", "\x7f\x80", "txt.Z"} {
		check(s)
	}
	// Every byte, at every position of a word and of the tail.
	for c := range 256 {
		for pos := range 11 {
			b := []byte("abcdefghijk")
			b[pos] = byte(c)
			check(string(b))
		}
	}
}
