package cloudmapstore

import (
	"strings"
	"testing"
)

func TestCheckServiceName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"api", true},
		{"_exampleservice._tcp", true}, // the HAProxy SRV form the model describes
		{"a", true},
		{".", true},
		{"backend.v2", true},
		{"-api", false},
		{"api-", false},
		{"a..b", false},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false}, // a label is at most 63 characters
		{strings.Repeat("a.", 63) + "a", true},
		{strings.Repeat("ab.", 42) + "a", true},    // 127 characters
		{strings.Repeat("ab.", 42) + "abc", false}, // 129: 127 at most
		{"has space", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkServiceName(tc.name, "name")
			if (err == nil) != tc.ok {
				t.Errorf("checkServiceName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
			}
		})
	}
}

func TestCheckAttributeMap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		attrs map[string]string
		msg   string
	}{
		{"plain", map[string]string{"cluster": "blue", "ver": "v1-21"}, ""},
		{"empty value", map[string]string{"k": ""}, ""},
		{"space and tab inside", map[string]string{"k": "a b\tc"}, ""},
		{"trailing space", map[string]string{"k": "a "}, ""},
		{"punctuation key", map[string]string{"crossfade.io/owner": "x"}, ""},
		{"leading space", map[string]string{"k": " a"}, "Map value must satisfy constraint"},
		{"newline", map[string]string{"k": "a\nb"}, "Map value must satisfy constraint"},
		{"non-ASCII", map[string]string{"k": "é"}, "Map value must satisfy constraint"},
		{"empty key", map[string]string{"": "v"}, "Map keys must satisfy constraint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkAttributeMap(tc.attrs, "attributes")
			switch {
			case tc.msg == "" && err != nil:
				t.Errorf("unexpected %v", err)
			case tc.msg != "" && (err == nil || !strings.Contains(err.Message, tc.msg)):
				t.Errorf("error %v, want %q", err, tc.msg)
			}
		})
	}
}

func TestPageTokens(t *testing.T) {
	items := []string{"a", "b", "c", "d", "e"}
	key := func(s string) string { return s }
	got, next, err := page(items, key, "", 2)
	if err != nil || strings.Join(got, "") != "ab" || next == "" {
		t.Fatalf("first page %v %q %v", got, next, err)
	}
	// The item the token names is gone: the next page starts after where it stood.
	got, next, err = page([]string{"a", "c", "d", "e"}, key, next, 2)
	if err != nil || strings.Join(got, "") != "cd" || next == "" {
		t.Fatalf("second page %v %q %v", got, next, err)
	}
	got, next, err = page(items, key, next, 2)
	if err != nil || strings.Join(got, "") != "e" || next != "" {
		t.Fatalf("last page %v %q %v", got, next, err)
	}
	if _, _, err := page(items, key, "bm90LWEtdG9rZW4", 2); err == nil || err.Code != CodeInvalidInput {
		t.Errorf("foreign token: %v", err)
	}
}
