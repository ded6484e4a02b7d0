package spec

import (
	"slices"
	"strings"
	"testing"
)

// kv overrides keys of a test plan: each value is YAML flow text; del removes the key.
type kv map[string]string

const del = "\x00delete"

// baseTop and baseSpec are a valid plan, in the documented key order.
var (
	baseTop = [][2]string{
		{"apiVersion", "crossfade.io/v1alpha1"},
		{"kind", "Cutover"},
		{"metadata", "{name: shop}"},
	}
	baseSpec = [][2]string{
		{"zone", "example.com"},
		{"records", "[{name: shop.example.com}]"},
		{"from", "blue"},
		{"to", "green"},
		{"steps", "[10, 100]"},
	}
)

// render writes base with the overrides applied, extra keys last in name order.
func render(b *strings.Builder, indent string, base [][2]string, over kv) {
	done := map[string]bool{}
	line := func(k, v string) {
		if v != del {
			b.WriteString(indent + k + ": " + v + "\n")
		}
	}
	for _, e := range base {
		v, ok := over[e[0]]
		if !ok {
			v = e[1]
		}
		line(e[0], v)
		done[e[0]] = true
	}
	var extra []string
	for k := range over {
		if !done[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		line(k, over[k])
	}
}

// planYAML is the base plan with top-level and spec overrides; top["spec"] replaces the
// whole spec.
func planYAML(top, spec kv) string {
	var b strings.Builder
	rest := kv{}
	for k, v := range top {
		if k != "spec" {
			rest[k] = v
		}
	}
	render(&b, "", baseTop, rest)
	if s, ok := top["spec"]; ok {
		if s != del {
			b.WriteString("spec: " + s + "\n")
		}
		return b.String()
	}
	b.WriteString("spec:\n")
	render(&b, "  ", baseSpec, spec)
	return b.String()
}

// wantErrs fails unless err is an error whose text holds each of wants.
func wantErrs(t *testing.T, err error, wants []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", wants)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
}
